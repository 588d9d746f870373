/* str_match.c: which strings of ours the base also has, found in one pass
 * over the base's strings.
 *
 * Over a base, split_write.c needs the base's offset of each string of ours,
 * and base_dedup.c keys names by the strings ours and the base share.
 * Hashing all of a vmlinux base's ~96,000 strings into a table for the few
 * thousand of a module was a fifth of a small module's emit. Instead our
 * distinct strings go into a small table, and each base string is only
 * measured and signed (its length, first and last 8 bytes: no hash function
 * over its bytes) and looked up in a filter that stays in the cache; only
 * the few that pass it probe the table.
 *
 * With a base_index (base_index.c: every base string start by signature,
 * made once per base), the scan is skipped: a base offset is asked for only
 * when split_write.c writes a string, and looked up in the index then.
 *
 * Why it is not a common/idmap: a slot holds a signature of the string's
 * length and end bytes, not a hash of all its bytes, so that most base
 * strings are turned away by the filter having read 16 bytes; this pass
 * took virtio_net's emit over the vmlinux base from 23.5 to 21.5 ms
 * (bench/README.md, "The hash tables that stay hand-written").
 *
 * Ids: each distinct string of ours has one id, its slot + 1. A base offset
 * has the id of the equal string of ours, or 0 when ours has no such string.
 * Equal strings have equal ids whatever their offsets: a base that repeats a
 * string, or names something by the tail of another string, included.
 */
#include "str_match.h"
#include "base_tables.h"
#include "base_view.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t load_upto8(const char *s, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, s, n < 8 ? n : 8);
	return v;
}

/* A string's signature from its length, its first 8 bytes (fewer, zero
 * filled, when shorter) and, past 8, its last 8: enough to tell most
 * strings apart without reading all of a long one (kernel names share long
 * prefixes, "__bpf_trace_"). Never 0 (an empty slot). */
static uint64_t sig_make(size_t n, uint64_t first, uint64_t last)
{
	uint64_t h = hash_step(n, first);
	return (n > 8 ? hash_step(h, last) : h) | 1;
}

