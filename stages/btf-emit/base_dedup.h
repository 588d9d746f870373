/* base_dedup.h: our types matched against a base: split BTF with what it lacks (base_dedup.c). */
#ifndef BTFPIPE_EMIT_BASE_DEDUP_H
#define BTFPIPE_EMIT_BASE_DEDUP_H

#include <stdint.h>
#include "bucket.h"

struct base_index;
struct base_view;
struct buf;
struct diag;

/* Ours is standalone BTF (ids from 1), read in place; append to *split the
 * raw bytes of split BTF over base with only the types the base lacks,
 * references renumbered. bi: the base's index, or NULL (made here, for this
 * module only). *removed: how many the base had. */
int base_dedup__split(const struct base_view *ours, const struct base_view *base, const struct base_index *bi,
		      uint32_t *removed, struct buf *split, struct diag *d);
/* The type table of a base_index: every base type that can be matched, by
 * shallow hash, in 2^bits buckets (malloc'd, the caller's). 0 or -errno. */
int base_dedup__index(const struct base_view *base, uint32_t bits, uint32_t **bucket, struct bi_ent **ents,
		     uint32_t *n);

#endif
