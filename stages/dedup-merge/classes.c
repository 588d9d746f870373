/* classes.c: the merge's classes around the refinement (merge.h, steps 3
 * and 4; classes.h says which file does which step): the class state made
 * and freed; step 3, stop edges into other CUs resolved through the
 * exports; which definition each fwd stands for, before the rounds and
 * after step 4b; and what a node counts as, for the build.
 */
#include "classes.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/idmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int classes__init(struct merge *m)
{
	m->wt = weak__new();
	m->cs = calloc(1, sizeof(*m->cs));
	return m->wt && m->cs ? 0 : -ENOMEM;
}

size_t classes__cross_refs(const struct merge *m)
{
	return m->cs ? m->cs->npend : 0;
}

/* ---- step 3: stop edges into other CUs ----------------------------------- */

int classes__xref_gid(const struct merge *m, size_t ci, uint64_t off, uint32_t *gid, struct diag *d)
{
	uint32_t input = m->cu_input[ci];
	const struct export *e = exports__find(m->exports, input, off);
	if (!e || !classes__is_type(m, e->gid)) {
		if (d)
			diag_file(d, m->files[input].path); /* the input it is about, not the output */
		return diag_fail(d, EBADMSG, "%s: CU %u (0x%llx) refers to DIE 0x%llx in another CU, "
				 "but no CU of the file has a type record there",
				 m->files[input].path, m->cu_index[ci],
				 (unsigned long long)m->scans[ci].cu_offset, (unsigned long long)off);
	}
	*gid = e->gid;
	return 0;
}

int classes__resolve_xrefs(struct merge *m)
{
	for (size_t i = 0; i < m->cs->npend; i++) {
		const struct pending_stop *p = &m->cs->pend[i];
		int err = classes__xref_gid(m, p->cu, p->off, &m->scans[p->cu].gstops[p->pos], m->d);
		if (err)
			return err;
	}
	return 0;
}

/* ---- which definition a fwd stands for --------------------------------- */

/* A (kind, name) of a named struct, union or enum, and what the weak
 * classes of it are: the key of names.map, numbered by first weak class. */
struct name_entry {
	uint32_t weak;		/* the first weak class with this kind and name */
	uint32_t ndefs, def;	/* its definitions (not fwds): how many, the last */
};

struct name_key {
	uint8_t kind;
	const uint8_t *name;
	size_t len;
};

struct names {
	const struct weak_table *wt;
	struct name_entry *e;
};

static int name_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct names *n = ctx;
	const struct name_key *k = key;
	uint8_t kind = 0;
	int fwd = 0;
	const uint8_t *name = NULL;
	size_t len = SIZE_MAX; /* matches no name when weak__named() has none */
	weak__named(n->wt, n->e[id].weak, &kind, &fwd, &name, &len);
	return kind == k->kind && len == k->len && !memcmp(name, k->name, len);
}

/* For each fwd weak class: the definition it stands for, when its kind and
 * name have exactly one definition weak class; weak_fwd_open marks those
 * whose name has several (fwds.c). */
int classes__fwd_defs(struct merge *m)
{
	struct class_state *cs = m->cs;
	struct names n = { m->wt, malloc(((size_t)m->nweak + 1) * sizeof(*n.e)) };
	struct idmap map = { 0 };
	uint32_t count = 0;
	cs->weak_fwd_def = malloc(((size_t)m->nweak + 1) * sizeof(uint32_t));
	cs->weak_fwd_open = calloc((size_t)m->nweak + 1, 1);
	int err = !n.e || !cs->weak_fwd_def || !cs->weak_fwd_open ? -ENOMEM : idmap__reserve(&map, m->nweak);
	for (int pass = 0; pass < 2 && !err; pass++) {
		for (uint32_t w = 0; w < m->nweak; w++) {
			struct name_key k;
			int fwd;
			if (pass)
				cs->weak_fwd_def[w] = NO_CLASS;
			if (!weak__named(m->wt, w, &k.kind, &fwd, &k.name, &k.len))
				continue;
			uint64_t h = hash_mix(hash64(k.name, k.len), k.kind);
			size_t j = idmap__slot(&map, h, name_eq, &n, &k);
			int64_t id = idmap__at(&map, j);
			if (id < 0) {
				id = count++;
				n.e[id] = (struct name_entry){ w, 0, NO_CLASS };
				idmap__put(&map, j, h, (uint32_t)id);
			}
			struct name_entry *e = &n.e[id];
			if (!pass && !fwd) {
				e->ndefs++;
				e->def = w;
			} else if (pass && fwd && e->ndefs == 1) {
				cs->weak_fwd_def[w] = e->def;
			} else if (pass && fwd && e->ndefs > 1) {
				cs->weak_fwd_open[w] = 1;
			}
		}
	}
	idmap__free(&map);
	free(n.e);
	return err;
}

int classes__is_type(const struct merge *m, uint32_t gid)
{
	return m->gid_node ? m->gid_node[gid] != GID_NOT_TYPE : m->weak[gid] != NO_CLASS;
}

/* classes__seen() once refinement is over, from one array: the build asks
 * it of every gid, more than once, and classes__seen() reads three. */
uint32_t classes__final(const struct merge *m, uint32_t gid)
{
	uint32_t a = m->cs->final_fwd[m->weak[gid]];
	return a != NO_CLASS ? a : m->cls[gid];
}

/* final_fwd[] from the refinement's arrays, which go. */
int classes__finish_fwds(struct merge *m)
{
	struct class_state *cs = m->cs;
	if (!(cs->final_fwd = malloc(((size_t)m->nweak + 1) * sizeof(uint32_t))))
		return -ENOMEM;
	for (uint32_t w = 0; w < m->nweak; w++) {
		uint32_t def = cs->weak_fwd_def[w];
		cs->final_fwd[w] = def != NO_CLASS && !cs->weak_split[def] ? cs->weak_first_cls[def] : NO_CLASS;
		if (cs->weak_fwd_bound && cs->weak_fwd_bound[w] != NO_CLASS)
			cs->final_fwd[w] = cs->weak_fwd_bound[w];
	}
	free(cs->weak_fwd_def);
	free(cs->weak_first_cls);
	free(cs->weak_split);
	free(cs->weak_fwd_open);
	free(cs->weak_fwd_bound);
	cs->weak_fwd_def = cs->weak_first_cls = cs->weak_fwd_bound = NULL;
	cs->weak_split = cs->weak_fwd_open = NULL;
	return 0;
}

int classes__settle(struct merge *m)
{
	int err = classes__finish_fwds(m);
	/* The stop edges were for the refinement and fwds.c only; kept
	 * through the build they would make the merge's peak RSS. */
	refine__free_stops(m);
	return err;
}

void classes__free(struct merge *m)
{
	if (m->wt)
		weak__free(m->wt);
	exports__free(m->exports, m->o->ninputs);
	free(m->weak);
	free(m->cls);
	free(m->gid_node);
	m->gid_node = NULL;
	refine__free_stops(m);
	free(m->arenas);
	struct class_state *cs = m->cs;
	if (cs) {
		free(cs->pend);
		free(cs->weak_fwd_def);
		free(cs->weak_first_cls);
		free(cs->weak_split);
		free(cs->weak_fwd_open);
		free(cs->weak_fwd_bound);
		free(cs->final_fwd);
		free(cs);
	}
	m->wt = NULL;
	m->cs = NULL;
	m->exports = NULL;
	m->weak = m->cls = NULL;
	m->arenas = NULL;
}
