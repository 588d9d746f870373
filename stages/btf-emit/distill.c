/* distill.c: see distill.h. libbpf 1.5's btf__distill_base(), which Debian's
 * libbpf 1.1 lacks, so that a module's BTF survives a change of its
 * kernel's vmlinux BTF: the kernel (6.12+) and libbpf relocate it onto the
 * BTF they run with by names and sizes, not ids.
 *
 * Four steps, as libbpf takes them, so that the result is libbpf's type for
 * type and string for string (t1040 compares them):
 *  1. mark every base type the split BTF refers to, and what those refer
 *     to in turn, except through a named struct or union (its members are
 *     the running kernel's business);
 *  2. the distilled base: of the marked types in base id order, the named
 *     INT, FLOAT and FWD as they are, named structs and unions as empty
 *     ones of the same size, named enums as empty 4- or 8-byte ENUMs;
 *  3. the new split BTF: the split types as they are, then the marked base
 *     types the distilled base does not hold (pointers, arrays, typedefs,
 *     modifiers, prototypes, type tags, anonymous aggregates), in base id
 *     order;
 *  4. every reference renumbered: to a distilled type, to a moved one, or
 *     a split type's id shifted down by the base types left behind.
 * Strings: the distilled base's are its types' names; a split string equal
 * to one of them is referred to there, the others are the new split's own,
 * each once, in the order the types use them.
 */
#include "distill.h"
#include "base_view.h"
#include "btf_raw.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/strtab.h"
#include "../../common/vec.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The source: split types over base, strings of either. */
struct src {
	const struct base_view *base;
	const uint8_t *types;	/* the split's type section */
	uint32_t *offs;		/* per split type (id - base->n), its offset */
	uint32_t n;		/* split types */
	const char *strs;	/* the split's strings, offsets from base->str_len */
	uint32_t str_len;
};

static const char *src_str(const struct src *s, uint32_t off)
{
	if (off < s->base->str_len)
		return bv_str(s->base, off);
	off -= s->base->str_len;
	return off < s->str_len ? s->strs + off : "";
}

/* The type ids a type refers to, in libbpf's btf_field_iter order. */
static uint32_t ids_count(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_INT: case BTF_KIND_FLOAT: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		return 0;
	case BTF_KIND_ARRAY:
		return 2;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC:
		return btf_vlen(t);
	case BTF_KIND_FUNC_PROTO:
		return 1 + btf_vlen(t);
	}
	return 1;
}

static uint32_t *id_at(struct btf_type *t, uint32_t k)
{
	switch (btf_kind(t)) {
	case BTF_KIND_ARRAY:
		return k ? &btf_array(t)->index_type : &btf_array(t)->type;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return &btf_members(t)[k].type;
	case BTF_KIND_DATASEC:
		return &btf_var_secinfos(t)[k].type;
	case BTF_KIND_FUNC_PROTO:
		return k ? &btf_params(t)[k - 1].type : &t->type;
	}
	return &t->type;
}

/* The string offsets a type holds: its name, then its members', values'
 * or parameters' names. */
static uint32_t strs_count(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
	case BTF_KIND_FUNC_PROTO:
		return 1 + btf_vlen(t);
	}
	return 1;
}

static uint32_t *str_at(struct btf_type *t, uint32_t k)
{
	if (!k)
		return &t->name_off;
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return &btf_members(t)[k - 1].name_off;
	case BTF_KIND_ENUM:
		return &btf_enum(t)[k - 1].name_off;
	case BTF_KIND_ENUM64:
		return &btf_enum64(t)[k - 1].name_off;
	}
	return &btf_params(t)[k - 1].name_off;
}

/* Kinds a distilled base can stand for (libbpf refuses the others). */
static int referable(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_FUNC: case BTF_KIND_VAR: case BTF_KIND_DATASEC: case BTF_KIND_DECL_TAG:
		return 0;
	}
	return 1;
}

/* Where a marked base type goes: 1 the distilled base, 0 the new split. */
static int kept_in_base(const struct src *s, const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_INT: case BTF_KIND_FLOAT: case BTF_KIND_FWD:
		return 1;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		return *src_str(s, t->name_off) != 0;
	}
	return 0;
}

