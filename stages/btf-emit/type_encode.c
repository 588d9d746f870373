/* type_encode.c: the planned types written as BTF (pass 5 of run.h): each
 * node's types in node order (add_node()), then the extras and the array
 * index type, then the decl tags, each checked against the id types.c
 * planned for it. What BTF cannot say, and how it is mapped: types.c.
 */
#include "type_encode.h"
#include "btf_writer.h"
#include "emit.h"
#include "extras.h"
#include "types.h"
#include "../../format/graph.h"
#include "../../common/diag.h"

#include <bpf/btf.h>
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *name_of(const struct graph *g, uint32_t ref)
{
	return ref ? graph_str(g, ref) : NULL;
}

static int add_base(struct bw *btf, const struct graph *g, const struct graph_node *n,
		    const struct emit_opts *o)
{
	const char *name = graph_str(g, n->name);
	/* One a kept type needs: pahole's placeholder, a 4-byte INT of that
	 * name (docs/design.md, "BTF mapping"), so its users can still be written. */
	if (!types__base_fits(n, o))
		return bw__add_int(btf, "__SANITIZED_FAKE_INT__", 4,
			      n->encoding == DW_ATE_signed || n->encoding == DW_ATE_signed_char ? BTF_INT_SIGNED : 0);
	switch (n->encoding) {
	case DW_ATE_float:
		if (HAS_FEAT(o, FEAT_FLOAT))
			return bw__add_float(btf, name, n->size);
		break;
	case DW_ATE_boolean:
		return bw__add_int(btf, name, n->size, BTF_INT_BOOL);
	case DW_ATE_signed: case DW_ATE_signed_char:
		return bw__add_int(btf, name, n->size, BTF_INT_SIGNED);
	}
	return bw__add_int(btf, name, n->size, 0);
}

static int add_node(struct bw *btf, const struct graph *g, size_t i, const struct type_map *map,
		    const struct emit_opts *o, uint32_t index_type)
{
	const struct graph_node *n = &g->nodes[i];
	const struct graph_item *it = n->item_count ? g->items + n->item_first : NULL; /* NULL + 0 is undefined */
	const char *name = graph_str(g, n->name);
	uint32_t t = n->type ? map->ids[n->type] : 0;
	int id = 0;
	switch (n->kind) {
	case G_BASE:
		return add_base(btf, g, n, o);
	case G_PTR:
		return bw__add_ptr(btf, (int)extras__inner_target(g, n, map, NULL, 0));
	case G_CONST:
		return bw__add_const(btf, (int)t);
	case G_VOLATILE:
		return bw__add_volatile(btf, (int)t);
	case G_RESTRICT:
		return bw__add_restrict(btf, (int)t);
	case G_TYPEDEF:
		return bw__add_typedef(btf, name, (int)t);
	case G_STRUCT:
	case G_UNION:
		id = n->kind == G_STRUCT ? bw__add_struct(btf, name_of(g, n->name), (uint32_t)n->size)
					 : bw__add_union(btf, name_of(g, n->name), (uint32_t)n->size);
		for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
			int err = bw__add_field(btf, name_of(g, it[k].name),
					   it[k].type ? (int)map->ids[it[k].type] : 0,
					   (uint32_t)it[k].value, it[k].bit_size);
			if (err)
				return err;
		}
		return id;
	case G_ENUM:
		if (n->size > 4 && HAS_FEAT(o, FEAT_ENUM64)) {
			id = bw__add_enum64(btf, name_of(g, n->name), (uint32_t)n->size,
				       (n->flags & G_F_SIGNED) != 0);
			for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
				int err = bw__add_enum64_value(btf, graph_str(g, it[k].name), it[k].value);
				if (err)
					return err;
			}
			return id;
		}
		id = bw__add_enum(btf, name_of(g, n->name), (uint32_t)n->size);
		for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
			/* Without enum64 a wide enum's values are cut to 32 bits, as pahole. */
			int64_t v = (n->flags & G_F_SIGNED) ? (int64_t)(int32_t)it[k].value
								  : (int64_t)(uint32_t)it[k].value;
			int err = bw__add_enum_value(btf, graph_str(g, it[k].name), v);
			if (err)
				return err;
		}
		return id;
	case G_ARRAY: {
		/* dims outermost first: this node is the outermost ARRAY */
		uint32_t nelems = n->item_count ? extras__dim_count(&it[0]) : 0;
		extras__flat_nelems(g, n, map, &nelems);
		return bw__add_array(btf, (int)index_type, (int)extras__inner_target(g, n, map, NULL, 0), nelems);
	}
	case G_FUNC_PROTO:
		id = bw__add_func_proto(btf, (int)t);
		for (uint32_t k = 0; k < n->item_count && id > 0; k++) {
			int err = bw__add_func_param(btf, name_of(g, it[k].name),
						it[k].type ? (int)map->ids[it[k].type] : 0);
			if (err)
				return err;
		}
		if (id > 0 && (n->flags & G_F_VARARGS)) {
			int err = bw__add_func_param(btf, NULL, 0);
			if (err)
				return err;
		}
		return id;
	case G_FWD:
		return bw__add_fwd(btf, name, n->fwd_kind == G_FWD_UNION ? BTF_FWD_UNION
				      : n->fwd_kind == G_FWD_ENUM ? BTF_FWD_ENUM : BTF_FWD_STRUCT);
	}
	return -EINVAL;
}

