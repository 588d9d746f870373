/* graph_dump.c: canonical text of a `.graph` (spec: TYPE-GRAPH.md, "Text dump"). */
#include "cus.h"
#include "graph.h"
#include "dump_text.h"
#include "dwarf_names.h"
#include "../common/diag.h"

#include <ctype.h>
#include <errno.h>


static void ref(FILE *o, const char *label, uint32_t id)
{
	if (id)
		fprintf(o, " %s=#%u", label, id);
	else
		fprintf(o, " %s=void", label);
}


static void flags(FILE *o, uint32_t f)
{
	dump_flags(o, f);
	if (f & G_F_UNNAMED_PARAM)
		fputs(" unnamed_param", o);
	if (f & G_F_REORDERED)
		fputs(" reordered", o);
}

static void annots(FILE *o, const struct graph *g, uint32_t first, uint32_t count, const char *ind)
{
	for (uint32_t i = 0; i < count; i++) {
		fprintf(o, "%sannot %s=", ind, graph_str(g, g->annots[first + i].name));
		dump_quoted(o, graph_str(g, g->annots[first + i].value));
		fputc('\n', o);
	}
}

static void cu_name(FILE *o, const struct graph *g, uint32_t cu)
{
	const struct graph_cu *c = &g->cus[cu];
	fprintf(o, "%s:", graph_str(g, g->inputs[c->input].name));
	dump_quoted(o, graph_str(g, c->name));
}

static void dump_node(FILE *o, const struct graph *g, size_t id, int full)
{
	const struct graph_node *n = &g->nodes[id];
	const struct graph_item *it = n->item_count ? g->items + n->item_first : NULL; /* NULL + 0 is undefined */
	fprintf(o, "#%zu %s ", id, graph_kind_name(n->kind));
	dump_quoted(o, graph_str(g, n->name));
	switch (n->kind) {
	case G_BASE: {
		const char *e = dwarf_ate_name(n->encoding);
		if (e)
			fprintf(o, " enc=%s", e);
		else
			fprintf(o, " enc=0x%x", n->encoding);
		fprintf(o, " size=%llu", (unsigned long long)n->size);
		if (n->bit_size)
			fprintf(o, " bits=%u", n->bit_size);
		if (n->bit_offset)
			fprintf(o, " bitoff=%u", n->bit_offset);
		break;
	}
	case G_PTR: case G_CONST: case G_VOLATILE: case G_RESTRICT: case G_ATOMIC: case G_TYPEDEF:
		ref(o, "type", n->type);
		break;
	case G_STRUCT: case G_UNION:
		fprintf(o, " size=%llu members=%u", (unsigned long long)n->size, n->item_count);
		break;
	case G_ENUM:
		fprintf(o, " size=%llu values=%u", (unsigned long long)n->size, n->item_count);
		break;
	case G_ARRAY:
		ref(o, "type", n->type);
		fputs(" dims=", o);
		for (uint32_t i = 0; i < n->item_count; i++) {
			if (it[i].value)
				fprintf(o, "[%llu]", (unsigned long long)(it[i].value - 1));
			else
				fputs("[]", o);
		}
		break;
	case G_FUNC_PROTO:
		ref(o, "ret", n->type);
		fputs(" params=(", o);
		for (uint32_t i = 0; i < n->item_count; i++) {
			if (i)
				fputs(", ", o);
			if (it[i].name)
				fprintf(o, "%s:", graph_str(g, it[i].name));
			if (it[i].type)
				fprintf(o, "#%u", it[i].type);
			else
				fputs("void", o);
		}
		fputc(')', o);
		break;
	case G_FWD:
		fprintf(o, " of=%s", n->fwd_kind == G_FWD_UNION ? "union" : n->fwd_kind == G_FWD_ENUM ? "enum" : "struct");
		break;
	case G_UNSPEC:
		break;
	case G_UNSUPPORTED: {
		const char *t = dwarf_tag_name(n->tag);
		if (t)
			fprintf(o, " tag=%s", t);
		else
			fprintf(o, " tag=0x%x", n->tag);
		if (n->type)
			ref(o, "type", n->type);
		break;
	}
	}
	flags(o, n->flags);
	fputc('\n', o);
	annots(o, g, n->annot_first, n->annot_count, "    ");
	if (n->kind == G_STRUCT || n->kind == G_UNION) {
		for (uint32_t i = 0; i < n->item_count; i++, it++) {
			fprintf(o, "    .%s", graph_str(g, it->name));
			ref(o, "type", it->type);
			fprintf(o, " bitoff=%llu", (unsigned long long)it->value);
			if (it->bit_size)
				fprintf(o, " bits=%u", it->bit_size);
			flags(o, it->flags);
			fputc('\n', o);
			annots(o, g, it->annot_first, it->annot_count, "      ");
		}
	} else if (n->kind == G_ENUM) {
		for (uint32_t i = 0; i < n->item_count; i++, it++) {
			if (n->flags & G_F_SIGNED)
				fprintf(o, "    %s=%lld\n", graph_str(g, it->name), (long long)it->value);
			else
				fprintf(o, "    %s=%llu\n", graph_str(g, it->name), (unsigned long long)it->value);
		}
	}
	uint32_t a = g->prov_off[id], e = g->prov_off[id + 1];
	fprintf(o, "    from: %u CU%s:", e - a, e - a == 1 ? "" : "s");
	for (uint32_t k = a; k < e && (full || k == a); k++) {
		fputc(' ', o);
		cu_name(o, g, g->prov[k]);
	}
	if (!full && e - a > 1)
		fputs(" ...", o);
	fputc('\n', o);
}

