/* cu_key.c: a CU's relink-stable content key, read from its raw DIE bytes.
 *
 * The extracted-CU cache (cached.c) reuses a CU's blob when the CU *means*
 * what it meant before. Its bytes in a linked file do not say that: after a
 * relink every .debug_str offset, address and section offset moves. So the
 * key is an xxh3-128 over a normalized copy of the CU (spec:
 * format/CU-CACHE.md, "The key"):
 *  - the unit header's version, unit type and address size;
 *  - the abbreviation table's bytes, and each DIE's abbreviation code;
 *  - every attribute value, with strings replaced by their text's hash,
 *    addresses and section offsets left out, location lists replaced by
 *    their entries' kinds and expressions (not their ranges), and a single
 *    DW_OP_addr location kept as the opcode alone.
 * Everything left out is something dwarf-extract either never reads (line
 * tables, ranges' bounds) or reads again on a hit (function and variable
 * addresses: the patch list of cached.c).
 *
 * A CU whose records may depend on another unit's DIEs (DW_FORM_ref_addr,
 * a type signature, DWARF 2/3's location-list constants) gets KEY_WHOLE: the
 * caller folds the whole input's DWARF hash into its key, so it hits only
 * when nothing changed. What this reader does not understand (64-bit DWARF,
 * dwz forms, a malformed unit) is KEY_NONE: not cached, and
 * extracted as always, so the normal path reports any real error.
 *
 * No libdw here: libdw's per-attribute cost is what the cache saves, and
 * this walk must stay a small fraction of an extraction.
 */
#include "cu_key.h"
#include "abbrev.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef DW_LLE_GNU_view_pair
#define DW_LLE_GNU_view_pair 0x09
#endif

#define STR_MEMO 65536	/* direct-mapped string-hash memo, a power of two */

/* A DIE's attributes, compiled per abbreviation: runs of fixed-size values
 * that go into the key as they are (OP_COPY) or not at all (OP_SKIP) become
 * one step each, so the walk dispatches per run, not per attribute; the rest
 * (strings, blocks, LEB128 values, locations) is one OP_ATTR each, through
 * put_value(). The key's bytes are the same as put_value() on every
 * attribute would give. */
enum { OP_COPY, OP_SKIP, OP_ATTR };
struct abbrev_op {
	uint8_t kind;
	uint32_t n;		/* COPY, SKIP: bytes; ATTR: index into ab.specs */
};

/* Per abbreviation code: its steps, ops[op_first .. op_first + nops). */
struct key_decl {
	uint32_t op_first, nops;
};

struct cu_key {
	const struct dwsec *s;
	int be;			/* the input is big-endian (s390x): its numbers are read so */
	uint8_t addr_size, version;
	uint64_t str_off_base, loclists_base;
	int has_str_off_base, has_loclists_base;
	int whole;		/* depends on other units: KEY_WHOLE */
	struct abbrev_table ab;
	struct key_decl *kd;	/* parallel to ab.decls */
	size_t cap_kd;
	struct abbrev_op *ops;
	size_t cap_ops, nops;
	struct buf norm;	/* the normalized stream being hashed */
	struct { uint64_t tag, h; } memo[STR_MEMO];
};

/* The input's numbers in its own byte order. Values copied into the key
 * as they are (OP_COPY) need none: the same input order gives the same key;
 * what the walk interprets (offsets, lengths, indexes) does. */
static inline uint64_t rdn(const struct cu_key *k, struct cursor *c, unsigned bytes)
{
	uint64_t v = bytes == 2 ? cur_le16(c) : bytes == 4 ? cur_le32(c) : cur_le64(c);
	if (!k->be)
		return v;
	return bytes == 2 ? __builtin_bswap16((uint16_t)v) : bytes == 4 ? __builtin_bswap32((uint32_t)v)
								 : __builtin_bswap64(v);
}
#define rd16(k, c) ((uint16_t)rdn((k), (c), 2))
#define rd32(k, c) ((uint32_t)rdn((k), (c), 4))
#define rd64(k, c) rdn((k), (c), 8)

