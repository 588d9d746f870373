/* extras.h: the BTF types a node needs beyond its own (extras.c). */
#ifndef BTFPIPE_EMIT_EXTRAS_H
#define BTFPIPE_EMIT_EXTRAS_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/idmap.h"

#include "type_map.h"

struct graph;
struct graph_annot;
struct graph_item;
struct graph_node;

/* Extra types, added after all nodes: the inner ARRAYs of multi-dimensional
 * arrays and the TYPE_TAG chains of tagged pointers. Each (kind, target,
 * detail) exists once, and the graph's one-dimensional arrays are entered
 * first, so int[3][4] reuses an existing int[4] and two pointers tagged
 * alike share their chain: equal BTF is never written twice. */
enum { EX_ARRAY = 1, EX_TYPE_TAG, EX_PROTO, EX_ARENA_ATTR, EX_ARENA_PTR };

/* The attribute pahole writes on the pointee of an arena kfunc's pointer
 * (feature attributes): PTR -> TYPE_TAG(kind_flag 1) -> pointee. */
#define ARENA_ATTR "address_space(1)"

struct extra {
	uint8_t kind;
	uint32_t target, detail;	/* element and nelems, or target and tag name */
	uint32_t id;
};

/* A prototype of a true signature (EX_PROTO, detail = its index): the
 * parameters still passed, as (name, BTF id) pairs in tsig_params. */
struct tsig {
	uint32_t ret, first, n;
	uint64_t hash;
};
struct tsig_param {
	uint32_t name;		/* graph string */
	uint32_t type;		/* BTF id */
	uint32_t field;		/* graph string: written name__field; 0 none */
};

struct extras {
	struct extra *v;
	size_t n, cap;
	struct idmap map;		/* (kind, target, detail) -> index in v */
	struct tsig *tsigs;
	size_t ntsigs, cap_tsigs;
	struct tsig_param *tparams;
	size_t ntparams, cap_tparams;
	/* The graph's multi-dimensional arrays by (element, dims): a chain of
	 * inner dims that is a node of its own is that node (int[4][2][4]'s
	 * [2][4] is the graph's int[2][4] when it has one): node ids. */
	struct idmap multi;
};

/* The id of (kind, target, detail); a new one gets *next_id (create), else
 * 0 when absent. 0 also on ENOMEM (create). */
uint32_t extras__get(struct extras *x, uint8_t kind, uint32_t target, uint32_t detail, uint32_t *next_id,
		     int create);
/* An array dimension's element count (0: unknown). */
uint32_t extras__dim_count(const struct graph_item *it);
/* Is annotation a a `what` (btf_type_tag, btf_decl_tag)? */
int extras__is_tag(const struct graph *g, const struct graph_annot *a, const char *what);
/* A multi-dimensional array written as one ARRAY: 1 with its element count
 * in *out; 0 when it stays nested. */
int extras__flat_nelems(const struct graph *g, const struct graph_node *n, const struct type_map *map,
			uint32_t *out);
/* The element of a node's outermost ARRAY (the chain of its inner dims),
 * or a tagged pointer's target (its TYPE_TAG chain). create: plan from
 * *next_id on, else look up. */
uint32_t extras__inner_target(const struct graph *g, const struct graph_node *n, const struct type_map *map,
			      uint32_t *next_id, int create);
/* Plan the nodes' extras from *next_id on (which moves past them); sets
 * map->first_extra. 0 or -ENOMEM. */
int extras__plan(const struct graph *g, struct type_map *map, uint32_t *next_id);
/* Free x's arrays and x itself (NULL: nothing). */
void extras__free(struct extras *x);

#endif
