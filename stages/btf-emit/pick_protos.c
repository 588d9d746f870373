/* pick_protos.c: the prototypes of true signatures and arena kfuncs.
 *
 * A function written with its true signature (the feature true_signature,
 * where funcs.c's rule 6 would leave it out) gets a prototype of the
 * parameters still passed (abi.c says which); an arena kfunc (feature
 * attributes) one whose flagged pointers point to an address_space(1)
 * attribute. Equal BTF is never written twice: the prototype is a kept
 * FUNC_PROTO node's when one has the same return, parameter names and
 * types (and no varargs), else an extra type (extras.c) made once per
 * distinct content. Else libbpf's dedup of our BTF would merge them, and
 * it must find nothing to merge.
 */
#include "pick_protos.h"
#include "abi.h"
#include "elf_info.h"
#include "extras.h"
#include "picks.h"
#include "../../format/graph.h"
#include "../../common/hash.h"
#include "../../common/idmap.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t proto_hash(uint32_t ret, const struct graph *g, const struct tsig_param *p, uint32_t n)
{
	uint64_t h = hash_mix(ret, n);
	for (uint32_t k = 0; k < n; k++) {
		const char *name = graph_str(g, p[k].name), *field = graph_str(g, p[k].field);
		h = hash_mix(hash_mix(hash_mix(h, hash64(name, strlen(name))), hash64(field, strlen(field))), p[k].type);
	}
	return h;
}

static int same_params(const struct graph *g, const struct tsig_param *a, const struct tsig_param *b, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (a[k].type != b[k].type || strcmp(graph_str(g, a[k].name), graph_str(g, b[k].name)) ||
		    strcmp(graph_str(g, a[k].field), graph_str(g, b[k].field)))
			return 0;
	return 1;
}

/* The kept FUNC_PROTO nodes without varargs, by content: an id map of
 * node indexes over (return id, params), equal ones listed once (the
 * first, which a lookup found first before too). */
struct proto_index {
	struct idmap map;
	const struct graph *g;
	const struct type_map *tmap;
	struct tsig_param *scratch;
	size_t cap_scratch;
};

struct proto_key {
	uint32_t ret, n;
	const struct tsig_param *p;
};

/* Node `node`'s return and parameters (names, BTF ids, no field) against
 * the key's, read from the graph as node_params() would put them. */
static int proto_eq(const void *ctx, uint32_t node, const void *key)
{
	const struct proto_index *px = ctx;
	const struct graph *g = px->g;
	const struct proto_key *k = key;
	const struct graph_node *nd = &g->nodes[node];
	if (nd->item_count != k->n || (nd->type ? px->tmap->ids[nd->type] : 0) != k->ret)
		return 0;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct graph_item *it = &g->items[nd->item_first + i];
		if ((it->type ? px->tmap->ids[it->type] : 0) != k->p[i].type || k->p[i].field ||
		    strcmp(graph_str(g, it->name), graph_str(g, k->p[i].name)))
			return 0;
	}
	return 1;
}

static int node_params(const struct graph *g, const struct graph_node *n, const struct type_map *map,
		       struct proto_index *px)
{
	if (vec_grow(&px->scratch, &px->cap_scratch, (size_t)n->item_count + 1))
		return -ENOMEM;
	for (uint32_t k = 0; k < n->item_count; k++) {
		const struct graph_item *it = &g->items[n->item_first + k];
		px->scratch[k] = (struct tsig_param){ it->name, it->type ? map->ids[it->type] : 0, 0 };
	}
	return 0;
}

static int proto_index_build(const struct graph *g, const struct type_map *map, struct proto_index *px)
{
	size_t count = 0;
	for (size_t i = 1; i <= g->nnodes; i++)
		count += g->nodes[i].kind == G_FUNC_PROTO;
	px->g = g;
	px->tmap = map;
	if (idmap__reserve(&px->map, count))
		return -ENOMEM;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != G_FUNC_PROTO || map->dropped[i] || (n->flags & G_F_VARARGS))
			continue;
		int err = node_params(g, n, map, px);
		if (err)
			return err;
		struct proto_key k = { n->type ? map->ids[n->type] : 0, n->item_count, px->scratch };
		uint64_t h = proto_hash(k.ret, g, k.p, k.n);
		size_t j = idmap__slot(&px->map, h, proto_eq, px, &k);
		if (idmap__at(&px->map, j) < 0)
			idmap__put(&px->map, j, h, (uint32_t)i);
	}
	return 0;
}

/* The BTF id of a kept FUNC_PROTO node equal to (ret, p[0..n)), or 0. */
static uint32_t proto_index_find(const struct proto_index *px, uint32_t ret, const struct tsig_param *p, uint32_t n,
				 uint64_t h)
{
	struct proto_key k = { ret, n, p };
	int64_t node = idmap__find(&px->map, h, proto_eq, px, &k);
	return node >= 0 ? px->tmap->ids[node] : 0;
}

/* An arena pointer (feature attributes) in place of *t, the BTF type node
 * is written as: a new PTR to an address_space(1) tag on the node's
 * pointee, planned from *next on, as pahole's btf__tag_bpf_arena_ptr().
 * pahole fails the whole encode when the slot is not a pointer; we leave it
 * untagged, noted in map->arena_miss for a warning (the kernel knows an
 * arena argument by its kfunc flags, not by the tag). 0 or -ENOMEM. */
