/* weak.c: step 2 of the merge (merge.h): equal keys into weak classes.
 *
 * Invariant: every weak class id is assigned in order of the first gid
 * that has it (CUs in order, each CU's misses in record order), so ids
 * never depend on scheduling; the gid that makes a class is its
 * representative for the refinement (refine.c).
 */
#include "classes.h"
#include "../../common/hash.h"
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
 * never depend on the timing.
 *
 * Why it is not a common/idmap: an idmap's arrays are replaced and freed
 * as it grows, and its slots are written in no particular order, so no
 * other thread may read one while it is filled. Letting the scans find the
 * classes earlier CUs made took the merge's serial insert on the vmlinux
 * from 0.10-0.13 s to 0.015-0.018 s at -j2 (bench/README.md, "The hash
 * tables that stay hand-written"). */

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

struct weak_table *weak__new(void)
{
	return calloc(1, sizeof(struct weak_table));
}

void weak__free(struct weak_table *t)
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
		if (vec_grow(&m->cs->pend, &m->cs->cap_pend, m->cs->npend + 1))
			return -ENOMEM;
		uint32_t pos = s->xpos[i];
		m->cs->pend[m->cs->npend++] = (struct pending_stop){ pos, (uint32_t)ci,
							     s->xrefs[s->gstops[pos] & ~STOP_XREF] };
	}
	for (size_t i = 0; i < s->nexports; i++) {
		int err = exports__add(m->exports, s->input, &s->exports[i]);
		if (err)
			return err;
	}
	return 0;
}

/* The kind class and name of a weak class, read back from its key (see
 * scan.c key_of: kind byte, then for struct/union/enum 'F' or 'D' and the
 * name, its bytes and a NUL). Returns 0 for classes that are not a named
 * struct/union/enum. */
int weak__named(const struct weak_table *t, uint32_t w, uint8_t *kind, int *is_fwd,
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

const struct rep *weak__first(const struct weak_table *t)
{
	return t->first;
}

uint8_t classes__rec_kind(const struct merge *m, uint32_t gid)
{
	uint32_t w = m->weak[gid];
	return w == NO_CLASS ? 0 : m->wt->kind[w];
}
