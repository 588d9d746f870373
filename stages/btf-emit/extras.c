/* extras.c: the BTF types a node needs beyond its own.
 *
 * A multi-dimensional array is nested ARRAYs (the node is the outermost;
 * the inner ones are extras), a tagged pointer a chain of TYPE_TAGs to its
 * target, a true signature or an arena kfunc a prototype of its own
 * (pick_protos.c), an arena pointer an address_space(1) attribute and a
 * PTR to it. Each (kind, target, detail) is made once and gets its id when
 * planned, after the nodes' (types.c); type_encode.c writes them in that
 * order.
 */
#include "extras.h"
#include "../../format/graph.h"
#include "../../common/hash.h"
#include "../../common/idmap.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t extra_hash(uint8_t kind, uint32_t target, uint32_t detail)
{
	return hash_mix(hash_mix(kind, target), detail);
}

struct extra_key {
	uint8_t kind;
	uint32_t target, detail;
};

static int extra_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct extra *e = &((const struct extras *)ctx)->v[id];
	const struct extra_key *k = key;
	return e->kind == k->kind && e->target == k->target && e->detail == k->detail;
}

/* The id of (kind, target, detail); new ones get *next_id. Returns 0 on ENOMEM. */
uint32_t extras__get(struct extras *x, uint8_t kind, uint32_t target, uint32_t detail,
			  uint32_t *next_id, int create)
{
	if (create && idmap__reserve(&x->map, 1))
		return 0;
	if (!x->map.cap)
		return 0;
	struct extra_key k = { kind, target, detail };
	uint64_t h = extra_hash(kind, target, detail);
	size_t j = idmap__slot(&x->map, h, extra_eq, x, &k);
	int64_t i = idmap__at(&x->map, j);
	if (i >= 0)
		return x->v[i].id;
	if (!create || vec_grow(&x->v, &x->cap, x->n + 1))
		return 0;
	x->v[x->n] = (struct extra){ kind, target, detail, (*next_id)++ };
	idmap__put(&x->map, j, h, (uint32_t)x->n);
	return x->v[x->n++].id;
}

uint32_t extras__dim_count(const struct graph_item *it)
{
	return it->value ? (uint32_t)(it->value - 1) : 0;
}

/* The hash of array node n's dims k.. over its element's BTF id, built from
 * the innermost dim out, as extras__inner_target() walks them. */
static uint64_t dims_hash(uint64_t h, uint32_t dim)
{
	return hash_mix(h ^ 0x9e3779b97f4a7c15ull, dim);
}

/* A multi-dimensional array's key: node n's dims from k on, over its
 * element's BTF id. */
struct dims_key {
	const struct graph *g;
	const struct type_map *map;
	const struct graph_node *n;
	uint32_t k;
};

/* Is node c an ARRAY of exactly the key's dims of the key's element? */
static int dims_eq(const void *ctx, uint32_t c_id, const void *key)
{
	const struct dims_key *d = key;
	const struct graph *g = d->g;
	const struct graph_node *c = &g->nodes[c_id], *n = d->n;
	uint32_t elem = n->type ? d->map->ids[n->type] : 0, len = n->item_count - d->k;
	(void)ctx;
	if (c->item_count != len || (c->type ? d->map->ids[c->type] : 0) != elem)
		return 0;
	for (uint32_t i = 0; i < len; i++)
		if (extras__dim_count(&g->items[c->item_first + i]) !=
		    extras__dim_count(&g->items[n->item_first + d->k + i]))
			return 0;
	return 1;
}

/* The node that is an ARRAY of n's dims k.. (at least two) of n's element,
 * or 0. h: dims_hash() of those dims. */
static uint32_t dims_node(const struct graph *g, const struct graph_node *n, const struct type_map *map, uint32_t k,
			  uint64_t h)
{
	struct dims_key key = { g, map, n, k };
	int64_t c = idmap__find(&map->extras->multi, h, dims_eq, NULL, &key);
	return c > 0 ? (uint32_t)c : 0;
}

int extras__is_tag(const struct graph *g, const struct graph_annot *a, const char *what)
{
	return !strcmp(graph_str(g, a->name), what);
}

/* The element count of a multi-dimensional array written as one ARRAY: 0 when
 * the array stays nested (not asked for, or the product overflows BTF's 32
 * bits, where pahole silently wraps). A dimension of unknown size (0) makes
 * the product 0, as in pahole. */
int extras__flat_nelems(const struct graph *g, const struct graph_node *n, const struct type_map *map,
		       uint32_t *out)
{
	if (!map->flat_arrays || n->kind != G_ARRAY || n->item_count < 2)
		return 0;
	uint64_t p = 1;
	for (uint32_t k = 0; k < n->item_count; k++) {
		p *= extras__dim_count(&g->items[n->item_first + k]);
		if (p > UINT32_MAX)
			return 0;
	}
	*out = (uint32_t)p;
	return 1;
}