struct distill {
	struct src s;
	uint32_t *id_map;	/* per base id: 0 unmarked, then its new id */
	uint32_t *stack;
	size_t nstack, cap_stack;
	struct strtab *bstr, *sstr; /* the distilled base's and the new split's strings */
	struct buf btypes, stypes;
	struct diag *d;
};

/* Step 1 from split or base type t: mark what it refers to in the base. */
static int mark_from(struct distill *x, const struct btf_type *t)
{
	uint32_t nb = x->s.base->n;
	for (uint32_t k = 0, c = ids_count(t); k < c; k++) {
		uint32_t id = *id_at((struct btf_type *)t, k);
		if (!id || id >= nb || x->id_map[id])
			continue;
		const struct btf_type *b = bv_type(x->s.base, id);
		if (!b || !referable(b))
			return diag_fail(x->d, EINVAL, "distilled base: the split BTF refers to base type %u, a %s, "
					 "which a distilled base cannot hold", id, b ? "function, variable, section or decl tag" : "missing type");
		x->id_map[id] = id;
		if (vec_grow(&x->stack, &x->cap_stack, x->nstack + 1))
			return -ENOMEM;
		x->stack[x->nstack++] = id;
	}
	return 0;
}

static int mark(struct distill *x)
{
	int err = 0;
	for (uint32_t i = 0; i < x->s.n && !err; i++) {
		err = mark_from(x, (const struct btf_type *)(x->s.types + x->s.offs[i]));
		/* Through what the marked ones refer to, but not a named
		 * struct's or union's members. */
		while (!err && x->nstack) {
			const struct btf_type *b = bv_type(x->s.base, x->stack[--x->nstack]);
			if (!(btf_is_composite(b) && *src_str(&x->s, b->name_off)))
				err = mark_from(x, b);
		}
	}
	return err;
}

/* A split string: the distilled base's offset of an equal name, else the
 * new split's own (its offsets follow the distilled base's strings). */
static int64_t split_str(struct distill *x, uint32_t off)
{
	const char *s = src_str(&x->s, off);
	size_t len = strlen(s);
	if (!len)
		return 0;
	uint64_t h = strtab__hash(s, len);
	int64_t o = strtab__find_hashed(x->bstr, s, len, h);
	if (o >= 0)
		return o;
	o = strtab__add_hashed(x->sstr, s, len, h);
	/* sstr's offset 0 is its "", which the new split does not store. */
	return o < 0 ? o : (int64_t)strtab__size(x->bstr) + o - 1;
}

/* Step 2: the distilled base's types. */
static int distill_base(struct distill *x)
{
	uint32_t next = 1;
	for (uint32_t id = 1; id < x->s.base->n; id++) {
		const struct btf_type *t = bv_type(x->s.base, id);
		if (!x->id_map[id] || !kept_in_base(&x->s, t))
			continue;
		int64_t name = strtab__add(x->bstr, src_str(&x->s, t->name_off));
		if (name < 0)
			return (int)name;
		struct btf_type nt = *t;
		nt.name_off = (uint32_t)name;
		if (btf_is_composite(t) || btf_is_any_enum(t)) {
			/* Empty, of the same size; an enum as a plain ENUM. */
			if (btf_is_any_enum(t) && (t->size > 8 || (t->size & (t->size - 1)) || !t->size))
				return diag_fail(x->d, EINVAL, "distilled base: enum %.*s%s has size %u",
						 DIAG_CLIP(src_str(&x->s, t->name_off)), t->size);
			nt.info = (uint32_t)(btf_is_any_enum(t) ? BTF_KIND_ENUM : btf_kind(t)) << 24;
			buf_put(&x->btypes, &nt, sizeof(nt));
		} else {
			buf_put(&x->btypes, &nt, sizeof(nt));
			buf_put(&x->btypes, t + 1, btf_raw__type_size(t) - sizeof(nt));
		}
		x->id_map[id] = next++;
	}
	return x->btypes.err;
}

