/* graph_json.c: the JSON-lines dump of a `.graph` (spec: TYPE-GRAPH.md,
 * "JSON-lines dump"), for programs (btfpipe-diff) rather than people.
 *
 * Made from graph.h's tables: every field of every node, item, func,
 * parameter location and var is printed under its name in graph.h's
 * structs, so a field added to a table is in this dump with no edit here.
 */
#include "cus.h"
#include "graph.h"
#include "dump_json.h"
#include "dwarf_names.h"
#include "../common/diag.h"

#include <errno.h>

/* One field, as its table's encoding says; flags are the record's own (an
 * enumerator's sign), loc_reg a location's register. */
struct jctx {
	FILE *o;
	const struct graph *g;
	uint32_t flags, loc_reg;
};

static void jf_u32(const struct jctx *c, const char *key, uint32_t v) { fprintf(c->o, ",\"%s\":%u", key, v); }

static void jf_u64(const struct jctx *c, const char *key, uint64_t v)
{
	fprintf(c->o, ",\"%s\":%llu", key, (unsigned long long)v);
}

static void jf_str(const struct jctx *c, const char *key, uint32_t v) { json_kstr(c->o, key, graph_str(c->g, v)); }

/* A node id; null: void. */
static void jf_ref(const struct jctx *c, const char *key, uint32_t v)
{
	if (v)
		fprintf(c->o, ",\"%s\":%u", key, v);
	else
		fprintf(c->o, ",\"%s\":null", key);
}

static void jf_ate(const struct jctx *c, const char *key, uint32_t v) { json_named(c->o, key, v, dwarf_ate_name(v)); }
static void jf_tag(const struct jctx *c, const char *key, uint32_t v) { json_named(c->o, key, v, dwarf_tag_name(v)); }

static void jf_fwd(const struct jctx *c, const char *key, uint32_t v)
{
	json_named(c->o, key, v, v == G_FWD_STRUCT ? "struct" : v == G_FWD_UNION ? "union" : v == G_FWD_ENUM ? "enum" : NULL);
}

static void jf_loc(const struct jctx *c, const char *key, uint32_t v)
{
	fprintf(c->o, ",\"%s\":%u", key, v);
	json_loc(c->o, v, c->loc_reg);
}

static void jf_mflags(const struct jctx *c, const char *key, uint32_t v) { json_flags(c->o, key, v); }

static void jf_eval(const struct jctx *c, const char *key, uint64_t v)
{
	json_eval(c->o, key, v, (c->flags & G_F_SIGNED) != 0);
}

static void put_annots(FILE *o, const struct graph *g, uint32_t first, uint32_t count)
{
	fputs(",\"annots\":[", o);
	for (uint32_t i = 0; i < count; i++)
		json_annot(o, !i, graph_str(g, g->annots[first + i].name), graph_str(g, g->annots[first + i].value));
	fputc(']', o);
}

/* ["input name","CU name"] */
static void cu_pair(FILE *o, const struct graph *g, uint32_t cu)
{
	const struct graph_cu *c = &g->cus[cu];
	fputc('[', o);
	json_str(o, graph_str(g, g->inputs[c->input].name));
	fputc(',', o);
	json_str(o, graph_str(g, c->name));
	fputc(']', o);
}

/* ,"key":["input name","CU name"] */
static void put_cu(FILE *o, const struct graph *g, const char *key, uint32_t cu)
{
	fprintf(o, ",\"%s\":", key);
	cu_pair(o, g, cu);
}

