/* types.c: where a graph node becomes BTF.
 *
 * Two passes. plan_ids() gives every node its BTF id before anything is
 * added (a type may refer to an id not added yet), because a node
 * can become several BTF types (an N-dimensional array is N nested ARRAYs)
 * or none (_Atomic and DW_TAG_unspecified_type). add_node() then adds each
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
#include "btf_writer.h"
#include "elf_info.h"
#include "emit.h"
#include "abi.h"
#include "picks.h"
#include "skip_log.h"
#include "../../format/graph.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

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
static uint32_t type_count(const struct graph_node *n, const uint8_t dropped)
{
	return dropped || is_transparent(n) ? 0 : 1;
}

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
	uint32_t *slots;		/* index + 1, open addressing */
	size_t nslots;
	struct tsig *tsigs;
	size_t ntsigs, cap_tsigs;
	struct tsig_param *tparams;
	size_t ntparams, cap_tparams;
	/* The graph's multi-dimensional arrays by (element, dims): a chain of
	 * inner dims that is a node of its own is that node (int[4][2][4]'s
	 * [2][4] is the graph's int[2][4] when it has one). Node index + 1,
	 * open addressing. */
	uint32_t *mslots;
	size_t nmslots;
};

static uint64_t extra_hash(uint8_t kind, uint32_t target, uint32_t detail)
{
	return hash_mix(hash_mix(kind, target), detail);
}

/* The id of (kind, target, detail); new ones get *next_id. Returns 0 on ENOMEM. */
static uint32_t extra_get(struct extras *x, uint8_t kind, uint32_t target, uint32_t detail,
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

static uint32_t dim_count(const struct graph_item *it)
{
	return it->value ? (uint32_t)(it->value - 1) : 0;
}

/* The hash of array node n's dims k.. over its element's BTF id, built from
 * the innermost dim out, as inner_target() walks them. */
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
		while (i < len && dim_count(&g->items[c->item_first + i]) == dim_count(&g->items[n->item_first + k + i]))
			i++;
		if (i == len)
			return x->mslots[j] - 1;
	}
	return 0;
}

static int is_tag(const struct graph *g, const struct graph_annot *a, const char *what)
{
	return !strcmp(graph_str(g, a->name), what);
}

/* The element count of a multi-dimensional array written as one ARRAY: 0 when
 * the array stays nested (not asked for, or the product overflows BTF's 32
 * bits, where pahole silently wraps). A dimension of unknown size (0) makes
 * the product 0, as in pahole. */
static int flat_nelems(const struct graph *g, const struct graph_node *n, const struct type_map *map,
		       uint32_t *out)
{
	if (!map->flat_arrays || n->kind != G_ARRAY || n->item_count < 2)
		return 0;
	uint64_t p = 1;
	for (uint32_t k = 0; k < n->item_count; k++) {
		p *= dim_count(&g->items[n->item_first + k]);
		if (p > UINT32_MAX)
			return 0;
	}
	*out = (uint32_t)p;
	return 1;
}

/* The element of a node's outermost ARRAY (the chain of its inner dims), or
 * a tagged pointer's target (its TYPE_TAG chain). create: plan, else look up. */
static uint32_t inner_target(const struct graph *g, const struct graph_node *n, const struct type_map *map,
			     uint32_t *next_id, int create)
{
	uint32_t t = n->type ? map->ids[n->type] : 0, flat;
	if (n->kind == G_ARRAY && !flat_nelems(g, n, map, &flat)) {
		uint64_t h = t;
		for (uint32_t k = n->item_count; k-- > 1;) {
			uint32_t dim = dim_count(&g->items[n->item_first + k]), same;
			h = dims_hash(h, dim);
			if (k < n->item_count - 1 && (same = dims_node(g, n, map, k, h)))
				t = map->ids[same];
			else
				t = extra_get(map->extras, EX_ARRAY, t, dim, next_id, create);
		}
	} else if (n->kind == G_PTR && map->type_tags) {
		/* DIE order [a1, a2] gives PTR -> a2 -> a1 -> pointee, as clang's
		 * own BTF writes `int __tag(a1) __tag(a2) *`. */
		for (uint32_t k = 0; k < n->annot_count; k++) {
			const struct graph_annot *a = &g->annots[n->annot_first + k];
			if (is_tag(g, a, "btf_type_tag"))
				t = extra_get(map->extras, EX_TYPE_TAG, t, a->value, next_id, create);
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
	return n->kind == G_ARRAY && !map->dropped[i] && n->item_count > 1 && !flat_nelems(g, n, map, &flat);
}

/* ids[i] for every node; transparent nodes take their target's id; extra
 * types get ids from the first free one on. */
static int plan_ids(const struct graph *g, struct type_map *map, uint32_t first_id, uint32_t *next_id)
{
	uint32_t id = first_id;
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
	/* One-dimensional arrays are entered under their own ids first. */
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != G_ARRAY || map->dropped[i] || n->item_count > 1)
			continue;
		uint32_t own = map->ids[i];
		if (!extra_get(map->extras, EX_ARRAY, n->type ? map->ids[n->type] : 0,
			       n->item_count ? dim_count(&g->items[n->item_first]) : 0, &own, 1))
			return -ENOMEM;
	}
	map->first_extra = map->extras->n;
	/* Multi-dimensional arrays by their dims, for inner_target(). */
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
				h = dims_hash(h, dim_count(&g->items[n->item_first + k]));
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
		if (map->dropped[i] || flat_nelems(g, n, map, &flat) ||
		    !((n->kind == G_ARRAY && n->item_count > 1) ||
					 (n->kind == G_PTR && n->annot_count && map->type_tags)))
			continue;
		if (!inner_target(g, n, map, &id, 1))
			return -ENOMEM;
	}
	*next_id = id;
	return 0;
}

