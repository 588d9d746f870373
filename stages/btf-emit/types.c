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

/* How many BTF types a node becomes. */
static uint32_t type_count(const struct graph_node *n, const uint8_t dropped)
{
	if (dropped || is_transparent(n))
		return 0;
	if (n->kind == G_ARRAY)
		return n->item_count ? n->item_count : 1;
	return 1;
}

/* ids[i] for every node; transparent nodes take their target's id. */
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
	*next_id = id;
	return 0;
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
	case G_ARRAY: {
		/* dims outermost first; each ARRAY's element is the next one. */
		uint32_t ndims = n->item_count ? n->item_count : 1;
		for (uint32_t k = 0; k < ndims; k++) {
			uint64_t v = n->item_count ? it[k].value : 0;
			uint32_t elem = k + 1 < ndims ? map->ids[i] + k + 1 : t;
			uint32_t nelems = v ? (uint32_t)(v - 1) : 0;
			int r = btf__add_array(btf, (int)index_type, (int)elem, nelems);
			if (r < 0)
				return r;
			if (!k)
				id = r;
		}
		return id;
	}
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
	plan_ids(g, map, &next);
	uint32_t index_type = 0;
	for (size_t i = 1; i <= g->nnodes && !index_type; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind == G_BASE && n->size == 4 && n->encoding == DW_ATE_signed &&
		    !strcmp(graph_str(g, n->name), "int"))
			index_type = map->ids[i];
	}
	int has_array = 0;
	for (size_t i = 1; i <= g->nnodes && !has_array; i++)
		has_array = g->nodes[i].kind == G_ARRAY && !map->dropped[i];
	int need_index = !index_type && has_array;
	if (need_index)
		index_type = next; /* added after all node types */
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
	if (!need_index)
		return 0;
	int id = btf__add_int(btf, "__ARRAY_SIZE_TYPE__", 4, 0);
	if (id < 0)
		return diag_fail(d, -id, "cannot add the array index type: %s", strerror(-id));
	if ((uint32_t)id != index_type)
		return diag_fail(d, EPROTO, "array index type got id %d, planned %u (a bug)", id, index_type);
	return 0;
}
