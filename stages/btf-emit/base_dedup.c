/* base_dedup.c: split BTF minus what its base already has.
 *
 * Over a base, every type of ours that equals a base type must be the base's
 * id, or a module would describe struct sk_buff again. libbpf's btf__dedup()
 * does this, but it hashes the whole base (95,000 types for a vmlinux) on
 * every call: most of a small module's encoding time. The graph is already
 * deduplicated, so only the split-to-base question is left, and it is asked
 * here, of the types we wrote:
 *
 *  - A type of ours of a kind that refers to others (pointer, qualifier,
 *    typedef, array, prototype, function, tags) equals a base type when its
 *    referenced types all map into the base and the base has the same type
 *    over those ids: an index of the base by a shallow hash finds it.
 *  - A struct, union, enum, fwd, int or float is compared with the base
 *    types of its kind, name, size and length, member by member, following
 *    references under hypotheses (our id -> base id) so that cycles
 *    through pointers are compared once. A fwd equals a struct or union of
 *    its name and kind, as in libbpf. When a comparison succeeds every
 *    hypothesis it made is kept; when it fails they are all dropped.
 *  - VARs and DATASECs are never the base's (libbpf does not merge them).
 *
 * Our types come as standalone BTF; the kept ones, in their order, become
 * split BTF over the base through split_write.c.
 */
#include "base_dedup.h"
#include "base_tables.h"
#include "base_view.h"
#include "bucket.h"
#include "split_write.h"
#include "str_match.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/idmap.h"
#include "../../common/vec.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define UNMATCHED UINT32_MAX
#define MAX_DEPTH 20000
#define EQ_HOLDER 2

/* Without a base_index, the base's types whose names ours has, in 2^16
 * buckets, made as base_index tables are (bucket__make()). Within a
 * bucket, ids ascend, so equal hashes are tried in id order. */
#define INDEX_BITS 16

struct bd {
	const struct base_view *ours;
	const struct base_view *base;
	uint32_t end;			/* our ids are 1 .. end - 1 (0 is void) */
	uint32_t *final;		/* per our id: base id, UNMATCHED, or 0 (not yet) */
	uint32_t *hyp;			/* per our id: hypothesis, or 0 */
	uint32_t *undo;			/* our ids with a hypothesis, in order */
	size_t nundo, cap_undo;
	const uint32_t *tbucket;	/* the base's types by shallow hash (struct base_index) */
	const struct bi_ent *tents;
	uint32_t tbits;
	uint32_t *own_bucket;		/* those tables, when made here */
	struct bi_ent *own_ents;
	int full;			/* making a base_index: keys are the base's own strings' */
	uint64_t empty_key;		/* the key of "" */
	/* The base's structs and unions by kind and name, made when a fwd
	 * first asks (base_definition): named_id[k] is the k-th (kind, name)'s
	 * type id, 0 when the base has several of it. */
	struct idmap named;
	uint32_t *named_id;
	uint32_t *named_first;		/* the k-th (kind, name)'s first type id: its key */
	int depth;
	struct str_match sm;		/* the strings ours and the base share (split_write.c too) */
};

/* The name of a type of ours; "" for an offset outside our strings, as
 * bv_str() answers (base_view.c does not check every name offset: found by
 * fuzzing a base). */
static const char *name_of(const struct base_view *ours, const struct btf_type *t)
{
	return bv_str(ours, t->name_off);
}

static const char *base_name(const struct bd *x, const struct btf_type *t)
{
	return bv_str(x->base, t->name_off);
}

/* Type id of ours (of_base 0) or of the base: NULL past the last. */
static const struct btf_type *type_of(const struct bd *x, int of_base, uint32_t id)
{
	return bv_type(of_base ? x->base : x->ours, id);
}

/* The base id a reference of ours maps to: its final match; UNMATCHED when
 * our type has none (or none yet). Void stays void. */
static uint32_t mapped(const struct bd *x, uint32_t id)
{
	if (!id)
		return 0;
	if (id >= x->end)
		return UNMATCHED; /* no such type of ours: never the base's */
	uint32_t f = x->final[id];
	return f && f != UNMATCHED ? f : UNMATCHED;
}

/* Most base types are unnamed (pointers, qualifiers, arrays, prototypes):
 * "" skips the hash function. */
static uint64_t str_hash(const char *s)
{
	return *s ? hash64(s, strlen(s)) : 0;
}

