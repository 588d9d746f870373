/* reloc.h: a relocatable file's debug sections relocated as libdwfl would (reloc.c). */
#ifndef BTFPIPE_EXTRACT_RELOC_H
#define BTFPIPE_EXTRACT_RELOC_H

#include <gelf.h>

/* reloc.c: open fd privately mapped with its .debug_* sections relocated
 * and its SHF_ALLOC sections given addresses, exactly as libdwfl would (an
 * x86-64 ELF64 LSB relocatable file with RELA only, defined symbols only,
 * the simple relocation types), on up to `threads` threads (*used: how
 * many it ran on, for --stats). Returns 1 with *out (the caller's to
 * elf_end()), 0 when the file is not such a file (libdwfl then relocates
 * it), or -ENOMEM / -EAGAIN. */
int reloc_open(int fd, unsigned threads, Elf **out, unsigned *used);

#endif
