/* cache.h: the extracted-CU cache's store (spec: format/CU-CACHE.md).
 *
 * One file per entry, DIR/cu-v1/XX/KEY.cu, written to a temp file in the
 * same directory and renamed into place, so any number of processes share a
 * directory without a lock held across work; the last rename of a key wins
 * and every writer wrote the same bytes. A reader checks an entry's checksum
 * and shape: a bad one is a miss, and the miss's insert replaces it.
 *
 * The store knows nothing of DWARF: an entry is a blob in "normal form"
 * (cu_offset 0, each address field a zero byte pair) plus the patch list
 * saying where those fields are and which DIE to read them from again.
 * Threading: cache__get/cache__put/cache__count are called from any worker;
 * the counters are atomic. open/finish/close run on the main thread.
 */
#ifndef BTFPIPE_CACHE_H
#define BTFPIPE_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../common/hash.h"

struct diag;

struct cache_opts {
	const char *dir;
	uint64_t max_size;	/* bytes; 0: no limit */
	int readonly;		/* look up, never insert, touch or evict */
};

/* A record whose address fields are re-read on a hit. */
struct cache_patch {
	uint32_t pos;		/* the zero byte pair (addr, shndx) in the normal blob, if hole */
	uint8_t kind;		/* CUS_FUNC or CUS_VAR */
	uint8_t hole;		/* 1: the record has an address (HAS_PC/HAS_ADDR) */
	uint64_t die;		/* the DIE, relative to the CU start */
};

struct cache_entry {
	uint8_t *mem;		/* owned: the whole entry file */
	const uint8_t *blob;	/* the normal-form blob, inside mem */
	size_t blob_size;
	struct cache_patch *patches; /* owned */
	uint32_t npatches;
	uint16_t language;
	uint32_t nrecs;
};

enum cache_counter {
	CC_HITS, CC_MISSES, CC_CORRUPT, CC_UNCACHEABLE, CC_STORED, CC_STORE_FAILED,
	CC_BYTES_READ, CC_BYTES_WRITTEN, CC_EVICTED, CC_N,
};

struct cache;

/* Creates DIR/cu-v1 if needed (not in readonly mode). Returns 0 or -errno (d). */
int cache__open(struct cache **out, const struct cache_opts *o, struct diag *d);
/* Returns 1 and fills e on a hit, 0 on a miss (absent or refused: a refused
 * entry is counted CC_CORRUPT and left for the miss's insert to replace). */
int cache__get(struct cache *c, struct key128 key, struct cache_entry *e);
void cache_entry__free(struct cache_entry *e);
/* Store an entry. A failure (full disk, permissions) is counted, kept for
 * cache__warning(), and returned; it never changes the extraction's output. */
int cache__put(struct cache *c, struct key128 key, const uint8_t *blob, size_t blob_size,
	       const struct cache_patch *p, uint32_t np, uint16_t language, uint32_t nrecs);
void cache__count(struct cache *c, enum cache_counter what, uint64_t n);
/* The first store failure, as text, or NULL. */
const char *cache__warning(const struct cache *c);
/* End of a run: evict past the size limit (only when this run stored
 * something) and add this run's counters to the directory's totals. */
void cache__finish(struct cache *c);
/* Print this run's counters and the directory's totals and size. */
void cache__print_stats(struct cache *c, FILE *f, int this_run);
void cache__close(struct cache *c);

/* "2G", "500M", "64k", "0" -> bytes. Returns 0 or -EINVAL. */
int cache_parse_size(const char *s, uint64_t *out);

#endif