/* What shallow_hash() takes of a name at offset off of b: the string's key
 * (str_match.c), equal for equal strings of ours and the base's whoever
 * computes it, so that a base_index made once serves every module. Without
 * one, a base name ours lacks is 0: no type of ours can equal that base type
 * (equiv() compares every name that is keyed), so it is left out of the
 * index without its string being read. */
static uint64_t name_key(const struct bd *x, int of_base, uint32_t off)
{
	if (!off) /* "" in every BTF (libbpf and base_view.c check): most base types */
		return x->empty_key;
	if (!of_base)
		return str_match__ours_key(&x->sm, off);
	return x->full ? str_match__sig_at(x->base->strs, x->base->str_len, off) : str_match__base_key(&x->sm, off);
}

/* A reference of a type of b as a base id: a base type's references are
 * base ids already, ours map through their matches. */
static uint32_t ref_in_base(const struct bd *x, int of_base, uint32_t id)
{
	return of_base ? id : mapped(x, id);
}

/* A hash of what a type is without following references (their ids, mapped
 * into the base, are part of it). Structs, unions and enums hash their kind,
 * name, size and length only: their members are compared, not hashed.
 * Returns 0 when the type cannot be in the base (VAR, DATASEC, or a
 * reference that maps nowhere). */
static uint64_t shallow_hash(const struct bd *x, int b, const struct btf_type *t)
{
	uint32_t k = btf_kind(t);
	uint64_t name = name_key(x, b, t->name_off);
	if (!name)
		return 0;
	/* An enum hashes its name only: a declared-only enum (vlen 0) is the
	 * base's enum of its name, of whatever size or width (libbpf too). */
	if (k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64)
		return hash_step(BTF_KIND_ENUM, name) | 1;
	uint64_t h = hash_step(hash_step(k, btf_vlen(t)), btf_kflag(t));
	h = hash_step(h, name);
	uint32_t r;
	switch (k) {
	case BTF_KIND_INT:
		return hash_step(hash_step(h, t->size), *(const uint32_t *)(t + 1)) | 1;
	case BTF_KIND_FLOAT:
		return hash_step(h, t->size) | 1;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: {
		h = hash_step(h, t->size);
		if (name != x->empty_key)
			return h | 1;
		/* Anonymous ones differ by their members only, and hundreds
		 * of the base's can share size and length: every tracepoint's
		 * union { struct bpf_raw_event_map event; btf_trace_NAME
		 * handler; }, compared one by one with each of a module's.
		 * So their hash takes the members' names and offsets, and the
		 * names of members that are typedefs: equiv() never matches
		 * any of these when they differ (a typedef equals only a
		 * typedef of its name), so no match is hidden. */
		const struct btf_member *m = btf_members(t);
		for (uint32_t i = 0; i < btf_vlen(t); i++) {
			uint64_t mn = name_key(x, b, m[i].name_off), tn = 0;
			const struct btf_type *mt = type_of(x, b, m[i].type);
			if (!mn || (mt && btf_is_typedef(mt) && !(tn = name_key(x, b, mt->name_off))))
				return 0;
			h = hash_step(hash_step(hash_step(h, m[i].offset), mn), tn);
		}
		return h | 1;
	}
	case BTF_KIND_FWD:
		return h | 1;
	case BTF_KIND_PTR: case BTF_KIND_CONST: case BTF_KIND_VOLATILE: case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF: case BTF_KIND_TYPE_TAG: case BTF_KIND_FUNC:
		if ((r = ref_in_base(x, b, t->type)) == UNMATCHED)
			return 0;
		return hash_step(h, r) | 1;
	case BTF_KIND_DECL_TAG:
		if ((r = ref_in_base(x, b, t->type)) == UNMATCHED)
			return 0;
		return hash_step(hash_step(h, r), (uint32_t)btf_decl_tag(t)->component_idx) | 1;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		uint32_t e = ref_in_base(x, b, a->type), i = ref_in_base(x, b, a->index_type);
		if (e == UNMATCHED || i == UNMATCHED)
			return 0;
		return hash_step(hash_step(hash_step(h, e), i), a->nelems) | 1;
	}
	case BTF_KIND_FUNC_PROTO: {
		if ((r = ref_in_base(x, b, t->type)) == UNMATCHED)
			return 0;
		h = hash_step(h, r);
		/* Parameter names are left to equiv_body(), which compares
		 * them before anything else: hashing the base's 60,000 of
		 * them cost every module more than the few prototypes that
		 * differ only by names cost to compare. */
		const struct btf_param *p = btf_params(t);
		for (uint32_t i = 0; i < btf_vlen(t); i++) {
			if ((r = ref_in_base(x, b, p[i].type)) == UNMATCHED)
				return 0;
			h = hash_step(h, r);
		}
		return h | 1;
	}
	}
	return 0; /* VAR, DATASEC, unknown */
}

