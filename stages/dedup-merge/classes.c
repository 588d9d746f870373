/* classes.c: steps 2 to 4 of the merge (see merge.h): weak classes from
 * keys, cross-CU stop edges, and the refinement into the final classes.
 *
 * Invariant: every class id is assigned in order of the first gid that has
 * it, and gids are in input order, so ids never depend on scheduling.
 */
#include "merge.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- offset sets --------------------------------------------------------- */

static size_t off_slot(const uint64_t *keys, size_t cap, uint64_t off)
{
	size_t i = hash_mix(1, off) & (cap - 1);
	while (keys[i] && keys[i] != off)
		i = (i + 1) & (cap - 1);
	return i;
}

int offset_set__add(struct offset_set *s, uint64_t off)
{
	if ((s->count + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i])
				nk[off_slot(nk, ncap, s->keys[i])] = s->keys[i];
		free(s->keys);
		s->keys = nk;
		s->cap = ncap;
	}
	size_t i = off_slot(s->keys, s->cap, off);
	if (!s->keys[i]) {
		s->keys[i] = off;
		s->count++;
	}
	return 0;
}

int offset_set__has(const struct offset_set *s, uint64_t off)
{
	return s->cap && s->keys[off_slot(s->keys, s->cap, off)] == off;
}

void offset_set__free(struct offset_set *s)
{
	free(s->keys);
	memset(s, 0, sizeof(*s));
}

/* ---- exports: per input, offset -> export ------------------------------- */

struct export_map {
	struct offset_set set;	/* offsets, for the slot */
	struct export *vals;	/* parallel to set.keys */
};

struct export_map *classes_new_exports(size_t ninputs)
{
	return calloc(ninputs ? ninputs : 1, sizeof(struct export_map));
}

static int export_add(struct export_map *em, const struct export *e)
{
	if ((em->set.count + 1) * 2 > em->set.cap) {
		size_t ocap = em->set.cap;
		uint64_t *okeys = em->set.keys;
		struct export *ovals = em->vals;
		size_t ncap = ocap ? ocap * 2 : 256;
		em->set.keys = calloc(ncap, sizeof(uint64_t));
		em->vals = calloc(ncap, sizeof(*em->vals));
		if (!em->set.keys || !em->vals)
			return -ENOMEM;
		em->set.cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (okeys[i]) {
				size_t j = off_slot(em->set.keys, ncap, okeys[i]);
				em->set.keys[j] = okeys[i];
				em->vals[j] = ovals[i];
			}
		free(okeys);
		free(ovals);
	}
	size_t j = off_slot(em->set.keys, em->set.cap, e->off);
	if (!em->set.keys[j]) {
		em->set.keys[j] = e->off;
		em->vals[j] = *e;
		em->set.count++;
	}
	return 0;
}

const struct export *classes_export(const struct merge *m, uint32_t input, uint64_t off)
{
	const struct export_map *em = &m->exports[input];
	if (!em->set.cap)
		return NULL;
	size_t j = off_slot(em->set.keys, em->set.cap, off);
	return em->set.keys[j] == off ? &em->vals[j] : NULL;
}

/* ---- the weak table: key bytes -> weak class ----------------------------- */

struct weak_entry {
	uint64_t hash;
	uint32_t id;
};

struct weak_table {
	struct weak_entry *slots;	/* id + 1 in .id; 0 = empty */
	size_t cap;
	struct buf keys;		/* each class's key, as first seen */
	uint64_t *key_off;		/* per class */
	uint32_t *key_len;
	size_t cap_ids;
};

struct weak_table *classes_new_table(void)
{
	return calloc(1, sizeof(struct weak_table));
}

static int weak_grow(struct weak_table *t, uint32_t count)
{
	if ((count + 1) * 2 <= t->cap)
		return 0;
	size_t ncap = t->cap ? t->cap * 2 : 4096;
	struct weak_entry *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].id)
			continue;
		size_t j = t->slots[i].hash & (ncap - 1);
		while (ns[j].id)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

