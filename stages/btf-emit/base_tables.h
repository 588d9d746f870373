/* base_tables.h: the tables of a base index (struct base_index), as the
 * matching reads them (base_dedup.c, str_match.c); making, caching and
 * freeing them is base_index.c's. A header of its own so that the readers
 * do not depend on the file that makes the tables, which calls them. */
#ifndef BTFPIPE_EMIT_BASE_TABLES_H
#define BTFPIPE_EMIT_BASE_TABLES_H

#include <stddef.h>
#include <stdint.h>
#include "bucket.h"

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

#endif