static uint64_t named_hash(uint32_t kind, const char *name)
{
	return hash_mix(kind, str_hash(name));
}

/* The base's types by shallow hash, into *bucket (2^bits + 1 bounds) and
 * *ents (malloc'd, the caller's); *n entries. */
static int index_types(struct bd *x, uint32_t bits, uint32_t **bucket, struct bi_ent **ents, uint32_t *n)
{
	struct bi_pair *hs = NULL;
	size_t nh = 0, cap = 0;
	for (uint32_t id = 1; id < x->base->n; id++) {
		uint64_t h = shallow_hash(x, 1, bv_type(x->base, id));
		if (!h)
			continue;
		if (vec_grow(&hs, &cap, nh + 1)) {
			free(hs);
			return -ENOMEM;
		}
		hs[nh++] = (struct bi_pair){ h, id };
	}
	int err = bucket__make(hs, nh, bits, bucket, ents);
	free(hs);
	*n = (uint32_t)nh;
	return err;
}

int base_dedup__index(const struct base_view *base, uint32_t bits, uint32_t **bucket, struct bi_ent **ents,
		     uint32_t *n)
{
	struct bd x = { .base = base, .full = 1, .empty_key = str_match__sig_at("", 0, 0) };
	return index_types(&x, bits, bucket, ents, n);
}

struct named_key {
	uint32_t kind;
	const char *name;
};

/* Is the k-th (kind, name) the key's? Its first type says. */
static int named_eq(const void *ctx, uint32_t k, const void *key)
{
	const struct bd *x = ctx;
	const struct named_key *nk = key;
	const struct btf_type *c = bv_type(x->base, x->named_first[k]);
	return btf_kind(c) == nk->kind && !strcmp(base_name(x, c), nk->name);
}

/* The base's structs and unions by kind and name: only fwds ask, and
 * many modules have none left for this, so it is made on first use. */
static int index_named(struct bd *x)
{
	uint32_t n = x->base->n, count = 0;
	x->named_id = malloc(((size_t)n + 1) * sizeof(*x->named_id));
	x->named_first = malloc(((size_t)n + 1) * sizeof(*x->named_first));
	if (!x->named_id || !x->named_first || idmap__reserve(&x->named, n))
		return -ENOMEM;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = bv_type(x->base, id);
		if (!(btf_is_struct(t) || btf_is_union(t)) || !t->name_off)
			continue;
		struct named_key k = { btf_kind(t), base_name(x, t) };
		uint64_t h = named_hash(k.kind, k.name);
		size_t j = idmap__slot(&x->named, h, named_eq, x, &k);
		int64_t e = idmap__at(&x->named, j);
		if (e >= 0) {
			x->named_id[e] = 0; /* several: no one definition */
			continue;
		}
		x->named_first[count] = id;
		x->named_id[count] = id;
		idmap__put(&x->named, j, h, count++);
	}
	return 0;
}

/* The base's one struct (or union) named like fwd t, or 0 (none, or several). */
static uint32_t base_definition(const struct bd *x, const struct btf_type *t)
{
	struct named_key k = { btf_kflag(t) ? BTF_KIND_UNION : BTF_KIND_STRUCT, name_of(x->ours, t) };
	int64_t e = idmap__find(&x->named, named_hash(k.kind, k.name), named_eq, x, &k);
	return e >= 0 ? x->named_id[e] : 0;
}

static int set_hyp(struct bd *x, uint32_t s, uint32_t b)
{
	if (vec_grow(&x->undo, &x->cap_undo, x->nundo + 1))
		return -ENOMEM;
	x->hyp[s] = b;
	x->undo[x->nundo++] = s;
	return 0;
}

static int equiv(struct bd *x, uint32_t s, uint32_t b);

static int same_name(const struct bd *x, const struct btf_type *ts, const struct btf_type *tb)
{
	return !strcmp(name_of(x->ours, ts), base_name(x, tb));
}