static inline uint32_t get32(const struct cu_key *k, const uint8_t *p)
{
	uint32_t v = le32_get(p);
	return k->be ? __builtin_bswap32(v) : v;
}

struct cu_key *cu_key__new(const struct dwsec *s, int big_endian)
{
	struct cu_key *k = calloc(1, sizeof(*k));
	if (k) {
		k->s = s;
		k->be = big_endian;
	}
	return k;
}

void cu_key__free(struct cu_key *k)
{
	if (!k)
		return;
	abbrev_table__free(&k->ab);
	free(k->kd);
	free(k->ops);
	buf_free(&k->norm);
	free(k);
}

/* ---- the abbreviation table ---- */

static int is_location(uint32_t attr);

/* A form that is "n fixed bytes as they are" (OP_COPY) or "n fixed bytes
 * left out" (OP_SKIP); anything else is OP_ATTR, put_value()'s own switch.
 * The one table of fixed forms, for the compiled walk and put_value(). */
static int form_op(const struct cu_key *k, uint32_t attr, uint32_t form, uint32_t *n)
{
	switch (form) {
	case DW_FORM_flag_present: case DW_FORM_implicit_const:
		*n = 0; return OP_COPY;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_addrx1:
		*n = 1; return OP_COPY;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_addrx2:
		*n = 2; return OP_COPY;
	case DW_FORM_addrx3:
		*n = 3; return OP_COPY;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_addrx4:
		/* (DWARF 2/3: a location in data4/data8 is a location-list offset;
		 * such CUs are KEY_WHOLE, so its bytes as they are will do.) */
		*n = 4; return OP_COPY;
	case DW_FORM_data8: case DW_FORM_ref8:
		*n = 8; return OP_COPY;
	case DW_FORM_data16:
		*n = 16; return OP_COPY;
	case DW_FORM_addr:
		*n = k->addr_size; return OP_SKIP;
	case DW_FORM_sec_offset:
		if (is_location(attr))
			return OP_ATTR;
		*n = 4; return OP_SKIP;
	}
	return OP_ATTR;
}

static int add_op(struct cu_key *k, struct key_decl *d, int kind, uint32_t n)
{
	struct abbrev_op *last = d->nops ? &k->ops[k->nops - 1] : NULL;
	if (kind != OP_ATTR && last && last->kind == kind) {
		last->n += n;
		return 0;
	}
	if (kind != OP_ATTR && !n)
		return 0;
	if (vec_grow(&k->ops, &k->cap_ops, k->nops + 1))
		return -ENOMEM;
	k->ops[k->nops++] = (struct abbrev_op){ (uint8_t)kind, n };
	d->nops++;
	return 0;
}

static int compile_decl(struct cu_key *k, const struct abbrev_decl *ad, struct key_decl *d)
{
	d->op_first = (uint32_t)k->nops;
	d->nops = 0;
	for (uint32_t i = 0; i < ad->n; i++) {
		const struct abbrev_spec *a = &k->ab.specs[ad->first + i];
		uint32_t n = ad->first + i;
		int kind = form_op(k, a->attr, a->form, &n);
		int err = add_op(k, d, kind, n);
		if (err)
			return err;
	}
	return 0;
}

static int read_abbrevs(struct cu_key *k, uint64_t off)
{
	const struct dwsec *ab = &k->s[DWS_ABBREV];
	int err = abbrev_table__read(&k->ab, ab, off);
	if (err)
		return err;
	k->nops = 0;
	if (vec_grow(&k->kd, &k->cap_kd, k->ab.ndecls + 1))
		return -ENOMEM;
	for (size_t code = 0; code < k->ab.ndecls; code++)
		if (k->ab.decls[code].defined && (err = compile_decl(k, &k->ab.decls[code], &k->kd[code])))
			return err;
	/* The table's bytes are part of the key: tags, children and forms. */
	buf_put(&k->norm, ab->p + off, k->ab.len);
	return 0;
}

/* ---- values ---- */

