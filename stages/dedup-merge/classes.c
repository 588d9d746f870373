/* classes.c: steps 2 to 4 of the merge (see merge.h): weak classes from
 * keys, cross-CU stop edges, and the refinement into the final classes.
 *
 * Invariant: every class id is assigned in order of the first gid that has
 * it, and gids are in input order, so ids never depend on scheduling.
 */
#include "merge.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/offmap.h"
#include "../../common/pool.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the weak table: key bytes -> weak class ----------------------------- *
 *
 * One thread writes it (classes__insert_cu(), in CU order); the scan workers
 * read it at the same time (classes__weak_find()), so that a key an earlier
 * CU already brought is matched on the worker's thread and the ordered
 * insert only writes its id down. How the readers stay safe:
 *  - A slot is written once, id last with release order; a reader that sees
 *    the id (acquire) sees the hash, key and length written before it.
 *  - Key bytes live in an arena: they never move or change once written.
 *  - Growing makes a new slot array and publishes it (release); the old one
 *    is kept, unchanged, until classes__free(), for readers still on it.
 *  - A slot array is never more than half full, so every probe ends.
 * A reader may miss a key inserted after it loaded the array: "not found"
 * only means the insert looks it up itself, so the classes, and their ids,
 * never depend on the timing. */

struct weak_slot {
	uint64_t hash;
	const uint8_t *key;
	uint32_t len;
	uint32_t id;		/* class + 1, 0 = empty; written last */
};

struct weak_slots {
	struct weak_slots *older;	/* the arrays this one replaced, kept for readers */
	size_t cap;
	struct weak_slot s[];
};

/* A class's representative: its first gid, and that gid's CU. */
struct rep {
	uint32_t gid, cu;
};

struct weak_table {
	struct weak_slots *cur;		/* read and replaced atomically */
	struct arena keys;		/* the keys, once per class: they never move */
	const uint8_t **key;		/* per class: its key, as first seen */
	uint32_t *key_len;
	uint8_t *kind;			/* per class: its key's first byte, the record kind (a
					 * byte array the build reads per gid, where the key
					 * itself would be a cache miss further) */
	/* Per class: its first gid and that gid's CU. Classes are made in gid
	 * order (CU by CU, each CU's misses in record order, and a key found
	 * had its class made earlier), so the gid that makes one is its
	 * first: the refinement's representatives, with no pass over every
	 * gid to find them. */
	struct rep *first;
	size_t cap_ids;
};

struct weak_table *classes__new_table(void)
{
	return calloc(1, sizeof(struct weak_table));
}

static void weak_table_free(struct weak_table *t)
{
	for (struct weak_slots *w = t->cur, *o; w; w = o) {
		o = w->older;
		free(w);
	}
	arena_free(&t->keys);
	free(t->key);
	free(t->key_len);
	free(t->kind);
	free(t->first);
	free(t);
}

static int weak_grow(struct weak_table *t, uint32_t count)
{
	struct weak_slots *old = t->cur;
	size_t cap = old ? old->cap : 0;
	if (((size_t)count + 1) * 2 <= cap)
		return 0;
	size_t ncap = cap ? cap * 2 : 4096;
	struct weak_slots *ns = calloc(1, sizeof(*ns) + ncap * sizeof(ns->s[0]));
	if (!ns)
		return -ENOMEM;
	ns->cap = ncap;
	ns->older = old;
	for (size_t i = 0; i < cap; i++) {
		if (!old->s[i].id)
			continue;
		size_t j = old->s[i].hash & (ncap - 1);
		while (ns->s[j].id)
			j = (j + 1) & (ncap - 1);
		ns->s[j] = old->s[i];
	}
	__atomic_store_n(&t->cur, ns, __ATOMIC_RELEASE);
	return 0;
}