/* Members, enumerators, params, array: the parts after the common header. */
static int equiv_body(struct bd *x, const struct btf_type *ts, const struct btf_type *tb)
{
	uint32_t k = btf_kind(ts), n = btf_vlen(ts);
	int r;
	switch (k) {
	case BTF_KIND_INT:
		return ts->size == tb->size && *(const uint32_t *)(ts + 1) == *(const uint32_t *)(tb + 1);
	case BTF_KIND_FLOAT:
		return ts->size == tb->size;
	case BTF_KIND_FWD:
		return 1;
	case BTF_KIND_ENUM: {
		const struct btf_enum *a = btf_enum(ts), *c = btf_enum(tb);
		if (ts->size != tb->size)
			return 0;
		for (uint32_t i = 0; i < n; i++)
			if (a[i].val != c[i].val || strcmp(bv_str(x->ours, a[i].name_off),
							   bv_str(x->base, c[i].name_off)))
				return 0;
		return 1;
	}
	case BTF_KIND_ENUM64: {
		/* name_off, lo32, hi32 per value */
		const uint32_t *a = (const uint32_t *)(ts + 1), *c = (const uint32_t *)(tb + 1);
		if (ts->size != tb->size)
			return 0;
		for (uint32_t i = 0; i < n; i++)
			if (a[3 * i + 1] != c[3 * i + 1] || a[3 * i + 2] != c[3 * i + 2] ||
			    strcmp(bv_str(x->ours, a[3 * i]), bv_str(x->base, c[3 * i])))
				return 0;
		return 1;
	}
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: {
		const struct btf_member *a = btf_members(ts), *c = btf_members(tb);
		if (ts->size != tb->size)
			return 0;
		for (uint32_t i = 0; i < n; i++) {
			if (a[i].offset != c[i].offset || strcmp(bv_str(x->ours, a[i].name_off),
								 bv_str(x->base, c[i].name_off)))
				return 0;
		}
		/* Members that are ours by EQ_HOLDER still make this the
		 * base's struct: it is the same C type. */
		for (uint32_t i = 0; i < n; i++)
			if ((r = equiv(x, a[i].type, c[i].type)) <= 0)
				return r;
		return 1;
	}
	case BTF_KIND_PTR: case BTF_KIND_CONST: case BTF_KIND_VOLATILE: case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF: case BTF_KIND_TYPE_TAG: case BTF_KIND_FUNC:
		return equiv(x, ts->type, tb->type);
	case BTF_KIND_DECL_TAG:
		if (btf_decl_tag(ts)->component_idx != btf_decl_tag(tb)->component_idx)
			return 0;
		return equiv(x, ts->type, tb->type);
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(ts), *c = btf_array(tb);
		if (a->nelems != c->nelems)
			return 0;
		if ((r = equiv(x, a->index_type, c->index_type)) <= 0)
			return r;
		return equiv(x, a->type, c->type);
	}
	case BTF_KIND_FUNC_PROTO: {
		const struct btf_param *a = btf_params(ts), *c = btf_params(tb);
		for (uint32_t i = 0; i < n; i++)
			if (strcmp(bv_str(x->ours, a[i].name_off),
				   bv_str(x->base, c[i].name_off)))
				return 0;
		/* A prototype is a reference: any part that is ours by
		 * EQ_HOLDER keeps the whole prototype ours. */
		int any = 1;
		if ((r = equiv(x, ts->type, tb->type)) <= 0)
			return r;
		any = r > any ? r : any;
		for (uint32_t i = 0; i < n; i++) {
			if ((r = equiv(x, a[i].type, c[i].type)) <= 0)
				return r;
			any = r > any ? r : any;
		}
		return any;
	}
	}
	return 0; /* VAR, DATASEC */
}

/* Is our type s the same as base type b? 1 yes, 0 no, <0 -errno,
 * or EQ_HOLDER: s is our definition of what b only declares, so a type that
 * holds s is the base's type holding b, but s itself stays ours. */
