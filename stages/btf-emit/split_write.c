/* split_write.c: the raw bytes of split BTF over a base, for the types that
 * base_dedup__split() kept.
 *
 * Why not libbpf's btf__add_type() into btf__new_empty_split(): every string
 * it adds is first looked up in the base, and the first lookup turns the
 * whole base into an editable copy with a hash of its ~100,000 strings
 * (most of a small module's time). Here the base's
 * strings come from str_match.c, which base_dedup__split() made.
 *
 * The bytes are what libbpf would write: the types in order, each reference
 * renumbered, each string the base's offset when the base has it, else
 * appended to our own section in order of first use (name, then members,
 * values or parameters). split__check() reads the result as libbpf's parse
 * would (every reference and name inside what it can reach) before it is
 * returned, so a mistake here is refused, not written; libbpf itself is not
 * asked, as it would have to parse the whole base first (a tenth of a
 * small module's emit). The tests parse every split BTF with libbpf and
 * bpftool.
 */
#include "split_write.h"
#include "base_view.h"
#include "btf_raw.h"
#include "str_match.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/strtab.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct sw {
	const struct base_view *ours;
	const uint32_t *newid;	/* per id of ours: its id in the split BTF */
	uint32_t nids;
	const struct str_match *sm;
	struct strtab *own;	/* our section; its leading "" is not written */
	int err;
};

static void put_str(struct sw *w, uint32_t *off)
{
	const char *s = bv_str(w->ours, *off);
	if (!*s) {
		*off = 0;
		return;
	}
	int64_t b = str_match__base_off(w->sm, str_match__ours(w->sm, *off));
	if (b >= 0) {
		*off = (uint32_t)b;
		return;
	}
	int64_t o = strtab__add(w->own, s);
	if (o < 0) {
		w->err = (int)o;
		return;
	}
	*off = w->sm->blen + (uint32_t)o - 1;
}

/* newid has an entry per type of ours; ours never refers past them, but a
 * reference that did stays as it is, and libbpf's parse of the result
 * refuses it. */
static uint32_t re(const struct sw *w, uint32_t id)
{
	return id && id < w->nids ? w->newid[id] : id;
}

/* Copy our type t, renumbered, its strings rewritten, to the end of types. */
static void put_type(struct sw *w, struct buf *types, const struct btf_type *src)
{
	size_t at = types->len, sz = btf_raw__type_size(src);
	buf_put(types, src, sz);
	if (types->err)
		return;
	struct btf_type *t = (struct btf_type *)(types->data + at);
	put_str(w, &t->name_off);
	uint32_t n = btf_vlen(t);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR: case BTF_KIND_CONST: case BTF_KIND_VOLATILE: case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF: case BTF_KIND_TYPE_TAG: case BTF_KIND_FUNC: case BTF_KIND_DECL_TAG:
	case BTF_KIND_VAR:
		t->type = re(w, t->type);
		break;
	case BTF_KIND_ARRAY:
		btf_array(t)->type = re(w, btf_array(t)->type);
		btf_array(t)->index_type = re(w, btf_array(t)->index_type);
		break;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		for (uint32_t i = 0; i < n; i++) {
			put_str(w, &btf_members(t)[i].name_off);
			btf_members(t)[i].type = re(w, btf_members(t)[i].type);
		}
		break;
	case BTF_KIND_ENUM:
		for (uint32_t i = 0; i < n; i++)
			put_str(w, &btf_enum(t)[i].name_off);
		break;
	case BTF_KIND_ENUM64:
		for (uint32_t i = 0; i < n; i++)
			put_str(w, (uint32_t *)(t + 1) + 3 * i);
		break;
	case BTF_KIND_FUNC_PROTO:
		t->type = re(w, t->type);
		for (uint32_t i = 0; i < n; i++) {
			put_str(w, &btf_params(t)[i].name_off);
			btf_params(t)[i].type = re(w, btf_params(t)[i].type);
		}
		break;
	case BTF_KIND_DATASEC:
		for (uint32_t i = 0; i < n; i++)
			btf_var_secinfos(t)[i].type = re(w, btf_var_secinfos(t)[i].type);
		break;
	}
}

/* A name offset of the split BTF: the base's strings, then its own. */
static int name_ok(uint32_t off, uint32_t blen, uint32_t own_len)
{
	return off < blen || off - blen < own_len;
}

