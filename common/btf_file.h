/* btf_file.h: a file's BTF bytes (raw BTF, or an ELF's .BTF), and their digest. */
#ifndef BTFPIPE_BTF_FILE_H
#define BTFPIPE_BTF_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

/* The one .BTF section of ELF path: 0, -ENOENT (none), -EINVAL (several,
 * compressed, outside the file, not an ELF) or -errno. */
int btf_file__elf_section(const char *path, uint64_t *off, uint64_t *size);
/* The raw BTF bytes [*p, *p + *n) of file path, mapped at m (size bytes):
 * all of it, or an ELF's one .BTF section. 0, or -errno (btf_file__elf_section()). */
int btf_file__of_file(const char *path, const uint8_t *m, size_t size, const uint8_t **p, size_t *n);
/* What the cache keys a base file on: the xxh3-128 of its bytes, or of an
 * ELF's .BTF section only (a vmlinux base is hundreds of MB of DWARF
 * around a few MB of BTF, and hashing it all was most of a module's
 * emit). 0 or
 * -errno (unreadable). */
int btf_file__digest(const char *path, struct key128 *out);

#endif
