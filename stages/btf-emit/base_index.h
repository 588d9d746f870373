/* base_index.h: the base's half of matching, made once per base and cached (base_index.c). */
#ifndef BTFPIPE_EMIT_BASE_INDEX_H
#define BTFPIPE_EMIT_BASE_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "bucket.h"
#include "../../common/cachedir.h"

struct base_view;

/* What matching against a base needs of the base alone,
 * made once per base and kept in the cache directory (kind base-v1, spec
 * format/CU-CACHE.md "The base index"): on a small module, making it was
 * two thirds of the emit.
 *
 * Two tables (bucket.h): base types by shallow hash (base_dedup.c), and the
 * base's string starts by signature (str_match.c). The tables choose what
 * is compared, never what matches. A base_index owns its tables (mem, or
 * the cache's mapping) until base_index__free() (a zeroed one too). */
struct base_index {
	uint32_t ntypes;	/* btf__type_cnt() of the base it was made of */
	uint32_t str_len;	/* the length of that base's string section */
	int flattens;		/* btf_raw__flattens() of it */
	uint32_t tbits, ntents, sbits, nsents;
	const uint32_t *tbucket;	/* 2^tbits + 1 bounds into tents */
	const struct bi_ent *tents;
	const uint32_t *sbucket;	/* 2^sbits + 1 bounds into sents (NULL: none) */
	const struct bi_ent *sents;
	void *mem;		/* owned: the payload the tables point into, made here */
	size_t mem_size;
	const uint8_t *map;	/* or read from the cache, mapped (cachedir__map) */
	size_t map_size;
};
/* The index of base (whose file has digest): from cache c, else made and
 * stored there. 0, or -errno when it cannot be had (then matching runs
 * without it). */
int base_index__get(struct base_index *bi, const struct base_view *base, struct key128 digest,
		   struct cachedir *c);
/* The index of base, made (no cache). 0 or -errno. */
int base_index__make(struct base_index *bi, const struct base_view *base);
void base_index__free(struct base_index *bi);

#endif
