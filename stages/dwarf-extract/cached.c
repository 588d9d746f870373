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
#include "cached.h"
#include "cu_key.h"
#include "cu_walk.h"
#include "die_attrs.h"
#include "../../common/cachedir.h"
#include "../../common/diag.h"
#include "../../common/memo.h"
#include "../../common/vec.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the CU entry's payload (format/CU-CACHE.md, "CU entries") ---- */

#define CU_HEAD 16
#define PATCH_SIZE 16

/* A record whose address fields are re-read on a hit. */
struct cache_patch {
	uint32_t pos;		/* the zero byte pair (addr, shndx) in the normal blob, if hole */
	uint8_t kind;		/* CUS_FUNC or CUS_VAR */
	uint8_t hole;		/* 1: the record has an address (HAS_PC/HAS_ADDR) */
	uint64_t die;		/* the DIE, relative to the CU start */
};

struct cu_entry {
	const uint8_t *blob;	/* the normal-form blob, inside the payload */
	size_t blob_size;
	struct cache_patch *patches; /* owned */
	uint32_t npatches;
	uint16_t language;
	uint32_t nrecs;
};

/* Every check of the spec: a payload that fails one is a miss. */
static int cu_entry_parse(struct cu_entry *e, const uint8_t *m, size_t size)
{
	memset(e, 0, sizeof(*e));
	if (size < CU_HEAD || le16_get(m + 2))
		return -EBADMSG;
	e->language = le16_get(m);
	e->nrecs = le32_get(m + 4);
	uint32_t np = le32_get(m + 8), blob_size = le32_get(m + 12);
	if ((uint64_t)CU_HEAD + (uint64_t)np * PATCH_SIZE + blob_size != size)
		return -EBADMSG;
	e->npatches = np;
	e->blob = m + CU_HEAD + (size_t)np * PATCH_SIZE;
	e->blob_size = blob_size;
	/* The normal form: "CU1\0", then cu_offset 0 as one byte. */
	if (blob_size < 5 || memcmp(e->blob, CUS_BLOB_MAGIC, 4) || e->blob[4] != 0)
		return -EBADMSG;
	e->patches = np ? calloc(np, sizeof(*e->patches)) : NULL;
	if (np && !e->patches)
		return -ENOMEM;
	uint32_t prev = 4;
	for (uint32_t i = 0; i < np; i++) {
		const uint8_t *p = m + CU_HEAD + (size_t)i * PATCH_SIZE;
		struct cache_patch *t = &e->patches[i];
		t->pos = le32_get(p);
		t->kind = p[4];
		t->hole = p[5];
		t->die = le64_get(p + 8);
		if (t->hole > 1 || p[6] || p[7] || (t->kind != CUS_FUNC && t->kind != CUS_VAR) ||
		    (!t->hole && t->pos))
			return -EBADMSG;
		/* Holes ascend, lie inside the blob and are zero byte pairs. */
		if (t->hole && (t->pos <= prev || (uint64_t)t->pos + 2 > blob_size || e->blob[t->pos] ||
				e->blob[t->pos + 1]))
			return -EBADMSG;
		if (t->hole)
			prev = t->pos + 1;
	}
	return 0;
}

static int cu_entry_put(struct cachedir *c, struct key128 key, const uint8_t *blob, size_t blob_size,
			const struct cache_patch *p, uint32_t np, uint16_t language, uint32_t nrecs)
{
	if (blob_size > UINT32_MAX)
		return -EFBIG;
	struct buf b = { 0 };
	buf_le16(&b, language);
	buf_le16(&b, 0);
	buf_le32(&b, nrecs);
	buf_le32(&b, np);
	buf_le32(&b, (uint32_t)blob_size);
	for (uint32_t i = 0; i < np; i++) {
		buf_le32(&b, p[i].pos);
		buf_u8(&b, p[i].kind);
		buf_u8(&b, p[i].hole);
		buf_le16(&b, 0);
		buf_le64(&b, p[i].die);
	}
	int err = b.err ? -ENOMEM : cachedir__put(c, key, b.data, b.len, blob, blob_size);
	buf_free(&b);
	return err;
}