/* The element of a node's outermost ARRAY (the chain of its inner dims), or
 * a tagged pointer's target (its TYPE_TAG chain). create: plan, else look up. */
uint32_t extras__inner_target(const struct graph *g, const struct graph_node *n, const struct type_map *map,
			     uint32_t *next_id, int create)
{
	uint32_t t = n->type ? map->ids[n->type] : 0, flat;
	if (n->kind == G_ARRAY && !extras__flat_nelems(g, n, map, &flat)) {
		uint64_t h = t;
		for (uint32_t k = n->item_count; k-- > 1;) {
			uint32_t dim = extras__dim_count(&g->items[n->item_first + k]), same;
			h = dims_hash(h, dim);
			if (k < n->item_count - 1 && (same = dims_node(g, n, map, k, h)))
				t = map->ids[same];
			else
				t = extras__get(map->extras, EX_ARRAY, t, dim, next_id, create);
		}
	} else if (n->kind == G_PTR && map->type_tags) {
		/* DIE order [a1, a2] gives PTR -> a2 -> a1 -> pointee, as clang's
		 * own BTF writes `int __tag(a1) __tag(a2) *`. */
		for (uint32_t k = 0; k < n->annot_count; k++) {
			const struct graph_annot *a = &g->annots[n->annot_first + k];
			if (extras__is_tag(g, a, "btf_type_tag"))
				t = extras__get(map->extras, EX_TYPE_TAG, t, a->value, next_id, create);
		}
	}
	return t;
}

/* Node i is written as nested ARRAYs: a kept array of several dims, not
 * flattened into one. */
static int nested_array(const struct graph *g, const struct type_map *map, size_t i)
{
	const struct graph_node *n = &g->nodes[i];
	uint32_t flat;
	return n->kind == G_ARRAY && !map->dropped[i] && n->item_count > 1 && !extras__flat_nelems(g, n, map, &flat);
}

/* The extras of the nodes, planned from *next_id on: each one-dimensional
 * array entered under its own id (so int[3][4] reuses an int[4] node), the
 * multi-dimensional ones indexed by their dims, then every nested array's
 * inner ARRAYs and every tagged pointer's TYPE_TAG chain. */
int extras__plan(const struct graph *g, struct type_map *map, uint32_t *next_id)
{
	/* One-dimensional arrays are entered under their own ids first. */
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != G_ARRAY || map->dropped[i] || n->item_count > 1)
			continue;
		uint32_t own = map->ids[i];
		if (!extras__get(map->extras, EX_ARRAY, n->type ? map->ids[n->type] : 0,
			       n->item_count ? extras__dim_count(&g->items[n->item_first]) : 0, &own, 1))
			return -ENOMEM;
	}
	map->first_extra = map->extras->n;
	/* Multi-dimensional arrays by their dims, for extras__inner_target(). */
	size_t nmulti = 0;
	for (size_t i = 1; i <= g->nnodes; i++)
		nmulti += nested_array(g, map, i);
	if (nmulti) {
		struct extras *x = map->extras;
		if (idmap__reserve(&x->multi, nmulti))
			return -ENOMEM;
		for (size_t i = 1; i <= g->nnodes; i++) {
			const struct graph_node *n = &g->nodes[i];
			if (!nested_array(g, map, i))
				continue;
			uint64_t h = n->type ? map->ids[n->type] : 0;
			for (uint32_t k = n->item_count; k-- > 0;)
				h = dims_hash(h, extras__dim_count(&g->items[n->item_first + k]));
			/* Deduplicated, the graph has one node per key (were there
			 * two, the first stays, which dims_node() took before). */
			struct dims_key key = { g, map, n, 0 };
			size_t j = idmap__slot(&x->multi, h, dims_eq, NULL, &key);
			if (idmap__at(&x->multi, j) < 0)
				idmap__put(&x->multi, j, h, (uint32_t)i);
		}
	}
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		uint32_t flat;
		if (map->dropped[i] || extras__flat_nelems(g, n, map, &flat) ||
		    !((n->kind == G_ARRAY && n->item_count > 1) ||
					 (n->kind == G_PTR && n->annot_count && map->type_tags)))
			continue;
		if (!extras__inner_target(g, n, map, next_id, 1))
			return -ENOMEM;
	}
	return 0;
}


void extras__free(struct extras *x)
{
	if (!x)
		return;
	free(x->v);
	idmap__free(&x->map);
	idmap__free(&x->multi);
	free(x->tsigs);
	free(x->tparams);
	free(x);
}
