/* cached.c: one unit through the extracted-CU cache.
 *
 *   key (cu_key.c) -> hit: the stored normal-form blob, with this file's
 *                          cu_offset and re-read addresses spliced in;
 *                  -> miss: extract as always, store the normal form.
 * A hit gives exactly the bytes a miss gives (spec: format/CU-CACHE.md):
 * the key covers everything the records read except the addresses, and
 * those are read again here through die_record__addr(), the extraction's own
 * code. When a re-read disagrees with the entry (a func that has no pc any
 * more), the hit is dropped for a miss.
 */
#include "extract.h"
#include "cache.h"
#include "../../common/diag.h"
#include "../../common/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Which build of dwarf-extract made an entry is part of its key: any change
 * to the code may change the records, and no version number is bumped as
 * reliably as the binary changes. */
static int self_hash(struct key128 *out)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	uint8_t b[1 << 16];
	ssize_t n;
	while ((n = read(fd, b, sizeof(b))) > 0)
		XXH3_128bits_update(&st, b, (size_t)n);
	int err = n < 0 ? -errno : 0;
	close(fd);
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	*out = (struct key128){ h.low64, h.high64 };
	return err;
}

int cached__init(struct cached *c, struct cache *cache, const struct input *in, int verify)
{
	memset(c, 0, sizeof(*c));
	c->cache = cache;
	c->in = in;
	c->verify = verify;
	struct key128 exe;
	int err = self_hash(&exe);
	if (err)
		return err;
	struct buf b = { 0 };
	buf_put(&b, "btfpipe-cu-cache-1", 18);
	buf_le64(&b, exe.lo);
	buf_le64(&b, exe.hi);
	buf_le16(&b, in->ident.e_machine);
	buf_u8(&b, in->ident.ei_class);
	buf_u8(&b, in->ident.ei_data);
	buf_le32(&b, in->ident.flags);
	c->salt = key128_of(b.data, b.len);
	err = b.err;
	buf_free(&b);
	return err;
}

void cached_worker__free(struct cached_worker *cw)
{
	cu_key__free(cw->key);
	buf_free(&cw->norm);
	buf_free(&cw->check);
	free(cw->pos);
	free(cw->patches);
	free(cw->saved);
	memset(cw, 0, sizeof(*cw));
}

static struct key128 entry_key(const struct cached *c, const struct unit *u, struct key128 ck,
			       int whole)
{
	uint64_t v[8] = { c->salt.lo, c->salt.hi, u->unit_type, u->version, ck.lo, ck.hi, 0, 0 };
	if (whole) {
		v[6] = c->in->ident.dwarf_hash.lo;
		v[7] = c->in->ident.dwarf_hash.hi;
	}
	return key128_of(v, sizeof(v));
}

/* The entry's blob with this unit's cu_offset and addresses. Returns 0,
 * 1 when an address re-read disagrees with the entry (then: a miss), or
 * -errno. */
static int splice_entry(struct cu_walk *w, const struct unit *u, const struct cache_entry *e)
{
	struct buf *b = &w->blob;
	buf_reset(b);
	buf_put(b, e->blob, 4);
	buf_uleb(b, u->offset);
	size_t at = 5;
	for (uint32_t i = 0; i < e->npatches; i++) {
		const struct cache_patch *p = &e->patches[i];
		uint64_t addr = 0;
		uint32_t shndx = 0;
		int has = die_record__addr(w, u->offset + p->die, p->kind, &addr, &shndx);
		if (has < 0)
			return has;
		if (has != p->hole)
			return 1;
		if (!has)
			continue;
		buf_put(b, e->blob + at, p->pos - at);
		buf_uleb(b, addr);
		buf_uleb(b, shndx);
		at = p->pos + 2;
	}
	buf_put(b, e->blob + at, e->blob_size - at);
	return b->err;
}