static int equiv(struct bd *x, uint32_t s, uint32_t b)
{
	if (!s)
		return !b; /* void */
	if (s >= x->end)
		return 0;
	const struct btf_type *ts = bv_type(x->ours, s), *tb = bv_type(x->base, b);
	if (!ts || !tb)
		return 0;
	/* Our struct where the base has only a declaration of it: the types
	 * that hold it are still the base's (the base's struct net_device
	 * points to its opaque struct mpls_dev, a module's to the definition:
	 * one C type), but ours stays ours, for what only we have. libbpf
	 * decides the same, after its first encounter with such a pair. */
	if (btf_is_fwd(tb) && (btf_is_struct(ts) || btf_is_union(ts)) &&
	    btf_kflag(tb) == btf_is_union(ts) && same_name(x, ts, tb))
		return EQ_HOLDER;
	uint32_t f = x->final[s];
	if (f)
		return f == b;
	if (x->hyp[s])
		return x->hyp[s] == b;
	uint32_t ks = btf_kind(ts), kb = btf_kind(tb);
	if ((ks == BTF_KIND_ENUM || ks == BTF_KIND_ENUM64) && (kb == BTF_KIND_ENUM || kb == BTF_KIND_ENUM64) &&
	    ((ks == BTF_KIND_ENUM && !btf_vlen(ts)) || (kb == BTF_KIND_ENUM && !btf_vlen(tb)))) {
		/* A declared-only enum is any enum of its name: ours becomes
		 * the base's; our definition against the base's declaration
		 * is the same only for what holds it, as for structs. */
		if (!same_name(x, ts, tb))
			return 0;
		if (ks == BTF_KIND_ENUM && !btf_vlen(ts))
			return set_hyp(x, s, b) ? -ENOMEM : 1;
		return EQ_HOLDER;
	}
	if (ks != kb) {
		/* Our fwd is the base's struct or union of its name (kflag:
		 * union). */
		if (ks != BTF_KIND_FWD || (kb != BTF_KIND_STRUCT && kb != BTF_KIND_UNION) ||
		    btf_kflag(ts) != (kb == BTF_KIND_UNION) || !same_name(x, ts, tb))
			return 0;
		return set_hyp(x, s, b) ? -ENOMEM : 1;
	}
	if (btf_vlen(ts) != btf_vlen(tb) || btf_kflag(ts) != btf_kflag(tb) || !same_name(x, ts, tb))
		return 0;
	if (ks == BTF_KIND_VAR || ks == BTF_KIND_DATASEC)
		return 0;
	/* Each struct is entered once per attempt, so the depth is bounded by
	 * the number of types; the bound keeps the stack bounded too (a type
	 * left unmatched is still correct BTF, only not the base's). */
	if (x->depth >= MAX_DEPTH)
		return 0;
	x->depth++;
	int r = set_hyp(x, s, b) ? -ENOMEM : equiv_body(x, ts, tb);
	x->depth--;
	return r;
}

/* Kinds whose match a comparison may settle: what refers to nothing. A
 * pointer, typedef or prototype is the base's only when its targets are (it
 * is looked up after them): a pointer to our struct mpls_dev compared equal
 * to the base's pointer to its declaration stays ours. */
static int settles(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_FWD: case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: case BTF_KIND_INT: case BTF_KIND_FLOAT:
		return 1;
	}
	return 0;
}

/* Try s against base id b: on success keep the hypotheses of the kinds
 * settles() allows, on failure drop them all. */
static int attempt(struct bd *x, uint32_t s, uint32_t b)
{
	x->nundo = 0;
	int r = equiv(x, s, b);
	for (size_t i = 0; i < x->nundo; i++) {
		uint32_t u = x->undo[i];
		if (r > 0 && !x->final[u] && settles(bv_type(x->ours, x->undo[i])))
			x->final[u] = x->hyp[u];
		x->hyp[u] = 0;
	}
	return r;
}

static int resolve(struct bd *x, uint32_t s, int depth);

/* The referenced types of ours first (a chain of references between our
 * types ends at a struct, union, enum, fwd, int or float, or is too deep). */
static int resolve_refs(struct bd *x, const struct btf_type *t, int depth)
{
	int err = 0;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR: case BTF_KIND_CONST: case BTF_KIND_VOLATILE: case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF: case BTF_KIND_TYPE_TAG: case BTF_KIND_FUNC: case BTF_KIND_DECL_TAG:
		return resolve(x, t->type, depth + 1);
	case BTF_KIND_ARRAY:
		err = resolve(x, btf_array(t)->index_type, depth + 1);
		return err ? err : resolve(x, btf_array(t)->type, depth + 1);
	case BTF_KIND_FUNC_PROTO:
		err = resolve(x, t->type, depth + 1);
		for (uint32_t i = 0; i < btf_vlen(t) && !err; i++)
			err = resolve(x, btf_params(t)[i].type, depth + 1);
		return err;
	}
	return 0;
}