int64_t classes__weak_find(const struct weak_table *t, const uint8_t *key, uint32_t len, uint64_t h)
{
	const struct weak_slots *ws = __atomic_load_n(&t->cur, __ATOMIC_ACQUIRE);
	if (!ws)
		return -1;
	for (size_t j = h & (ws->cap - 1);; j = (j + 1) & (ws->cap - 1)) {
		const struct weak_slot *e = &ws->s[j];
		uint32_t id = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE);
		if (!id)
			return -1;
		/* Equal hashes prove nothing: the bytes decide. */
		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return id - 1;
	}
}

/* Returns the class of key (h: hash64() of it), or a negative errno; an
 * unseen key gets a new class, whose first gid is gid (of CU ci). Only the
 * inserting thread calls it. */
static int64_t weak_intern(struct merge *m, const uint8_t *key, uint32_t len, uint64_t h, uint64_t gid, size_t ci)
{
	struct weak_table *t = m->wt;
	if (weak_grow(t, m->nweak))
		return -ENOMEM;
	struct weak_slots *ws = t->cur;
	size_t j = h & (ws->cap - 1);
	for (; ws->s[j].id; j = (j + 1) & (ws->cap - 1)) {
		const struct weak_slot *e = &ws->s[j];
		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return e->id - 1;
	}
	uint32_t id = m->nweak;
	size_t old_cap = t->cap_ids;
	if (id == NO_CLASS - 1 || vec_grow(&t->key, &t->cap_ids, (size_t)id + 1))
		return -ENOMEM;
	if (t->cap_ids != old_cap && (vec_resize(&t->key_len, t->cap_ids) || vec_resize(&t->kind, t->cap_ids) ||
				       vec_resize(&t->first, t->cap_ids)))
		return -ENOMEM;
	uint8_t *kept = arena_alloc(&t->keys, len);
	if (!kept)
		return -ENOMEM;
	if (len)
		memcpy(kept, key, len);
	t->key[id] = kept;
	t->key_len[id] = len;
	t->kind[id] = len ? key[0] : 0;
	t->first[id] = (struct rep){ (uint32_t)gid, (uint32_t)ci };
	ws->s[j].hash = h;
	ws->s[j].key = kept;
	ws->s[j].len = len;
	__atomic_store_n(&ws->s[j].id, id + 1, __ATOMIC_RELEASE);
	m->nweak++;
	return id;
}

/* ---- step 2: one CU's nodes into weak classes ---------------------------- *
 *
 * The scan did the per-record work on its own thread: keys, the classes it
 * found in the table, gids. What is left here, in CU order, is what makes
 * class ids: the keys it did not find; then the CU's stop edges into other
 * CUs, as pending, and its exports. */

int classes__insert_cu(struct merge *m, size_t ci)
{
	struct cu_scan *s = &m->scans[ci];
	uint64_t base = m->cu_base[ci];
	for (size_t i = 0; i < s->nmiss; i++) {
		uint32_t k = s->miss[i];
		int64_t w = weak_intern(m, s->keys.data + s->key_off[k], s->key_len[k], s->key_hash[k], base + k, ci);
		if (w < 0)
			return (int)w;
		m->weak[base + k] = (uint32_t)w;
	}
	for (size_t i = 0; i < s->nxpos; i++) {
		if (vec_grow(&m->pend, &m->cap_pend, m->npend + 1))
			return -ENOMEM;
		uint32_t pos = s->xpos[i];
		m->pend[m->npend++] = (struct pending_stop){ pos, (uint32_t)ci,
							     s->xrefs[s->gstops[pos] & ~STOP_XREF] };
	}
	for (size_t i = 0; i < s->nexports; i++) {
		int err = exports__add(m->exports, s->input, &s->exports[i]);
		if (err)
			return err;
	}
	/* The keys are in the weak table now (once per class); drop the rest. */
	buf_free(&s->keys);
	free(s->key_off);
	free(s->key_len);
	free(s->key_hash);
	free(s->miss);
	free(s->xpos);
	s->key_off = s->key_len = s->miss = s->xpos = NULL;
	s->key_hash = NULL;
	s->nmiss = s->nxpos = 0;
	return 0;
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
	for (size_t i = 0; i < m->npend; i++) {
		const struct pending_stop *p = &m->pend[i];
		int err = classes__xref_gid(m, p->cu, p->off, &m->scans[p->cu].gstops[p->pos], m->d);
		if (err)
			return err;
	}
	return 0;
}