/* buf_put() for the few bytes of most runs: a fixed 16-byte copy (when the
 * source has them and the buffer has room) instead of a call to memcpy,
 * which dominated the walk. Only n bytes count. */
static inline void put_small(struct buf *b, const uint8_t *p, size_t n, size_t src_left)
{
	if (n <= 16 && src_left >= 16 && b->cap - b->len >= 16 && !b->err) {
		__builtin_memcpy(b->data + b->len, p, 16);
		b->len += n;
		return;
	}
	buf_put(b, p, n);
}

/* An OP_COPY or OP_SKIP step: n fixed bytes at c, into the key or past it. */
static inline int put_fixed(struct cu_key *k, struct cursor *c, int op, uint32_t n)
{
	if (!n)
		return 0;
	size_t left = cursor_left(c);
	const uint8_t *b = cur_bytes(c, n);
	if (!b)
		return -EBADMSG;
	if (op == OP_COPY)
		put_small(&k->norm, b, n, left);
	return 0;
}

/* A string, as the 8-byte hash of its text (memoized by section offset). */
static int put_str(struct cu_key *k, int sec, uint64_t off)
{
	const struct dwsec *s = &k->s[sec];
	if (off >= s->n)
		return -EBADMSG;
	uint64_t tag = (off << 3 | (uint64_t)sec) + 1;
	size_t slot = (size_t)((tag * 0x9e3779b97f4a7c15ull) >> 48) & (STR_MEMO - 1);
	if (k->memo[slot].tag != tag) {
		const char *p = (const char *)s->p + off;
		const char *nul = memchr(p, 0, s->n - off);
		if (!nul)
			return -EBADMSG;
		k->memo[slot].tag = tag;
		k->memo[slot].h = XXH3_64bits(p, (size_t)(nul - p));
	}
	uint8_t b[8];
	le64_put(b, k->memo[slot].h);
	buf_put(&k->norm, b, 8);
	return 0;
}

static int put_strx(struct cu_key *k, uint64_t idx)
{
	const struct dwsec *so = &k->s[DWS_STR_OFF];
	if (!k->has_str_off_base)
		return -ENOTSUP; /* libdw's default base is its own business: do not guess */
	if (k->str_off_base > so->n || so->n - k->str_off_base < 4 ||
	    idx > (so->n - k->str_off_base - 4) / 4)
		return -EBADMSG;
	return put_str(k, DWS_STR, get32(k, so->p + k->str_off_base + idx * 4));
}

/* A location expression: a lone DW_OP_addr keeps only the opcode (its
 * operand is an address, read again on a hit); anything else as it is. */
static void put_expr(struct cu_key *k, const uint8_t *p, uint64_t len)
{
	buf_uleb(&k->norm, len);
	if (len == 1u + k->addr_size && p[0] == DW_OP_addr)
		buf_u8(&k->norm, DW_OP_addr);
	else
		buf_put(&k->norm, p, len);
}

/* A location list: its entries' kinds and expressions, not their ranges
 * (libdw's first entry, which a parameter's location is read from, does not
 * depend on the bounds: it skips base-address entries only). */