static int resolve(struct bd *x, uint32_t s, int depth)
{
	if (!s || s >= x->end || x->final[s])
		return 0;
	const struct btf_type *t = bv_type(x->ours, s);
	if (depth > MAX_DEPTH) {
		x->final[s] = UNMATCHED;
		return 0;
	}
	int err = resolve_refs(x, t, depth);
	if (err || x->final[s]) /* a struct's comparison may have settled it */
		return err;
	uint64_t h = shallow_hash(x, 0, t);
	uint32_t lo = 0, hi = 0, check = BI_CHECK(h);
	if (h)
		bucket__range(x->tbucket, x->tbits, h, &lo, &hi);
	for (uint32_t j = lo; j < hi; j++) {
		uint32_t b = x->tents[j].id;
		if (x->tents[j].check != check || b >= x->base->n)
			continue;
		int r = attempt(x, s, b);
		if (r < 0)
			return r;
		if (r == 1) {
			x->final[s] = b;
			return 0;
		}
	}
	x->final[s] = UNMATCHED;
	return 0;
}

int base_dedup__split(const struct base_view *ours, const struct base_view *base, const struct base_index *bi,
		      uint32_t *removed, struct buf *split, struct diag *d)
{
	/* Our types are standalone BTF (ids from 1, strings of their own):
	 * adding them to split BTF directly would cost what split_write.c
	 * avoids. */
	struct bd x = { .ours = ours, .base = base, .empty_key = str_match__sig_at("", 0, 0) };
	x.end = ours->n;
	size_t n = x.end - 1;
	uint32_t *newid = NULL;
	uint8_t *keep = NULL;
	int err = -ENOMEM;
	*removed = 0;
	x.final = calloc(n + 1, sizeof(*x.final));
	x.hyp = calloc(n + 1, sizeof(*x.hyp));
	newid = calloc(n + 1, sizeof(*newid));
	keep = calloc(n + 1, 1);
	if (!x.final || !x.hyp || !newid || !keep)
		goto out;
	err = bi ? str_match__build_indexed(&x.sm, ours, base->strs, base->str_len, bi) :
		   str_match__build(&x.sm, ours, base->strs, base->str_len);
	if (err)
		goto out;
	if (bi) {
		x.tbucket = bi->tbucket;
		x.tents = bi->tents;
		x.tbits = bi->tbits;
	} else {
		uint32_t nents;
		if ((err = index_types(&x, INDEX_BITS, &x.own_bucket, &x.own_ents, &nents)))
			goto out;
		x.tbucket = x.own_bucket;
		x.tents = x.own_ents;
		x.tbits = INDEX_BITS;
	}
	/* Structs and unions first: comparing them settles the pointers,
	 * typedefs and fwds they reach, which on their own could only be
	 * matched by looking their targets up (and a fwd never equals the
	 * base's definition that way). Then everything else. */
	for (uint32_t s = 1; s < x.end && !err; s++) {
		uint32_t k = btf_kind(bv_type(ours, s));
		if (k == BTF_KIND_STRUCT || k == BTF_KIND_UNION)
			err = resolve(&x, s, 0);
	}
	/* A fwd the comparisons left alone is the base's one definition of
	 * its name, if there is exactly one (libbpf's resolve_fwds). */
	for (uint32_t s = 1; s < x.end && !err; s++) {
		const struct btf_type *t = bv_type(ours, s);
		if (!btf_is_fwd(t) || x.final[s])
			continue;
		if (!x.named_id && (err = index_named(&x)))
			break;
		x.final[s] = base_definition(&x, t);
	}
	for (uint32_t s = 1; s < x.end && !err; s++)
		err = resolve(&x, s, 0);
	if (err)
		goto out;
	/* Kept types continue the base's ids, in our order. */
	uint32_t next = base->n;
	for (uint32_t s = 1; s < x.end; s++) {
		uint32_t f = x.final[s];
		keep[s] = f == UNMATCHED;
		newid[s] = keep[s] ? next++ : f;
	}
	*removed = (uint32_t)(n - (next - base->n));
	err = split__write(ours, base, &x.sm, newid, keep, split, d);
out:
	if (err && !(d && d->set))
		diag_fail(d, -err, "matching our types against the base: %s", strerror(-err));
	free(x.final);
	free(x.hyp);
	free(x.undo);
	free(x.own_bucket);
	free(x.own_ents);
	idmap__free(&x.named);
	free(x.named_id);
	free(x.named_first);
	str_match__free(&x.sm);
	free(newid);
	free(keep);
	return err;
}
