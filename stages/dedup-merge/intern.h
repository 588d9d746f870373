/* intern.h: numbering equal things in order of first use, in parallel.
 *
 * A serial pass that meets strings (or prototypes) one by one and gives each
 * new one the next offset (or node id) makes numbers that depend only on the
 * order it meets them in. intern.c gets the same numbers without that pass:
 * each use is pushed, from any worker, with its *place*, the position the
 * serial pass would meet it at; equal uses become one *unique* that keeps the
 * smallest place; the uniques are laid out in order of place. Every step but
 * two sums over a few ranges and ops->alloc runs on the pool, and the result
 * depends on the places only, never on which worker pushed what or when.
 */
#ifndef BTFPIPE_INTERN_H
#define BTFPIPE_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* A place packs (pass, CU, n) so that places compare as a serial pass meets
 * them: all of pass 0, then pass 1 CU by CU, then pass 2. Pass 0 is special:
 * a pass-0 use is already numbered (n is its value, a node id, say), is
 * never laid out, and so an equal later use takes its number. The caller
 * keeps pass <= 2, ci < 2^PLACE_CU_BITS and n < 2^32, and gives no two uses
 * the same place (one place, one use): that makes the order total. */
#define PLACE_CU_BITS 30
static inline uint64_t place_of(unsigned pass, size_t ci, uint32_t n)
{
	return (uint64_t)pass << 62 | (uint64_t)ci << 32 | n;
}
static inline unsigned place_pass(uint64_t p) { return (unsigned)(p >> 62); }
static inline size_t place_cu(uint64_t p) { return (size_t)(p >> 32) & (((size_t)1 << PLACE_CU_BITS) - 1); }
static inline uint32_t place_n(uint64_t p) { return (uint32_t)p; }

/* One use of a string or prototype. Equal uses must have equal hashes. */
struct use {
	uint64_t hash, place;
	const char *s;		/* free for the caller: a string's bytes, say */
	uint32_t len, at;	/* free for the caller: its length, where it goes */
};

/* What differs between interning strings and prototypes. Each is called
 * from pool workers, several at once, on distinct uniques. */
struct intern_ops {
	int (*eq)(const void *ctx, const struct use *a, const struct use *b);
	/* What a unique takes where it is laid out (bytes, items). */
	uint64_t (*size)(const void *ctx, const struct use *u);
	/* Once, on the calling thread, before any put: room for `count` new
	 * uniques of `total` size. Returns 0 or a negative errno. */
	int (*alloc)(void *ctx, uint64_t count, uint64_t total);
	/* Lay out new unique number idx (0-based, in order of place) at pos,
	 * the sum of the sizes before it; returns its value. */
	uint32_t (*put)(void *ctx, const struct use *u, uint64_t idx, uint64_t pos);
	/* Tell one use its unique's value. */
	void (*resolve)(void *ctx, const struct use *u, uint32_t val);
};

struct intern;

/* workers: the pool's thread count (pushes name their worker); chunks:
 * ranges of CUs each pass's new uniques are sorted in (one per thread is
 * plenty); ncus: the CUs places name. NULL when out of memory. */
struct intern *intern__new(const struct intern_ops *ops, void *ctx, unsigned workers, size_t chunks,
			  size_t ncus);
/* From pool worker `worker`, any number at once on distinct workers. */
int intern__push(struct intern *in, unsigned worker, const struct use *u);
/* After every push: dedup, order, alloc, put, resolve. Returns 0, or a
 * negative errno: -ENOMEM, -EAGAIN (no threads), -E2BIG (UINT32_MAX uses
 * or more in one shard) or alloc's. */
int intern__run(struct intern *in, unsigned jobs);
void intern__free(struct intern *in);	/* NULL is a no-op */

#endif
