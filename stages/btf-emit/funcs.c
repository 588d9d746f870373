/* funcs.c: which function candidates become BTF FUNCs. The policy lives here
 * and only here.
 *
 * Current policy (deliberately simple; the kernel-semantics work replaces it
 * with pahole's full rule set):
 *  - candidates are grouped by name; at most one FUNC per name;
 *  - a name needs a function symbol in --elf's symbol table whose name is the
 *    candidate's or starts with it followed by '.' (foo.isra.0, foo.cold);
 *    without --elf every named candidate with code qualifies;
 *  - a candidate with an unnamed parameter is skipped (BTF func params need
 *    names), as is one whose prototype needs a type BTF cannot express;
 *  - within a name, the first candidate in CU order whose pc is a symbol
 *    address of that name wins, else the first candidate.
 * FUNCs are added in name order, each with its decl tags.
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

/* Does the symbol table have a function called name, or name.suffix? */
static int symbol_matches(const struct elf_info *ei, const char *name, uint64_t pc, int *at_pc)
{
	size_t n, len = strlen(name);
	*at_pc = 0;
	int any = 0;
	const struct elf_sym *s = elf_info__find(ei, name, &n);
	for (size_t i = 0; s && i < n; i++)
		if (s[i].type == STT_FUNC) {
			any = 1;
			*at_pc |= s[i].value == pc;
		}
	/* name.suffix sorts right after name and before name + any char > '.'. */
	size_t lo = s ? (size_t)(s - ei->syms) + n : 0;
	if (!s) {
		size_t l = 0, h = ei->nsyms;
		while (l < h) {
			size_t mid = (l + h) / 2;
			if (strcmp(ei->syms[mid].name, name) < 0)
				l = mid + 1;
			else
				h = mid;
		}
		lo = l;
	}
	for (size_t i = lo; i < ei->nsyms; i++) {
		const char *sn = ei->syms[i].name;
		if (strncmp(sn, name, len) || sn[len] < '.')
			break;
		if (sn[len] != '.' || ei->syms[i].type != STT_FUNC)
			continue;
		any = 1;
		*at_pc |= ei->syms[i].value == pc;
	}
	return any;
}

int emit_funcs(struct btf *btf, const struct graph *g, const struct elf_info *ei,
	       const struct type_map *map, struct skip_log *skips, struct diag *d)
{
	uint32_t *order = malloc((g->nfuncs + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nfuncs; i++)
		order[i] = i;
	sort_graph = g;
	qsort(order, g->nfuncs, sizeof(*order), cmp_func);

	int err = 0;
	for (size_t i = 0; i < g->nfuncs && !err;) {
		const char *name = graph_str(g, g->funcs[order[i]].name);
		size_t end = i + 1;
		while (end < g->nfuncs && !strcmp(graph_str(g, g->funcs[order[end]].name), name))
			end++;
		const struct graph_func *pick = NULL;
		int pick_at_pc = 0;
		const char *why = NULL;
		for (size_t k = i; k < end; k++) {
			const struct graph_func *f = &g->funcs[order[k]];
			int at_pc = 0;
			if (!*name) {
				why = "no name";
			} else if (f->flags & G_F_UNNAMED_PARAM) {
				why = "a parameter has no name";
			} else if (map->dropped[f->proto]) {
				why = "its prototype needs a type with no BTF form";
			} else if (ei && ei->nsyms && !symbol_matches(ei, name, f->pc, &at_pc)) {
				why = "no function symbol of that name";
			} else if (!pick || (at_pc && !pick_at_pc)) {
				pick = f;
				pick_at_pc = at_pc;
			}
		}
		if (!pick) {
			if (skips)
				skip_log__add(skips, "func", *name ? name : "(unnamed)", why, g,
					      g->funcs[order[i]].cu);
			i = end;
			continue;
		}
		int id = btf__add_func(btf, name, (pick->flags & G_F_EXTERNAL) ? BTF_FUNC_GLOBAL : BTF_FUNC_STATIC,
				       (int)map->ids[pick->proto]);
		if (id < 0) {
			err = diag_fail(d, -id, "function %s: libbpf refused it: %s", name, strerror(-id));
			break;
		}
		/* Decl tags: the parameters' (component = index), then the function's (-1),
		 * the order clang's own BTF has. */
		for (int comp = 0; comp <= (int)pick->loc_count && !err; comp++) {
			int c = comp < (int)pick->loc_count ? comp : -1;
			const struct graph_loc *l = c >= 0 ? &g->locs[pick->loc_first + c] : NULL;
			uint32_t first = l ? l->annot_first : pick->annot_first;
			uint32_t count = l ? l->annot_count : pick->annot_count;
			for (uint32_t a = 0; a < count && !err; a++) {
				const struct graph_annot *an = &g->annots[first + a];
				if (strcmp(graph_str(g, an->name), "btf_decl_tag"))
					continue;
				int r = btf__add_decl_tag(btf, graph_str(g, an->value), id, c);
				if (r < 0)
					err = diag_fail(d, -r, "function %s: decl tag refused: %s", name, strerror(-r));
			}
		}
		i = end;
	}
	free(order);
	return err;
}
