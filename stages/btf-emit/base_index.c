/* base_index.c: the base's half of matching a module against it, made once
 * per base and kept in the cache directory.
 *
 * Matching a small module against a vmlinux base (base_dedup.c) spent most
 * of its time on the base alone: signing its ~96,000 strings, hashing its
 * ~95,000 types, checking its arrays. None of that depends on the module
 * when names are keyed by their strings' signatures, so with a cache
 * directory it is made once, stored under kind base-v1 (keyed on this
 * binary and the base's BTF bytes), and every later module reads it back.
 * The payload (spec: format/CU-CACHE.md, "The base index"):
 *
 *   header   8 x u32: version, type count, string section length, flags
 *            (bit 0: the base flattens arrays), tbits, ntents, sbits, nsents
 *   tbucket  (2^tbits + 1) x u32     types: bucket b is tents[tbucket[b] ..
 *   tents    ntents x {check, id}    tbucket[b + 1]), ids ascending
 *   sbucket  (2^sbits + 1) x u32     string starts, likewise, offsets
 *   sents    nsents x {check, off}   ascending
 *
 * A payload that does not fit the base it is read with (its counts, its
 * bounds) is refused: the index is made again and the entry replaced.
 */
#include "base_index.h"
#include "base_dedup.h"
#include "base_view.h"
#include "str_match.h"
#include "../../common/memo.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BI_VERSION 1
#define BI_FLATTENS 1u
/* 2^14 buckets for ~95,000 entries: a lookup reads one bucket of about six
 * entries, and each table's bounds are 64 KiB of the ~1.6 MiB payload. */
#define BI_BITS 14
#define BI_MAX_BITS 24

struct bi_head {
	uint32_t version, ntypes, str_len, flags, tbits, ntents, sbits, nsents;
};

static uint64_t table_bytes(uint32_t bits, uint32_t n)
{
	return (((uint64_t)1 << bits) + 1) * sizeof(uint32_t) + (uint64_t)n * sizeof(struct bi_ent);
}

/* Bounds that start at 0, never decrease and end at n. */
static int bounds_ok(const uint32_t *bucket, uint32_t bits, uint32_t n)
{
	size_t nb = (size_t)1 << bits;
	if (bucket[0])
		return 0;
	for (size_t b = 0; b < nb; b++)
		if (bucket[b + 1] < bucket[b])
			return 0;
	return bucket[nb] == n;
}

/* Point bi's tables into payload p (n bytes) and check them against the
 * base's counts. 0 or -EINVAL. */
static int bi_load(struct base_index *bi, const uint8_t *p, size_t n, uint32_t ntypes, uint32_t str_len)
{
	struct bi_head h;
	if (n < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.version != BI_VERSION || h.ntypes != ntypes || h.str_len != str_len || h.flags & ~BI_FLATTENS ||
	    !h.tbits || h.tbits > BI_MAX_BITS || !h.sbits || h.sbits > BI_MAX_BITS ||
	    sizeof(h) + table_bytes(h.tbits, h.ntents) + table_bytes(h.sbits, h.nsents) != n)
		return -EINVAL;
	const uint8_t *q = p + sizeof(h);
	const uint32_t *tb = (const uint32_t *)q;
	const struct bi_ent *te = (const struct bi_ent *)(tb + ((size_t)1 << h.tbits) + 1);
	const uint32_t *sb = (const uint32_t *)(te + h.ntents);
	const struct bi_ent *se = (const struct bi_ent *)(sb + ((size_t)1 << h.sbits) + 1);
	if (!bounds_ok(tb, h.tbits, h.ntents) || !bounds_ok(sb, h.sbits, h.nsents))
		return -EINVAL;
	/* Entries are checked where they are used: an id past the base's
	 * types or an offset past its strings is skipped there. */
	*bi = (struct base_index){
		.ntypes = ntypes, .str_len = str_len, .flattens = !!(h.flags & BI_FLATTENS),
		.tbits = h.tbits, .ntents = h.ntents, .sbits = h.sbits, .nsents = h.nsents,
		.tbucket = tb, .tents = te, .sbucket = sb, .sents = se,
	};
	return 0;
}

