/* output.h: the BTF written where the options say (output.c). */
#ifndef BTFPIPE_EMIT_OUTPUT_H
#define BTFPIPE_EMIT_OUTPUT_H

#include <stdint.h>

struct diag;
struct emit_opts;

/* raw (size bytes, the caller's) to -o, as a copy of --elf to --elf-out, or
 * both, each atomically, and a line for each in $BTFPIPE_EMIT_LOG. With a
 * distilled base dbase (NULL: none), that to OUT.base beside -o and to
 * .BTF.base beside .BTF. d's file (diag_file()) names each output as it
 * is written. 0, or a negative errno with the detail in d. */
int output__write(const struct emit_opts *o, const void *raw, uint32_t size, const void *dbase, uint32_t dbase_size,
		  struct diag *d);

#endif
