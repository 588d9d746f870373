/* base_index.h: the base's half of matching, made once per base and cached (base_index.c). */
#ifndef BTFPIPE_EMIT_BASE_INDEX_H
#define BTFPIPE_EMIT_BASE_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "base_tables.h"
#include "../../common/cachedir.h"

struct base_view;

/* The index of base (whose file has digest): from cache c, else made and
 * stored there. 0, or -errno when it cannot be had (then matching runs
 * without it). */
int base_index__get(struct base_index *bi, const struct base_view *base, struct key128 digest,
		   struct cachedir *c);
/* The index of base, made (no cache). 0 or -errno. */
int base_index__make(struct base_index *bi, const struct base_view *base);
void base_index__free(struct base_index *bi);

#endif
