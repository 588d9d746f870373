/* input.h: the ELF: handles, sections, identity, the unit list (input.c). */
#ifndef BTFPIPE_EXTRACT_INPUT_H
#define BTFPIPE_EXTRACT_INPUT_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include "../../format/cus.h"

struct diag;

struct section {
	uint64_t addr, size;
	uint32_t index;
};

struct unit {
	uint64_t offset;	/* the unit header's offset in .debug_info */
	uint64_t end;		/* the next unit's offset */
	uint8_t unit_type, version;
};

/* A unit header's initial length (DWARF 5 section 7.4) from its first got
 * bytes at h, big-endian when big: *lsize is the field's own size (4, or
 * 12 in 64-bit DWARF) and *len what follows it. Returns -1 when got is
 * shorter than the field or the value is a reserved one. Shared by the
 * unit list (input.c) and the DWARF hash's pieces (dwarf_hash.c), which
 * must cut .debug_info at the same places. */
static inline int unit_initial_length(const uint8_t *h, size_t got, int big, uint64_t *len, size_t *lsize)
{
	if (got < 4)
		return -1;
	uint32_t l32 = big ? (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3]
			   : le32_get(h);
	if (l32 < 0xfffffff0u) {
		*len = l32;
		*lsize = 4;
		return 0;
	}
	if (l32 != 0xffffffffu || got < 12)
		return -1;
	uint64_t l64 = 0;
	for (int i = 0; i < 8; i++)
		l64 |= (uint64_t)h[4 + i] << (8 * (big ? 7 - i : i));
	*len = l64;
	*lsize = 12;
	return 0;
}

/* A DWARF section's bytes as libdw reads them (relocated for ET_REL,
 * decompressed), for the readers that do not go through libdw (cu_key.c). */
struct dwsec {
	const uint8_t *p;
	size_t n;
};
enum { DWS_INFO, DWS_ABBREV, DWS_STR, DWS_LINE_STR, DWS_STR_OFF, DWS_LOCLISTS, DWS_LOC, DWS_N };

struct input {
	const char *path;
	int fd;
	Elf *file_elf;		/* the file as it is on disk (identity, sections) */
	Elf *elf;		/* what the Dwarf handles read: file_elf, or for ET_REL
				 * the relocated copy: rel_elf, or libdwfl's (owned by dwfl) */
	Dwfl *dwfl;		/* ET_REL only: applies the relocations */
	Elf *rel_elf;		/* ET_REL relocated by reloc.c instead (owned), or NULL */
	unsigned reloc_threads;	/* (then) the threads its relocation ran on */
	int is_rel;
	Dwarf **dw;		/* one Dwarf handle per worker */
	Dwarf **alt;		/* each handle's dwz alternate file, or NULL */
	int alt_fd;
	Elf *alt_elf;		/* the alternate file, shared by the alt handles */
	unsigned ndw;
	struct section *secs;	/* SHF_ALLOC sections, sorted by address */
	size_t nsecs;
	struct unit *units;
	size_t nunits;
	struct cus_ident ident;
	/* .debug_info's bytes inside the file's own mapping (NULL when they are
	 * a private copy: relocated, decompressed): finished units' pages can be
	 * dropped from RSS there, since the page cache gives them back. */
	const uint8_t *info_map;
	size_t info_size;
	size_t info_dropped;	/* [0, info_dropped) of it is dropped (input__done_with_unit()) */
	/* elf_rawfile() of the file is a read-only mapping of it (checked once,
	 * in identify()): only then may its pages be dropped. */
	int raw_is_file_map;
	/* The DWARF sections by kind, in the input's byte order. key_ok is 0
	 * when one could not be read plainly (still compressed): no CU is then
	 * cached. dws_ok is key_ok for a little-endian input only, which the
	 * DIE reader (die_reader.c) and string lookups need. */
	struct dwsec dws[DWS_N];
	int key_ok, dws_ok;
};

/* Unit u is written: let its .debug_info pages go (see info_map), with
 * those of the units before it, a batch at a time. Called in unit order. */
void input__done_with_unit(struct input *in, const struct unit *u);

/* Open path: its identity, sections and units, one Dwarf handle per worker,
 * all owned by *in until input__close() (also after a failed open).
 * libdw_only: relocate through libdwfl even where reloc.c could. Opens
 * one Dwarf handle per worker (in->ndw): `workers`, or fewer when
 * info_per_worker is not 0 and .debug_info is small (pool_threads_for()). */
#define INFO_PER_WORKER (512u << 10)
int input__open(struct input *in, const char *path, unsigned workers, uint64_t info_per_worker,
		int libdw_only, struct diag *d);
void input__close(struct input *in);
/* The section holding addr, and addr made section-relative for ET_REL.
 * Returns the ELF section index, 0 when no allocated section holds it. */
uint32_t input__section_of(const struct input *in, uint64_t *addr);

#endif