/* ---- step 4: refinement -------------------------------------------------- */

/* The kind class and name of a weak class, read back from its key (see
 * scan.c key_of: kind byte, then for struct/union/enum 'F' or 'D' and the
 * name, its bytes and a NUL). Returns 0 for classes that are not a named
 * struct/union/enum. */
static int weak_named(const struct weak_table *t, uint32_t w, uint8_t *kind, int *is_fwd,
		      const uint8_t **name, size_t *name_len)
{
	struct cursor c;
	cursor_init(&c, t->key[w], t->key_len[w]);
	*kind = cur_u8(&c);
	if (*kind != CUS_STRUCT && *kind != CUS_UNION && *kind != CUS_ENUM)
		return 0;
	*is_fwd = cur_u8(&c) == 'F';
	const uint8_t *nul = c.err ? NULL : memchr(c.p, 0, cursor_left(&c));
	*name = c.p;
	*name_len = nul ? (size_t)(nul - c.p) : 0;
	return nul && *name_len > 0;
}

int classes__weak_named(const struct merge *m, uint32_t w, uint8_t *kind, int *is_fwd,
		       const uint8_t **name, size_t *name_len)
{
	return weak_named(m->wt, w, kind, is_fwd, name, name_len);
}

struct name_entry {
	uint64_t hash;
	uint32_t weak;		/* a class with this kind and name (+1), 0 = empty */
	uint32_t ndefs, def;
};

/* For each fwd weak class: the definition it stands for, when its kind and
 * name have exactly one definition weak class; weak_fwd_open marks those
 * whose name has several (fwds.c). */
static int find_fwd_defs(struct merge *m)
{
	struct weak_table *t = m->wt;
	size_t cap = 1024;
	while (cap < (size_t)m->nweak * 2 + 2)
		cap *= 2;
	struct name_entry *tab = calloc(cap, sizeof(*tab));
	m->weak_fwd_def = malloc(((size_t)m->nweak + 1) * sizeof(uint32_t));
	m->weak_fwd_open = calloc((size_t)m->nweak + 1, 1);
	if (!tab || !m->weak_fwd_def || !m->weak_fwd_open) {
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
				uint8_t k2 = 0;
				int f2 = 0;
				const uint8_t *n2 = NULL;
				size_t l2 = SIZE_MAX; /* matches no name when weak_named() has none */
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
			} else if (pass && fwd && tab[j].ndefs > 1) {
				m->weak_fwd_open[w] = 1;
			}
		}
	}
	free(tab);
	return 0;
}

/* The class a stop edge to t counts as: a fwd that stands for a definition
 * counts as that definition while the definition's nodes share one class. */
static uint32_t class_seen(const struct merge *m, uint32_t t);
uint32_t classes__seen(const struct merge *m, uint32_t t)
{
	return class_seen(m, t);
}

static uint32_t class_seen(const struct merge *m, uint32_t t)
{
	uint32_t w = m->weak[t], def = m->weak_fwd_def[w];
	if (def != NO_CLASS && !m->weak_split[def])
		return m->weak_first_cls[def];
	return m->cls[t];
}

int classes__is_type(const struct merge *m, uint32_t gid)
{
	return m->gid_node ? m->gid_node[gid] != GID_NOT_TYPE : m->weak[gid] != NO_CLASS;
}

uint8_t classes__rec_kind(const struct merge *m, uint32_t gid)
{
	uint32_t w = m->weak[gid];
	return w == NO_CLASS ? 0 : m->wt->kind[w];
}

/* class_seen() once refinement is over, from one array: the build asks it
 * of every gid, more than once, and class_seen() reads three. */
uint32_t classes__final(const struct merge *m, uint32_t gid)
{
	uint32_t a = m->final_fwd[m->weak[gid]];
	return a != NO_CLASS ? a : m->cls[gid];
}

