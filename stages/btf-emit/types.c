/* types.c: which BTF types each graph node becomes.
 *
 * Two passes of run.h: prepare (select) marks what cannot be written;
 * plan gives every node its BTF id before anything is added (a type may
 * refer to an id not added yet), because a node can become several BTF
 * types (an N-dimensional array is N nested ARRAYs: extras.c) or none
 * (_Atomic and DW_TAG_unspecified_type), and plans the prototypes some
 * picked functions need (pick_protos.c). type_encode.c then adds each
 * node's types in node order, so BTF ids follow the graph's order.
 *
 * Mappings for what BTF cannot say, each documented in docs/design.md, "BTF mapping":
 *  - _Atomic T is written as T: same size and layout; BTF has no atomic kind
 *    (pahole aborts the whole encode on it).
 *  - DW_TAG_unspecified_type (C's nullptr_t, asm's void) is void.
 *  - A multi-dimensional array stays multi-dimensional: nested ARRAYs,
 *    outermost first (pahole flattens it into one). With map->flat_arrays
 *    (split BTF over a base written by a flattening encoder, or asked for)
 *    it is one ARRAY of the product of its dimensions, as pahole writes it,
 *    or the module's types would never match the base's.
 *  - DWARF that has no BTF form (C++ references, ...) is left out, with
 *    everything that cannot exist without it (a struct whose member needs
 *    it, a typedef of it); a pointer to it becomes a pointer to void.
 *    Each is a line in the skip report.
 *  - Pointer btf_type_tag annotations become TYPE_TAG chains, in clang's
 *    order; btf_decl_tag annotations become DECL_TAGs.
 *  - The array index type is the graph's "int", else an INT named
 *    __ARRAY_SIZE_TYPE__, as pahole does.
 */
#include "types.h"
#include "emit.h"
#include "extras.h"
#include "pick_protos.h"
#include "picks.h"
#include "skip_log.h"
#include "../../format/graph.h"
#include "../../common/diag.h"

#include <bpf/btf.h>
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first CU node i came from, for a message; UINT32_MAX (printed as "?")
 * when the graph gives it none, which a merge never writes but a file may. */
static uint32_t first_cu(const struct graph *g, size_t i)
{
	return g->prov_off[i] < g->prov_off[i + 1] ? g->prov[g->prov_off[i]] : UINT32_MAX;
}

static int is_transparent(const struct graph_node *n)
{
	return n->kind == G_ATOMIC || n->kind == G_UNSPEC;
}

/* BTF names of structs, unions, enums, typedefs and functions are C
 * identifiers (the kernel checks); C++ templates and operators are not. */
int types__name_ok(const char *s)
{
	if (!*s)
		return 1; /* anonymous */
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '.'))
			return 0;
	return 1;
}

static int needs_ident(uint8_t kind)
{
	return kind == G_STRUCT || kind == G_UNION || kind == G_ENUM || kind == G_TYPEDEF || kind == G_FWD;
}

/* Nodes that cannot be written (DWARF with no BTF form, a C++ name BTF does
 * not allow), and those that need them by value. */
/* Why BTF cannot hold this node as it is, or NULL. BTF counts members,
 * values and parameters in 16 bits and sizes and array lengths in 32. */
static const char *beyond_btf(const struct graph *g, const struct graph_node *n)
{
	if (n->kind == G_UNSUPPORTED)
		return "DWARF with no BTF form";
	if (needs_ident(n->kind) && !types__name_ok(graph_str(g, n->name)))
		return "a name BTF does not allow (C++ template or operator)";
	if ((n->kind == G_STRUCT || n->kind == G_UNION || n->kind == G_ENUM || n->kind == G_FUNC_PROTO) &&
	    n->item_count + ((n->flags & G_F_VARARGS) != 0) > 0xffff)
		return "more than 65535 members, values or parameters, which BTF cannot count";
	if (n->size > UINT32_MAX)
		return "larger than 4 GiB, which BTF sizes cannot express";
	if (n->kind == G_ARRAY)
		for (uint32_t k = 0; k < n->item_count; k++)
			if (g->items[n->item_first + k].value > (uint64_t)UINT32_MAX + 1)
				return "more than 4G elements, which a BTF array cannot count";
	return NULL;
}

