/* types.c: where a graph node becomes BTF.
 *
 * Two passes. plan_ids() gives every node its BTF id before anything is
 * added (libbpf accepts references to ids not added yet), because a node
 * can become several BTF types (an N-dimensional array is N nested ARRAYs)
 * or none (_Atomic and DW_TAG_unspecified_type). add_node() then adds each
 * node's types in node order, so BTF ids follow the graph's order.
 *
 * Mappings for what BTF cannot say, each documented in README "BTF mapping":
 *  - _Atomic T is written as T: same size and layout; BTF has no atomic kind
 *    (pahole aborts the whole encode on it).
 *  - DW_TAG_unspecified_type (C's nullptr_t, asm's void) is void.
 *  - A multi-dimensional array stays multi-dimensional: nested ARRAYs,
 *    outermost first (pahole flattens it into one).
 *  - DWARF that has no BTF form (C++ references, ...) is left out, with
 *    everything that cannot exist without it (a struct whose member needs
 *    it, a typedef of it); a pointer to it becomes a pointer to void.
 *    Each is a line in the skip report.
 *  - The array index type is the graph's "int", else an INT named
 *    __ARRAY_SIZE_TYPE__, as pahole does.
 */
#include "emit.h"
#include "../../common/diag.h"
#include "../../common/vec.h"

#include <bpf/btf.h>
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_transparent(const struct graph_node *n)
{
	return n->kind == G_ATOMIC || n->kind == G_UNSPEC;
}

/* Nodes that cannot be written, and those that need them by value. */
static void mark_dropped(const struct graph *g, uint8_t *dropped)
{
	for (size_t i = 1; i <= g->nnodes; i++)
		if (g->nodes[i].kind == G_UNSUPPORTED)
			dropped[i] = 1;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 1; i <= g->nnodes; i++) {
			const struct graph_node *n = &g->nodes[i];
			if (dropped[i] || n->kind == G_PTR)
				continue;
			int bad = n->type && dropped[n->type] && n->kind != G_ENUM;
			if (n->kind == G_STRUCT || n->kind == G_UNION || n->kind == G_FUNC_PROTO)
				for (uint32_t k = 0; k < n->item_count && !bad; k++) {
					uint32_t t = g->items[n->item_first + k].type;
					bad = t && dropped[t];
				}
			if (bad) {
				dropped[i] = 1;
				changed = 1;
			}
		}
	}
}

/* How many BTF types a node itself is: its outermost ARRAY, or one type. */
static uint32_t type_count(const struct graph_node *n, const uint8_t dropped)
{
	return dropped || is_transparent(n) ? 0 : 1;
}

/* The inner ARRAYs of multi-dimensional arrays, added after all nodes.
 * (elem, nelems) -> BTF id, shared with the graph's one-dimensional arrays so
 * int[3][4] reuses an existing int[4] instead of repeating it. */
struct array_key {
	uint32_t elem, nelems, id;
};

static int find_array(const struct array_key *a, size_t n, uint32_t elem, uint32_t nelems)
{
	for (size_t i = n; i-- > 0;) /* few inner arrays: a linear scan is enough */
		if (a[i].elem == elem && a[i].nelems == nelems)
			return (int)a[i].id;
	return 0;
}

static uint32_t dim_count(const struct graph_item *it)
{
	return it->value ? (uint32_t)(it->value - 1) : 0;
}

/* ids[i] for every node; transparent nodes take their target's id; inner
 * array chains get ids from *next_id on and are listed in map->inner. */