/* The miss's blob in normal form, with its patch list, into the cache. */
static int store(const struct cached *c, struct cached_worker *cw, struct cu_walk *w,
		 struct key128 key)
{
	struct cus_cu *cu = &w->cu;
	size_t np = w->npatch_recs;
	if (vec_grow(&cw->pos, &cw->cap_pos, cu->nrecs + 1) ||
	    vec_grow(&cw->patches, &cw->cap_patches, np + 1) ||
	    vec_grow(&cw->saved, &cw->cap_saved, np + 1))
		return -ENOMEM;
	/* The normal form zeroes cu_offset and the address fields; they are
	 * put back after, so w->cu stays as the extraction left it. */
	uint64_t cu_offset = cu->cu_offset;
	cu->cu_offset = 0;
	for (size_t i = 0; i < np; i++) {
		struct cus_rec *r = &cu->recs[w->patch_recs[i]];
		cw->saved[i].addr = r->addr;
		cw->saved[i].shndx = r->shndx;
		r->addr = 0;
		r->shndx = 0;
	}
	buf_reset(&cw->norm);
	int err = cus_cu__encode_at(cu, &cw->norm, cw->pos);
	cu->cu_offset = cu_offset;
	uint32_t prev = 4;
	int ordered = 1;
	for (size_t i = 0; i < np; i++) {
		struct cus_rec *r = &cu->recs[w->patch_recs[i]];
		r->addr = cw->saved[i].addr;
		r->shndx = cw->saved[i].shndx;
		struct cache_patch *p = &cw->patches[i];
		p->kind = r->kind;
		p->die = r->die;
		p->hole = (r->flags & (CUS_F_HAS_PC | CUS_F_HAS_ADDR)) != 0;
		p->pos = p->hole ? cw->pos[w->patch_recs[i]] : 0;
		if (p->hole && p->pos <= prev)
			ordered = 0;
		if (p->hole)
			prev = p->pos + 1;
	}
	if (err)
		return err;
	if (!ordered) { /* records are made in order, so never; but never store a lie */
		cache__count(c->cache, CC_UNCACHEABLE, 1);
		return 0;
	}
	cache__put(c->cache, key, cw->norm.data, cw->norm.len, cw->patches, (uint32_t)np,
		   (uint16_t)cu->language, (uint32_t)cu->nrecs);
	return 0; /* a failed store is counted and warned about, never fatal */
}

int cached__unit(const struct cached *c, struct cached_worker *cw, struct cu_walk *w,
		 const struct unit *u, uint16_t *language, size_t *nrecs)
{
	if (!cw->key && !(cw->key = cu_key__new(c->in->dws)))
		return -ENOMEM;
	struct key128 ck;
	enum cu_key_kind kind = c->in->dws_ok ? cu_key__compute(cw->key, u, &ck) : KEY_NONE;
	/* ET_REL: the whole-input hash does not cover the relocations. */
	if (kind == KEY_WHOLE && c->in->is_rel)
		kind = KEY_NONE;
	int err;
	if (kind == KEY_NONE) {
		cache__count(c->cache, CC_UNCACHEABLE, 1);
		err = cu_walk__extract(w, u);
		*language = (uint16_t)w->cu.language;
		*nrecs = w->cu.nrecs;
		return err;
	}
	struct key128 key = entry_key(c, u, ck, kind == KEY_WHOLE);
	struct cache_entry e;
	if (cache__get(c->cache, key, &e)) {
		err = splice_entry(w, u, &e);
		*language = e.language;
		*nrecs = e.nrecs;
		cache_entry__free(&e);
		if (err < 0)
			return err;
		if (!err && !c->verify) {
			cache__count(c->cache, CC_HITS, 1);
			return 0;
		}
		if (!err) {
			/* --cache-verify: the hit must equal a fresh extraction. */
			buf_reset(&cw->check);
			buf_put(&cw->check, w->blob.data, w->blob.len);
			if ((err = cu_walk__extract(w, u)))
				return err;
			if (cw->check.err || cw->check.len != w->blob.len ||
			    memcmp(cw->check.data, w->blob.data, w->blob.len))
				return diag_fail(w->d, EPROTO, "CU at 0x%llx: the cache entry's blob differs "
						 "from a fresh extraction (a cache key bug)",
						 (unsigned long long)u->offset);
			cache__count(c->cache, CC_HITS, 1);
			return 0;
		}
		/* An address re-read disagreed: a miss, and the store replaces it. */
	}
	cache__count(c->cache, CC_MISSES, 1);
	if ((err = cu_walk__extract(w, u)))
		return err;
	*language = (uint16_t)w->cu.language;
	*nrecs = w->cu.nrecs;
	return store(c, cw, w, key);
}
