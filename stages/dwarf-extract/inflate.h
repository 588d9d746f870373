/* inflate.h: an ELF's compressed sections stored plainly, in memory (inflate.c). */
#ifndef BTFPIPE_EXTRACT_INFLATE_H
#define BTFPIPE_EXTRACT_INFLATE_H

#include "../../common/diag.h"

#include <gelf.h>

/* inflate_open: when elf (opened over fd, a file of `size` bytes at path)
 * has SHF_COMPRESSED sections (zlib or zstd), a copy of the file in an
 * anonymous memory file (memfd) in which each of them is stored
 * uncompressed, appended at the end, its section header pointing there and
 * its SHF_COMPRESSED flag cleared; every other byte as in the file. The
 * caller then reads that copy as it would the file: libdw (whose 0.188
 * knows no zstd), the relocator and the fast DIE reader alike, so a
 * compressed input gives the bytes the uncompressed one gives.
 * Returns 1 with *out (an fd the caller closes), 0 when no section is
 * compressed (*out untouched), or -errno after diag_fail(): EBADMSG for a
 * corrupt compressed section (named, with its index), ENOTSUP for an
 * unknown compression type, ENOMEM. */
int inflate_open(Elf *elf, const char *path, size_t size, int *out, struct diag *d);

#endif