static void put_node(FILE *o, const struct graph *g, size_t id, int full)
{
	const struct graph_node *n = &g->nodes[id];
	struct jctx c = { o, g, n->flags, 0 };
	fprintf(o, "{\"node\":%zu", id);
	json_kstr(o, "kind", graph_kind_name(n->kind));
	json_kstr(o, "name", graph_str(g, n->name));
	json_flags(o, "flags", n->flags);
#define NODE_FIELD(field, enc) jf_##enc(&c, #field, n->field);
#define ITEM_FIELD(field, enc) jf_##enc(&c, #field, it->field);
#define ITEM_ONE(field, enc) +1
	switch (n->kind) {
#define NODE_KIND(kind, fields, its)                                              \
	case kind:                                                               \
		fields(NODE_FIELD)                                               \
		if ((0 its(ITEM_ONE)) == 0)                                      \
			break;                                                   \
		fputs(",\"items\":[", o);                                        \
		for (uint32_t i = 0; i < n->item_count; i++) {                   \
			const struct graph_item *it = &g->items[n->item_first + i]; \
			fprintf(o, "%s{\"item\":%u", i ? "," : "", i);           \
			its(ITEM_FIELD)                                          \
			if (it->annot_count)                                     \
				put_annots(o, g, it->annot_first, it->annot_count); \
			fputc('}', o);                                           \
		}                                                                \
		fputc(']', o);                                                   \
		break;
		GRAPH_NODE_KINDS(NODE_KIND)
#undef NODE_KIND
	}
#undef ITEM_ONE
#undef ITEM_FIELD
#undef NODE_FIELD
	if (n->annot_count)
		put_annots(o, g, n->annot_first, n->annot_count);
	uint32_t a = g->prov_off[id], e = g->prov_off[id + 1];
	fprintf(o, ",\"from_count\":%u,\"from\":[", e - a);
	for (uint32_t k = a; k < e && (full || k == a); k++) {
		if (k > a)
			fputc(',', o);
		cu_pair(o, g, g->prov[k]);
	}
	fputs("]}\n", o);
}

static void put_func(FILE *o, const struct graph *g, size_t i)
{
	const struct graph_func *f = &g->funcs[i];
	struct jctx c = { o, g, f->flags, 0 };
	fprintf(o, "{\"func\":%zu", i);
#define FUNC_FIELD(field, enc) jf_##enc(&c, #field, f->field);
	GRAPH_FUNC_FIELDS(FUNC_FIELD)
#undef FUNC_FIELD
	json_flags(o, "flags_names", f->flags);
	put_cu(o, g, "cu_name", f->cu);
	fputs(",\"locs\":[", o);
	for (uint32_t k = 0; k < f->loc_count; k++) {
		const struct graph_loc *l = &g->locs[f->loc_first + k];
		c.loc_reg = l->loc_reg;
		fprintf(o, "%s{\"param\":%u", k ? "," : "", k);
#define LOC_FIELD(field, enc) jf_##enc(&c, #field, l->field);
		GRAPH_LOC_FIELDS(LOC_FIELD)
#undef LOC_FIELD
		if (l->annot_count)
			put_annots(o, g, l->annot_first, l->annot_count);
		fputc('}', o);
	}
	fputc(']', o);
	if (f->annot_count)
		put_annots(o, g, f->annot_first, f->annot_count);
	fputs("}\n", o);
}

static void put_var(FILE *o, const struct graph *g, size_t i)
{
	const struct graph_var *v = &g->vars[i];
	struct jctx c = { o, g, v->flags, 0 };
	fprintf(o, "{\"var\":%zu", i);
#define VAR_FIELD(field, enc) jf_##enc(&c, #field, v->field);
	GRAPH_VAR_FIELDS(VAR_FIELD)
#undef VAR_FIELD
	json_flags(o, "flags_names", v->flags);
	put_cu(o, g, "cu_name", v->cu);
	if (v->annot_count)
		put_annots(o, g, v->annot_first, v->annot_count);
	fputs("}\n", o);
}

int graph__dump_json(const struct graph *g, FILE *o, int full, struct diag *d)
{
	if (g->prov_cut)
		return diag_fail(d, EINVAL, "not dumped: the graph was read without its full provenance");
	fprintf(o, "{\"format\":\"btfpipe-graph\",\"version\":%d,\"inputs\":%zu,\"cus\":%zu,\"nodes\":%zu,"
		   "\"funcs\":%zu,\"vars\":%zu}\n",
		GRAPH_FORMAT_VERSION, g->ninputs, g->ncus, g->nnodes, g->nfuncs, g->nvars);
	for (size_t i = 0; i < g->ninputs; i++) {
		const struct graph_input *in = &g->inputs[i];
		fprintf(o, "{\"input\":%zu", i);
		json_kstr(o, "name", graph_str(g, in->name));
		json_hex128(o, "dwarf", in->dwarf_hash.hi, in->dwarf_hash.lo);
		fprintf(o, ",\"cus\":%u}\n", in->ncus);
	}
	for (size_t i = 1; i <= g->nnodes; i++)
		put_node(o, g, i, full);
	for (size_t i = 0; i < g->nfuncs; i++)
		put_func(o, g, i);
	for (size_t i = 0; i < g->nvars; i++)
		put_var(o, g, i);
	if (ferror(o) || fflush(o))
		return diag_fail(d, EIO, "write error on the dump output");
	return 0;
}