static uint64_t sig_of(const char *s, size_t n)
{
	return sig_make(n, load_upto8(s, n), n > 8 ? load_upto8(s + n - 8, 8) : 0);
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The length and signature of the string at s, which ends before end: the
 * same as strnlen() and sig_of(), 8 bytes at a time while 8 bytes remain
 * (each of a base's ~96,000 strings is measured here). -1 when
 * unterminated. Little-endian: the first byte is the lowest. */
static inline int64_t measure(const char *s, const char *end, uint64_t *sig)
{
	const char *p = s;
	uint64_t first = 0;
	while (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && end - p >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		uint64_t z = (v - ONES) & ~v & HIGHS; /* its lowest set bit: the first NUL */
		if (p == s)
			first = v;
		if (z) {
			size_t k = (size_t)__builtin_ctzll(z) >> 3, n = (size_t)(p - s) + k;
			if (n < 8)
				first &= ((uint64_t)1 << (8 * n)) - 1;
			uint64_t last = 0;
			if (n > 8)
				memcpy(&last, s + n - 8, 8);
			*sig = sig_make(n, first, last);
			return (int64_t)n;
		}
		p += 8;
	}
	size_t n = (size_t)(p - s) + strnlen(p, (size_t)(end - p));
	if (s + n == end)
		return -1;
	*sig = sig_of(s, n);
	return (int64_t)n;
}

/* The filters: a bit per hash, set for each entry of a table, so that most
 * lookups of what the table lacks (most base strings, most base names) end
 * in a few kilobytes that stay in the cache instead of a probe. */
static size_t filt_bit(uint64_t h, size_t nbits)
{
	return (size_t)(h >> 40) & (nbits - 1);
}

static int filt_has(const uint64_t *f, size_t nbits, uint64_t h)
{
	size_t b = filt_bit(h, nbits);
	return f[b / 64] >> (b % 64) & 1;
}

static void filt_set(uint64_t *f, size_t nbits, uint64_t h)
{
	size_t b = filt_bit(h, nbits);
	f[b / 64] |= (uint64_t)1 << (b % 64);
}

/* The slot of string s (signature sig) in our table, or the empty slot
 * where it would go. */
static inline size_t probe(const struct str_match *sm, const char *s, uint64_t sig)
{
	size_t mask = sm->nslots - 1, j = (sig ^ sig >> 32) & mask;
	for (uint64_t e; (e = sm->slots[j].sig); j = (j + 1) & mask)
		if (e == sig && !strcmp(sm->odata + sm->slots[j].off1 - 1, s))
			break;
	return j;
}

static uint32_t id_of_string(const struct str_match *sm, const char *s, size_t n)
{
	size_t j = probe(sm, s, sig_of(s, n));
	return sm->slots[j].sig ? (uint32_t)j + 1 : 0;
}

static uint64_t boff_hash(uint32_t boff)
{
	return (uint64_t)boff * 0x9e3779b97f4a7c15ull;
}

static size_t bmap_home(const struct str_match *sm, uint32_t boff)
{
	return (size_t)(boff_hash(boff) >> 16) & (sm->nbmap - 1);
}

/* Ours: every string into the table and its filter, its offset to its id. */
static int index_ours(struct str_match *sm)
{
	size_t n = 0;
	for (uint32_t off = 0; off < sm->olen; off += (uint32_t)strnlen(sm->odata + off, sm->olen - off) + 1)
		n++;
	sm->nslots = 64; /* a quarter full: most base strings probe one empty slot */
	while (sm->nslots < n * 4)
		sm->nslots *= 2;
	sm->slots = calloc(sm->nslots, sizeof(*sm->slots));
	sm->sfilt = calloc(sm->nslots * 4 / 64, sizeof(uint64_t));
	sm->id_at = calloc((size_t)sm->olen + 1, sizeof(*sm->id_at));
	if (!sm->slots || !sm->sfilt || !sm->id_at)
		return -ENOMEM;
	for (uint32_t off = 0; off < sm->olen;) {
		const char *s = sm->odata + off;
		uint64_t sig;
		int64_t l = measure(s, sm->odata + sm->olen, &sig);
		if (l < 0)
			break; /* unterminated: no string (libbpf refuses such BTF) */
		size_t j = probe(sm, s, sig);
		if (!sm->slots[j].sig) {
			sm->slots[j] = (struct sm_slot){ .sig = sig, .off1 = off + 1 };
			filt_set(sm->sfilt, sm->nslots * 4, sig);
		}
		sm->id_at[off] = (uint32_t)j + 1;
		off += (uint32_t)l + 1;
	}
	return 0;
}

struct hit {
	uint32_t boff, id;
};

/* The base: each string measured, signed and looked up; where one of ours
 * starts goes to *hits, the first offset per id to its slot's base1, every
 * string start to bstart. */
static int scan_base(struct str_match *sm, struct hit **hits, size_t *nhit)
{
	size_t cap = 0;
	if (!(sm->bstart = calloc((size_t)sm->blen / 64 + 1, sizeof(uint64_t))))
		return -ENOMEM;
	for (uint32_t off = 0; off < sm->blen;) {
		const char *s = sm->bdata + off;
		uint64_t sig;
		int64_t l = measure(s, sm->bdata + sm->blen, &sig);
		if (l < 0)
			break;
		sm->bstart[off / 64] |= (uint64_t)1 << (off % 64);
		size_t j;
		if (filt_has(sm->sfilt, sm->nslots * 4, sig) && sm->slots[j = probe(sm, s, sig)].sig) {
			if (vec_grow(hits, &cap, *nhit + 1))
				return -ENOMEM;
			(*hits)[(*nhit)++] = (struct hit){ off, (uint32_t)j + 1 };
			if (!sm->slots[j].base1)
				sm->slots[j].base1 = off + 1;
		}
		off += (uint32_t)l + 1;
	}
	return 0;
}

/* bmap and its filter from the hits. */
static int index_hits(struct str_match *sm, const struct hit *hit, size_t nhit)
{
	sm->nbmap = 64;
	while (sm->nbmap < nhit * 2)
		sm->nbmap *= 2;
	sm->bmap = calloc(sm->nbmap, sizeof(*sm->bmap));
	sm->bfilt = calloc(sm->nbmap * 4 / 64, sizeof(uint64_t));
	if (!sm->bmap || !sm->bfilt)
		return -ENOMEM;
	for (size_t i = 0; i < nhit; i++) {
		size_t j = bmap_home(sm, hit[i].boff);
		while (sm->bmap[j].boff1)
			j = (j + 1) & (sm->nbmap - 1);
		sm->bmap[j].boff1 = hit[i].boff + 1;
		sm->bmap[j].id = hit[i].id;
		filt_set(sm->bfilt, sm->nbmap * 4, boff_hash(hit[i].boff));
	}
	return 0;
}

/* Both string sections, and ours indexed. */
static int build_ours(struct str_match *sm, const struct base_view *ours, const char *bdata, uint32_t blen)
{
	memset(sm, 0, sizeof(*sm));
	sm->bdata = bdata;
	sm->blen = blen;
	sm->odata = ours->strs;
	sm->olen = ours->str_len;
	int err;
	if ((err = index_ours(sm)))
		str_match__free(sm);
	else
		sm->empty_id = id_of_string(sm, "", 0);
	return err;
}

int str_match__build(struct str_match *sm, const struct base_view *ours, const char *bdata, uint32_t blen)
{
	int err = build_ours(sm, ours, bdata, blen);
	if (err)
		return err;
	struct hit *hits = NULL;
	size_t nhit = 0;
	if ((err = scan_base(sm, &hits, &nhit)) || (err = index_hits(sm, hits, nhit))) {
		free(hits);
		str_match__free(sm);
		return err;
	}
	free(hits);
	return 0;
}

int str_match__build_indexed(struct str_match *sm, const struct base_view *ours, const char *bdata, uint32_t blen,
			    const struct base_index *bi)
{
	int err = build_ours(sm, ours, bdata, blen);
	if (err)
		return err;
	/* (bi is of this base: base_index.c checked its string length.)
	 * The base offsets of our strings are looked up when asked for
	 * (str_match_base_off): only the strings of the types the base lacks
	 * are, a few dozen of a small module's thousands. */
	sm->bi = bi;
	return 0;
}

/* The base's first offset of string id (+ 1), or 0, from the index: the
 * first entry of its signature whose bytes are equal. */
static uint32_t base1_indexed(const struct str_match *sm, uint32_t id)
{
	const struct base_index *bi = sm->bi;
	const struct sm_slot *e = &sm->slots[id - 1];
	const char *s = sm->odata + e->off1 - 1;
	uint32_t lo, hi, check = BI_CHECK(e->sig);
	bucket__range(bi->sbucket, bi->sbits, e->sig, &lo, &hi);
	for (uint32_t k = lo; k < hi; k++) {
		uint32_t boff = bi->sents[k].id;
		/* (The base's section ends in a NUL: libbpf checked.) */
		if (bi->sents[k].check == check && boff < sm->blen && !strcmp(sm->bdata + boff, s))
			return boff + 1;
	}
	return 0;
}

uint64_t str_match__sig_at(const char *data, uint32_t len, uint32_t off)
{
	if (off >= len)
		return sig_of("", 0);
	const char *s = data + off;
	return sig_of(s, strnlen(s, len - off));
}

int str_match__index_build(const char *data, uint32_t len, uint32_t bits, uint32_t **bucket, struct bi_ent **ents,
		    uint32_t *n)
{
	struct bi_pair *all = NULL;
	size_t cap = 0, cnt = 0;
	for (uint32_t off = 0; off < len;) {
		uint64_t sig;
		int64_t l = measure(data + off, data + len, &sig);
		if (l < 0)
			break; /* unterminated: no string (libbpf refuses such BTF) */
		if (vec_grow(&all, &cap, cnt + 1)) {
			free(all);
			return -ENOMEM;
		}
		all[cnt++] = (struct bi_pair){ sig, off };
		off += (uint32_t)l + 1;
	}
	/* Offsets ascend within a bucket: a lookup meets a string's first
	 * offset first. */
	int err = bucket__make(all, cnt, bits, bucket, ents);
	free(all);
	*n = (uint32_t)cnt;
	return err;
}

uint64_t str_match__ours_key(const struct str_match *sm, uint32_t off)
{
	uint32_t id = str_match__ours(sm, off);
	return id ? sm->slots[id - 1].sig : 0;
}

uint64_t str_match__base_key(const struct str_match *sm, uint32_t boff)
{
	uint32_t id = str_match__base(sm, boff);
	return id ? sm->slots[id - 1].sig : 0;
}

uint32_t str_match__ours(const struct str_match *sm, uint32_t off)
{
	if (off >= sm->olen)
		return sm->empty_id; /* what btf-emit reads there: "" */
	if (sm->id_at[off])
		return sm->id_at[off];
	const char *s = sm->odata + off; /* inside a string: its tail */
	return id_of_string(sm, s, strnlen(s, sm->olen - off));
}

uint32_t str_match__base(const struct str_match *sm, uint32_t boff)
{
	if (boff >= sm->blen)
		return sm->empty_id;
	if (sm->bi) { /* no scan of the base was made: look the string up */
		const char *s = sm->bdata + boff;
		return id_of_string(sm, s, strnlen(s, sm->blen - boff));
	}
	if (filt_has(sm->bfilt, sm->nbmap * 4, boff_hash(boff)))
		for (size_t j = bmap_home(sm, boff); sm->bmap[j].boff1; j = (j + 1) & (sm->nbmap - 1))
			if (sm->bmap[j].boff1 == boff + 1)
				return sm->bmap[j].id;
	if (sm->bstart[boff / 64] >> (boff % 64) & 1)
		return 0; /* a string the scan found no match for */
	const char *s = sm->bdata + boff; /* the tail of a base string */
	return id_of_string(sm, s, strnlen(s, sm->blen - boff));
}

int64_t str_match__base_off(const struct str_match *sm, uint32_t id)
{
	if (!id)
		return -1;
	uint32_t b1 = sm->bi ? base1_indexed(sm, id) : sm->slots[id - 1].base1;
	return b1 ? (int64_t)b1 - 1 : -1;
}

void str_match__free(struct str_match *sm)
{
	free(sm->slots);
	free(sm->sfilt);
	free(sm->id_at);
	free(sm->bmap);
	free(sm->bfilt);
	free(sm->bstart);
	memset(sm, 0, sizeof(*sm));
}