int split__check(const uint8_t *raw, size_t n, const struct base_view *base)
{
	struct btf_header h;
	if (btf_raw__header(raw, n, &h))
		return -EPROTO;
	const uint8_t *types = raw + sizeof(h) + h.type_off;
	uint32_t count = 0;
	for (uint32_t at = 0; at < h.type_len; count++) {
		size_t sz = btf_raw__type_whole(types, h.type_len, at);
		if (!sz)
			return -EPROTO;
		at += (uint32_t)sz;
	}
	uint64_t total = (uint64_t)base->n + count;
	uint32_t blen = base->str_len, own = h.str_len;
	for (uint32_t at = 0; at < h.type_len;) {
		const struct btf_type *t = (const void *)(types + at);
		uint32_t k = btf_kind(t), vlen = btf_vlen(t);
		int ok = name_ok(t->name_off, blen, own);
		switch (k) {
		case BTF_KIND_PTR: case BTF_KIND_CONST: case BTF_KIND_VOLATILE: case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPEDEF: case BTF_KIND_TYPE_TAG: case BTF_KIND_FUNC: case BTF_KIND_DECL_TAG:
		case BTF_KIND_VAR:
			ok = ok && t->type < total;
			break;
		case BTF_KIND_ARRAY:
			ok = ok && btf_array(t)->type < total && btf_array(t)->index_type < total;
			break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION:
			for (uint32_t i = 0; i < vlen && ok; i++)
				ok = btf_members(t)[i].type < total && name_ok(btf_members(t)[i].name_off, blen, own);
			break;
		case BTF_KIND_ENUM:
			for (uint32_t i = 0; i < vlen && ok; i++)
				ok = name_ok(btf_enum(t)[i].name_off, blen, own);
			break;
		case BTF_KIND_ENUM64:
			for (uint32_t i = 0; i < vlen && ok; i++)
				ok = name_ok(((const uint32_t *)(t + 1))[3 * i], blen, own);
			break;
		case BTF_KIND_FUNC_PROTO:
			ok = ok && t->type < total;
			for (uint32_t i = 0; i < vlen && ok; i++)
				ok = btf_params(t)[i].type < total && name_ok(btf_params(t)[i].name_off, blen, own);
			break;
		case BTF_KIND_DATASEC:
			for (uint32_t i = 0; i < vlen && ok; i++)
				ok = btf_var_secinfos(t)[i].type < total;
			break;
		}
		if (!ok)
			return -EPROTO;
		at += (uint32_t)btf_raw__type_size(t);
	}
	return 0;
}

void split__bswap(uint8_t *raw)
{
	struct btf_header *h = (struct btf_header *)raw;
	uint8_t *types = raw + h->hdr_len + h->type_off;
	uint32_t type_len = h->type_len;
	/* Every field of every type is a 32-bit word (ENUM64's value as two),
	 * as libbpf's btf__set_endianness() swaps them. */
	for (uint32_t at = 0; at + 4 <= type_len; at += 4) {
		uint32_t w;
		memcpy(&w, types + at, 4);
		w = __builtin_bswap32(w);
		memcpy(types + at, &w, 4);
	}
	h->magic = __builtin_bswap16(h->magic);
	h->hdr_len = __builtin_bswap32(h->hdr_len);
	h->type_off = __builtin_bswap32(h->type_off);
	h->type_len = __builtin_bswap32(h->type_len);
	h->str_off = __builtin_bswap32(h->str_off);
	h->str_len = __builtin_bswap32(h->str_len);
}

int split__write(const struct base_view *ours, const struct base_view *base, const struct str_match *sm,
		const uint32_t *newid, const uint8_t *keep, struct buf *raw, struct diag *d)
{
	struct sw w = { .ours = ours, .newid = newid, .nids = ours->n, .sm = sm };
	struct buf types = { 0 };
	size_t start = raw->len;
	int err = 0;
	if (!(w.own = strtab__new()))
		err = -ENOMEM;
	for (uint32_t id = 1; !err && id < ours->n; id++) {
		if (keep[id])
			put_type(&w, &types, bv_type(ours, id));
		err = types.err ? types.err : w.err;
	}
	if (!err) {
		/* Its own strings, without the leading "". */
		btf_raw__put(raw, types.data, types.len, strtab__data(w.own) + 1, strtab__size(w.own) - 1);
		err = raw->err;
	}
	if (!err)
		err = VERIFY(d, !split__check(raw->data + start, raw->len - start, base),
			     "the split BTF we made does not read back");
	strtab__free(w.own);
	buf_free(&types);
	return err;
}
