/* funcs.h: which function candidates become FUNCs, and writing them (funcs.c). */
#ifndef BTFPIPE_EMIT_FUNCS_H
#define BTFPIPE_EMIT_FUNCS_H

#include <stddef.h>
#include <stdint.h>

#include "picks.h"

struct bw;
struct diag;
struct elf_info;
struct emit_opts;
struct graph;
struct skip_log;
struct type_map;

/* Pass 3 of run.h (select): the chosen function candidates (indices into g->funcs), name order,
 * in *picks (malloc'd, the caller's); PICK_TRUE_SIG marks one to write with
 * its true signature. Each candidate left out goes to skips. */
int funcs__select(const struct graph *g, const struct elf_info *ei, const uint8_t *dropped,
		 const struct emit_opts *o, struct skip_log *skips, uint32_t **picks, size_t *npicks);

/* Pass 5 (encode), after the types: the FUNCs of picks [a, b) and their decl tags. */
int funcs__encode(struct bw *btf, const struct graph *g, const struct elf_info *ei, const uint32_t *picks,
		 size_t a, size_t b, const struct type_map *map, const struct emit_opts *o, struct diag *d);

#endif