/* Returns the class of key (a new one if unseen), or a negative errno. */
static int64_t weak_intern(struct merge *m, const uint8_t *key, uint32_t len)
{
	struct weak_table *t = m->wt;
	if (weak_grow(t, m->nweak))
		return -ENOMEM;
	uint64_t h = hash64(key, len);
	size_t j = h & (t->cap - 1);
	for (; t->slots[j].id; j = (j + 1) & (t->cap - 1)) {
		uint32_t id = t->slots[j].id - 1;
		/* Equal hashes prove nothing: the bytes decide. */
		if (t->slots[j].hash == h && t->key_len[id] == len &&
		    !memcmp(t->keys.data + t->key_off[id], key, len))
			return id;
	}
	uint32_t id = m->nweak;
	size_t old_cap = t->cap_ids;
	if (id == NO_CLASS - 1 || vec_grow(&t->key_off, &t->cap_ids, (size_t)id + 1))
		return -ENOMEM;
	if (t->cap_ids != old_cap) {
		uint32_t *kl = realloc(t->key_len, t->cap_ids * sizeof(*kl));
		if (!kl)
			return -ENOMEM;
		t->key_len = kl;
	}
	t->key_off[id] = t->keys.len;
	t->key_len[id] = len;
	buf_put(&t->keys, key, len);
	if (t->keys.err)
		return t->keys.err;
	t->slots[j] = (struct weak_entry){ h, id + 1 };
	m->nweak++;
	return id;
}

/* ---- step 2: one CU's nodes into weak classes ---------------------------- */

static int grow_nodes(struct merge *m, uint64_t need)
{
	if (need >= NO_CLASS - 1)
		return diag_fail(m->d, E2BIG, "more than 4 billion type records");
	size_t cap = m->cap_nodes;
	if (vec_grow(&m->weak, &cap, need + 2))
		return -ENOMEM;
	cap = m->cap_nodes;
	if (vec_grow(&m->stop_off, &cap, need + 2))
		return -ENOMEM;
	m->cap_nodes = cap;
	return 0;
}

int classes_insert_cu(struct merge *m, size_t ci)
{
	struct cu_scan *s = &m->scans[ci];
	uint64_t base = m->nnodes + 1; /* gid of record 0 */
	m->cu_base[ci] = base;
	int err = grow_nodes(m, m->nnodes + s->nrecs);
	if (err)
		return err;
	if (!m->nnodes)
		m->stop_off[0] = m->stop_off[1] = 0;
	for (uint32_t k = 0; k < s->nrecs; k++) {
		uint64_t gid = base + k;
		m->stop_off[gid] = (uint32_t)m->nstops;
		if (!s->is_type[k]) {
			m->weak[gid] = NO_CLASS;
			continue;
		}
		int64_t w = weak_intern(m, s->keys.data + s->key_off[k], s->key_len[k]);
		if (w < 0)
			return (int)w;
		m->weak[gid] = (uint32_t)w;
		if (vec_grow(&m->stops, &m->cap_stops, m->nstops + s->stop_len[k]))
			return -ENOMEM;
		for (uint32_t e = 0; e < s->stop_len[k]; e++) {
			uint32_t lref = s->stops[s->stop_off[k] + e];
			if (lref & STOP_XREF) {
				if (vec_grow(&m->pend, &m->cap_pend, m->npend + 1))
					return -ENOMEM;
				m->pend[m->npend++] = (struct pending_stop){
					m->nstops, (uint32_t)ci, s->xrefs[lref & ~STOP_XREF] };
				m->stops[m->nstops++] = 0;
			} else {
				m->stops[m->nstops++] = (uint32_t)(base + lref - 1);
			}
		}
	}
	m->nnodes += s->nrecs;
	m->stop_off[m->nnodes + 1] = (uint32_t)m->nstops;
	if (m->nstops > UINT32_MAX - 1)
		return diag_fail(m->d, E2BIG, "more than 4 billion type references");

	/* Candidates and exports: lrefs become gids now that the base is known. */
#define GID(lref) ((lref) && !((lref) & STOP_XREF) ? (uint32_t)(base + (lref) - 1) : (lref))
	for (size_t i = 0; i < s->nfuncs; i++)
		s->funcs[i].ret = GID(s->funcs[i].ret);
	for (size_t i = 0; i < s->nfparams; i++)
		s->fparams[i].type = GID(s->fparams[i].type);
	for (size_t i = 0; i < s->nvars; i++)
		s->vars[i].type = GID(s->vars[i].type);
	for (size_t i = 0; i < s->nexports; i++) {
		s->exports[i].gid = GID(s->exports[i].gid);
		s->exports[i].type = GID(s->exports[i].type);
		if ((err = export_add(&m->exports[s->input], &s->exports[i])))
			return err;
	}
#undef GID
	/* The keys are in the weak table now (once per class); drop the rest. */
	buf_free(&s->keys);
	free(s->key_off);
	free(s->key_len);
	free(s->stop_off);
	free(s->stop_len);
	free(s->stops);
	s->key_off = s->key_len = s->stop_off = s->stop_len = s->stops = NULL;
	return 0;
}

