/* types.h: which nodes become which BTF types (types.c); writing them: type_encode.h. */
#ifndef BTFPIPE_EMIT_TYPES_H
#define BTFPIPE_EMIT_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "type_map.h"

struct diag;
struct emit_opts;
struct graph;
struct graph_node;
struct skip_log;

/* The map's arrays are its own, made by types__prepare() and
 * types__plan(); type_map__free() frees them (a zeroed map too). */
void type_map__free(struct type_map *map);
/* A name BTF accepts for a struct, union, enum, typedef or function. */
int types__name_ok(const char *s);
/* Pass 3 of run.h (select): decide what cannot be written (fills map->dropped). */
int types__prepare(const struct graph *g, struct type_map *map);
/* Pass 4 (plan): what the types will be: cycles refused, prototypes no type and no
 * picked function uses left out (a prototype is only written for a FUNC
 * that is), every id planned, the nodes left out reported to skips.
 * pick_arena (NULL: none): per pick, the KF_ARENA_* flags of a kfunc whose
 * flagged pointers get pahole's address_space(1) attribute (feature
 * attributes): such a pick gets a prototype of its own in pick_proto. */
int types__plan(const struct graph *g, const struct emit_opts *o, const uint32_t *picks, const uint32_t *pick_arena,
	       size_t npicks, struct type_map *map, struct skip_log *skips, struct diag *d);
/* The BTF types node n is written as (0: none, left out or transparent),
 * given its dropped mark. */
uint32_t types__count(const struct graph_node *n, uint8_t dropped);
/* Can BTF write base type n as an INT or FLOAT of its size? (Else a kept
 * type's need makes it pahole's placeholder INT.) */
int types__base_fits(const struct graph_node *n, const struct emit_opts *o);

#endif