static int arena_ptr(const struct graph *g, struct type_map *map, uint32_t node, uint32_t *t, const char *func,
		     const char *slot, uint32_t *next)
{
	const struct graph_node *n = node ? &g->nodes[node] : NULL;
	if (!n || n->kind != G_PTR) {
		if (vec_grow(&map->arena_miss, &map->cap_arena_miss, map->narena_miss + 1))
			return -ENOMEM;
		map->arena_miss[map->narena_miss++] = (struct arena_miss){ func, slot };
		return 0;
	}
	uint32_t attr = extras__get(map->extras, EX_ARENA_ATTR, extras__inner_target(g, n, map, NULL, 0), 0, next, 1);
	uint32_t ptr = attr ? extras__get(map->extras, EX_ARENA_PTR, attr, 0, next, 1) : 0;
	if (!ptr)
		return -ENOMEM;
	*t = ptr;
	return 0;
}

/* map->pick_proto[i] for every pick that needs a prototype of its own: a
 * true signature (only the parameters still passed), or an arena kfunc
 * (pick_arena[i], its KF_ARENA_* flags: the flagged pointers replaced by
 * arena_ptr()'s). New ones are planned from *next on; equal ones shared. */
int pick_protos__plan(const struct graph *g, const uint32_t *picks, const uint32_t *pick_arena, size_t npicks,
			    struct type_map *map, uint32_t *next)
{
	struct extras *x = map->extras;
	struct proto_index px = { 0 };
	int err = 0;
	for (size_t i = 0; i < npicks && !err; i++) {
		int true_sig = !!(picks[i] & PICK_TRUE_SIG);
		uint32_t arena = pick_arena && !true_sig ? pick_arena[i] : 0;
		if (!true_sig && !arena)
			continue;
		if (!map->pick_proto && !(map->pick_proto = calloc(npicks, sizeof(*map->pick_proto))))
			return -ENOMEM;
		if (!px.g && (err = proto_index_build(g, map, &px)))
			break;
		const struct graph_func *f = &g->funcs[PICK_INDEX(picks[i])];
		const struct graph_node *p = &g->nodes[f->proto];
		const char *fname = graph_str(g, f->name);
		uint32_t ret = p->type ? map->ids[p->type] : 0, first = (uint32_t)x->ntparams, n = 0;
		if (vec_grow(&x->tparams, &x->cap_tparams, x->ntparams + p->item_count + 1)) {
			err = -ENOMEM;
			break;
		}
		/* The return type's first, as pahole adds them. */
		if ((arena & KF_ARENA_RET) && (err = arena_ptr(g, map, p->type, &ret, fname, "the return type", next)))
			break;
		uint8_t *keep = NULL;
		uint32_t *field = NULL;
		if (true_sig) {
			keep = malloc(p->item_count + 1);
			field = malloc((p->item_count + 1) * sizeof(*field));
			if (!keep || !field) {
				free(keep);
				free(field);
				err = -ENOMEM;
				break;
			}
			abi__true_sig_params(g, f, keep, field);
		}
		for (uint32_t k = 0; k < p->item_count && !err; k++) {
			const struct graph_item *it = &g->items[p->item_first + k];
			if (true_sig && !keep[k])
				continue; /* optimized out: not passed any more */
			uint32_t type = it->type, fname_str = 0;
			if (true_sig && field[k] != UINT32_MAX) {
				type = g->items[field[k]].type; /* the one field left */
				fname_str = g->items[field[k]].name;
			}
			uint32_t t = type ? map->ids[type] : 0;
			if ((k == 0 && (arena & KF_ARENA_ARG1)) || (k == 1 && (arena & KF_ARENA_ARG2)))
				err = arena_ptr(g, map, it->type, &t, fname, k ? "argument 2" : "argument 1", next);
			x->tparams[first + n++] = (struct tsig_param){ it->name, t, fname_str };
		}
		free(keep);
		free(field);
		if (err)
			break;
		const struct tsig_param *tp = x->tparams + first;
		uint64_t h = proto_hash(ret, g, tp, n);
		uint32_t id = proto_index_find(&px, ret, tp, n, h);
		/* An earlier one's, else a new one (its params stay). */
		for (size_t t = 0; !id && t < x->ntsigs; t++)
			if (x->tsigs[t].hash == h && x->tsigs[t].ret == ret && x->tsigs[t].n == n &&
			    same_params(g, x->tparams + x->tsigs[t].first, tp, n))
				id = extras__get(x, EX_PROTO, ret, (uint32_t)t, next, 0);
		if (!id) {
			if (vec_grow(&x->tsigs, &x->cap_tsigs, x->ntsigs + 1)) {
				err = -ENOMEM;
				break;
			}
			x->tsigs[x->ntsigs] = (struct tsig){ ret, first, n, h };
			x->ntparams += n;
			if (!(id = extras__get(x, EX_PROTO, ret, (uint32_t)x->ntsigs++, next, 1)))
				err = -ENOMEM;
		}
		map->pick_proto[i] = id;
	}
	idmap__free(&px.map);
	free(px.scratch);
	return err;
}