/* Make base's index as one payload (*out, malloc'd, *size bytes). */
static int bi_make(const struct base_view *base, uint8_t **out, size_t *size)
{
	struct bi_head h = { .version = BI_VERSION, .ntypes = base->n, .str_len = base->str_len,
			     .tbits = BI_BITS, .sbits = BI_BITS };
	uint32_t *tb = NULL, *sb = NULL;
	struct bi_ent *te = NULL, *se = NULL;
	int err = base_dedup__index(base, h.tbits, &tb, &te, &h.ntents);
	if (!err)
		err = str_match__index_build(base->strs, h.str_len, h.sbits, &sb, &se, &h.nsents);
	if (!err) {
		h.flags = base->flattens ? BI_FLATTENS : 0;
		size_t nt = table_bytes(h.tbits, h.ntents), ns = table_bytes(h.sbits, h.nsents);
		size_t tbn = (((size_t)1 << h.tbits) + 1) * sizeof(uint32_t);
		size_t sbn = (((size_t)1 << h.sbits) + 1) * sizeof(uint32_t);
		uint8_t *p = malloc(sizeof(h) + nt + ns);
		if (!p) {
			err = -ENOMEM;
		} else {
			memcpy(p, &h, sizeof(h));
			memcpy(p + sizeof(h), tb, tbn);
			memcpy(p + sizeof(h) + tbn, te, nt - tbn);
			memcpy(p + sizeof(h) + nt, sb, sbn);
			memcpy(p + sizeof(h) + nt + sbn, se, ns - sbn);
			*out = p;
			*size = sizeof(h) + nt + ns;
		}
	}
	free(tb);
	free(te);
	free(sb);
	free(se);
	return err;
}

static int host_little_endian(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one;
}

int base_index__get(struct base_index *bi, const struct base_view *base, struct key128 digest, struct cachedir *c)
{
	memset(bi, 0, sizeof(*bi));
	/* The payload is little-endian, read in place (a view is of a base
	 * in our byte order). */
	if (!host_little_endian())
		return -ENOTSUP;
	int err;
	struct memo_key k;
	struct key128 key;
	memo_key_begin(&k, "btf-emit: base index");
	memo_key_u64(&k, BI_VERSION);
	memo_key_u64(&k, digest.lo);
	memo_key_u64(&k, digest.hi);
	if ((err = memo_key_end(&k, &key)))
		return err;
	const uint8_t *m;
	size_t n;
	if (cachedir__map(c, key, &m, &n) == 1) {
		if (!bi_load(bi, m, n, base->n, base->str_len)) {
			bi->map = m;
			bi->map_size = n;
			cachedir__count(c, CD_HITS, 1);
			return 0;
		}
		cachedir__unmap(m, n); /* a sound entry that does not fit: made again, replaced */
		cachedir__count(c, CD_CORRUPT, 1);
	}
	cachedir__count(c, CD_MISSES, 1);
	if ((err = base_index__make(bi, base)))
		return err;
	cachedir__put(c, key, bi->mem, bi->mem_size, NULL, 0);
	return 0;
}

int base_index__make(struct base_index *bi, const struct base_view *base)
{
	memset(bi, 0, sizeof(*bi));
	uint8_t *p = NULL;
	size_t n = 0;
	int err = bi_make(base, &p, &n);
	if (err)
		return err;
	if ((err = bi_load(bi, p, n, base->n, base->str_len))) {
		free(p); /* (cannot happen: bi_make wrote it) */
		return err;
	}
	bi->mem = p;
	bi->mem_size = n;
	return 0;
}

void base_index__free(struct base_index *bi)
{
	free(bi->mem);
	cachedir__unmap(bi->map, bi->map_size);
	memset(bi, 0, sizeof(*bi));
}
