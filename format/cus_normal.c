/* cus_normal.c: a CU blob's address-free identity and its address list.
 *
 * A relink moves code: every function's pc and many variables' addresses
 * change, and so does where each unit starts in .debug_info, while the
 * types, names and parameters (what the merge reads) stay as they were. A
 * blob's *normal form* is the blob with its cu_offset written as 0 and each
 * address pair (a func's pc and shndx, a var's addr and shndx) written as
 * 0 0: the bytes encoding them as 0 would give. Its xxh3-128 is the CU's
 * `content` (format/CU-RECORDS.md, "Content and addresses"), and the pairs
 * taken out, in blob order, are its address list: the blob is exactly its
 * normal form with cu_offset and that list put back. The extracted-CU
 * cache stores the normal form (cached.c); the merge keys its memo on the
 * contents (dedup-merge/memo.c).
 *
 * The hash is streamed over the pieces between the address fields, so no
 * copy of the blob is made: XXH3 streamed gives the one-shot value.
 */
#include "cus.h"

#include <errno.h>

/* The uleb at p[*at] (below size) skipped, its value in *v; -1 when it
 * runs off the end or past 64 bits. */
static int uleb_at(const uint8_t *p, size_t size, size_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned s = 0; *at < size && s < 64; s += 7) {
		uint8_t c = p[(*at)++];
		x |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* The blob head's extern count (CU-RECORDS.md, "Blob layout"). */
static int head_externs(const uint8_t *blob, size_t size, uint64_t *nexterns)
{
	size_t at = 4;
	uint64_t v;
	for (int i = 0; i < 8; i++) /* cu_offset, 4 unit fields, 3 string refs */
		if (uleb_at(blob, size, &at, &v))
			return -1;
	if (uleb_at(blob, size, &at, &v) || v > size - at)
		return -1;
	at += (size_t)v;
	return uleb_at(blob, size, &at, nexterns);
}

int cus_blob__content(const uint8_t *blob, size_t size, const uint32_t *addr_at, size_t n,
		      struct key128 *content, struct cus_addr *addrs, uint32_t *nexterns)
{
	static const uint8_t zeros[2] = { 0, 0 };
	uint64_t v, nx;
	size_t at = 4;
	if (size < 5 || uleb_at(blob, size, &at, &v) || head_externs(blob, size, &nx) || nx > UINT32_MAX)
		return -EBADMSG;
	if (nexterns)
		*nexterns = (uint32_t)nx;
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	XXH3_128bits_update(&st, blob, 4);
	XXH3_128bits_update(&st, zeros, 1);
	for (size_t i = 0; i < n; i++) {
		size_t pos = addr_at[i];
		uint64_t addr, shndx;
		if (pos < at || pos >= size)
			return -EBADMSG;
		XXH3_128bits_update(&st, blob + at, pos - at);
		XXH3_128bits_update(&st, zeros, 2);
		at = pos;
		if (uleb_at(blob, size, &at, &addr) || uleb_at(blob, size, &at, &shndx) || shndx > UINT32_MAX)
			return -EBADMSG;
		if (addrs)
			addrs[i] = (struct cus_addr){ .addr = addr, .shndx = (uint32_t)shndx };
	}
	XXH3_128bits_update(&st, blob + at, size - at);
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	*content = (struct key128){ h.low64, h.high64 };
	return 0;
}
