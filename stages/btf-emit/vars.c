/* vars.c: which variables become BTF VARs, and their DATASECs.
 *
 * As pahole's default `var` feature: per-CPU variables only, those in
 * section .data..percpu that have a data symbol at their address; the
 * symbol gives the name and size. One DATASEC for the section, entries
 * sorted by offset, its size the end of the last entry. Entries that overlap (the kernel
 * rejects such BTF) are refused with a clear message, never written.
 */
#include "emit.h"
#include "../../common/diag.h"

#include <bpf/btf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define PERCPU ".data..percpu"

struct entry {
	uint64_t off, size;
	uint32_t var;	/* index into g->vars */
	const char *name;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->var < y->var ? -1 : x->var > y->var;
}

/* The data symbol for a variable: same name, same section, same address. */
static const struct elf_sym *var_symbol(const struct elf_info *ei, const char *name, uint32_t shndx,
					uint64_t addr)
{
	size_t n;
	const struct elf_sym *s = elf_info__find(ei, name, &n);
	for (size_t i = 0; s && i < n; i++)
		if (s[i].type == STT_OBJECT && s[i].shndx == shndx && s[i].value == addr)
			return &s[i];
	return NULL;
}

int emit_vars(struct btf *btf, const struct graph *g, const struct elf_info *ei,
	      const struct type_map *map, struct skip_log *skips, struct diag *d)
{
	if (!ei)
		return 0; /* no sections, no DATASEC */
	uint32_t sec = 0;
	for (uint32_t i = 1; i < ei->nsecs && !sec; i++)
		if (!strcmp(ei->secs[i].name, PERCPU))
			sec = i;
	if (!sec)
		return 0;
	struct entry *e = calloc(g->nvars + 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	size_t n = 0;
	for (uint32_t i = 0; i < g->nvars; i++) {
		const struct graph_var *v = &g->vars[i];
		const char *name = graph_str(g, v->name);
		if (v->shndx != sec || !(v->flags & G_F_TOPLEVEL) || !*name)
			continue;
		const char *why = NULL;
		const struct elf_sym *s = var_symbol(ei, name, sec, v->addr);
		if (!v->type || !map->ids[v->type])
			why = map->dropped[v->type] ? "its type has no BTF form" : "void type";
		else if (!s)
			why = "no data symbol at its address";
		if (why) {
			if (skips)
				skip_log__add(skips, "var", name, why, g, v->cu);
			continue;
		}
		uint64_t off = ei->is_rel ? v->addr : v->addr - ei->secs[sec].addr;
		e[n++] = (struct entry){ off, s->size, i, name };
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	/* The same variable described by several CUs appears once. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || e[m - 1].off != e[i].off || strcmp(e[m - 1].name, e[i].name))
			e[m++] = e[i];
	n = m;
	int err = 0;
	for (size_t i = 1; i < n && !err; i++)
		if (e[i].off < e[i - 1].off + e[i - 1].size)
			err = diag_fail(d, EINVAL, "%s: variables %s (offset %llu, %llu bytes) and %s (offset %llu) "
					"overlap; the kernel rejects such BTF", PERCPU, e[i - 1].name,
					(unsigned long long)e[i - 1].off, (unsigned long long)e[i - 1].size,
					e[i].name, (unsigned long long)e[i].off);
	int *ids = calloc(n + 1, sizeof(*ids));
	if (!ids)
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		const struct graph_var *v = &g->vars[e[i].var];
		ids[i] = btf__add_var(btf, e[i].name,
				      (v->flags & G_F_EXTERNAL) ? BTF_VAR_GLOBAL_ALLOCATED : BTF_VAR_STATIC,
				      (int)map->ids[v->type]);
		if (ids[i] < 0)
			err = diag_fail(d, -ids[i], "variable %s: libbpf refused it: %s", e[i].name,
					strerror(-ids[i]));
		for (uint32_t a = 0; a < v->annot_count && !err; a++) {
			const struct graph_annot *an = &g->annots[v->annot_first + a];
			if (!strcmp(graph_str(g, an->name), "btf_decl_tag") &&
			    btf__add_decl_tag(btf, graph_str(g, an->value), ids[i], -1) < 0)
				err = diag_fail(d, EINVAL, "variable %s: decl tag refused", e[i].name);
		}
	}
	if (!err && n) {
		/* The section's size as its variables use it (pahole's choice too):
		 * the end of the last one, not sh_size. */
		uint64_t end = e[n - 1].off + e[n - 1].size;
		int ds = btf__add_datasec(btf, PERCPU, (uint32_t)end);
		if (ds < 0)
			err = diag_fail(d, -ds, "DATASEC %s refused: %s", PERCPU, strerror(-ds));
		for (size_t i = 0; i < n && !err; i++) {
			int r = btf__add_datasec_var_info(btf, ids[i], (uint32_t)e[i].off, (uint32_t)e[i].size);
			if (r < 0)
				err = diag_fail(d, -r, "DATASEC entry %s refused: %s", e[i].name, strerror(-r));
		}
	}
	free(ids);
	free(e);
	return err;
}
