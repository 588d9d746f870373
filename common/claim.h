/* claim.h: results placed in order by one thread and handed out, each
 * once, to whichever thread comes for the next one.
 *
 * A pool's in-order emit (pool.h) gives each result its place in an output
 * file, and the bytes are then written by the workers between their items
 * rather than by the emit: the copy into the output leaves the one thread
 * that runs in order. The emit publishes how many results are placed; a
 * writer claims the next placed one nobody has claimed.
 *
 * Invariants: [0, placed) have their place, [0, claimed) are written or
 * being written, claimed <= placed, and each index is claimed exactly once.
 * What the emit wrote for a result before claim_publish() (its offset) is
 * visible to the thread that claims it (release, then acquire).
 */
#ifndef BTFPIPE_CLAIM_H
#define BTFPIPE_CLAIM_H

#include <stddef.h>

struct claim {
	size_t placed, claimed;
};

/* From the emit only: results [0, n) are placed. */
static inline void claim_publish(struct claim *c, size_t n)
{
	__atomic_store_n(&c->placed, n, __ATOMIC_RELEASE);
}

/* The next placed result nobody has claimed, in *k: 1, or 0 if there is none
 * (now: more may be placed later). */
static inline int claim_next(struct claim *c, size_t *k)
{
	for (;;) {
		size_t i = __atomic_load_n(&c->claimed, __ATOMIC_RELAXED);
		if (i >= __atomic_load_n(&c->placed, __ATOMIC_ACQUIRE))
			return 0;
		if (__atomic_compare_exchange_n(&c->claimed, &i, i + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			*k = i;
			return 1;
		}
	}
}

#endif