/* ---- step 3: stop edges into other CUs ----------------------------------- */

int classes_resolve_xrefs(struct merge *m)
{
	for (size_t i = 0; i < m->npend; i++) {
		const struct pending_stop *p = &m->pend[i];
		uint32_t input = m->cu_input[p->cu];
		const struct export *e = classes_export(m, input, p->off);
		if (!e || m->weak[e->gid] == NO_CLASS)
			return diag_fail(m->d, EBADMSG, "%s: CU %u (0x%llx) refers to DIE 0x%llx in another CU, "
					 "but no CU of the file has a type record there",
					 m->files[input].path, m->cu_index[p->cu],
					 (unsigned long long)m->scans[p->cu].cu_offset, (unsigned long long)p->off);
		m->stops[p->pos] = e->gid;
	}
	return 0;
}

/* ---- step 4: refinement -------------------------------------------------- */

/* The kind class and name of a weak class, read back from its key (see
 * scan.c key_of: kind byte, then for struct/union/enum 'F' or 'D' and the
 * name). Returns 0 for classes that are not a named struct/union/enum. */
static int weak_named(const struct weak_table *t, uint32_t w, uint8_t *kind, int *is_fwd,
		      const uint8_t **name, size_t *name_len)
{
	struct cursor c;
	cursor_init(&c, t->keys.data + t->key_off[w], t->key_len[w]);
	*kind = cur_u8(&c);
	if (*kind != CUS_STRUCT && *kind != CUS_UNION && *kind != CUS_ENUM)
		return 0;
	*is_fwd = cur_u8(&c) == 'F';
	uint64_t n = cur_uleb(&c);
	*name = n <= cursor_left(&c) ? cur_bytes(&c, (size_t)n) : NULL;
	*name_len = (size_t)n;
	return !c.err && n > 0;
}

struct name_entry {
	uint64_t hash;
	uint32_t weak;		/* a class with this kind and name (+1), 0 = empty */
	uint32_t ndefs, def;
};

/* For each fwd weak class: the definition it stands for, when its kind and
 * name have exactly one definition weak class. */
static int find_fwd_defs(struct merge *m)
{
	struct weak_table *t = m->wt;
	size_t cap = 1024;
	while (cap < (size_t)m->nweak * 2 + 2)
		cap *= 2;
	struct name_entry *tab = calloc(cap, sizeof(*tab));
	m->weak_fwd_def = malloc(((size_t)m->nweak + 1) * sizeof(uint32_t));
	if (!tab || !m->weak_fwd_def) {
		free(tab);
		return -ENOMEM;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t w = 0; w < m->nweak; w++) {
			uint8_t kind;
			int fwd;
			const uint8_t *name;
			size_t len;
			if (pass)
				m->weak_fwd_def[w] = NO_CLASS;
			if (!weak_named(t, w, &kind, &fwd, &name, &len))
				continue;
			uint64_t h = hash_mix(hash64(name, len), kind);
			size_t j = h & (cap - 1);
			for (; tab[j].weak; j = (j + 1) & (cap - 1)) {
				uint8_t k2;
				int f2;
				const uint8_t *n2;
				size_t l2;
				weak_named(t, tab[j].weak - 1, &k2, &f2, &n2, &l2);
				if (tab[j].hash == h && k2 == kind && l2 == len && !memcmp(n2, name, len))
					break;
			}
			if (!tab[j].weak)
				tab[j] = (struct name_entry){ h, w + 1, 0, NO_CLASS };
			if (!pass && !fwd) {
				tab[j].ndefs++;
				tab[j].def = w;
			} else if (pass && fwd && tab[j].ndefs == 1) {
				m->weak_fwd_def[w] = tab[j].def;
			}
		}
	}
	free(tab);
	return 0;
}

