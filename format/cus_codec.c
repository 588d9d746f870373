/* cus_codec.c: one CU to and from its blob (spec: "Blob layout").
 *
 * The encoder and the decoder are both made from cus.h's tables of record
 * kinds and their items; what is written out here is the blob's frame
 * (head, strings, externs, counts) and the few rules the tables name:
 * addresses, annotations, a signed enum's values.
 */
#include "cus.h"
#include "../common/diag.h"
#include "../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void cus_cu__clear(struct cus_cu *cu)
{
	cu->nexterns = cu->nrecs = cu->nitems = cu->nannots = cu->naddr = 0;
}

void cus_cu__free(struct cus_cu *cu)
{
	free(cu->externs);
	free(cu->recs);
	free(cu->items);
	free(cu->annots);
	free(cu->rec_off);
	free(cu->addr_at);
	free(cu->blob);
	memset(cu, 0, sizeof(*cu));
}

const char *cus_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[CUS_BASE] = "base", [CUS_PTR] = "ptr", [CUS_CONST] = "const",
		[CUS_VOLATILE] = "volatile", [CUS_RESTRICT] = "restrict",
		[CUS_ATOMIC] = "atomic", [CUS_TYPEDEF] = "typedef",
		[CUS_STRUCT] = "struct", [CUS_UNION] = "union", [CUS_ENUM] = "enum",
		[CUS_ARRAY] = "array", [CUS_SUBROUTINE] = "subroutine",
		[CUS_FUNC] = "func", [CUS_PARAM] = "param", [CUS_VAR] = "var",
		[CUS_UNSPECIFIED] = "unspecified", [CUS_UNSUPPORTED] = "unsupported",
	};
	return kind >= 1 && kind <= CUS_KIND_MAX ? names[kind] : "?";
}

/* ---- encoding ---------------------------------------------------------- */

static void put_annots(struct buf *b, const struct cus_cu *cu, uint32_t first, uint32_t count)
{
	buf_uleb(b, count);
	for (uint32_t i = 0; i < count; i++) {
		buf_uleb(b, cu->annots[first + i].name);
		buf_uleb(b, cu->annots[first + i].value);
	}
}

/* Every item field is a ULEB128 but an enumerator's value, an SLEB128
 * when its enum is signed (cus.h's items tables). */
#define PUT_ITEM_str(v) buf_uleb(b, v)
#define PUT_ITEM_ref(v) buf_uleb(b, v)
#define PUT_ITEM_u32(v) buf_uleb(b, v)
#define PUT_ITEM_u64(v) buf_uleb(b, v)
#define PUT_ITEM_mflags(v) buf_uleb(b, v)
#define PUT_ITEM_eval(v) ((r->flags & CUS_F_SIGNED) ? buf_sleb(b, (int64_t)(v)) : buf_uleb(b, v))

static void put_items(struct buf *b, const struct cus_cu *cu, const struct cus_rec *r)
{
	const struct cus_item *it = r->item_count ? cu->items + r->item_first : NULL; /* NULL + 0 is undefined */
	buf_uleb(b, r->item_count);
	for (uint32_t i = 0; i < r->item_count; i++, it++) {
#define PUT_ITEM(field, enc) PUT_ITEM_##enc(it->field);
		switch (r->kind) {
#define PUT_ITEMS(kind, fields, items) \
	case kind:                     \
		items(PUT_ITEM)        \
		break;
		CUS_RECORD_KINDS(PUT_ITEMS)
#undef PUT_ITEMS
		}
#undef PUT_ITEM
		/* mflags: a member's annotations follow it. */
		if ((r->kind == CUS_STRUCT || r->kind == CUS_UNION) && (it->flags & CUS_F_ANNOT))
			put_annots(b, cu, it->annot_first, it->annot_count);
	}
}

