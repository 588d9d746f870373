/* hash.h: btfpipe's hashing, all on xxhash (XXH3).
 *
 * HASH_FORCE_COLLIDE (a debug build knob, `make COLLIDE=1`) makes every
 * 64-bit hash return the same value, so every hash table takes its slow path
 * and every equality is proven by a full comparison, never by a hash alone.
 */
#ifndef BTFPIPE_HASH_H
#define BTFPIPE_HASH_H

#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint64_t hash64(const void *p, size_t n)
{
#ifdef HASH_FORCE_COLLIDE
	(void)p; (void)n;
	return 42;
#else
	return XXH3_64bits(p, n);
#endif
}

static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
#ifdef HASH_FORCE_COLLIDE
	(void)h; (void)v;
	return 42;
#else
	return XXH3_64bits_withSeed(&v, sizeof(v), h);
#endif
}

/* A cheaper step than hash_mix() (a multiply and a shift instead of an
 * XXH3 round) for indexes that hash many small fields per entry and use the
 * hash only to find candidates, each then compared in full. Not for
 * anything written to a file. */
static inline uint64_t hash_step(uint64_t h, uint64_t v)
{
#ifdef HASH_FORCE_COLLIDE
	(void)h; (void)v;
	return 42;
#else
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
#endif
}

/* The rule every reused hash table follows when it is emptied for the next
 * unit: a table grown for the largest unit would cost its whole size to
 * clear after every small one (megabytes per CU on a vmlinux), so one that
 * holds fewer than an eighth of its slots is freed (and grows again on
 * demand) rather than cleared; clearing stays proportional to what the
 * unit used. */
static inline int table_drop_on_reset(size_t used, size_t cap)
{
	return cap && used * 8 < cap;
}

/* 128-bit content keys and checksums: never collide-forced, they are identities. */
struct key128 {
	uint64_t lo, hi;
};

static inline struct key128 key128_of(const void *p, size_t n)
{
	XXH128_hash_t h = XXH3_128bits(p, n);
	return (struct key128){ h.low64, h.high64 };
}

static inline int key128_eq(struct key128 a, struct key128 b)
{
	return a.lo == b.lo && a.hi == b.hi;
}

#endif
