/* elf_head.h: the first reads of every ELF a stage opens (elf_head.c). */
#ifndef BTFPIPE_ELF_HEAD_H
#define BTFPIPE_ELF_HEAD_H

#include <gelf.h>

struct elf_head {
	GElf_Ehdr eh;
	size_t shnum, shstrndx, phnum;
};

/* elf from elf_begin() (NULL when that failed), with errno cleared before
 * the elf_begin(). 0 with h filled; -ENOEXEC when the file is no ELF or
 * its headers cannot be read; -ENOMEM when libelf could not allocate
 * (these calls fail then too: that is no verdict on the file). */
int elf_head_read(Elf *elf, struct elf_head *h);

#endif
