/* idmap.h: the open-addressing table btfpipe uses for keys that live
 * elsewhere (strings, signatures, prototypes, a record's uses), in place of
 * one written out per use; offmap.h is its sibling for integer keys.
 *
 * The table holds ids (u32, the caller's numbering: an index into the
 * caller's array of keys) and each id's 64-bit hash; the keys themselves
 * stay with the caller, who compares them through an equality callback
 * (as libbpf's hashmap.h does). Equal hashes prove nothing: a lookup
 * matches only where the callback says the keys are equal, so a collision
 * (`make COLLIDE=1` forces them all) costs time, never a wrong answer.
 *
 * Linear probing from the hash, at most half full, grown by doubling from
 * the stored hashes (no key is read again). The probe is inline, with the
 * callback a constant at each call site, so the compiler can inline it
 * too: the merge and the emit look up millions of keys. A slot index is
 * good until the next idmap__reserve(). The table owns its two arrays.
 */
#ifndef BTFPIPE_IDMAP_H
#define BTFPIPE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *hash;		/* cap slots */
	uint32_t *id;		/* cap slots: id + 1, 0 = empty */
	size_t cap, count;
};

/* Does the caller's key of id equal the key looked up? */
typedef int (*idmap_eq_fn)(const void *ctx, uint32_t id, const void *key);

/* The slot holding a key equal to key (hash h), or the empty slot where it
 * would go. The table must have slots (idmap__reserve() first). */
static inline size_t idmap__slot(const struct idmap *m, uint64_t h, idmap_eq_fn eq, const void *ctx,
				 const void *key)
{
	size_t mask = m->cap - 1, j = h & mask;
	for (; m->id[j]; j = (j + 1) & mask)
		if (m->hash[j] == h && eq(ctx, m->id[j] - 1, key))
			break;
	return j;
}

/* The id of a key equal to key, or -1 (also for a table with no slots). */
static inline int64_t idmap__find(const struct idmap *m, uint64_t h, idmap_eq_fn eq, const void *ctx,
				  const void *key)
{
	if (!m->cap)
		return -1;
	size_t j = idmap__slot(m, h, eq, ctx, key);
	return m->id[j] ? (int64_t)m->id[j] - 1 : -1;
}

/* The id in a slot idmap__slot() gave, or -1 for an empty one. */
static inline int64_t idmap__at(const struct idmap *m, size_t slot)
{
	return m->id[slot] ? (int64_t)m->id[slot] - 1 : -1;
}

/* Room for `more` keys beyond those held (the load stays at most 1/2):
 * 0 or -ENOMEM. Moves the slots: find again after it. */
int idmap__reserve(struct idmap *m, size_t more);

/* id (below UINT32_MAX) into the empty slot idmap__slot() gave, after
 * idmap__reserve(). */
static inline void idmap__put(struct idmap *m, size_t slot, uint64_t h, uint32_t id)
{
	m->hash[slot] = h;
	m->id[slot] = id + 1;
	m->count++;
}

/* Empty, keeping its slots (by table_drop_on_reset(), hash.h, they are
 * freed when mostly unused). */
void idmap__clear(struct idmap *m);
void idmap__free(struct idmap *m);

#endif