/* The class a stop edge to t counts as: a fwd that stands for a definition
 * counts as that definition while the definition's nodes share one class. */
static uint32_t class_seen(const struct merge *m, uint32_t t)
{
	uint32_t w = m->weak[t], def = m->weak_fwd_def[w];
	if (def != NO_CLASS && !m->weak_split[def])
		return m->weak_first_cls[def];
	return m->cls[t];
}

uint8_t classes_rec_kind(const struct merge *m, uint32_t gid)
{
	uint32_t w = m->weak[gid];
	return w == NO_CLASS ? 0 : m->wt->keys.data[m->wt->key_off[w]];
}

uint32_t classes_final(const struct merge *m, uint32_t gid)
{
	return class_seen(m, gid);
}

/* A signature table: u32 arrays -> class ids, rebuilt each round. */
struct sig_table {
	uint64_t *hash;
	uint32_t *id;		/* id + 1, 0 = empty */
	size_t cap;
	uint32_t *words;	/* signatures, back to back */
	size_t nwords, cap_words;
	uint64_t *sig_off;	/* per class id */
	uint32_t *sig_len;
	size_t cap_ids;
	uint32_t count;
};

static void sig_free(struct sig_table *s)
{
	free(s->hash);
	free(s->id);
	free(s->words);
	free(s->sig_off);
	free(s->sig_len);
	memset(s, 0, sizeof(*s));
}

static int sig_init(struct sig_table *s, uint64_t expect)
{
	size_t cap = 4096;
	while (cap < expect * 2)
		cap *= 2;
	if (cap != s->cap) {
		free(s->hash);
		free(s->id);
		s->hash = malloc(cap * sizeof(*s->hash));
		s->id = malloc(cap * sizeof(*s->id));
		if (!s->hash || !s->id)
			return -ENOMEM;
		s->cap = cap;
	}
	memset(s->id, 0, cap * sizeof(*s->id));
	s->nwords = 0;
	s->count = 0;
	return 0;
}

/* Double the slots when half full (signatures stay where they are). */
static int sig_grow(struct sig_table *s)
{
	size_t ncap = s->cap * 2;
	uint64_t *nh = malloc(ncap * sizeof(*nh));
	uint32_t *ni = calloc(ncap, sizeof(*ni));
	if (!nh || !ni) {
		free(nh);
		free(ni);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->id[i])
			continue;
		size_t j = s->hash[i] & (ncap - 1);
		while (ni[j])
			j = (j + 1) & (ncap - 1);
		nh[j] = s->hash[i];
		ni[j] = s->id[i];
	}
	free(s->hash);
	free(s->id);
	s->hash = nh;
	s->id = ni;
	s->cap = ncap;
	return 0;
}