static int put_loclist(struct cu_key *k, uint64_t off)
{
	int v5 = k->version >= 5;
	const struct dwsec *s = &k->s[v5 ? DWS_LOCLISTS : DWS_LOC];
	if (off >= s->n)
		return -EBADMSG;
	struct cursor c;
	cursor_init(&c, s->p + off, s->n - off);
	for (unsigned n = 0; n < (1u << 20) && !c.err; n++) {
		if (!v5) {
			uint64_t b = k->addr_size == 8 ? rd64(k, &c) : rd32(k, &c);
			uint64_t e = k->addr_size == 8 ? rd64(k, &c) : rd32(k, &c);
			uint64_t all = k->addr_size == 8 ? UINT64_MAX : UINT32_MAX;
			if (!b && !e) {
				buf_u8(&k->norm, 0);
				return c.err ? -EBADMSG : 0;
			}
			if (b == all) {
				buf_u8(&k->norm, 'B');
				continue;
			}
			uint16_t len = rd16(k, &c);
			const uint8_t *p = cur_bytes(&c, len);
			if (!p)
				return -EBADMSG;
			buf_u8(&k->norm, 'E');
			put_expr(k, p, len);
			continue;
		}
		uint8_t kind = cur_u8(&c);
		buf_u8(&k->norm, kind);
		switch (kind) {
		case DW_LLE_end_of_list:
			return c.err ? -EBADMSG : 0;
		case DW_LLE_base_addressx: {
			/* An index into .debug_addr (relink-stable); libdw fails the
			 * list when it is out of range, so it is part of the key. */
			const uint8_t *p0 = c.p;
			cur_uleb(&c);
			buf_put(&k->norm, p0, (size_t)(c.p - p0));
			continue;
		}
		case DW_LLE_GNU_view_pair:
			cur_uleb(&c);
			cur_uleb(&c);
			continue;
		case DW_LLE_base_address:
			cur_bytes(&c, k->addr_size);
			continue;
		case DW_LLE_startx_endx: case DW_LLE_startx_length: {
			const uint8_t *p0 = c.p;
			cur_uleb(&c); /* the start's .debug_addr index, as above */
			buf_put(&k->norm, p0, (size_t)(c.p - p0));
			cur_uleb(&c);
			break;
		}
		case DW_LLE_offset_pair:
			cur_uleb(&c);
			cur_uleb(&c);
			break;
		case DW_LLE_start_end:
			cur_bytes(&c, 2u * k->addr_size);
			break;
		case DW_LLE_start_length:
			cur_bytes(&c, k->addr_size);
			cur_uleb(&c);
			break;
		case DW_LLE_default_location:
			break;
		default:
			return -ENOTSUP;
		}
		uint64_t len = cur_uleb(&c);
		const uint8_t *p = c.err || len > cursor_left(&c) ? NULL : cur_bytes(&c, len);
		if (!p)
			return -EBADMSG;
		put_expr(k, p, len);
	}
	return -EBADMSG;
}

static int put_loclistx(struct cu_key *k, uint64_t idx)
{
	const struct dwsec *s = &k->s[DWS_LOCLISTS];
	if (!k->has_loclists_base)
		return -ENOTSUP;
	if (k->loclists_base > s->n || s->n - k->loclists_base < 4 ||
	    idx > (s->n - k->loclists_base - 4) / 4)
		return -EBADMSG;
	return put_loclist(k, k->loclists_base + get32(k, s->p + k->loclists_base + idx * 4));
}

static int is_location(uint32_t attr)
{
	return attr == DW_AT_location || attr == DW_AT_data_member_location;
}

