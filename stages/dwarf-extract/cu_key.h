/* cu_key.h: a CU's relink-stable content key (cu_key.c). */
#ifndef BTFPIPE_EXTRACT_CU_KEY_H
#define BTFPIPE_EXTRACT_CU_KEY_H

#include "input.h"
#include "../../common/hash.h"

/* See format/CU-CACHE.md, "The key". cu_key__new()'s result is the caller's,
 * freed by cu_key__free(). */
enum cu_key_kind {
	KEY_NONE,	/* not cacheable: extract it as always */
	KEY_OK,		/* the key depends on this CU alone */
	KEY_WHOLE,	/* its records may read other units: the caller adds the input's hash */
};
struct cu_key;
/* s: the input's sections (input.dws), in the input's byte order. */
struct cu_key *cu_key__new(const struct dwsec *s, int big_endian);
void cu_key__free(struct cu_key *k);
enum cu_key_kind cu_key__compute(struct cu_key *k, const struct unit *u, struct key128 *out);

#endif