int type_encode__tags(struct bw *btf, const struct graph *g, const struct type_map *map,
		      size_t a, size_t b, struct diag *d)
{
	for (size_t i = a; i < b && map->decl_tags; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (map->dropped[i] || !map->ids[i] ||
		    (n->kind != G_STRUCT && n->kind != G_UNION && n->kind != G_TYPEDEF))
			continue;
		for (int comp = -1; comp < (int)(n->kind == G_TYPEDEF ? 0 : n->item_count); comp++) {
			uint32_t first = comp < 0 ? n->annot_first : g->items[n->item_first + comp].annot_first;
			uint32_t count = comp < 0 ? n->annot_count : g->items[n->item_first + comp].annot_count;
			for (uint32_t k = 0; k < count; k++) {
				const struct graph_annot *a = &g->annots[first + k];
				if (!extras__is_tag(g, a, "btf_decl_tag"))
					continue;
				int r = bw__add_decl_tag(btf, graph_str(g, a->value), (int)map->ids[i], comp);
				if (r < 0)
					return diag_fail(d, -r, "decl tag %.*s%s on %.*s%s: %s",
							 DIAG_CLIP(graph_str(g, a->value)),
							 DIAG_CLIP(graph_str(g, n->name)), bw__strerror(r));
			}
		}
	}
	return 0;
}

uint32_t type_encode__base(const struct graph *g, const struct type_map *map, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (types__count(&g->nodes[i], map->dropped[i]))
			return map->ids[i] - 1;
	return 0;
}

int type_encode__nodes(struct bw *btf, const struct graph *g, const struct type_map *map,
		 const struct emit_opts *o, size_t a, size_t b, struct diag *d)
{
	for (size_t i = a; i < b; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (!types__count(n, map->dropped[i]))
			continue;
		int id = add_node(btf, g, i, map, o, map->index_type);
		if (id < 0)
			return diag_fail(d, -id, "graph node %zu (%s \"%.*s%s\"): BTF cannot hold it: %s", i,
					 graph_kind_name(n->kind), DIAG_CLIP(graph_str(g, n->name)), bw__strerror(id));
		int err = VERIFY(d, (uint32_t)id == map->ids[i], "graph node %zu got BTF id %d, planned %u",
				 i, id, map->ids[i]);
		if (err)
			return err;
	}
	return 0;
}

uint32_t type_encode__extras_base(const struct type_map *map)
{
	return map->first_extra < map->extras->n ? map->extras->v[map->first_extra].id - 1
						 : map->after_extras - 1;
}

int type_encode__extras(struct bw *btf, const struct graph *g, const struct type_map *map,
			struct diag *d)
{
	/* The extra types, in planned order. */
	for (size_t k = map->first_extra; k < map->extras->n; k++) {
		const struct extra *x = &map->extras->v[k];
		int id;
		if (x->kind == EX_PROTO) {
			const struct tsig *t = &map->extras->tsigs[x->detail];
			id = bw__add_func_proto(btf, (int)t->ret);
			for (uint32_t i = 0; i < t->n && id > 0; i++) {
				const struct tsig_param *p = &map->extras->tparams[t->first + i];
				/* An aggregate reduced to one field: pahole's param__field. */
				char *both = NULL;
				if (p->field && asprintf(&both, "%s__%s", graph_str(g, p->name), graph_str(g, p->field)) < 0)
					return -ENOMEM;
				int r = bw__add_func_param(btf, both ? both : graph_str(g, p->name), (int)p->type);
				free(both);
				if (r < 0)
					id = r;
			}
		} else if (x->kind == EX_ARENA_ATTR) {
			id = bw__add_type_attr(btf, ARENA_ATTR, (int)x->target);
		} else if (x->kind == EX_ARENA_PTR) {
			id = bw__add_ptr(btf, (int)x->target);
		} else {
			id = x->kind == EX_ARRAY ? bw__add_array(btf, (int)map->index_type, (int)x->target, x->detail)
						 : bw__add_type_tag(btf, graph_str(g, x->detail), (int)x->target);
		}
		const char *what = x->kind == EX_ARRAY ? "array" : x->kind == EX_PROTO ? "prototype"
				 : x->kind == EX_ARENA_PTR ? "arena pointer" : "type tag";
		if (id < 0)
			return diag_fail(d, -id, "extra %s for type %u: %s", what, x->target, bw__strerror(id));
		int err = VERIFY(d, (uint32_t)id == x->id, "extra %s for type %u got id %d, planned %u", what,
				 x->target, id, x->id);
		if (err)
			return err;
	}
	/* Then the index type, where it was planned (before any decl tag). */
	if (!map->need_index)
		return 0;
	int id = bw__add_int(btf, "__ARRAY_SIZE_TYPE__", 4, 0);
	if (id < 0)
		return diag_fail(d, -id, "cannot add the array index type: %s", bw__strerror(id));
	return VERIFY(d, (uint32_t)id == map->index_type, "array index type got id %d, planned %u", id,
		      map->index_type);
}