/* A type copied into the new split, its strings the new split's. */
static int copy_to_split(struct distill *x, const struct btf_type *t)
{
	size_t at = x->stypes.len, size = btf_raw__type_size(t);
	buf_put(&x->stypes, t, size);
	if (x->stypes.err)
		return x->stypes.err;
	struct btf_type *nt = (struct btf_type *)(x->stypes.data + at);
	for (uint32_t k = 0, c = strs_count(nt); k < c; k++) {
		uint32_t *p = str_at((struct btf_type *)(x->stypes.data + at), k);
		int64_t o = *p ? split_str(x, *p) : 0;
		if (o < 0)
			return (int)o;
		*p = (uint32_t)o;
	}
	return 0;
}

/* Steps 3 and 4: the new split, renumbered. */
static int distill_split(struct distill *x)
{
	uint32_t nb = x->s.base->n, dist_n = 1;
	int err = 0;
	for (uint32_t id = 1; id < nb; id++)
		dist_n += x->id_map[id] && kept_in_base(&x->s, bv_type(x->s.base, id));
	for (uint32_t i = 0; i < x->s.n && !err; i++)
		err = copy_to_split(x, (const struct btf_type *)(x->s.types + x->s.offs[i]));
	uint32_t next = dist_n + x->s.n;
	for (uint32_t id = 1; id < nb && !err; id++) {
		const struct btf_type *t = bv_type(x->s.base, id);
		if (!x->id_map[id] || kept_in_base(&x->s, t))
			continue;
		err = copy_to_split(x, t);
		x->id_map[id] = next++;
	}
	if (err)
		return err;
	uint32_t diff = nb - dist_n;
	for (size_t at = 0; at < x->stypes.len;) {
		struct btf_type *t = (struct btf_type *)(x->stypes.data + at);
		for (uint32_t k = 0, c = ids_count(t); k < c; k++) {
			uint32_t *p = id_at(t, k);
			if (*p && *p < nb)
				*p = x->id_map[*p];
			else if (*p >= nb)
				*p -= diff;
		}
		at += btf_raw__type_size(t);
	}
	return 0;
}

/* The split's types, indexed: split__check() made sure they lie whole. */
static int src_open(struct src *s, const uint8_t *split, size_t n, const struct base_view *base)
{
	struct btf_header h;
	if (btf_raw__header(split, n, &h))
		return -EINVAL;
	s->base = base;
	s->types = split + h.hdr_len + h.type_off;
	s->strs = (const char *)split + h.hdr_len + h.str_off;
	s->str_len = h.str_len;
	size_t cap = 0;
	for (uint32_t at = 0; at < h.type_len;) {
		size_t sz = btf_raw__type_whole(s->types, h.type_len, at);
		if (!sz)
			return -EINVAL;
		if (vec_grow(&s->offs, &cap, s->n + 1))
			return -ENOMEM;
		s->offs[s->n++] = at;
		at += (uint32_t)sz;
	}
	return 0;
}

int distill__split(const uint8_t *split, size_t n, const struct base_view *base, struct buf *dbase,
		   struct buf *dsplit, struct diag *d)
{
	struct distill x = { .d = d };
	int err = src_open(&x.s, split, n, base);
	if (err == -EINVAL)
		err = DIAG_BUG(d, "distilled base: the split BTF just written does not read back");
	if (!err && (!(x.id_map = calloc(base->n, sizeof(*x.id_map))) || !(x.bstr = strtab__new()) ||
		     !(x.sstr = strtab__new())))
		err = -ENOMEM;
	if (!err)
		err = mark(&x);
	if (!err)
		err = distill_base(&x);
	if (!err)
		err = distill_split(&x);
	if (!err) {
		btf_raw__put(dbase, x.btypes.data, x.btypes.len, strtab__data(x.bstr), strtab__size(x.bstr));
		/* The split's own strings, without sstr's leading "". */
		btf_raw__put(dsplit, x.stypes.data, x.stypes.len, strtab__data(x.sstr) + 1, strtab__size(x.sstr) - 1);
		err = dbase->err ? dbase->err : dsplit->err;
	}
	free(x.s.offs);
	free(x.id_map);
	free(x.stack);
	strtab__free(x.bstr);
	strtab__free(x.sstr);
	buf_free(&x.btypes);
	buf_free(&x.stypes);
	return err;
}
