/* explain.c: `btf-emit --explain NAME`: why a function or variable is, or
 * is not, in the BTF. It prints the evidence the rules of funcs.c and
 * vars.c look at (every DWARF description of NAME with its CU and prototype,
 * the symbol table's entries for it) and the decision, made by the same
 * code that decides for the real output (funcs__select()), not a copy of it. */
#include "explain.h"
#include "elf_info.h"
#include "emit.h"
#include "funcs.h"
#include "skip_log.h"
#include "../../format/graph.h"
#include "../../common/diag.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* A C-like rendering of a type node, for people. */
static void put_type(FILE *o, const struct graph *g, uint32_t t, int depth)
{
	if (!t) {
		fputs("void", o);
		return;
	}
	const struct graph_node *n = &g->nodes[t];
	const char *name = graph_str(g, n->name);
	if (depth > 8) {
		fputs("...", o);
		return;
	}
	switch (n->kind) {
	case G_STRUCT: fprintf(o, "struct %s", *name ? name : "{...}"); return;
	case G_UNION: fprintf(o, "union %s", *name ? name : "{...}"); return;
	case G_ENUM: fprintf(o, "enum %s", *name ? name : "{...}"); return;
	case G_FWD: fprintf(o, "%s %s", n->fwd_kind == G_FWD_UNION ? "union" : n->fwd_kind == G_FWD_ENUM ? "enum" : "struct", name); return;
	case G_PTR: put_type(o, g, n->type, depth + 1); fputs(" *", o); return;
	case G_CONST: fputs("const ", o); put_type(o, g, n->type, depth + 1); return;
	case G_VOLATILE: fputs("volatile ", o); put_type(o, g, n->type, depth + 1); return;
	case G_RESTRICT: put_type(o, g, n->type, depth + 1); fputs(" restrict", o); return;
	case G_ATOMIC: fputs("_Atomic ", o); put_type(o, g, n->type, depth + 1); return;
	case G_ARRAY:
		put_type(o, g, n->type, depth + 1);
		for (uint32_t i = 0; i < n->item_count; i++) {
			uint64_t v = g->items[n->item_first + i].value;
			if (v)
				fprintf(o, "[%llu]", (unsigned long long)(v - 1));
			else
				fputs("[]", o);
		}
		return;
	case G_FUNC_PROTO: fputs("fn(...)", o); return;
	default: fputs(*name ? name : "?", o); return;
	}
}

static void put_proto(FILE *o, const struct graph *g, const struct graph_func *f)
{
	const struct graph_node *p = &g->nodes[f->proto];
	put_type(o, g, p->type, 0);
	fprintf(o, " %s(", graph_str(g, f->name));
	for (uint32_t i = 0; i < p->item_count; i++) {
		const struct graph_item *it = &g->items[p->item_first + i];
		if (i)
			fputs(", ", o);
		put_type(o, g, it->type, 0);
		fprintf(o, " %s", *graph_str(g, it->name) ? graph_str(g, it->name) : "(unnamed)");
	}
	fprintf(o, "%s)", (p->flags & G_F_VARARGS) ? (p->item_count ? ", ..." : "...") : "");
}

static void put_locs(FILE *o, const struct graph *g, const struct graph_func *f)
{
	static const char *const names[] = { "no location", "reg", "constant", "expression", "empty", "pieces",
					      "stack" };
	fputs("  params at entry:", o);
	for (uint32_t i = 0; i < f->loc_count; i++) {
		const struct graph_loc *l = &g->locs[f->loc_first + i];
		if (l->loc == 1)
			fprintf(o, " reg%u", l->loc_reg);
		else
			fprintf(o, " %s", l->loc < 7 ? names[l->loc] : "?");
	}
	fputc('\n', o);
}

