/* vars.c: which variables become BTF VARs, and their DATASECs.
 *
 * As pahole: with feature `var`, per-CPU variables (section .data..percpu);
 * with `global_var`, every variable with a static address in a PROGBITS or
 * NOBITS section. Each needs a data symbol of its name at its address (the
 * symbol table says what was linked in; DWARF also describes variables of
 * discarded sections); names pahole leaves out (__UNIQUE_ID...) are left out.
 * One DATASEC per section, in section order, entries sorted by offset, its
 * size the end of the last entry.
 *
 * Overlap (clang's global merge can put two variables at one offset; the
 * kernel rejects such BTF, ClangBuiltLinux #2089) is resolved, never
 * written: the first variable at an offset stays, the later overlapping
 * ones are left out with the reason in the skip report.
 */
#include "vars.h"
#include "btf_writer.h"
#include "elf_info.h"
#include "emit.h"
#include "skip_log.h"
#include "types.h"
#include "../../format/graph.h"
#include "../../common/diag.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define PERCPU ".data..percpu"

struct entry {
	uint32_t sec;
	uint64_t off, size;
	uint32_t var;	/* index into g->vars */
	const char *name;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
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

static int left_out_name(const char *name)
{
	static const char *const prefixes[] = {
		"__UNIQUE_ID", "__tpstrtab_", "__exitcall_", "__gendwarfksyms_ptr_",
		"__func_stack_frame_non_standard_",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static int valid_name(const char *s)
{
	if (!*s || (!isalpha((unsigned char)*s) && *s != '_'))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
			return 0;
	return 1;
}

/* The variables that may become VARs, as entries in e (room for all):
 * each one left out goes to skips with its reason. Returns how many; *err
 * is set for a name encode_force alone would let through. */
static size_t collect(const struct graph *g, const struct elf_info *ei, const struct type_map *map,
		      const struct emit_opts *o, struct skip_log *skips, struct entry *e, int *err,
		      struct diag *d)
{
	size_t n = 0;
	for (uint32_t i = 0; i < g->nvars && !*err; i++) {
		const struct graph_var *v = &g->vars[i];
		const char *name = graph_str(g, v->name);
		if (!v->shndx || v->shndx >= ei->nsecs || !(v->flags & G_F_TOPLEVEL) || !*name)
			continue;
		const struct elf_section *s = &ei->secs[v->shndx];
		int percpu = !strcmp(s->name, PERCPU);
		if (!(percpu && HAS_FEAT(o, FEAT_VAR)) &&
		    !(HAS_FEAT(o, FEAT_GLOBAL_VAR) && (s->type == SHT_PROGBITS || s->type == SHT_NOBITS)))
			continue;
		const char *why = NULL;
		const struct elf_sym *sym = var_symbol(ei, name, v->shndx, v->addr);
		uint64_t off = ei->is_rel ? v->addr : v->addr - s->addr;
		if (left_out_name(name))
			why = "a name pahole leaves out";
		else if (!v->type || !map->ids[v->type])
			why = map->dropped[v->type] ? "its type has no BTF form" : "void type";
		else if (!sym)
			why = "no data symbol at its address";
		else if (!sym->size || sym->size > UINT32_MAX || off > UINT32_MAX)
			why = "size 0 or past 4 GiB";
		else if (!valid_name(name)) {
			if (!HAS_FEAT(o, FEAT_ENCODE_FORCE))
				*err = diag_fail(d, EINVAL, "variable \"%.*s%s\": not a valid BTF name (feature "
						 "encode_force skips such variables)", DIAG_CLIP(name));
			why = "not a valid BTF name";
		}
		if (why) {
			if (skips)
				skip_log__add(skips, "var", name, why, g, v->cu);
			continue;
		}
		e[n++] = (struct entry){ v->shndx, off, sym->size, i, name };
	}
	return n;
}

/* Sorted e[0..n) with one entry per variable, none overlapping an earlier
 * one, at most 65535 a section (a DATASEC counts its entries in 16 bits);
 * those left out go to skips. Returns how many are left. */
static size_t settle(const struct graph *g, struct skip_log *skips, struct entry *e, size_t n)
{
	qsort(e, n, sizeof(*e), cmp_entry);
	/* The same variable described by several CUs appears once; a later
	 * variable overlapping an earlier one is left out (see above). */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && e[m - 1].sec == e[i].sec && e[m - 1].off == e[i].off && !strcmp(e[m - 1].name, e[i].name))
			continue;
		if (m && e[m - 1].sec == e[i].sec && e[i].off < e[m - 1].off + e[m - 1].size) {
			if (skips)
				skip_log__add(skips, "var", e[i].name, "overlaps an earlier variable in its section",
					      g, g->vars[e[i].var].cu);
			continue;
		}
		e[m++] = e[i];
	}
	n = m;
	m = 0;
	for (size_t i = 0, in_sec = 0; i < n; i++) {
		in_sec = (m && e[m - 1].sec == e[i].sec) ? in_sec + 1 : 1;
		if (in_sec > 0xffff) {
			if (skips)
				skip_log__add(skips, "var", e[i].name, "its section has more than 65535 variables, "
					      "which a BTF DATASEC cannot count", g, g->vars[e[i].var].cu);
			continue;
		}
		e[m++] = e[i];
	}
	return m;
}

/* The VARs of e[0..n) (their ids into ids[]) with their decl tags, then one
 * DATASEC per section. */
static int write_vars(struct bw *btf, const struct graph *g, const struct elf_info *ei,
		      const struct type_map *map, const struct emit_opts *o, const struct entry *e, size_t n,
		      int *ids, struct diag *d)
{
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		const struct graph_var *v = &g->vars[e[i].var];
		ids[i] = bw__add_var(btf, e[i].name,
				     (v->flags & G_F_EXTERNAL) ? BTF_VAR_GLOBAL_ALLOCATED : BTF_VAR_STATIC,
				     (int)map->ids[v->type]);
		if (ids[i] < 0)
			err = diag_fail(d, -ids[i], "variable %.*s%s: BTF cannot hold it: %s", DIAG_CLIP(e[i].name),
					bw__strerror(ids[i]));
		for (uint32_t a = 0; a < v->annot_count && !err && HAS_FEAT(o, FEAT_DECL_TAG); a++) {
			const struct graph_annot *an = &g->annots[v->annot_first + a];
			if (!strcmp(graph_str(g, an->name), "btf_decl_tag") &&
			    bw__add_decl_tag(btf, graph_str(g, an->value), ids[i], -1) < 0)
				err = diag_fail(d, EINVAL, "variable %.*s%s: decl tag refused", DIAG_CLIP(e[i].name));
		}
	}
	for (size_t i = 0; i < n && !err;) {
		size_t end = i;
		while (end < n && e[end].sec == e[i].sec)
			end++;
		uint64_t size = e[end - 1].off + e[end - 1].size;
		int ds = bw__add_datasec(btf, ei->secs[e[i].sec].name, (uint32_t)size);
		if (ds < 0)
			err = diag_fail(d, -ds, "DATASEC %.*s%s refused: %s", DIAG_CLIP(ei->secs[e[i].sec].name), bw__strerror(ds));
		for (size_t k = i; k < end && !err; k++) {
			int r = bw__add_datasec_var_info(btf, ids[k], (uint32_t)e[k].off, (uint32_t)e[k].size);
			if (r < 0)
				err = diag_fail(d, -r, "DATASEC entry %.*s%s refused: %s", DIAG_CLIP(e[k].name), bw__strerror(r));
		}
		i = end;
	}
	return err;
}

int vars__encode(struct bw *btf, const struct graph *g, const struct elf_info *ei, const struct type_map *map,
		 const struct emit_opts *o, struct skip_log *skips, struct diag *d)
{
	if (!ei || !(HAS_FEAT(o, FEAT_VAR) || HAS_FEAT(o, FEAT_GLOBAL_VAR)))
		return 0; /* no sections, or no variables wanted */
	struct entry *e = calloc(g->nvars + 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int err = 0;
	size_t n = collect(g, ei, map, o, skips, e, &err, d);
	n = settle(g, skips, e, n);
	int *ids = calloc(n + 1, sizeof(*ids));
	if (!ids && !err)
		err = -ENOMEM;
	if (!err)
		err = write_vars(btf, g, ei, map, o, e, n, ids, d);
	free(ids);
	free(e);
	return err;
}