static const char *name_of(const struct graph *g, uint32_t ref)
{
	return ref ? graph_str(g, ref) : NULL;
}

/* A base type of a size BTF has no INT or FLOAT for (clang's
 * DW_ATE_unsigned_24 and the like, made for DW_OP_convert in location
 * lists). Unless a kept type needs it, drop_odd_bases() leaves it out. */
static int base_fits_btf(const struct graph_node *n, const struct emit_opts *o)
{
	uint64_t sz = n->size;
	if (n->encoding == DW_ATE_float && HAS_FEAT(o, FEAT_FLOAT))
		return sz == 2 || sz == 4 || sz == 8 || sz == 12 || sz == 16;
	return sz && !(sz & (sz - 1)) && sz <= 16;
}

static int add_base(struct bw *btf, const struct graph *g, const struct graph_node *n,
		    const struct emit_opts *o)
{
	const char *name = graph_str(g, n->name);
	/* One a kept type needs: pahole's placeholder, a 4-byte INT of that
	 * name (docs/design.md, "BTF mapping"), so its users can still be written. */
	if (!base_fits_btf(n, o))
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
		return bw__add_ptr(btf, (int)inner_target(g, n, map, NULL, 0));
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
		uint32_t nelems = n->item_count ? dim_count(&it[0]) : 0;
		flat_nelems(g, n, map, &nelems);
		return bw__add_array(btf, (int)index_type, (int)inner_target(g, n, map, NULL, 0), nelems);
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

void type_map__free(struct type_map *map)
{
	if (map->extras) {
		free(map->extras->v);
		free(map->extras->slots);
		free(map->extras->mslots);
		free(map->extras->tsigs);
		free(map->extras->tparams);
		free(map->extras);
	}
	free(map->pick_proto);
	free(map->ids);
	free(map->dropped);
	memset(map, 0, sizeof(*map));
}

int types__encode_tags(struct bw *btf, const struct graph *g, const struct type_map *map,
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
				if (!is_tag(g, a, "btf_decl_tag"))
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
		any = g->nodes[i].kind == G_BASE && !map->dropped[i] && !base_fits_btf(&g->nodes[i], o);
	if (!any)
		return 0;
	uint8_t *used = calloc(g->nnodes + 1, 1);
	if (!used)
		return -ENOMEM;
	mark_refs(g, map, used, 1);
	for (size_t i = 1; i <= g->nnodes; i++)
		if (g->nodes[i].kind == G_BASE && !map->dropped[i] && !used[i] && !base_fits_btf(&g->nodes[i], o))
			map->dropped[i] = 3;
	free(used);
	return 0;
}

/* ---- true signatures' prototypes ---------------------------------------- *
 *
 * A function written with its true signature (funcs.c rule 9) gets a
 * prototype of the parameters still passed. Equal BTF is never written
 * twice: the prototype is a kept FUNC_PROTO node's when one has the same
 * return, parameter names and types (and no varargs), else an extra type
 * made once per distinct content. Else libbpf's dedup of our BTF would
 * merge them, and it must find nothing to merge. */

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

/* The kept FUNC_PROTO nodes without varargs, by content: one hash table
 * (node index + 1 per slot) over (return id, params). */
struct proto_index {
	uint32_t *slot;
	size_t cap;
	struct tsig_param *scratch;
	size_t cap_scratch;
};

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
	px->cap = 64;
	while (px->cap < count * 2 + 2)
		px->cap *= 2;
	if (!(px->slot = calloc(px->cap, sizeof(*px->slot))))
		return -ENOMEM;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != G_FUNC_PROTO || map->dropped[i] || (n->flags & G_F_VARARGS))
			continue;
		int err = node_params(g, n, map, px);
		if (err)
			return err;
		uint32_t ret = n->type ? map->ids[n->type] : 0;
		size_t j = proto_hash(ret, g, px->scratch, n->item_count) & (px->cap - 1);
		while (px->slot[j])
			j = (j + 1) & (px->cap - 1);
		px->slot[j] = (uint32_t)i + 1;
	}
	return 0;
}

