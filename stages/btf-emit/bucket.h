/* bucket.h: a static bucketed hash table, made by a counting sort (bucket.c). */
#ifndef BTFPIPE_EMIT_BUCKET_H
#define BTFPIPE_EMIT_BUCKET_H

#include <stddef.h>
#include <stdint.h>

/* A static hash table made once from (hash, id) pairs: each pair in the
 * bucket of its hash's top bits, ids ascending within a bucket, with 32 more
 * bits of the hash as a check. An entry that only shares the check is a
 * false candidate, which the caller's exact comparison rejects. The base
 * index's two tables (base_index.h) and base_dedup.c's own are of this kind. */
struct bi_ent {
	uint32_t check;		/* BI_CHECK(hash) */
	uint32_t id;		/* a base type id, or a string's offset */
};
#define BI_BUCKET(h, bits) ((size_t)((h) >> (64 - (bits))))
#define BI_CHECK(h) ((uint32_t)((h) >> 16))
/* A table from (hash, id) pairs in ascending id order: *bucket (2^bits + 1
 * bounds) and *ents (both malloc'd, the caller's), by a counting sort (two
 * sequential passes, where inserting 95,000 entries into an open-addressing
 * table missed the cache on each). 0 or -ENOMEM. */
struct bi_pair {
	uint64_t h;
	uint32_t id;
};
int bucket__make(const struct bi_pair *in, size_t n, uint32_t bits, uint32_t **bucket, struct bi_ent **ents);
/* Entries of the bucket of hash h: [*lo, *hi). */
static inline void bucket__range(const uint32_t *bucket, uint32_t bits, uint64_t h, uint32_t *lo, uint32_t *hi)
{
	size_t b = BI_BUCKET(h, bits);
	*lo = bucket[b];
	*hi = bucket[b + 1];
}

#endif
