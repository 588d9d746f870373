/* type_map.h: how the graph's nodes are written as BTF, as types.c plans
 * it and the encoders (type_encode.c, funcs.c, vars.c) read it. A header
 * of its own, data only, so that the files that plan and write it do not
 * depend on one another through it. */
#ifndef BTFPIPE_EMIT_TYPE_MAP_H
#define BTFPIPE_EMIT_TYPE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct extras;

/* Every node as BTF (types.c plans it). ids[node] is the node's BTF id (0 = void or
 * left out), dropped[node] says a node was left out and why: 1 it has no
 * BTF form or needs one that has none, 2 a prototype nothing uses, 3 a base
 * type of a size BTF cannot hold that nothing uses. */
struct type_map {
	uint32_t *ids;
	uint8_t *dropped;
	struct extras *extras;	/* types beyond the nodes: inner arrays, type tags */
	int type_tags;		/* feature type_tag: pointers' tags become TYPE_TAGs */
	int flat_arrays;	/* multi-dimensional arrays as one ARRAY (types.c) */
	size_t first_extra;	/* extras before this are the nodes' own arrays */
	int decl_tags;		/* feature decl_tag */
	/* Planned by types__plan(): the array index type's id, and whether it
	 * is one of our own (after the extras); the id after the extras. */
	uint32_t index_type, after_extras;
	int need_index;
	/* Per pick (types__plan()'s picks): the id of a prototype of its own
	 * (a true signature's, an arena kfunc's), 0 for the others; NULL when
	 * no pick has one. */
	uint32_t *pick_proto;
	/* Arena kfunc slots left untagged (not a pointer): the function's
	 * name (a graph string) and which slot, for run.c's plan pass to warn
	 * about after planning; a pass reports, its caller speaks. */
	struct arena_miss {
		const char *func, *slot;
	} *arena_miss;
	size_t narena_miss, cap_arena_miss;
};

#endif
