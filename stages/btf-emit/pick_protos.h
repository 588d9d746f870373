/* pick_protos.h: prototypes of their own for some picked functions (pick_protos.c). */
#ifndef BTFPIPE_EMIT_PICK_PROTOS_H
#define BTFPIPE_EMIT_PICK_PROTOS_H

#include <stddef.h>
#include <stdint.h>

#include "type_map.h"

struct graph;

/* map->pick_proto[i] for every pick that needs a prototype of its own: a
 * true signature (only the parameters still passed), or an arena kfunc
 * (pick_arena[i], its KF_ARENA_* flags). New ones are planned from *next
 * on; equal ones shared. 0 or -ENOMEM. */
int pick_protos__plan(const struct graph *g, const uint32_t *picks, const uint32_t *pick_arena, size_t npicks,
		      struct type_map *map, uint32_t *next);

#endif