/* A hit: the entry, or 0 when absent or refused (a refused one counted). */
static int cu_entry_get(struct cachedir *c, struct key128 key, struct cu_entry *e, uint8_t **mem)
{
	size_t size;
	if (!cachedir__get(c, key, mem, &size))
		return 0;
	int err = cu_entry_parse(e, *mem, size);
	if (err) {
		free(e->patches);
		free(*mem);
		*mem = NULL;
		if (err == -EBADMSG)
			cachedir__count(c, CD_CORRUPT, 1);
		return 0;
	}
	return 1;
}

int cached__init(struct cached *c, struct cachedir *cache, const struct input *in, int verify)
{
	memset(c, 0, sizeof(*c));
	c->cache = cache;
	c->in = in;
	c->verify = verify;
	/* Which code made an entry is part of its key (memo_key_begin): any
	 * change to it may change the records, and no version number is bumped
	 * as reliably as the binaries change. */
	struct memo_key k;
	memo_key_begin(&k, "btfpipe-cu-cache-1"); /* and the running code's identity */
	memo_key_u64(&k, in->ident.e_machine);
	memo_key_u64(&k, in->ident.ei_class);
	memo_key_u64(&k, in->ident.ei_data);
	memo_key_u64(&k, in->ident.flags);
	return memo_key_end(&k, &c->salt);
}