static void put_rec(struct buf *b, const struct cus_cu *cu, const struct cus_rec *r, uint64_t prev_die,
		    size_t start, uint32_t *addr_at)
{
	buf_u8(b, r->kind);
	buf_sleb(b, (int64_t)(r->die - prev_die));
	buf_uleb(b, r->flags);
	/* Every fixed field is a ULEB128, whatever it holds (cus.h). */
#define PUT_FIELD(field, enc) buf_uleb(b, r->field);
	switch (r->kind) {
#define PUT_KIND(kind, fields, items) \
	case kind:                    \
		fields(PUT_FIELD)     \
		break;
	CUS_RECORD_KINDS(PUT_KIND)
#undef PUT_KIND
	}
#undef PUT_FIELD
	if (cus_kind_has_items(r->kind))
		put_items(b, cu, r);
	if ((r->kind == CUS_FUNC && (r->flags & CUS_F_HAS_PC)) || (r->kind == CUS_VAR && (r->flags & CUS_F_HAS_ADDR))) {
		if (addr_at)
			*addr_at = (uint32_t)(b->len - start);
		buf_uleb(b, r->addr);
		buf_uleb(b, r->shndx);
	}
	if (r->flags & CUS_F_ANNOT)
		put_annots(b, cu, r->annot_first, r->annot_count);
}

int cus_cu__encode(const struct cus_cu *cu, struct buf *b)
{
	return cus_cu__encode_at(cu, b, NULL);
}

int cus_cu__encode_at(const struct cus_cu *cu, struct buf *b, uint32_t *addr_pos)
{
	size_t start = b->len;
	buf_put(b, CUS_BLOB_MAGIC, 4);
	buf_uleb(b, cu->cu_offset);
	buf_uleb(b, cu->unit_type);
	buf_uleb(b, cu->dwarf_version);
	buf_uleb(b, cu->addr_size);
	buf_uleb(b, cu->language);
	buf_uleb(b, cu->producer);
	buf_uleb(b, cu->name);
	buf_uleb(b, cu->comp_dir);
	buf_uleb(b, cu->str_size);
	buf_put(b, cu->str, cu->str_size);
	buf_uleb(b, cu->nexterns);
	for (size_t i = 0; i < cu->nexterns; i++)
		buf_uleb(b, cu->externs[i]);
	buf_uleb(b, cu->nrecs);
	uint64_t prev = 0;
	for (size_t i = 0; i < cu->nrecs; i++) {
		put_rec(b, cu, &cu->recs[i], prev, start, addr_pos ? &addr_pos[i] : NULL);
		prev = cu->recs[i].die;
	}
	return b->err;
}

/* ---- decoding ---------------------------------------------------------- */

struct dec {
	struct cursor c;
	struct cus_cu *cu;
	const char *what;
	struct diag *d;
	size_t rec; /* the record being decoded, for messages */
	uint32_t nrecs; /* the blob's record count: local refs must be below it */
};

static int dec_fail(struct dec *x, const char *why)
{
	return diag_fail(x->d, EBADMSG, "%s: record %zu at blob offset %zu: %s",
			 x->what, x->rec, cursor_off(&x->c), why);
}

static inline __attribute__((always_inline)) int dec_u32(struct dec *x, uint32_t *out)
{
	uint64_t v = cur_uleb(&x->c);
	if (v > UINT32_MAX && !x->c.err)
		x->c.err = -EBADMSG;
	*out = (uint32_t)v;
	return x->c.err;
}

/* A string ref must start a NUL-terminated string inside the table. */
static inline int dec_str(struct dec *x, uint32_t *out)
{
	if (dec_u32(x, out))
		return x->c.err;
	if (*out >= x->cu->str_size || (*out && x->cu->str[*out - 1] != 0))
		return dec_fail(x, "string reference outside the string table or not at a string start");
	return 0;
}

/* A type ref must name a record or an extern of this CU: checked as it is
 * read, where a pass over the decoded records afterwards read every record
 * and item a second time (3% of a merge). */
static inline int dec_ref(struct dec *x, cus_ref *out)
{
	if (dec_u32(x, out))
		return x->c.err;
	cus_ref r = *out;
	if (r && cus_ref_index(r) >= (cus_ref_is_extern(r) ? x->cu->nexterns : x->nrecs))
		return dec_fail(x, "reference out of range");
	return 0;
}

/* A count of things that each take at least `min_bytes`: refusing counts the
 * remaining bytes cannot hold keeps a corrupt count from allocating gigabytes. */
static int dec_count(struct dec *x, uint32_t *out, size_t min_bytes)
{
	if (dec_u32(x, out))
		return x->c.err;
	if ((uint64_t)*out * min_bytes > cursor_left(&x->c))
		return dec_fail(x, "count larger than the rest of the blob");
	return 0;
}

