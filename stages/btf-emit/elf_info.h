/* elf_info.h: the target ELF's sections and function/object symbols (elf_info.c). */
#ifndef BTFPIPE_EMIT_ELF_INFO_H
#define BTFPIPE_EMIT_ELF_INFO_H

#include <stddef.h>
#include <stdint.h>

struct diag;
struct Elf;

struct elf_section {
	char *name;
	uint64_t addr, size;
	uint32_t type;
};

struct elf_sym {
	const char *name;	/* in the ELF's string table: valid until elf_info__free() */
	uint64_t value, size;
	uint32_t shndx;
	uint8_t type, bind;
};

struct elf_info {
	uint16_t machine;		/* e_machine */
	struct elf_section *secs;	/* by section index */
	size_t nsecs;
	struct elf_sym *syms;		/* STT_FUNC and STT_OBJECT, sorted by name then value */
	size_t nsyms;
	int is_rel;
	/* kfuncs from .BTF_ids set8 ranges flagged BTF_SET8_KFUNCS: name and
	 * the pair's flags word, sorted by name. */
	struct kfunc { char *name; uint32_t flags; } *kfuncs;
	size_t nkfuncs;
	/* The ELF, open and mapped while the symbols' names point into it:
	 * owned, ended by elf_info__free() (NULL: nothing open). */
	struct Elf *elf;
	int fd;
};

#define BTF_SET8_KFUNCS (1u << 0)
#define KF_FASTCALL (1u << 12)
/* The kernel's arena kfunc flags (include/linux/btf.h): which pointers
 * point into a BPF arena, tagged address_space(1) with feature attributes. */
#define KF_ARENA_RET (1u << 13)
#define KF_ARENA_ARG1 (1u << 14)
#define KF_ARENA_ARG2 (1u << 15)
#define KF_ARENA (KF_ARENA_RET | KF_ARENA_ARG1 | KF_ARENA_ARG2)

/* Is name a kfunc? Its flags in *flags. */
int elf_info__kfunc(const struct elf_info *ei, const char *name, uint32_t *flags);

/* Read path's sections and symbols into *ei, on up to `threads` threads
 * (one per 32,768 symbols, or exactly `threads` when `exact`; the same
 * result at any count), which then owns its arrays and the open ELF until
 * elf_info__free() (also after a failed read). 0, or a negative errno
 * with the detail in d. */
int elf_info__read(struct elf_info *ei, const char *path, unsigned threads, int exact, struct diag *d);
void elf_info__free(struct elf_info *ei);
/* The first symbol named `name` (exactly), or NULL; *count gets how many. */
const struct elf_sym *elf_info__find(const struct elf_info *ei, const char *name, size_t *count);
/* The index of the first symbol whose name sorts at or after name: where the
 * names that start with it begin (they are contiguous). ei may be NULL (0). */
size_t elf_info__lower_bound(const struct elf_info *ei, const char *name);
/* The same answer, searched forward from hint (any value: an earlier answer
 * for a smaller name makes it a few comparisons instead of a binary search
 * over every symbol). */
size_t elf_info__lower_bound_from(const struct elf_info *ei, const char *name, size_t hint);

#endif
