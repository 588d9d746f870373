/* funcs.c: which function candidates become BTF FUNCs. The policy lives here
 * and only here.
 *
 * Current policy, pahole 1.24's (the kernel-semantics work replaces it with
 * current pahole's rules):
 *  - candidates are grouped by name; at most one FUNC per name;
 *  - with --elf, a name needs a function symbol of exactly that name with a
 *    non-zero value; without --elf every named candidate qualifies;
 *  - a candidate with an unnamed parameter is skipped (BTF func params need
 *    names), as is one whose prototype needs a type BTF cannot express;
 *  - within a name, the first remaining candidate in CU order wins, abstract
 *    instances included (so the declared parameter order is kept); its
 *    address is not compared with the symbol's.
 * FUNCs are added in name order, each with its decl tags, with linkage
 * static as pahole writes them all (the kernel does not read it; a global
 * FUNC would only differ from pahole's BTF, not describe the code better
 * for any consumer of kernel BTF).
 */
#include "emit.h"
#include "../../common/diag.h"

#include <bpf/btf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static const struct graph *sort_graph; /* qsort has no context argument */

static int cmp_func(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(graph_str(sort_graph, sort_graph->funcs[x].name),
		       graph_str(sort_graph, sort_graph->funcs[y].name));
	return c ? c : (x < y ? -1 : x > y);
}

static int has_function_symbol(const struct elf_info *ei, const char *name)
{
	size_t n;
	const struct elf_sym *s = elf_info__find(ei, name, &n);
	for (size_t i = 0; s && i < n; i++)
		if (s[i].type == STT_FUNC && s[i].value)
			return 1;
	return 0;
}

int select_funcs(const struct graph *g, const struct elf_info *ei, const uint8_t *dropped,
		 struct skip_log *skips, uint32_t **picks_out, size_t *npicks)
{
	uint32_t *order = malloc((g->nfuncs + 1) * sizeof(*order));
	uint32_t *picks = malloc((g->nfuncs + 1) * sizeof(*picks));
	if (!order || !picks) {
		free(order);
		free(picks);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < g->nfuncs; i++)
		order[i] = i;
	sort_graph = g;
	qsort(order, g->nfuncs, sizeof(*order), cmp_func);

	size_t n = 0;
	for (size_t i = 0; i < g->nfuncs;) {
		const char *name = graph_str(g, g->funcs[order[i]].name);
		size_t end = i + 1;
		while (end < g->nfuncs && !strcmp(graph_str(g, g->funcs[order[end]].name), name))
			end++;
		const char *why = NULL;
		size_t pick = end;
		if (!*name)
			why = "no name";
		else if (ei && ei->nsyms && !has_function_symbol(ei, name))
			why = "no function symbol of that name";
		for (size_t k = i; k < end && !why && pick == end; k++) {
			const struct graph_func *f = &g->funcs[order[k]];
			if (f->flags & G_F_UNNAMED_PARAM)
				why = "a parameter has no name";
			else if (dropped[f->proto])
				why = "its prototype needs a type with no BTF form";
			else
				pick = k;
			if (pick == end && k + 1 < end)
				why = NULL; /* the next candidate may do */
		}
		if (pick < end)
			picks[n++] = order[pick];
		else if (skips)
			skip_log__add(skips, "func", *name ? name : "(unnamed)", why ? why : "no usable candidate",
				      g, g->funcs[order[i]].cu);
		i = end;
	}
	free(order);
	*picks_out = picks;
	*npicks = n;
	return 0;
}

int emit_funcs(struct btf *btf, const struct graph *g, const uint32_t *picks, size_t npicks,
	       const struct type_map *map, struct diag *d)
{
	int err = 0;
	for (size_t i = 0; i < npicks && !err; i++) {
		const struct graph_func *f = &g->funcs[picks[i]];
		const char *name = graph_str(g, f->name);
		int id = btf__add_func(btf, name, BTF_FUNC_STATIC, (int)map->ids[f->proto]);
		if (id < 0)
			return diag_fail(d, -id, "function %s: libbpf refused it: %s", name, strerror(-id));
		/* Decl tags: the parameters' (component = index), then the
		 * function's (-1), the order clang's own BTF has. */
		for (int comp = 0; comp <= (int)f->loc_count && !err; comp++) {
			int c = comp < (int)f->loc_count ? comp : -1;
			const struct graph_loc *l = c >= 0 ? &g->locs[f->loc_first + c] : NULL;
			uint32_t first = l ? l->annot_first : f->annot_first;
			uint32_t count = l ? l->annot_count : f->annot_count;
			for (uint32_t a = 0; a < count && !err; a++) {
				const struct graph_annot *an = &g->annots[first + a];
				if (strcmp(graph_str(g, an->name), "btf_decl_tag"))
					continue;
				int r = btf__add_decl_tag(btf, graph_str(g, an->value), id, c);
				if (r < 0)
					err = diag_fail(d, -r, "function %s: decl tag refused: %s", name, strerror(-r));
			}
		}
	}
	return err;
}