/* The BTF id of a kept FUNC_PROTO node equal to (ret, p[0..n)), or 0. */
static int proto_index_find(const struct graph *g, const struct type_map *map, struct proto_index *px,
			    uint32_t ret, const struct tsig_param *p, uint32_t n, uint64_t h, uint32_t *id)
{
	*id = 0;
	for (size_t j = h & (px->cap - 1); px->slot[j]; j = (j + 1) & (px->cap - 1)) {
		const struct graph_node *nd = &g->nodes[px->slot[j] - 1];
		if (nd->item_count != n || (nd->type ? map->ids[nd->type] : 0) != ret)
			continue;
		int err = node_params(g, nd, map, px);
		if (err)
			return err;
		if (same_params(g, px->scratch, p, n)) {
			*id = map->ids[px->slot[j] - 1];
			return 0;
		}
	}
	return 0;
}

/* An arena pointer (feature attributes) in place of *t, the BTF type node
 * is written as: a new PTR to an address_space(1) tag on the node's
 * pointee, planned from *next on, as pahole's btf__tag_bpf_arena_ptr().
 * pahole fails the whole encode when the slot is not a pointer; we leave it
 * untagged and warn (the kernel knows an arena argument by its kfunc flags,
 * not by the tag). 0 or -ENOMEM. */
static int arena_ptr(const struct graph *g, struct type_map *map, uint32_t node, uint32_t *t, const char *func,
		     const char *slot, uint32_t *next)
{
	const struct graph_node *n = node ? &g->nodes[node] : NULL;
	if (!n || n->kind != G_PTR) {
		diag_warn("btf-emit", "kfunc %s: %s is flagged arena but is not a pointer: no %s tag", func, slot,
			  ARENA_ATTR);
		return 0;
	}
	uint32_t attr = extra_get(map->extras, EX_ARENA_ATTR, inner_target(g, n, map, NULL, 0), 0, next, 1);
	uint32_t ptr = attr ? extra_get(map->extras, EX_ARENA_PTR, attr, 0, next, 1) : 0;
	if (!ptr)
		return -ENOMEM;
	*t = ptr;
	return 0;
}

/* map->pick_proto[i] for every pick that needs a prototype of its own: a
 * true signature (only the parameters still passed), or an arena kfunc
 * (pick_arena[i], its KF_ARENA_* flags: the flagged pointers replaced by
 * arena_ptr()'s). New ones are planned from *next on; equal ones shared. */
static int plan_pick_protos(const struct graph *g, const uint32_t *picks, const uint32_t *pick_arena, size_t npicks,
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
		if (!px.slot && (err = proto_index_build(g, map, &px)))
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
		uint32_t id = 0;
		if ((err = proto_index_find(g, map, &px, ret, tp, n, h, &id)))
			break;
		/* An earlier one's, else a new one (its params stay). */
		for (size_t t = 0; !id && t < x->ntsigs; t++)
			if (x->tsigs[t].hash == h && x->tsigs[t].ret == ret && x->tsigs[t].n == n &&
			    same_params(g, x->tparams + x->tsigs[t].first, tp, n))
				id = extra_get(x, EX_PROTO, ret, (uint32_t)t, next, 0);
		if (!id) {
			if (vec_grow(&x->tsigs, &x->cap_tsigs, x->ntsigs + 1)) {
				err = -ENOMEM;
				break;
			}
			x->tsigs[x->ntsigs] = (struct tsig){ ret, first, n, h };
			x->ntparams += n;
			if (!(id = extra_get(x, EX_PROTO, ret, (uint32_t)x->ntsigs++, next, 1)))
				err = -ENOMEM;
		}
		map->pick_proto[i] = id;
	}
	free(px.slot);
	free(px.scratch);
	return err;
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
	if ((err = plan_ids(g, map, 1, &next)) || (err = plan_pick_protos(g, picks, pick_arena, npicks, map, &next)))
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

uint32_t types__base(const struct graph *g, const struct type_map *map, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (type_count(&g->nodes[i], map->dropped[i]))
			return map->ids[i] - 1;
	return 0;
}

int types__encode(struct bw *btf, const struct graph *g, const struct type_map *map,
		 const struct emit_opts *o, size_t a, size_t b, struct diag *d)
{
	for (size_t i = a; i < b; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (!type_count(n, map->dropped[i]))
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

uint32_t types__extras_base(const struct type_map *map)
{
	return map->first_extra < map->extras->n ? map->extras->v[map->first_extra].id - 1
						 : map->after_extras - 1;
}

int types__encode_extras(struct bw *btf, const struct graph *g, const struct type_map *map,
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
