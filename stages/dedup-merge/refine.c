/* refine.c: step 4 of the merge (merge.h): the weak classes refined over
 * their nodes' stop edges until no class splits.
 *
 * Invariant: a class keeps the id of the part that holds its
 * representative (its first gid) and new ids go to the other parts in gid
 * order, so ids never depend on the thread count; build.c numbers nodes by
 * first gid anyway.
 */
#include "classes.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/idmap.h"
#include "../../common/pool.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the refinement rounds ---------------------------------------------- *
 *
 * Each round looks at the partition as it was when the round began: a node
 * whose signature (the classes its stop edges lead to, as classes__seen() says)
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

/* A signature table: u32 arrays -> ids, numbered in order of first
 * intern, rebuilt each round. */
struct sig_table {
	struct idmap map;
	uint32_t *words;	/* signatures, back to back */
	size_t nwords, cap_words;
	uint64_t *sig_off;	/* per id */
	uint32_t *sig_len;
	size_t cap_ids;
	uint32_t count;
};

struct sig_key {
	const uint32_t *w;
	uint32_t n;
};

static int sig_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct sig_table *s = ctx;
	const struct sig_key *k = key;
	return s->sig_len[id] == k->n && !memcmp(s->words + s->sig_off[id], k->w, k->n * sizeof(*k->w));
}

static void sig_free(struct sig_table *s)
{
	idmap__free(&s->map);
	free(s->words);
	free(s->sig_off);
	free(s->sig_len);
	memset(s, 0, sizeof(*s));
}

static void sig_clear(struct sig_table *s)
{
	idmap__clear(&s->map);
	s->nwords = 0;
	s->count = 0;
}

static int64_t sig_intern(struct sig_table *s, const uint32_t *w, uint32_t n)
{
	if (idmap__reserve(&s->map, 1))
		return -ENOMEM;
	struct sig_key k = { w, n };
	uint64_t h = hash64(w, n * sizeof(*w));
	size_t j = idmap__slot(&s->map, h, sig_eq, s, &k);
	if (idmap__at(&s->map, j) >= 0)
		return idmap__at(&s->map, j);
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
	idmap__put(&s->map, j, h, id);
	return id;
}

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
void refine__free_stops(struct merge *m)
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

/* What a stop edge to t counts as in this round's signatures: classes__seen()
 * as the round began. Nothing it reads changes until refine_split() has
 * taken every dirty node's signature, so it is read as it stands, not
 * kept per gid (that array was 16 MB of a vmlinux merge's peak, and no
 * faster). */
static inline uint32_t seen_now(const struct merge *m, uint32_t t)
{
	return m->weak[t] == NO_CLASS ? NO_CLASS : classes__seen(m, t);
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
	sig_clear(st);
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
			m->cs->weak_split[m->weak[g]] = 1;
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
	int err = classes__fwd_defs(m);
	if (err)
		return err;
	size_t nw = (size_t)m->nweak + 1;
	struct refine f = { .m = m };
	struct sig_table st = { 0 };
	uint8_t *dirty = NULL;
	size_t cap_dirty = 0;
	unsigned jobs = m->jobs;
	m->cls = malloc((m->nnodes + 2) * sizeof(uint32_t));
	m->cs->weak_first_cls = malloc(nw * sizeof(uint32_t));
	m->cs->weak_split = calloc(nw, 1);
	f.chunk = 16384;
	f.nchunks = (size_t)((m->nnodes + f.chunk - 1) / f.chunk);
	f.diff = calloc(f.nchunks + 1, sizeof(*f.diff));
	f.ndiff = calloc(f.nchunks + 1, sizeof(*f.ndiff));
	f.cap_diff = calloc(f.nchunks + 1, sizeof(*f.cap_diff));
	if (!m->cls || !m->cs->weak_first_cls || !m->cs->weak_split || !f.diff || !f.ndiff || !f.cap_diff ||
	    vec_grow(&f.rep, &f.cap_rep, nw)) {
		err = -ENOMEM;
		goto out;
	}
	/* Round 0: the weak classes themselves. A weak class's first node keeps
	 * the weak id as its class for good, so weak_first_cls never changes. */
	f.pass = 2;
	const struct rep *first = weak__first(m->wt);
	if ((err = pool_ordered(jobs, f.nchunks, 4 * (size_t)jobs, refine_chunk, NULL, &f)))
		goto out;
	for (uint32_t w = 0; w < m->nweak; w++) {
		f.rep[w] = first[w];
		if ((err = VERIFY(m->d, m->weak[f.rep[w].gid] == w, "weak class %u's first gid %u is of class %u", w,
				  f.rep[w].gid, m->weak[f.rep[w].gid])))
			goto out;
		m->cs->weak_first_cls[w] = w;
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
