/* explain.h: btf-emit --explain NAME (explain.c). */
#ifndef BTFPIPE_EMIT_EXPLAIN_H
#define BTFPIPE_EMIT_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

struct elf_info;
struct emit_opts;
struct graph;

/* --explain NAME: the evidence and the decision for a function or variable,
 * printed to o. dropped: types__prepare()'s, per node. 0 or a negative errno. */
int explain__name(FILE *o, const struct graph *g, const struct elf_info *ei, const struct emit_opts *opts,
		  const uint8_t *dropped, const char *name);

#endif