/* One attribute value at c. Appends its normalized form to k->norm. */
static int put_value(struct cu_key *k, struct cursor *c, uint32_t attr, uint32_t form, int depth)
{
	const uint8_t *p0 = c->p;
	size_t raw = 0;	/* bytes to append as they are */
	uint64_t v, len;
	/* The form itself is in the abbreviation table's bytes, already hashed. */
	uint32_t n;
	int op = form_op(k, attr, form, &n);
	if (op != OP_ATTR)
		return put_fixed(k, c, op, n);
	switch (form) {
	case DW_FORM_ref_sig8:
		k->whole = 1;
		raw = 8;
		break;
	case DW_FORM_ref_addr:
		/* Another unit's DIE: what this CU's records say may depend on it. */
		k->whole = 1;
		raw = k->version <= 2 ? k->addr_size : 4;
		break;
	case DW_FORM_sdata:
		cur_sleb(c);
		raw = (size_t)(c->p - p0);
		c->p = p0;
		break;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_addrx:
	case DW_FORM_rnglistx:
		cur_uleb(c);
		raw = (size_t)(c->p - p0);
		c->p = p0;
		break;
	case DW_FORM_string: {
		const uint8_t *nul = memchr(c->p, 0, cursor_left(c));
		if (!nul)
			return -EBADMSG;
		raw = (size_t)(nul - c->p) + 1;
		break;
	}
	case DW_FORM_strp:
		return put_str(k, DWS_STR, rd32(k, c));
	case DW_FORM_line_strp:
		return put_str(k, DWS_LINE_STR, rd32(k, c));
	case DW_FORM_strx1:
		return put_strx(k, cur_u8(c));
	case DW_FORM_strx2:
		return put_strx(k, rd16(k, c));
	case DW_FORM_strx3: {
		const uint8_t *b = cur_bytes(c, 3);
		if (!b)
			return -EBADMSG;
		return put_strx(k, k->be ? (uint64_t)b[2] | (uint64_t)b[1] << 8 | (uint64_t)b[0] << 16
					 : (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16);
	}
	case DW_FORM_strx4:
		return put_strx(k, rd32(k, c));
	case DW_FORM_strx:
		return put_strx(k, cur_uleb(c));
	case DW_FORM_sec_offset:
		v = rd32(k, c);
		return c->err ? -EBADMSG : is_location(attr) ? put_loclist(k, v) : 0;
	case DW_FORM_loclistx:
		v = cur_uleb(c);
		return c->err ? -EBADMSG : put_loclistx(k, v);
	case DW_FORM_exprloc: case DW_FORM_block:
		len = cur_uleb(c);
		goto block;
	case DW_FORM_block1:
		len = cur_u8(c);
		goto block;
	case DW_FORM_block2:
		len = rd16(k, c);
		goto block;
	case DW_FORM_block4:
		len = rd32(k, c);
	block:
		if (c->err || len > cursor_left(c))
			return -EBADMSG;
		if (is_location(attr))
			put_expr(k, cur_bytes(c, len), len);
		else {
			buf_uleb(&k->norm, len);
			buf_put(&k->norm, cur_bytes(c, len), len);
		}
		return 0;
	case DW_FORM_indirect:
		v = cur_uleb(c);
		if (c->err || v > UINT32_MAX || depth > 4)
			return -EBADMSG;
		buf_uleb(&k->norm, v); /* the actual form is in the DIE, not the table */
		return put_value(k, c, attr, (uint32_t)v, depth + 1);
	default:
		/* dwz's alternate-file forms (DW_FORM_GNU_ref_alt, DW_FORM_ref_sup4/8:
		 * another file's DIEs), GNU split-DWARF forms, anything new. */
		return -ENOTSUP;
	}
	if (raw) {
		const uint8_t *b = cur_bytes(c, raw);
		if (!b)
			return -EBADMSG;
		buf_put(&k->norm, b, raw);
	}
	return c->err ? -EBADMSG : 0;
}

/* The bases strx and loclistx forms are relative to: attributes of the CU
 * DIE, which may come after a string that needs them. */
static int read_bases(struct cu_key *k, struct cursor c)
{
	uint64_t code = cur_uleb(&c);
	if (c.err || !code || code >= k->ab.ndecls || !k->ab.decls[code].defined)
		return -EBADMSG;
	const struct abbrev_decl *d = &k->ab.decls[code];
	k->str_off_base = k->loclists_base = 0;
	k->has_str_off_base = k->has_loclists_base = 0;
	size_t mark = k->norm.len;
	for (uint32_t i = 0; i < d->n; i++) {
		const struct abbrev_spec *a = &k->ab.specs[d->first + i];
		if (a->attr == DW_AT_str_offsets_base || a->attr == DW_AT_loclists_base) {
			if (a->form != DW_FORM_sec_offset)
				return -ENOTSUP; /* libdw takes other forms too: not ours to guess */
			uint64_t v = rd32(k, &c);
			if (a->attr == DW_AT_str_offsets_base) {
				k->str_off_base = v;
				k->has_str_off_base = 1;
			} else {
				k->loclists_base = v;
				k->has_loclists_base = 1;
			}
			continue;
		}
		/* Skip the others by normalizing them into a scratch tail. */
		if (a->form == DW_FORM_strx || a->form == DW_FORM_strx1 || a->form == DW_FORM_strx2 ||
		    a->form == DW_FORM_strx3 || a->form == DW_FORM_strx4 || a->form == DW_FORM_loclistx) {
			/* Skipped by size alone: its base may not be known yet. */
			if (a->form == DW_FORM_strx || a->form == DW_FORM_loclistx)
				cur_uleb(&c);
			else
				cur_bytes(&c, a->form == DW_FORM_strx1 ? 1 : a->form == DW_FORM_strx2 ? 2
								: a->form == DW_FORM_strx3 ? 3 : 4);
			continue;
		}
		int err = put_value(k, &c, a->attr, a->form, 0);
		if (err)
			return err;
	}
	k->norm.len = mark;
	return c.err ? -EBADMSG : 0;
}

/* ---- the unit ---- */



static int walk(struct cu_key *k, const struct unit *u)
{
	const struct dwsec *info = &k->s[DWS_INFO];
	if (u->end > info->n || u->offset >= u->end)
		return -EBADMSG;
	struct cursor c;
	cursor_init(&c, info->p + u->offset, u->end - u->offset);
	uint32_t len = rd32(k, &c);
	if (len >= 0xfffffff0u)
		return -ENOTSUP; /* 64-bit DWARF */
	uint16_t ver = rd16(k, &c);
	uint8_t ut = DW_UT_compile;
	uint64_t aoff;
	if (ver < 2 || ver > 5)
		return -ENOTSUP;
	if (ver >= 5) {
		ut = cur_u8(&c);
		k->addr_size = cur_u8(&c);
		aoff = rd32(k, &c);
	} else {
		aoff = rd32(k, &c);
		k->addr_size = cur_u8(&c);
	}
	if (c.err || (ut != DW_UT_compile && ut != DW_UT_partial) ||
	    (k->addr_size != 4 && k->addr_size != 8) || (uint64_t)len + 4 != u->end - u->offset)
		return c.err ? -EBADMSG : -ENOTSUP;
	k->version = (uint8_t)ver;
	k->whole = ver < 4;
	buf_u8(&k->norm, (uint8_t)ver);
	buf_u8(&k->norm, ut);
	buf_u8(&k->norm, k->addr_size);
	int err = read_abbrevs(k, aoff);
	if (!err)
		err = read_bases(k, c);
	while (!err && cursor_left(&c)) {
		/* Where each DIE starts, relative to the unit: records name their
		 * DIEs by it, and a value whose encoding may have another width
		 * for the same meaning (a ULEB128 index, a block's length) would
		 * otherwise move the DIEs after it without changing the key. */
		uint8_t off[4];
		le32_put(off, (uint32_t)cursor_off(&c)); /* units are < 4 GiB: 32-bit DWARF */
		buf_put(&k->norm, off, 4);
		const uint8_t *p0 = c.p;
		uint64_t code = cur_uleb(&c);
		if (c.err)
			return -EBADMSG;
		put_small(&k->norm, p0, (size_t)(c.p - p0), cursor_left(&c) + (size_t)(c.p - p0));
		if (!code)
			continue;
		if (code >= k->ab.ndecls || !k->ab.decls[code].defined)
			return -EBADMSG;
		const struct key_decl *d = &k->kd[code];
		if (!d->nops)
			continue; /* and k->ops may be NULL: NULL + 0 is undefined */
		const struct abbrev_op *op = k->ops + d->op_first, *end = op + d->nops;
		for (; op < end && !err; op++) {
			if (op->kind == OP_ATTR) {
				const struct abbrev_spec *a = &k->ab.specs[op->n];
				err = put_value(k, &c, a->attr, a->form, 0);
				continue;
			}
			if ((err = put_fixed(k, &c, op->kind, op->n)))
				return err;
		}
	}
	return err;
}

enum cu_key_kind cu_key__compute(struct cu_key *k, const struct unit *u, struct key128 *out)
{
	if (u->offset & CUS_ALT_BIT)
		return KEY_NONE; /* a dwz alternate file's unit */
	buf_reset(&k->norm);
	int err = walk(k, u);
	if (err || k->norm.err)
		return KEY_NONE;
	*out = key128_of(k->norm.data, k->norm.len);
	return k->whole ? KEY_WHOLE : KEY_OK;
}
