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
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t extra_hash(uint8_t kind, uint32_t target, uint32_t detail)
{
	return hash_mix(hash_mix(kind, target), detail);
}

/* The id of (kind, target, detail); new ones get *next_id. Returns 0 on ENOMEM. */
uint32_t extras__get(struct extras *x, uint8_t kind, uint32_t target, uint32_t detail,
			  uint32_t *next_id, int create)
{
	if ((x->n + 1) * 2 > x->nslots && create) {
		size_t ns = x->nslots ? x->nslots * 2 : 1024;
		uint32_t *sl = calloc(ns, sizeof(*sl));
		if (!sl)
			return 0;
		for (size_t i = 0; i < x->n; i++) {
			size_t j = extra_hash(x->v[i].kind, x->v[i].target, x->v[i].detail) & (ns - 1);
			while (sl[j])
				j = (j + 1) & (ns - 1);
			sl[j] = (uint32_t)i + 1;
		}
		free(x->slots);
		x->slots = sl;
		x->nslots = ns;
	}
	if (!x->nslots)
		return 0;
	size_t j = extra_hash(kind, target, detail) & (x->nslots - 1);
	for (; x->slots[j]; j = (j + 1) & (x->nslots - 1)) {
		const struct extra *e = &x->v[x->slots[j] - 1];
		if (e->kind == kind && e->target == target && e->detail == detail)
			return e->id;
	}
	if (!create || vec_grow(&x->v, &x->cap, x->n + 1))
		return 0;
	x->v[x->n] = (struct extra){ kind, target, detail, (*next_id)++ };
	x->slots[j] = (uint32_t)++x->n;
	return x->v[x->n - 1].id;
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

/* The node that is an ARRAY of n's dims k.. (at least two) of n's element,
 * or 0. h: dims_hash() of those dims. */
static uint32_t dims_node(const struct graph *g, const struct graph_node *n, const struct type_map *map, uint32_t k,
			  uint64_t h)
{
	const struct extras *x = map->extras;
	if (!x->nmslots)
		return 0;
	uint32_t elem = n->type ? map->ids[n->type] : 0, len = n->item_count - k;
	for (size_t j = h & (x->nmslots - 1); x->mslots[j]; j = (j + 1) & (x->nmslots - 1)) {
		const struct graph_node *c = &g->nodes[x->mslots[j] - 1];
		if (c->item_count != len || (c->type ? map->ids[c->type] : 0) != elem)
			continue;
		uint32_t i = 0;
		while (i < len && extras__dim_count(&g->items[c->item_first + i]) == extras__dim_count(&g->items[n->item_first + k + i]))
			i++;
		if (i == len)
			return x->mslots[j] - 1;
	}
	return 0;
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
		for (x->nmslots = 16; x->nmslots < nmulti * 2; x->nmslots *= 2)
			;
		if (!(x->mslots = calloc(x->nmslots, sizeof(*x->mslots))))
			return -ENOMEM;
		for (size_t i = 1; i <= g->nnodes; i++) {
			const struct graph_node *n = &g->nodes[i];
			if (!nested_array(g, map, i))
				continue;
			uint64_t h = n->type ? map->ids[n->type] : 0;
			for (uint32_t k = n->item_count; k-- > 0;)
				h = dims_hash(h, extras__dim_count(&g->items[n->item_first + k]));
			/* Deduplicated, the graph has one node per key (were there
			 * two, dims_node() would take the first either way). */
			size_t j = h & (x->nmslots - 1);
			while (x->mslots[j])
				j = (j + 1) & (x->nmslots - 1);
			x->mslots[j] = (uint32_t)i + 1;
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
	free(x->slots);
	free(x->mslots);
	free(x->tsigs);
	free(x->tparams);
	free(x);
}