static int plan_ids(const struct graph *g, struct type_map *map, uint32_t *next_id)
{
	uint32_t id = 1;
	for (size_t i = 1; i <= g->nnodes; i++) {
		uint32_t c = type_count(&g->nodes[i], map->dropped[i]);
		map->ids[i] = c ? id : 0;
		id += c;
	}
	/* Transparent chains (atomic -> atomic -> T) resolve to T's id. */
	for (size_t i = 1; i <= g->nnodes; i++) {
		uint32_t t = (uint32_t)i;
		for (int depth = 0; depth < 64 && t && is_transparent(&g->nodes[t]); depth++)
			t = g->nodes[t].kind == G_ATOMIC ? g->nodes[t].type : 0;
		if (is_transparent(&g->nodes[i]))
			map->ids[i] = t && !map->dropped[t] ? map->ids[t] : 0;
	}
	/* One-dimensional arrays first, so chains can reuse them. */
	size_t cap = 0;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != G_ARRAY || map->dropped[i] || n->item_count > 1)
			continue;
		if (vec_grow(&map->arrays, &cap, map->narrays + 1))
			return -ENOMEM;
		map->arrays[map->narrays++] = (struct array_key){
			n->type ? map->ids[n->type] : 0,
			n->item_count ? dim_count(&g->items[n->item_first]) : 0, map->ids[i] };
	}
	map->first_inner = map->narrays;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != G_ARRAY || map->dropped[i] || n->item_count < 2)
			continue;
		uint32_t elem = n->type ? map->ids[n->type] : 0;
		for (uint32_t k = n->item_count - 1; k >= 1; k--) {
			uint32_t cnt = dim_count(&g->items[n->item_first + k]);
			int have = find_array(map->arrays, map->narrays, elem, cnt);
			if (!have) {
				if (vec_grow(&map->arrays, &cap, map->narrays + 1))
					return -ENOMEM;
				map->arrays[map->narrays++] = (struct array_key){ elem, cnt, id };
				have = (int)id++;
			}
			elem = (uint32_t)have;
		}
	}
	*next_id = id;
	return 0;
}

/* The element of a node's outermost ARRAY: the chain of its inner dims. */
static uint32_t outer_elem(const struct graph *g, const struct graph_node *n, const struct type_map *map)
{
	uint32_t elem = n->type ? map->ids[n->type] : 0;
	for (uint32_t k = n->item_count - 1; k >= 1 && n->item_count >= 2; k--)
		elem = (uint32_t)find_array(map->arrays, map->narrays, elem,
					    dim_count(&g->items[n->item_first + k]));
	return elem;
}

static const char *name_of(const struct graph *g, uint32_t ref)
{
	return ref ? graph_str(g, ref) : NULL;
}

static int add_base(struct btf *btf, const struct graph *g, const struct graph_node *n,
		    const struct emit_opts *o)
{
	const char *name = graph_str(g, n->name);
	switch (n->encoding) {
	case DW_ATE_float:
		if (!o->no_floats)
			return btf__add_float(btf, name, n->size);
		break;
	case DW_ATE_boolean:
		return btf__add_int(btf, name, n->size, BTF_INT_BOOL);
	case DW_ATE_signed: case DW_ATE_signed_char:
		return btf__add_int(btf, name, n->size, BTF_INT_SIGNED);
	}
	return btf__add_int(btf, name, n->size, 0);
}

static int add_node(struct btf *btf, const struct graph *g, size_t i, const struct type_map *map,
		    const struct emit_opts *o, uint32_t index_type)
{
	const struct graph_node *n = &g->nodes[i];
	const struct graph_item *it = g->items + n->item_first;
	const char *name = graph_str(g, n->name);
	uint32_t t = n->type ? map->ids[n->type] : 0;
	int id = 0;
	switch (n->kind) {
	case G_BASE:
		return add_base(btf, g, n, o);
	case G_PTR:
		return btf__add_ptr(btf, (int)t);
	case G_CONST:
		return btf__add_const(btf, (int)t);
	case G_VOLATILE:
		return btf__add_volatile(btf, (int)t);
	case G_RESTRICT:
		return btf__add_restrict(btf, (int)t);
	case G_TYPEDEF:
		return btf__add_typedef(btf, name, (int)t);
	case G_STRUCT:
	case G_UNION:
		id = n->kind == G_STRUCT ? btf__add_struct(btf, name_of(g, n->name), (uint32_t)n->size)
					 : btf__add_union(btf, name_of(g, n->name), (uint32_t)n->size);
		for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
			int err = btf__add_field(btf, name_of(g, it[k].name),
						 it[k].type ? (int)map->ids[it[k].type] : 0,
						 (uint32_t)it[k].value, it[k].bit_size);
			if (err)
				return err;
		}
		return id;
	case G_ENUM:
		if (n->size > 4) {
			id = btf__add_enum64(btf, name_of(g, n->name), (uint32_t)n->size,
					     (n->flags & G_F_SIGNED) != 0);
			for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
				int err = btf__add_enum64_value(btf, graph_str(g, it[k].name), it[k].value);
				if (err)
					return err;
			}
			return id;
		}
		id = btf__add_enum(btf, name_of(g, n->name), (uint32_t)n->size);
		for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
			int64_t v = (n->flags & G_F_SIGNED) ? (int64_t)it[k].value
								  : (int64_t)(uint32_t)it[k].value;
			int err = btf__add_enum_value(btf, graph_str(g, it[k].name), v);
			if (err)
				return err;
		}
		return id;
	case G_ARRAY:
		/* dims outermost first: this node is the outermost ARRAY */
		return btf__add_array(btf, (int)index_type, (int)outer_elem(g, n, map),
				      n->item_count ? dim_count(&it[0]) : 0);
	case G_FUNC_PROTO:
		id = btf__add_func_proto(btf, (int)t);
		for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
			int err = btf__add_func_param(btf, name_of(g, it[k].name),
						      it[k].type ? (int)map->ids[it[k].type] : 0);
			if (err)
				return err;
		}
		if (id > 0 && (n->flags & G_F_VARARGS)) {
			int err = btf__add_func_param(btf, NULL, 0);
			if (err)
				return err;
		}
		return id;
	case G_FWD:
		return btf__add_fwd(btf, name, n->fwd_kind == G_FWD_UNION ? BTF_FWD_UNION
					     : n->fwd_kind == G_FWD_ENUM ? BTF_FWD_ENUM : BTF_FWD_STRUCT);
	}
	return -EINVAL;
}

