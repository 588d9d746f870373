/* offmap.h: the open-addressing table btfpipe uses for integer keys (DIE,
 * unit and file offsets), in place of one written out per use.
 *
 * Keys are u64 and never 0 (0 marks an empty slot: no DIE or record is at
 * offset 0 of what they index); each slot may carry a value of val_size
 * bytes in an array parallel to the keys (val_size 0: a set). Linear
 * probing from hash_step() of the key, at most half full, grown by
 * doubling. The probe is inline: it is on the extraction's per-DIE path.
 * Slots move when the table grows: an index from offmap__find() is good
 * until the next offmap__reserve(). The table owns its arrays.
 */
#ifndef BTFPIPE_OFFMAP_H
#define BTFPIPE_OFFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct offmap {
	uint64_t *keys;		/* cap slots; 0 = empty */
	void *vals;		/* cap values of val_size bytes; NULL for a set */
	size_t val_size;	/* set before first use; 0: a set */
	size_t cap, count;
};

/* Is key in m? *slot: where it is, or where offmap__put() would put it (0
 * when m has no slots yet: reserve first). */
static inline int offmap__find(const struct offmap *m, uint64_t key, size_t *slot)
{
	*slot = 0;
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1, i = hash_step(0, key) & mask;
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	*slot = i;
	return m->keys[i] == key;
}

/* A pointer to slot's value (val_size bytes). */
static inline void *offmap__val(const struct offmap *m, size_t slot)
{
	return (char *)m->vals + slot * m->val_size;
}

/* Room for one more key (the load stays at most 1/2): 0 or -ENOMEM. Moves
 * the slots: find again after it. */
int offmap__reserve(struct offmap *m);

/* Key into the empty slot offmap__find() gave, after offmap__reserve(). */
static inline void offmap__put(struct offmap *m, size_t slot, uint64_t key)
{
	m->keys[slot] = key;
	m->count++;
}

/* Empty, for reuse (a CU after a CU): by table_drop_on_reset() (hash.h)
 * the arrays are freed when mostly unused, else cleared. */
void offmap__clear(struct offmap *m);
void offmap__free(struct offmap *m);

#endif