int explain__name(FILE *o, const struct graph *g, const struct elf_info *ei, const struct emit_opts *opts,
	    const uint8_t *dropped, const char *name)
{
	size_t nf = 0, nv = 0;
	fprintf(o, "%s:\n", name);
	for (size_t i = 0; i < g->nfuncs; i++) {
		const struct graph_func *f = &g->funcs[i];
		if (strcmp(graph_str(g, f->name), name))
			continue;
		if (!nf++)
			fputs(" DWARF descriptions (function candidates, in CU order):\n", o);
		fprintf(o, "  - CU %s: ", graph_str(g, g->cus[f->cu].name));
		put_proto(o, g, f);
		if (f->flags & G_F_HAS_PC)
			fprintf(o, " at 0x%llx (section %u)", (unsigned long long)f->pc, f->shndx);
		else
			fputs(" (no code of its own: an abstract or inlined instance)", o);
		if (f->cc)
			fprintf(o, " calling convention %u", f->cc);
		fprintf(o, "%s%s\n", (f->flags & G_F_EXTERNAL) ? " external" : " static",
			(f->flags & G_F_REORDERED) ? " reordered" : "");
		put_locs(o, g, f);
	}
	for (size_t i = 0; i < g->nvars; i++) {
		const struct graph_var *v = &g->vars[i];
		if (strcmp(graph_str(g, v->name), name))
			continue;
		if (!nv++)
			fputs(" DWARF descriptions (variable candidates):\n", o);
		fprintf(o, "  - CU %s: ", graph_str(g, g->cus[v->cu].name));
		put_type(o, g, v->type, 0);
		fprintf(o, " %s at 0x%llx in section %u (%s)%s\n", name, (unsigned long long)v->addr, v->shndx,
			ei && v->shndx < ei->nsecs ? ei->secs[v->shndx].name : "?",
			(v->flags & G_F_EXTERNAL) ? " external" : "");
	}
	if (!nf && !nv)
		fputs(" no function or variable of that name in any CU's DWARF\n", o);
	if (ei) {
		size_t len = strlen(name), shown = 0;
		for (size_t i = 0; i < ei->nsyms; i++) {
			const struct elf_sym *s = &ei->syms[i];
			if (strncmp(s->name, name, len) || (s->name[len] && s->name[len] != '.'))
				continue;
			if (!shown++)
				fputs(" symbol table:\n", o);
			fprintf(o, "  - %s %s at 0x%llx size %llu section %u%s\n",
				s->type == STT_FUNC ? "FUNC" : "OBJECT", s->name, (unsigned long long)s->value,
				(unsigned long long)s->size, s->shndx, s->bind == STB_WEAK ? " weak" :
				s->bind == STB_LOCAL ? " local" : "");
		}
		if (!shown)
			fputs(" symbol table: no symbol of that name\n", o);
	} else {
		fputs(" symbol table: none given (--elf)\n", o);
	}
	if (nf) {
		/* The real decision: funcs__select() over this name's candidates only. */
		struct skip_log log = { 0 };
		char *text = NULL;
		size_t len = 0;
		log.f = open_memstream(&text, &len);
		uint32_t *picks = NULL;
		size_t npicks = 0;
		int err = funcs__select(g, ei, dropped, opts, &log, &picks, &npicks);
		if (log.f)
			fclose(log.f);
		const char *verdict = NULL;
		for (size_t i = 0; !err && i < npicks; i++)
			if (!strcmp(graph_str(g, g->funcs[PICK_INDEX(picks[i])].name), name)) {
				const struct graph_func *f = &g->funcs[PICK_INDEX(picks[i])];
				fprintf(o, " decision: encoded%s, from CU %s\n",
					(picks[i] & PICK_TRUE_SIG) ? " with its true signature" : "",
					graph_str(g, g->cus[f->cu].name));
				verdict = "";
			}
		if (!verdict && text) {
			char key[600];
			snprintf(key, sizeof(key), "func %s: ", name);
			char *line = strstr(text, key);
			if (line) {
				char *end = strchr(line, '\n');
				fprintf(o, " decision: skipped: %.*s\n", (int)(end ? end - line - strlen(key) : 200),
					line + strlen(key));
			}
		}
		free(picks);
		free(text);
	}
	return 0;
}
