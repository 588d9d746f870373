/* encode.h: the graph's BTF written, on one thread or in pieces (encode.c). */
#ifndef BTFPIPE_EMIT_ENCODE_H
#define BTFPIPE_EMIT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct diag;
struct elf_info;
struct emit_opts;
struct graph;
struct skip_log;
struct type_map;

/* Pass 5 of run.h (encode): the types, funcs and vars appended to out (the caller's) as raw
 * BTF, standalone, on up to o->cli.jobs threads (*threads_used), the same
 * bytes on any. *nr_types: the types written. */
struct encode_in {
	const struct graph *g;
	const struct elf_info *ei;	/* or NULL */
	const struct emit_opts *o;
	const uint32_t *picks;
	size_t npicks;
	const struct type_map *map;	/* planned by types__plan() */
	struct skip_log *skips;		/* or NULL */
};
int encode__btf(const struct encode_in *in, unsigned *threads_used, struct buf *out,
	       uint32_t *nr_types, struct diag *d);

#endif