static int64_t sig_intern(struct sig_table *s, const uint32_t *w, uint32_t n)
{
	if ((size_t)s->count * 2 + 2 > s->cap && sig_grow(s))
		return -ENOMEM;
	uint64_t h = hash64(w, n * sizeof(*w));
	size_t j = h & (s->cap - 1);
	for (; s->id[j]; j = (j + 1) & (s->cap - 1)) {
		uint32_t id = s->id[j] - 1;
		if (s->hash[j] == h && s->sig_len[id] == n &&
		    !memcmp(s->words + s->sig_off[id], w, n * sizeof(*w)))
			return id;
	}
	size_t cap_ids = s->cap_ids;
	if (vec_grow(&s->words, &s->cap_words, s->nwords + n) ||
	    vec_grow(&s->sig_off, &s->cap_ids, (size_t)s->count + 1))
		return -ENOMEM;
	if (s->cap_ids != cap_ids) {
		uint32_t *nl = realloc(s->sig_len, s->cap_ids * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		s->sig_len = nl;
	}
	uint32_t id = s->count++;
	s->sig_off[id] = s->nwords;
	s->sig_len[id] = n;
	if (n)
		memcpy(s->words + s->nwords, w, n * sizeof(*w));
	s->nwords += n;
	s->hash[j] = h;
	s->id[j] = id + 1;
	return id;
}

int classes_refine(struct merge *m)
{
	int err = find_fwd_defs(m);
	if (err)
		return err;
	size_t nw = (size_t)m->nweak + 1;
	m->cls = malloc((m->nnodes + 2) * sizeof(uint32_t));
	uint32_t *next = malloc((m->nnodes + 2) * sizeof(uint32_t));
	m->weak_first_cls = malloc(nw * sizeof(uint32_t));
	m->weak_split = calloc(nw, 1);
	uint8_t *split_next = calloc(nw, 1);
	uint32_t *first_next = malloc(nw * sizeof(uint32_t));
	uint32_t *sig = NULL;
	size_t cap_sig = 0;
	struct sig_table st = { 0 };
	if (!m->cls || !next || !m->weak_first_cls || !m->weak_split || !split_next || !first_next) {
		err = -ENOMEM;
		goto out;
	}
	/* Round 0: the weak classes themselves. */
	for (uint64_t g = 1; g <= m->nnodes; g++)
		m->cls[g] = m->weak[g];
	for (uint32_t w = 0; w < m->nweak; w++)
		m->weak_first_cls[w] = w;
	m->ncls = m->nweak;

	for (int round = 1;; round++) {
		/* Sized for about as many classes as the last round had; it
		 * grows if this round splits more. */
		if ((err = sig_init(&st, (uint64_t)m->ncls + 1024)))
			goto out;
		memset(split_next, 0, nw);
		memset(first_next, 0xff, nw * sizeof(uint32_t));
		for (uint64_t g = 1; g <= m->nnodes; g++) {
			uint32_t w = m->weak[g];
			if (w == NO_CLASS) {
				next[g] = NO_CLASS;
				continue;
			}
			uint32_t a = m->stop_off[g], e = m->stop_off[g + 1], n = e - a + 1;
			if (vec_grow(&sig, &cap_sig, n)) {
				err = -ENOMEM;
				goto out;
			}
			sig[0] = w;
			for (uint32_t i = a; i < e; i++)
				sig[i - a + 1] = class_seen(m, m->stops[i]);
			int64_t id = sig_intern(&st, sig, n);
			if (id < 0) {
				err = (int)id;
				goto out;
			}
			next[g] = (uint32_t)id;
			if (first_next[w] == NO_CLASS)
				first_next[w] = (uint32_t)id;
			else if (first_next[w] != (uint32_t)id)
				split_next[w] = 1;
		}
		int stable = st.count == m->ncls && !memcmp(split_next, m->weak_split, nw);
		uint32_t *tmp = m->cls;
		m->cls = next;
		next = tmp;
		memcpy(m->weak_split, split_next, nw);
		memcpy(m->weak_first_cls, first_next, nw * sizeof(uint32_t));
		m->ncls = st.count;
		if (stable)
			break;
		if (round > 100000) {
			err = diag_fail(m->d, EDEADLK, "refinement did not settle (a bug)");
			goto out;
		}
	}
out:
	sig_free(&st);
	free(sig);
	free(next);
	free(split_next);
	free(first_next);
	/* The stop edges were for the refinement only; kept through the build
	 * they would make the merge's peak RSS. */
	free(m->stops);
	free(m->stop_off);
	m->stops = m->stop_off = NULL;
	m->nstops = m->cap_stops = 0;
	return err;
}

void classes_free(struct merge *m)
{
	if (m->wt) {
		free(m->wt->slots);
		buf_free(&m->wt->keys);
		free(m->wt->key_off);
		free(m->wt->key_len);
		free(m->wt);
	}
	if (m->exports) {
		for (size_t i = 0; i < m->o->ninputs; i++) {
			offset_set__free(&m->exports[i].set);
			free(m->exports[i].vals);
		}
		free(m->exports);
	}
	free(m->weak);
	free(m->cls);
	free(m->stop_off);
	free(m->stops);
	free(m->pend);
	free(m->weak_fwd_def);
	free(m->weak_first_cls);
	free(m->weak_split);
}
