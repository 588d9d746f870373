/* cached.h: one unit through the extracted-CU cache (cached.c). */
#ifndef BTFPIPE_EXTRACT_CACHED_H
#define BTFPIPE_EXTRACT_CACHED_H

#include <stddef.h>
#include <stdint.h>
#include "input.h"
#include "../../common/buf.h"
#include "../../common/hash.h"

struct cu_walk;

struct cachedir;
struct cache_patch;
struct cached {
	struct cachedir *cache;	/* kind "cu-v1" */
	const struct input *in;
	struct key128 salt;	/* this binary and the input's ELF facts */
	int verify;		/* --cache-verify: extract hits too and compare */
};
/* A worker's scratch for cached__unit(), reused from unit to unit. */
struct cached_worker {
	struct cu_key *key;
	struct buf norm, check;
	struct cache_patch *patches;
	size_t cap_patches;
};
int cached__init(struct cached *c, struct cachedir *cache, const struct input *in, int verify);
void cached_worker__free(struct cached_worker *cw);
/* Unit u into w->blob, from the cache or extracted (and then stored).
 * Returns: 0 or -errno (detail in w->d). */
int cached__unit(const struct cached *c, struct cached_worker *cw, struct cu_walk *w,
		 const struct unit *u, uint16_t *language, size_t *nrecs);

#endif