int emit_types(struct btf *btf, const struct graph *g, const struct emit_opts *o,
	       struct type_map *map, struct skip_log *skips, struct diag *d)
{
	map->ids = calloc(g->nnodes + 1, sizeof(*map->ids));
	map->dropped = calloc(g->nnodes + 1, 1);
	if (!map->ids || !map->dropped)
		return -ENOMEM;
	mark_dropped(g, map->dropped);
	uint32_t next;
	int err = plan_ids(g, map, &next);
	if (err)
		return err;

	/* The index type: the graph's int, else one of our own after the rest. */
	uint32_t index_type = 0;
	int has_array = 0;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (!index_type && n->kind == G_BASE && n->size == 4 && n->encoding == DW_ATE_signed &&
		    !strcmp(graph_str(g, n->name), "int") && !map->dropped[i])
			index_type = map->ids[i];
		has_array |= n->kind == G_ARRAY && !map->dropped[i];
	}
	int need_index = !index_type && has_array;
	if (need_index)
		index_type = next;

	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (map->dropped[i]) {
			if (skips)
				skip_log__add(skips, "type", graph_str(g, n->name),
					      n->kind == G_UNSUPPORTED ? "DWARF with no BTF form"
								       : "needs a type with no BTF form",
					      g, g->prov[g->prov_off[i]]);
			continue;
		}
		if (!type_count(n, 0))
			continue;
		int id = add_node(btf, g, i, map, o, index_type);
		if (id < 0)
			return diag_fail(d, -id, "graph node %zu (%s \"%s\"): libbpf refused it: %s", i,
					 graph_kind_name(n->kind), graph_str(g, n->name), strerror(-id));
		if ((uint32_t)id != map->ids[i])
			return diag_fail(d, EPROTO, "graph node %zu got BTF id %d, planned %u (a bug)", i, id,
					 map->ids[i]);
	}
	/* The inner arrays of multi-dimensional ones, in planned order. */
	for (size_t k = map->first_inner; k < map->narrays; k++) {
		const struct array_key *a = &map->arrays[k];
		int id = btf__add_array(btf, (int)index_type, (int)a->elem, a->nelems);
		if (id < 0 || (uint32_t)id != a->id)
			return diag_fail(d, id < 0 ? -id : EPROTO, "inner array [%u] of type %u: %s",
					 a->nelems, a->elem, id < 0 ? strerror(-id) : "unplanned id (a bug)");
	}
	if (!need_index)
		return 0;
	int id = btf__add_int(btf, "__ARRAY_SIZE_TYPE__", 4, 0);
	if (id < 0)
		return diag_fail(d, -id, "cannot add the array index type: %s", strerror(-id));
	if ((uint32_t)id != index_type)
		return diag_fail(d, EPROTO, "array index type got id %d, planned %u (a bug)", id, index_type);
	return 0;
}