/* final_fwd[] from the refinement's arrays, which go. */
static int finish_fwds(struct merge *m)
{
	if (!(m->final_fwd = malloc(((size_t)m->nweak + 1) * sizeof(uint32_t))))
		return -ENOMEM;
	for (uint32_t w = 0; w < m->nweak; w++) {
		uint32_t def = m->weak_fwd_def[w];
		m->final_fwd[w] = def != NO_CLASS && !m->weak_split[def] ? m->weak_first_cls[def] : NO_CLASS;
		if (m->weak_fwd_bound && m->weak_fwd_bound[w] != NO_CLASS)
			m->final_fwd[w] = m->weak_fwd_bound[w];
	}
	free(m->weak_fwd_def);
	free(m->weak_first_cls);
	free(m->weak_split);
	free(m->weak_fwd_open);
	free(m->weak_fwd_bound);
	m->weak_fwd_def = m->weak_first_cls = m->weak_fwd_bound = NULL;
	m->weak_split = m->weak_fwd_open = NULL;
	return 0;
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
	if (s->cap_ids != cap_ids && vec_resize(&s->sig_len, s->cap_ids))
		return -ENOMEM;
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

/* ---- the refinement rounds ---------------------------------------------- *
 *
 * Each round looks at the partition as it was when the round began: a node
 * whose signature (the classes its stop edges lead to, as class_seen() says)
 * differs from its class's representative (the class's first gid) makes the
 * class dirty. Finding those is the whole cost of a round and runs in
 * parallel over gid ranges. A dirty class then splits by signature, in gid
 * order: the part holding the representative keeps the class id, each other
 * part gets the next new id. Refinement only ever splits (a class never
 * gains a node it did not have, see below), so splitting classes one by one
 * gives the partition that grouping all nodes by (weak class, signature)
 * each round would give, and the same coarsest result. Class ids are
 * internal: build.c numbers nodes by first gid.
 *
 * Why only splits: two nodes in different classes had different signatures
 * in an earlier round; a stop target's class can only split later, and a fwd
 * seen as its definition's class stops being so only when that definition
 * splits, after which it is seen as its own weak class, which no other target
 * of the same position could be seen as before. So they stay different. */

/* ---- stop edges, per CU ---- */

size_t classes__cu_of(const struct merge *m, uint64_t gid)
{
	/* The last CU whose first gid is at most gid: a CU with no records has
	 * the first gid of the next, and that next one holds the gid. */
	size_t lo = 0, hi = m->ncus;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->cu_base[mid] <= gid)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* classes__cu_of(g) for a g at or past CU ci's first gid: a loop over gids
 * in order walks the CUs along with it. */
static inline size_t cu_advance(const struct merge *m, size_t ci, uint64_t g)
{
	while (ci + 1 < m->ncus && m->cu_base[ci + 1] <= g)
		ci++;
	return ci;
}

/* The scans' stop edges, all of them (their arenas), once the refinement
 * is over or failed. */
static void free_stop_edges(struct merge *m)
{
	for (size_t i = 0; m->scans && i < m->ncus; i++) {
		m->scans[i].gstops = m->scans[i].gstop_off = NULL;
		m->scans[i].gstops16 = m->scans[i].gstop_off16 = NULL;
	}
	for (unsigned i = 0; m->arenas && i < m->narenas; i++)
		arena_free(&m->arenas[i]);
}

/* The stop edges of one gid, in either of the layouts merge.h describes. */
struct stop_view {
	const uint32_t *wide;	/* gids, or NULL: */
	const uint16_t *narrow;	/* record indices from base */
	uint64_t base;
	uint32_t n;
};

/* The stop edges of gid g, which CU ci holds. */
static inline struct stop_view stops_of(const struct merge *m, size_t ci, uint64_t g)
{
	const struct cu_scan *s = &m->scans[ci];
	uint64_t k = g - m->cu_base[ci];
	uint32_t a, b;
	if (s->gstop_off16) {
		a = s->gstop_off16[k];
		b = s->gstop_off16[k + 1];
	} else {
		a = s->gstop_off[k];
		b = s->gstop_off[k + 1];
	}
	struct stop_view v = { NULL, NULL, m->cu_base[ci], b - a };
	if (s->gstops16)
		v.narrow = s->gstops16 + a;
	else
		v.wide = s->gstops + a;
	return v;
}

static inline uint32_t stop_gid(const struct stop_view *v, uint32_t i)
{
	return v->wide ? v->wide[i] : (uint32_t)(v->base + v->narrow[i]);
}

uint32_t classes__stops(const struct merge *m, uint64_t g, uint32_t *out, uint32_t cap)
{
	struct stop_view v = stops_of(m, classes__cu_of(m, g), g);
	for (uint32_t i = 0; i < v.n && i < cap; i++)
		out[i] = stop_gid(&v, i);
	return v.n;
}

struct refine {
	struct merge *m;
	int pass;		/* refine_chunk()'s pass: 1 check; 2 (once) cls = weak;
				 * 3 the dirty classes' nodes */
	const uint8_t *dirty;	/* pass 3: per class, whether it is split this round */
	struct rep *rep;	/* per class: its first gid, and that gid's CU */
	size_t cap_rep;
	size_t nchunks;
	uint64_t chunk;		/* gids per chunk */
	uint32_t **diff;	/* per chunk: its nodes that differ from their rep (pass
				 * 1), then those of a dirty class (pass 3) */
	size_t *ndiff, *cap_diff;
};

/* What a stop edge to t counts as in this round's signatures: class_seen()
 * as the round began. Nothing it reads changes until refine_split() has
 * taken every dirty node's signature, so it is read as it stands, not
 * kept per gid (that array was 16 MB of a vmlinux merge's peak, and no
 * faster). */
static inline uint32_t seen_now(const struct merge *m, uint32_t t)
{
	return m->weak[t] == NO_CLASS ? NO_CLASS : class_seen(m, t);
}

/* g in CU ci against its class's representative. */
static int same_signature(const struct refine *f, uint64_t g, size_t ci, const struct rep *r)
{
	const struct merge *m = f->m;
	struct stop_view a = stops_of(m, ci, g), ra = stops_of(m, r->cu, r->gid);
	if (a.n != ra.n)
		return 0;
	for (uint32_t i = 0; i < a.n; i++)
		if (seen_now(m, stop_gid(&a, i)) != seen_now(m, stop_gid(&ra, i)))
			return 0;
	return 1;
}

/* One chunk of gids, for the round's pass f->pass:
 *  1: the nodes that differ from their class's representative.
 *  2: before round 1, cls = weak: cls is fresh memory, and clearing its
 *     pages was most of a serial loop's time.
 *  3: the nodes of the classes refine_split() splits, in gid order: a
 *     serial walk over every gid each round was most of the refinement's
 *     serial time. */
static int refine_chunk(void *ctx, unsigned worker, size_t chunk)
{
	struct refine *f = ctx;
	const struct merge *m = f->m;
	uint64_t lo = 1 + chunk * f->chunk, hi = lo + f->chunk;
	(void)worker;
	if (hi > m->nnodes + 1)
		hi = m->nnodes + 1;
	if (f->pass == 2) {
		memcpy(m->cls + lo, m->weak + lo, (hi - lo) * sizeof(*m->cls));
		return 0;
	}
	f->ndiff[chunk] = 0;
	if (f->pass == 3) {
		for (uint64_t g = lo; g < hi; g++) {
			uint32_t c = m->cls[g];
			if (c == NO_CLASS || !f->dirty[c])
				continue;
			if (vec_grow(&f->diff[chunk], &f->cap_diff[chunk], f->ndiff[chunk] + 1))
				return -ENOMEM;
			f->diff[chunk][f->ndiff[chunk]++] = (uint32_t)g;
		}
		return 0;
	}
	size_t ci = lo < hi ? classes__cu_of(m, lo) : 0;
	for (uint64_t g = lo; g < hi; g++) {
		uint32_t c = m->cls[g];
		if (c == NO_CLASS || f->rep[c].gid == g)
			continue;
		ci = cu_advance(m, ci, g);
		if (same_signature(f, g, ci, &f->rep[c]))
			continue;
		if (vec_grow(&f->diff[chunk], &f->cap_diff[chunk], f->ndiff[chunk] + 1))
			return -ENOMEM;
		f->diff[chunk][f->ndiff[chunk]++] = (uint32_t)g;
	}
	return 0;
}

/* Split every dirty class (f->dirty) by signature. Returns: 0, -ENOMEM, or
 * the pool's error. */
static int refine_split(struct refine *f, struct sig_table *st)
{
	struct merge *m = f->m;
	uint32_t *sig = NULL, *moved = NULL, *newid = NULL;
	size_t cap_sig = 0, cap_moved = 0, nmoved = 0, cap_newid = 0;
	int err = 0;
	if ((err = sig_init(st, 1024)))
		return err;
	f->pass = 3;
	if ((err = pool_ordered(m->jobs, f->nchunks, 4 * (size_t)m->jobs, refine_chunk, NULL, f)))
		return err;
	/* Signatures against the partition as the round began: nothing moves
	 * until every dirty class's nodes have theirs. moved: (gid, sig id) pairs. */
	size_t ci = 0;
	for (size_t k = 0; k < f->nchunks && !err; k++) {
		for (size_t j = 0; j < f->ndiff[k] && !err; j++) {
			uint32_t g = f->diff[k][j], c = m->cls[g];
			ci = cu_advance(m, ci, g);
			struct stop_view stops = stops_of(m, ci, g);
			uint32_t n = stops.n + 1;
			if (vec_grow(&sig, &cap_sig, n) || vec_grow(&moved, &cap_moved, 2 * (nmoved + 1))) {
				err = -ENOMEM;
				break;
			}
			sig[0] = c;
			for (uint32_t i = 0; i < stops.n; i++)
				sig[i + 1] = seen_now(m, stop_gid(&stops, i));
			int64_t id = sig_intern(st, sig, n);
			if (id < 0) {
				err = (int)id;
				break;
			}
			moved[2 * nmoved] = (uint32_t)g;
			moved[2 * nmoved + 1] = (uint32_t)id;
			nmoved++;
		}
	}
	if (!err && vec_grow(&newid, &cap_newid, (size_t)st->count + 1))
		err = -ENOMEM;
	if (!err)
		memset(newid, 0xff, st->count * sizeof(*newid));
	for (size_t i = 0; i < nmoved && !err; i++) {
		uint32_t g = moved[2 * i], id = moved[2 * i + 1], c = m->cls[g];
		if (newid[id] == NO_CLASS) {
			/* First of its part in gid order: the representative's part keeps c. */
			if (f->rep[c].gid == g) {
				newid[id] = c;
			} else {
				if (m->ncls >= NO_CLASS - 1 || vec_grow(&f->rep, &f->cap_rep, (size_t)m->ncls + 1)) {
					err = -ENOMEM;
					break;
				}
				newid[id] = m->ncls;
				f->rep[m->ncls++] = (struct rep){ g, (uint32_t)classes__cu_of(m, g) };
			}
		}
		if (newid[id] != c)
			m->weak_split[m->weak[g]] = 1;
	}
	for (size_t i = 0; i < nmoved && !err; i++)
		m->cls[moved[2 * i]] = newid[moved[2 * i + 1]];
	free(sig);
	free(moved);
	free(newid);
	return err;
}

int classes__refine(struct merge *m)
{
	int err = find_fwd_defs(m);
	if (err)
		return err;
	size_t nw = (size_t)m->nweak + 1;
	struct refine f = { .m = m };
	struct sig_table st = { 0 };
	uint8_t *dirty = NULL;
	size_t cap_dirty = 0;
	unsigned jobs = m->jobs;
	m->cls = malloc((m->nnodes + 2) * sizeof(uint32_t));
	m->weak_first_cls = malloc(nw * sizeof(uint32_t));
	m->weak_split = calloc(nw, 1);
	f.chunk = 16384;
	f.nchunks = (size_t)((m->nnodes + f.chunk - 1) / f.chunk);
	f.diff = calloc(f.nchunks + 1, sizeof(*f.diff));
	f.ndiff = calloc(f.nchunks + 1, sizeof(*f.ndiff));
	f.cap_diff = calloc(f.nchunks + 1, sizeof(*f.cap_diff));
	if (!m->cls || !m->weak_first_cls || !m->weak_split || !f.diff || !f.ndiff || !f.cap_diff ||
	    vec_grow(&f.rep, &f.cap_rep, nw)) {
		err = -ENOMEM;
		goto out;
	}
	/* Round 0: the weak classes themselves. A weak class's first node keeps
	 * the weak id as its class for good, so weak_first_cls never changes. */
	f.pass = 2;
	if ((err = pool_ordered(jobs, f.nchunks, 4 * (size_t)jobs, refine_chunk, NULL, &f)))
		goto out;
	for (uint32_t w = 0; w < m->nweak; w++) {
		f.rep[w] = m->wt->first[w];
		if ((err = VERIFY(m->d, m->weak[f.rep[w].gid] == w, "weak class %u's first gid %u is of class %u", w,
				  f.rep[w].gid, m->weak[f.rep[w].gid])))
			goto out;
		m->weak_first_cls[w] = w;
	}
	m->ncls = m->nweak;

	for (int round = 1;; round++) {
		f.pass = 1;
		err = pool_ordered(jobs, f.nchunks, 4 * (size_t)jobs, refine_chunk, NULL, &f);
		if (err)
			goto out;
		size_t ndiff = 0;
		for (size_t k = 0; k < f.nchunks; k++)
			ndiff += f.ndiff[k];
		if (!ndiff)
			break; /* stable: every node agrees with its representative */
		if (vec_grow(&dirty, &cap_dirty, m->ncls)) {
			err = -ENOMEM;
			goto out;
		}
		memset(dirty, 0, m->ncls);
		for (size_t k = 0; k < f.nchunks; k++)
			for (size_t i = 0; i < f.ndiff[k]; i++)
				dirty[m->cls[f.diff[k][i]]] = 1;
		f.dirty = dirty;
		if ((err = refine_split(&f, &st)))
			goto out;
		if (round > 100000) {
			err = DIAG_BUG(m->d, "refinement did not settle in 100000 rounds");
			goto out;
		}
	}
out:
	sig_free(&st);
	for (size_t k = 0; f.diff && k < f.nchunks; k++)
		free(f.diff[k]);
	free(f.diff);
	free(f.ndiff);
	free(f.cap_diff);
	free(f.rep);
	free(dirty);
	return err;
}

int classes__settle(struct merge *m)
{
	int err = finish_fwds(m);
	/* The stop edges were for the refinement and fwds.c only; kept
	 * through the build they would make the merge's peak RSS. */
	free_stop_edges(m);
	return err;
}

void classes__free(struct merge *m)
{
	if (m->wt)
		weak_table_free(m->wt);
	exports__free(m->exports, m->o->ninputs);
	free(m->weak);
	free(m->cls);
	free(m->gid_node);
	m->gid_node = NULL;
	free_stop_edges(m);
	free(m->arenas);
	free(m->pend);
	free(m->weak_fwd_def);
	free(m->weak_first_cls);
	free(m->weak_split);
	free(m->weak_fwd_open);
	free(m->weak_fwd_bound);
	free(m->final_fwd);
	m->wt = NULL;
	m->exports = NULL;
	m->weak = m->cls = NULL;
	m->pend = NULL;
	m->arenas = NULL;
	m->weak_fwd_def = m->weak_first_cls = m->final_fwd = m->weak_fwd_bound = NULL;
	m->weak_split = m->weak_fwd_open = NULL;
	m->npend = m->cap_pend = 0;
}