static int dec_annots(struct dec *x, uint32_t *first, uint32_t *count)
{
	struct cus_cu *cu = x->cu;
	uint32_t n;
	if (dec_count(x, &n, 2))
		return x->c.err ? x->c.err : -EBADMSG;
	if (vec_grow(&cu->annots, &cu->cap_annots, cu->nannots + n))
		return -ENOMEM;
	*first = (uint32_t)cu->nannots;
	*count = n;
	for (uint32_t i = 0; i < n; i++) {
		struct cus_annot *a = &cu->annots[cu->nannots++];
		int err = dec_str(x, &a->name);
		if (!err)
			err = dec_str(x, &a->value);
		if (err)
			return err;
	}
	return 0;
}

/* A ULEB128 of any size (the decoder checks the cursor after the record). */
static inline int dec_u64(struct dec *x, uint64_t *out)
{
	*out = cur_uleb(&x->c);
	return 0;
}

/* The u32s that name something are read as u32s; what they name is the
 * reader's to check (a param's loc is, below). */
static inline int dec_ate(struct dec *x, uint32_t *out) { return dec_u32(x, out); }
static inline int dec_tag(struct dec *x, uint32_t *out) { return dec_u32(x, out); }
static inline int dec_loc(struct dec *x, uint32_t *out) { return dec_u32(x, out); }

/* Item fields, as cus.h's items tables say (r: the record they belong to). */
static inline int dec_item_str(struct dec *x, const struct cus_rec *r, uint32_t *out) { (void)r; return dec_str(x, out); }
static inline int dec_item_ref(struct dec *x, const struct cus_rec *r, cus_ref *out) { (void)r; return dec_ref(x, out); }
static inline int dec_item_u32(struct dec *x, const struct cus_rec *r, uint32_t *out) { (void)r; return dec_u32(x, out); }
static inline int dec_item_u64(struct dec *x, const struct cus_rec *r, uint64_t *out) { (void)r; return dec_u64(x, out); }
static inline int dec_item_mflags(struct dec *x, const struct cus_rec *r, uint32_t *out)
{
	(void)r;
	if (dec_u32(x, out))
		return x->c.err;
	return *out & ~(uint32_t)(CUS_F_ARTIFICIAL | CUS_F_ANNOT) ? dec_fail(x, "unknown member flags") : 0;
}
static inline int dec_item_eval(struct dec *x, const struct cus_rec *r, uint64_t *out)
{
	*out = (r->flags & CUS_F_SIGNED) ? (uint64_t)cur_sleb(&x->c) : cur_uleb(&x->c);
	return 0;
}

static int dec_items(struct dec *x, struct cus_rec *r)
{
	struct cus_cu *cu = x->cu;
	uint32_t n;
	int err = dec_count(x, &n, 1);
	if (err)
		return err;
	if (vec_grow(&cu->items, &cu->cap_items, cu->nitems + n))
		return -ENOMEM;
	r->item_first = (uint32_t)cu->nitems;
	r->item_count = n;
	for (uint32_t i = 0; i < n && !err; i++) {
		struct cus_item *it = &cu->items[cu->nitems++];
		memset(it, 0, sizeof(*it));
#define DEC_ITEM(field, enc) if (!err) err = dec_item_##enc(x, r, &it->field);
		switch (r->kind) {
#define DEC_ITEMS(kind, fields, items) \
	case kind:                     \
		items(DEC_ITEM)        \
		break;
		CUS_RECORD_KINDS(DEC_ITEMS)
#undef DEC_ITEMS
		}
#undef DEC_ITEM
		if (!err && (r->kind == CUS_STRUCT || r->kind == CUS_UNION) && (it->flags & CUS_F_ANNOT))
			err = dec_annots(x, &it->annot_first, &it->annot_count);
		if (!err)
			err = x->c.err;
	}
	return err;
}

