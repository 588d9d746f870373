/* str_match.h: which strings of ours a base has, by id (str_match.c). */
#ifndef BTFPIPE_EMIT_STR_MATCH_H
#define BTFPIPE_EMIT_STR_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include "bucket.h"

struct base_index;
struct base_view;

/* The strings of ours (standalone BTF) and which of them the
 * base has (bdata, blen: its string section, ending in a NUL), by id (see
 * there). str_match__build() returns 0 or -ENOMEM; the match's arrays are its own
 * until str_match__free(). The match points into both string sections, so they
 * outlive it and ours is not changed meanwhile. */
struct str_match {
	const char *odata, *bdata;	/* our and the base's string sections */
	uint32_t olen, blen;
	struct sm_slot {
		uint64_t sig;		/* the string's signature, never 0; 0: an empty slot */
		uint32_t off1;		/* our first offset of the string + 1 */
		uint32_t base1;		/* the base's first offset of it + 1, or 0 (not with bi) */
	} *slots;			/* our distinct strings, open addressing */
	size_t nslots;
	uint64_t *sfilt;		/* 4 * nslots bits: the slots' signatures */
	uint32_t *id_at;		/* per our offset: the id of the string starting there, or 0 */
	struct { uint32_t boff1, id; } *bmap;	/* base offsets (+ 1) holding a string of ours */
	size_t nbmap;
	uint64_t *bfilt;		/* 4 * nbmap bits: bmap's offsets */
	uint64_t *bstart;		/* bit per base offset: a string starts there */
	uint32_t empty_id;		/* the id of "" */
	const struct base_index *bi;	/* built from it: no scan, no bmap, no base1 */
};
int str_match__build(struct str_match *sm, const struct base_view *ours, const char *bdata, uint32_t blen);
uint32_t str_match__ours(const struct str_match *sm, uint32_t off);	/* id of our string at off */
uint32_t str_match__base(const struct str_match *sm, uint32_t boff);	/* its id, 0: not ours */
int64_t str_match__base_off(const struct str_match *sm, uint32_t id);	/* base offset, or -1 */
/* The same match from a base_index of that base (no scan of its strings). */
int str_match__build_indexed(struct str_match *sm, const struct base_view *ours, const char *bdata, uint32_t blen,
			    const struct base_index *bi);
/* A string's key: its signature (never 0); equal strings have equal keys,
 * unequal ones rarely. Of our string at off; of the base's at boff, 0 when
 * ours has no such string; of the string at off of any section. */
uint64_t str_match__ours_key(const struct str_match *sm, uint32_t off);
uint64_t str_match__base_key(const struct str_match *sm, uint32_t boff);
uint64_t str_match__sig_at(const char *data, uint32_t len, uint32_t off);
/* The string table of a base_index: every string start of data[0..len) by
 * signature, in 2^bits buckets (malloc'd, the caller's). 0 or -ENOMEM. */
int str_match__index_build(const char *data, uint32_t len, uint32_t bits, uint32_t **bucket, struct bi_ent **ents,
		    uint32_t *n);
void str_match__free(struct str_match *sm);

#endif