/* A cycle of typedefs and qualifiers with no pointer, struct or array in it
 * (only malformed DWARF has one): BTF would hold a loop the kernel refuses. */
static int modifier_cycle(const struct graph *g, size_t i)
{
	uint32_t t = (uint32_t)i;
	for (int steps = 0; steps < 64; steps++) {
		const struct graph_node *n = &g->nodes[t];
		if (n->kind != G_TYPEDEF && n->kind != G_CONST && n->kind != G_VOLATILE &&
		    n->kind != G_RESTRICT && n->kind != G_ATOMIC)
			return 0;
		t = n->type;
		if (!t)
			return 0;
		if (t == i)
			return 1;
	}
	return 1; /* 64 modifiers deep: a cycle not through i itself */
}

static void mark_dropped(const struct graph *g, uint8_t *dropped)
{
	for (size_t i = 1; i <= g->nnodes; i++)
		if (beyond_btf(g, &g->nodes[i]))
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
uint32_t types__count(const struct graph_node *n, const uint8_t dropped)
{
	return dropped || is_transparent(n) ? 0 : 1;
}

/* ids[i] for every node; transparent nodes take their target's id; extra
 * types get ids from the first free one on. */
static int plan_ids(const struct graph *g, struct type_map *map, uint32_t first_id, uint32_t *next_id)
{
	uint32_t id = first_id;
	for (size_t i = 1; i <= g->nnodes; i++) {
		uint32_t c = types__count(&g->nodes[i], map->dropped[i]);
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
	return extras__plan(g, map, next_id);
}

void type_map__free(struct type_map *map)
{
	extras__free(map->extras);
	free(map->pick_proto);
	free(map->arena_miss);
	free(map->ids);
	free(map->dropped);
	memset(map, 0, sizeof(*map));
}

/* A base type of a size BTF has no INT or FLOAT for (clang's
 * DW_ATE_unsigned_24 and the like, made for DW_OP_convert in location
 * lists). Unless a kept type needs it, drop_odd_bases() leaves it out. */
int types__base_fits(const struct graph_node *n, const struct emit_opts *o)
{
	uint64_t sz = n->size;
	if (n->encoding == DW_ATE_float && HAS_FEAT(o, FEAT_FLOAT))
		return sz == 2 || sz == 4 || sz == 8 || sz == 12 || sz == 16;
	return sz && !(sz & (sz - 1)) && sz <= 16;
}

int types__prepare(const struct graph *g, struct type_map *map)
{
	map->ids = calloc(g->nnodes + 1, sizeof(*map->ids));
	map->dropped = calloc(g->nnodes + 1, 1);
	map->extras = calloc(1, sizeof(*map->extras));
	if (!map->ids || !map->dropped || !map->extras)
		return -ENOMEM;
	mark_dropped(g, map->dropped);
	return 0;
}

/* A modifier cycle across CUs that the merge could not see per CU. */
static int check_cycles(const struct graph *g, struct diag *d)
{
	for (size_t i = 1; i <= g->nnodes; i++)
		if (modifier_cycle(g, i))
			return diag_fail(d, EBADMSG, "graph node %zu (%s \"%.*s%s\"): a cycle of typedefs or "
					 "qualifiers (malformed DWARF)", i, graph_kind_name(g->nodes[i].kind),
					 DIAG_CLIP(graph_str(g, g->nodes[i].name)));
	return 0;
}

/* used[] of every node a node or a variable refers to: of the kept nodes
 * only, or of all. An enum's underlying type counts unless kept_only: it is
 * not written, but the prototypes' rule has always counted it. */
static void mark_refs(const struct graph *g, const struct type_map *map, uint8_t *used, int kept_only)
{
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (kept_only && map->dropped[i])
			continue;
		if (!kept_only || n->kind != G_ENUM)
			used[n->type] = 1;
		if (n->kind == G_STRUCT || n->kind == G_UNION || n->kind == G_FUNC_PROTO)
			for (uint32_t k = 0; k < n->item_count; k++)
				used[g->items[n->item_first + k].type] = 1;
	}
	for (size_t i = 0; i < g->nvars; i++)
		used[g->vars[i].type] = 1;
}

/* Function prototypes made for candidates that were not picked: no type
 * refers to them, so they are left out (dropped value 2: not reported). */
static int drop_unused_protos(const struct graph *g, const uint32_t *picks, const uint32_t *pick_arena,
			      size_t npicks, struct type_map *map)
{
	uint8_t *used = calloc(g->nnodes + 1, 1);
	if (!used)
		return -ENOMEM;
	mark_refs(g, map, used, 0);
	for (size_t i = 0; i < npicks; i++)
		if (!(picks[i] & PICK_TRUE_SIG) && !(pick_arena && pick_arena[i])) /* else one of its own */
			used[g->funcs[PICK_INDEX(picks[i])].proto] = 1;
	for (size_t i = 1; i <= g->nnodes; i++)
		if (g->nodes[i].kind == G_FUNC_PROTO && !used[i] && !map->dropped[i])
			map->dropped[i] = 2;
	free(used);
	return 0;
}

/* Base types BTF has no size for that no kept node and no variable refers
 * to are left out (dropped value 3, reported), as BTF_KIND_INT would refuse
 * them; the rest become add_base()'s placeholder. After drop_unused_protos():
 * a prototype no function keeps is no user. */
static int drop_odd_bases(const struct graph *g, const struct emit_opts *o, struct type_map *map)
{
	int any = 0;
	for (size_t i = 1; i <= g->nnodes && !any; i++)
		any = g->nodes[i].kind == G_BASE && !map->dropped[i] && !types__base_fits(&g->nodes[i], o);
	if (!any)
		return 0;
	uint8_t *used = calloc(g->nnodes + 1, 1);
	if (!used)
		return -ENOMEM;
	mark_refs(g, map, used, 1);
	for (size_t i = 1; i <= g->nnodes; i++)
		if (g->nodes[i].kind == G_BASE && !map->dropped[i] && !used[i] && !types__base_fits(&g->nodes[i], o))
			map->dropped[i] = 3;
	free(used);
	return 0;
}

int types__plan(const struct graph *g, const struct emit_opts *o, const uint32_t *picks, const uint32_t *pick_arena,
	       size_t npicks, struct type_map *map, struct skip_log *skips, struct diag *d)
{
	int err = check_cycles(g, d);
	if (!err)
		err = drop_unused_protos(g, picks, pick_arena, npicks, map);
	if (!err)
		err = drop_odd_bases(g, o, map);
	if (err)
		return err;
	map->type_tags = HAS_FEAT(o, FEAT_TYPE_TAG);
	map->decl_tags = HAS_FEAT(o, FEAT_DECL_TAG);
	uint32_t next;
	if ((err = plan_ids(g, map, 1, &next)) || (err = pick_protos__plan(g, picks, pick_arena, npicks, map, &next)))
		return err;

	/* The index type: the graph's int, else one of our own after the extras. */
	uint32_t index_type = 0;
	int has_array = 0;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (!index_type && n->kind == G_BASE && n->size == 4 && n->encoding == DW_ATE_signed &&
		    !strcmp(graph_str(g, n->name), "int") && !map->dropped[i])
			index_type = map->ids[i];
		has_array |= n->kind == G_ARRAY && !map->dropped[i];
	}
	map->need_index = !index_type && has_array;
	map->index_type = map->need_index ? next : index_type;
	map->after_extras = next;

	for (size_t i = 1; skips && i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		const char *name = *graph_str(g, n->name) ? graph_str(g, n->name) : graph_kind_name(n->kind);
		if (map->dropped[i] == 1)
			skip_log__add(skips, "type", name,
				      beyond_btf(g, n) ? beyond_btf(g, n) : "needs a type with no BTF form",
				      g, first_cu(g, i));
		else if (map->dropped[i] == 3)
			skip_log__add(skips, "type", name,
				      "a base type of a size BTF has no INT or FLOAT for, which no kept type "
				      "refers to (DW_OP_convert in a location list)", g, first_cu(g, i));
	}
	return 0;
}