static int dec_rec(struct dec *x, struct cus_rec *r, uint64_t prev_die)
{
	struct cursor *c = &x->c;
	int err = 0;
	memset(r, 0, sizeof(*r));
	r->kind = cur_u8(c);
	int64_t delta = cur_sleb(c);
	r->die = prev_die + (uint64_t)delta;
	if (!c->err && (r->kind < 1 || r->kind > CUS_KIND_MAX))
		return dec_fail(x, "unknown record kind");
	if (dec_u32(x, &r->flags))
		return c->err;
	if (r->flags & ~(uint32_t)CUS_F_ALL)
		return dec_fail(x, "unknown record flags");

	/* The fields of cus.h's table, each read and checked as its
	 * encoding says: dec_str(), dec_ref(), dec_u32(), dec_u64(), or
	 * dec_ate() and its kin. */
#define DEC_FIELD(field, enc) if (!err) err = dec_##enc(x, &r->field);
	switch (r->kind) {
#define DEC_KIND(kind, fields, items) \
	case kind:                    \
		fields(DEC_FIELD)     \
		break;
	CUS_RECORD_KINDS(DEC_KIND)
#undef DEC_KIND
	}
#undef DEC_FIELD
	if (!err && r->kind == CUS_PARAM && r->loc > CUS_LOC_STACK)
		err = dec_fail(x, "unknown parameter location kind");
	if (!err && cus_kind_has_items(r->kind))
		err = dec_items(x, r);
	if (!err && ((r->kind == CUS_FUNC && (r->flags & CUS_F_HAS_PC)) ||
		     (r->kind == CUS_VAR && (r->flags & CUS_F_HAS_ADDR)))) {
		struct cus_cu *cu = x->cu;
		if (vec_grow(&cu->addr_at, &cu->cap_addr_at, cu->naddr + 1))
			return -ENOMEM;
		cu->addr_at[cu->naddr++] = (uint32_t)cursor_off(c);
		r->addr = cur_uleb(c);
		err = dec_u32(x, &r->shndx);
	}
	if (!err && (r->flags & CUS_F_ANNOT))
		err = dec_annots(x, &r->annot_first, &r->annot_count);
	if (!err)
		err = c->err;
	return err;
}

/* Every func record is followed by as many param records as it counts
 * (its references were checked as they were read: dec_ref()). */
static int dec_check_params(struct dec *x)
{
	struct cus_cu *cu = x->cu;
	for (size_t i = 0; i < cu->nrecs; i++) {
		const struct cus_rec *r = &cu->recs[i];
		x->rec = i;
		if (r->kind == CUS_FUNC) {
			if (r->item_count > cu->nrecs - i - 1)
				return diag_fail(x->d, EBADMSG, "%s: record %zu: more parameters than records", x->what, i);
			for (uint32_t k = 1; k <= r->item_count; k++)
				if (cu->recs[i + k].kind != CUS_PARAM)
					return diag_fail(x->d, EBADMSG, "%s: record %zu: parameter %u is not a param record",
							 x->what, i, k - 1);
		}
	}
	return 0;
}

/* The blob's head: CU fields, strings and externs, up to the records. */
static int dec_head(struct dec *x, const uint8_t *blob, size_t size)
{
	struct cus_cu *cu = x->cu;
	const char *what = x->what;
	struct diag *d = x->d;
	int err;
	cus_cu__clear(cu);
	cursor_init(&x->c, blob, size);
	const uint8_t *magic = cur_bytes(&x->c, 4);
	if (!magic || memcmp(magic, CUS_BLOB_MAGIC, 4))
		return diag_fail(d, EBADMSG, "%s: bad blob magic at blob offset 0", what);
	cu->cu_offset = cur_uleb(&x->c);
	uint32_t sref[3];
	if (dec_u32(x, &cu->unit_type) || dec_u32(x, &cu->dwarf_version) ||
	    dec_u32(x, &cu->addr_size) || dec_u32(x, &cu->language) ||
	    dec_u32(x, &sref[0]) || dec_u32(x, &sref[1]) || dec_u32(x, &sref[2]))
		goto trunc;
	uint64_t str_size = cur_uleb(&x->c);
	const uint8_t *str = str_size <= cursor_left(&x->c) ? cur_bytes(&x->c, (size_t)str_size) : NULL;
	if (!str || str_size == 0 || str[0] != 0 || str[str_size - 1] != 0)
		return diag_fail(d, EBADMSG, "%s: string table malformed at blob offset %zu", what,
				 cursor_off(&x->c));
	cu->str = (const char *)str;
	cu->str_size = (size_t)str_size;
	for (int i = 0; i < 3; i++)
		if (sref[i] >= str_size || (sref[i] && str[sref[i] - 1]))
			return diag_fail(d, EBADMSG, "%s: CU name string reference out of range", what);
	cu->producer = sref[0];
	cu->name = sref[1];
	cu->comp_dir = sref[2];

	uint32_t n;
	if ((err = dec_count(x, &n, 1)))
		return err;
	if (vec_grow(&cu->externs, &cu->cap_externs, n))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		cu->externs[i] = cur_uleb(&x->c);
	cu->nexterns = n;
	return x->c.err ? diag_fail(d, EBADMSG, "%s: extern table truncated", what) : 0;
trunc:
	return diag_fail(d, EBADMSG, "%s: blob truncated or malformed at blob offset %zu", what,
			 cursor_off(&x->c));
}

