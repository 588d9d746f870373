/* elf_write.h: a copy of an ELF with .BTF added or replaced (elf_write.c). */
#ifndef BTFPIPE_ELF_WRITE_H
#define BTFPIPE_ELF_WRITE_H

#include <stddef.h>

struct diag;
struct outfile;

/* A copy of in_path with .BTF holding btf, and with base (NULL: none)
 * .BTF.base holding that distilled base (both the caller's, only read),
 * written atomically to out_path. 0, or a negative errno with the detail in d. */
int elf_write__btf(const char *in_path, const char *out_path, const void *btf, size_t btf_size,
		   const void *base, size_t base_size, struct diag *d);
/* The same up to outfile__prepare(): on 0, *of holds the complete file
 * under its hidden name, for the caller to outfile__publish() (or abort)
 * together with other outputs; on an error *of is already aborted. */
int elf_write__btf_prepare(const char *in_path, const char *out_path, const void *btf, size_t btf_size,
			   const void *base, size_t base_size, struct outfile *of, struct diag *d);

#endif
