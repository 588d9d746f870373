/* types.h: where a graph node becomes BTF types (types.c). */
#ifndef BTFPIPE_EMIT_TYPES_H
#define BTFPIPE_EMIT_TYPES_H

#include <stddef.h>
#include <stdint.h>

struct bw;
struct diag;
struct emit_opts;
struct extras;
struct graph;
struct skip_log;

/* types.c: every node as BTF. ids[node] is the node's BTF id (0 = void or
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
};
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
/* Pass 5 (encode), in this order (encode.c): nodes [a, b) as BTF, into a BTF or a
 * piece whose ids start after types__base(a, b) (planned ids, checked);
 * the extra types and the index type, after types__extras_base(); and the
 * btf_decl_tag annotations of the structs, unions, their members and the
 * typedefs among nodes [a, b) (functions, parameters and variables get
 * theirs where they are added). */
uint32_t types__base(const struct graph *g, const struct type_map *map, size_t a, size_t b);
int types__encode(struct bw *btf, const struct graph *g, const struct type_map *map,
		 const struct emit_opts *o, size_t a, size_t b, struct diag *d);
uint32_t types__extras_base(const struct type_map *map);
int types__encode_extras(struct bw *btf, const struct graph *g, const struct type_map *map,
			struct diag *d);
int types__encode_tags(struct bw *btf, const struct graph *g, const struct type_map *map,
		      size_t a, size_t b, struct diag *d);

#endif