int cus_cu__decode_head(struct cus_cu *cu, const uint8_t *blob, size_t size,
			const char *what, struct diag *d)
{
	struct dec x = { .cu = cu, .what = what, .d = d };
	int err = dec_head(&x, blob, size);
	if (err)
		return err;
	/* Peeked, not checked: records take 3 bytes at least. */
	uint64_t n = cur_uleb(&x.c);
	cu->head_nrecs = !x.c.err && n <= UINT32_MAX && n * 3 <= cursor_left(&x.c) ? (uint32_t)n : 0;
	return 0;
}

int cus_cu__decode(struct cus_cu *cu, const uint8_t *blob, size_t size,
		   const char *what, struct diag *d)
{
	struct dec x = { .cu = cu, .what = what, .d = d };
	uint32_t n;
	int err = dec_head(&x, blob, size);
	if (err)
		return err;
	if ((err = dec_count(&x, &n, 3)))
		return err;
	x.nrecs = n;
	if (vec_grow(&cu->recs, &cu->cap_recs, n) || vec_grow(&cu->rec_off, &cu->cap_rec_off, n))
		return -ENOMEM;
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		x.rec = i;
		cu->rec_off[i] = (uint32_t)cursor_off(&x.c);
		if ((err = dec_rec(&x, &cu->recs[i], prev)))
			return err == -EBADMSG && !(d && d->set) ? dec_fail(&x, "truncated or malformed record") : err;
		prev = cu->recs[i].die;
		cu->nrecs++;
	}
	if (x.c.err)
		goto trunc;
	if (cursor_left(&x.c))
		return diag_fail(d, EBADMSG, "%s: %zu trailing bytes after the last record", what,
				 cursor_left(&x.c));
	return dec_check_params(&x);
trunc:
	return diag_fail(d, EBADMSG, "%s: blob truncated or malformed at blob offset %zu", what,
			 cursor_off(&x.c));
}

int cus_cu__decode_some(struct cus_cu *cu, const uint8_t *blob, size_t size, const uint32_t *idx,
			const uint32_t *ckpt, size_t n, uint32_t nrecs, const char *what, struct diag *d)
{
	struct dec x = { .cu = cu, .what = what, .d = d, .nrecs = nrecs };
	int err = dec_head(&x, blob, size);
	if (err)
		return err;
	if (vec_grow(&cu->recs, &cu->cap_recs, nrecs))
		return -ENOMEM;
	/* The other records are not touched: zeroing them all was about 450 MB
	 * of stores per vmlinux merge (4 M records), for records nobody reads. */
	cu->nrecs = nrecs;
	uint32_t at = UINT32_MAX; /* the record the cursor is at, none yet */
	struct cus_rec passed;
	for (size_t j = 0; j < n; j++) {
		uint32_t k = idx[j], q = k / CUS_REC_STRIDE;
		err = VERIFY(d, k < nrecs && !(j && k <= idx[j - 1]) && ckpt[q] < size,
			     "%s: record %u: not a record of the blob, or not from its checkpoint", what, k);
		if (err)
			return err;
		/* From the checkpoint unless the cursor is no farther off. */
		if (at > k || k - at > k % CUS_REC_STRIDE) {
			cursor_init(&x.c, blob, size);
			x.c.p += ckpt[q];
			at = q * CUS_REC_STRIDE;
		}
		for (; at <= k; at++) {
			x.rec = at;
			if ((err = dec_rec(&x, at == k ? &cu->recs[k] : &passed, 0)))
				return err == -EBADMSG && !(d && d->set) ? dec_fail(&x, "truncated or malformed record")
									 : err;
		}
	}
	return 0;
}