int graph__dump(const struct graph *g, FILE *o, int full, struct diag *d)
{
	if (g->prov_cut)
		return diag_fail(d, EINVAL, "not dumped: the graph was read without its full provenance");
	fprintf(o, "btfpipe-graph v%d inputs=%zu cus=%zu nodes=%zu funcs=%zu vars=%zu\n",
		GRAPH_FORMAT_VERSION, g->ninputs, g->ncus, g->nnodes, g->nfuncs, g->nvars);
	for (size_t i = 0; i < g->ninputs; i++) {
		const struct graph_input *in = &g->inputs[i];
		fprintf(o, "input %zu ", i);
		dump_quoted(o, graph_str(g, in->name));
		fprintf(o, " dwarf=%016llx%016llx cus=%u\n", (unsigned long long)in->dwarf_hash.hi,
			(unsigned long long)in->dwarf_hash.lo, in->ncus);
	}
	for (size_t i = 1; i <= g->nnodes; i++)
		dump_node(o, g, i, full);
	for (size_t i = 0; i < g->nfuncs; i++) {
		const struct graph_func *f = &g->funcs[i];
		fprintf(o, "func ");
		dump_quoted(o, graph_str(g, f->name));
		fprintf(o, " proto=#%u pc=0x%llx shndx=%u", f->proto, (unsigned long long)f->pc, f->shndx);
		if (f->inline_kind)
			fprintf(o, " inline=%u", f->inline_kind);
		if (f->cc)
			fprintf(o, " cc=%u", f->cc);
		fputs(" locs=(", o);
		for (uint32_t k = 0; k < f->loc_count; k++) {
			const struct graph_loc *l = &g->locs[f->loc_first + k];
			if (k)
				fputs(", ", o);
			dump_loc(o, l->loc, l->loc_reg);
		}
		fputc(')', o);
		for (uint32_t k = 0; k < f->loc_count; k++) {
			const struct graph_loc *l = &g->locs[f->loc_first + k];
			for (uint32_t a = 0; a < l->annot_count; a++) {
				fprintf(o, " param%u.%s=", k, graph_str(g, g->annots[l->annot_first + a].name));
				dump_quoted(o, graph_str(g, g->annots[l->annot_first + a].value));
			}
		}
		flags(o, f->flags);
		fputs(" cu=", o);
		cu_name(o, g, f->cu);
		fputc('\n', o);
		annots(o, g, f->annot_first, f->annot_count, "    ");
	}
	for (size_t i = 0; i < g->nvars; i++) {
		const struct graph_var *v = &g->vars[i];
		fprintf(o, "var ");
		dump_quoted(o, graph_str(g, v->name));
		ref(o, "type", v->type);
		fprintf(o, " addr=0x%llx shndx=%u", (unsigned long long)v->addr, v->shndx);
		flags(o, v->flags);
		fputs(" cu=", o);
		cu_name(o, g, v->cu);
		fputc('\n', o);
		annots(o, g, v->annot_first, v->annot_count, "    ");
	}
	if (ferror(o) || fflush(o))
		return diag_fail(d, EIO, "write error on the dump output");
	return 0;
}