void cached_worker__free(struct cached_worker *cw)
{
	cu_key__free(cw->key);
	buf_free(&cw->norm);
	buf_free(&cw->check);
	free(cw->patches);
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
static int splice_entry(struct cu_walk *w, const struct unit *u, const struct cu_entry *e)
{
	struct buf *b = &w->blob;
	buf_reset(b);
	w->naddr = 0;
	buf_put(b, e->blob, 4);
	buf_uleb(b, u->offset);
	size_t at = 5;
	for (uint32_t i = 0; i < e->npatches; i++) {
		const struct cache_patch *p = &e->patches[i];
		uint64_t addr = 0;
		uint32_t shndx = 0;
		/* An entry whose DIE does not read back (a damaged or foreign
		 * entry that passed its checksum) is a miss, not an error: the
		 * extraction then reports whatever is really wrong. */
		struct diag keep = *w->d;
		int has = die_record__addr(w, u->offset + p->die, p->kind, &addr, &shndx);
		if (has < 0) {
			*w->d = keep;
			return 1;
		}
		if (has != p->hole)
			return 1;
		if (!has)
			continue;
		buf_put(b, e->blob + at, p->pos - at);
		if (vec_grow(&w->addr_at, &w->cap_addr_at, w->naddr + 1))
			return -ENOMEM;
		w->addr_at[w->naddr++] = (uint32_t)b->len;
		buf_uleb(b, addr);
		buf_uleb(b, shndx);
		at = p->pos + 2;
	}
	buf_put(b, e->blob + at, e->blob_size - at);
	return b->err;
}

static size_t uleb_len(uint64_t v)
{
	size_t n = 1;
	while (v >>= 7)
		n++;
	return n;
}

/* The miss's blob in normal form, with its patch list, into the cache.
 * The normal form is cut from the blob just encoded (cu_walk kept where
 * each record's address field is): cu_offset and each address pair become
 * single zero bytes, which is what encoding them as 0 would give. */
static int store(const struct cached *c, struct cached_worker *cw, struct cu_walk *w,
		 struct key128 key)
{
	const struct cus_cu *cu = &w->cu;
	const uint8_t *b = w->blob.data;
	size_t np = w->npatch_recs, at = 4 + uleb_len(cu->cu_offset);
	if (vec_grow(&cw->patches, &cw->cap_patches, np + 1))
		return -ENOMEM;
	buf_reset(&cw->norm);
	buf_put(&cw->norm, b, 4);
	buf_u8(&cw->norm, 0);
	uint32_t prev = 4;
	for (size_t i = 0; i < np; i++) {
		const struct cus_rec *r = &cu->recs[w->patch_recs[i]];
		struct cache_patch *p = &cw->patches[i];
		p->kind = r->kind;
		p->die = r->die;
		p->hole = (r->flags & (CUS_F_HAS_PC | CUS_F_HAS_ADDR)) != 0;
		p->pos = 0;
		if (!p->hole)
			continue;
		size_t pos = w->addr_pos[w->patch_recs[i]];
		if (pos < at || pos > w->blob.len) { /* records are made in order: never; never store a lie */
			cachedir__count(c->cache, CD_UNCACHEABLE, 1);
			return 0;
		}
		buf_put(&cw->norm, b + at, pos - at);
		p->pos = (uint32_t)cw->norm.len;
		buf_u8(&cw->norm, 0);
		buf_u8(&cw->norm, 0);
		at = pos + uleb_len(r->addr) + uleb_len(r->shndx);
		if (p->pos <= prev || at > w->blob.len) {
			cachedir__count(c->cache, CD_UNCACHEABLE, 1);
			return 0;
		}
		prev = p->pos + 1;
	}
	buf_put(&cw->norm, b + at, w->blob.len - at);
	if (cw->norm.err)
		return -ENOMEM;
	cu_entry_put(c->cache, key, cw->norm.data, cw->norm.len, cw->patches, (uint32_t)np,
		     (uint16_t)cu->language, (uint32_t)cu->nrecs);
	return 0; /* a failed store is counted and warned about, never fatal */
}

int cached__unit(const struct cached *c, struct cached_worker *cw, struct cu_walk *w,
		 const struct unit *u, uint16_t *language, size_t *nrecs)
{
	if (!cw->key && !(cw->key = cu_key__new(c->in->dws, c->in->ident.ei_data == ELFDATA2MSB)))
		return -ENOMEM;
	struct key128 ck;
	enum cu_key_kind kind = c->in->key_ok ? cu_key__compute(cw->key, u, &ck) : KEY_NONE;
	/* The whole-input hash covers neither an ET_REL file's relocations nor
	 * a dwz alternate file, which another unit's DIEs may lead into. */
	if (kind == KEY_WHOLE && (c->in->is_rel || c->in->alt_elf))
		kind = KEY_NONE;
	int err;
	if (kind == KEY_NONE) {
		cachedir__count(c->cache, CD_UNCACHEABLE, 1);
		err = cu_walk__extract(w, u);
		*language = (uint16_t)w->cu.language;
		*nrecs = w->cu.nrecs;
		return err;
	}
	struct key128 key = entry_key(c, u, ck, kind == KEY_WHOLE);
	struct cu_entry e;
	uint8_t *mem = NULL;
	if (cu_entry_get(c->cache, key, &e, &mem)) {
		err = splice_entry(w, u, &e);
		*language = e.language;
		*nrecs = e.nrecs;
		free(e.patches);
		free(mem);
		if (err < 0)
			return err;
		if (!err && !c->verify) {
			cachedir__count(c->cache, CD_HITS, 1);
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
				return DIAG_BUG(w->d, "CU at 0x%llx: the cache entry's blob differs "
						"from a fresh extraction (its key misses an input)",
						(unsigned long long)u->offset);
			cachedir__count(c->cache, CD_HITS, 1);
			return 0;
		}
		/* An address re-read disagreed: a miss, and the store replaces it. */
	}
	cachedir__count(c->cache, CD_MISSES, 1);
	if ((err = cu_walk__extract(w, u)))
		return err;
	*language = (uint16_t)w->cu.language;
	*nrecs = w->cu.nrecs;
	return store(c, cw, w, key);
}
