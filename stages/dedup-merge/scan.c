/* scan.c: step 1 of the merge (see merge.h), one CU at a time, in parallel.
 *
 * Here a record becomes a node's identity: key_of() writes a type record's
 * key (its data, with anonymous referenced types inlined and named ones cut
 * to a name and a stop edge), and collect_*() turn func and var records into
 * candidates. Everything is a pure function of the CU's bytes and its first
 * gid, except which keys finish_gids() finds in the weak table (how far
 * earlier CUs' inserts got), and that decides only who makes a class, never
 * which class a key gets.
 */
#include "merge.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { K_NEW, K_BUSY, K_DONE };

struct scanner {
	struct cus_cu cu;	/* the caller's cu_buf while the scan runs */
	struct cu_scan *out;
	const struct offset_set *wanted;
	const struct xtargets *xt;
	const struct cu_imports *im;	/* the copies of other CUs' types, after the CU's own */
	uint8_t *state;
	struct diag *d;
	const char *what;
	uint32_t naddr;	/* the CU's address pairs before the record being scanned */
};

void cu_scan__drop_keys(struct cu_scan *s)
{
	buf_free(&s->keys);
	free(s->key_off);
	free(s->key_len);
	free(s->key_hash);
	free(s->miss);
	free(s->xpos);
	s->key_off = s->key_len = s->miss = s->xpos = NULL;
	s->key_hash = NULL;
	s->nmiss = s->nxpos = 0;
}

void cu_scan__free(struct cu_scan *s)
{
	free(s->is_type);
	cu_scan__drop_keys(s);
	free(s->stop_off);
	free(s->stop_len);
	free(s->stops);
	memset(s, 0, sizeof(*s));
}

void cu_scan__drop_kept(struct cu_scan *s)
{
	s->funcs = NULL;
	s->fparams = NULL;
	s->vars = NULL;
	s->annots = NULL;
	s->exports = NULL;
	s->xrefs = NULL;
	s->rec_ckpt = NULL;
	s->strs = NULL;
	s->name = s->producer = NULL;
	s->nfuncs = s->nfparams = s->nvars = s->nannots = s->nexports = s->nxrefs = 0;
}

/* Every string pointer a cu_scan keeps, for keep_strings(). */
static void each_kept_str(struct cu_scan *s, void (*fn)(const char **p, void *ctx), void *ctx)
{
	fn(&s->name, ctx);
	fn(&s->producer, ctx);
	for (size_t i = 0; i < s->nfuncs; i++) {
		fn(&s->funcs[i].name, ctx);
		fn(&s->funcs[i].linkage, ctx);
	}
	for (size_t i = 0; i < s->nfparams; i++)
		fn(&s->fparams[i].name, ctx);
	for (size_t i = 0; i < s->nvars; i++)
		fn(&s->vars[i].name, ctx);
	for (size_t i = 0; i < s->nannots; i++) {
		fn(&s->annots[i].name, ctx);
		fn(&s->annots[i].value, ctx);
	}
	for (size_t i = 0; i < s->nexports; i++) {
		fn(&s->exports[i].name, ctx);
		fn(&s->exports[i].linkage, ctx);
	}
}

struct kept {
	size_t size;
	char *at;
};

static void kept_measure(const char **p, void *ctx)
{
	if (*p)
		((struct kept *)ctx)->size += strlen(*p) + 1;
}

static void kept_copy(const char **p, void *ctx)
{
	struct kept *k = ctx;
	if (!*p)
		return;
	size_t n = strlen(*p) + 1;
	memcpy(k->at, *p, n);
	*p = k->at;
	k->at += n;
}

/* The scan's strings point into the CU's decoded blob, which the worker's
 * next decode overwrites: copy them into one block in the keep arena
 * (s->strs). */
static int keep_strings(struct cu_scan *s, struct arena *keep)
{
	struct kept k = { 0 };
	each_kept_str(s, kept_measure, &k);
	if (!(s->strs = k.at = arena_alloc(keep, k.size + 1)))
		return -ENOMEM;
	each_kept_str(s, kept_copy, &k);
	return 0;
}

/* p (n elements of `size` bytes, malloc's) moved into the keep arena: the
 * copy, or NULL. p is freed either way; when *err is set (an earlier
 * failure) nothing is copied, and when the arena is out of memory *err
 * becomes -ENOMEM. */
static void *keep_array(struct arena *keep, void *p, size_t n, size_t size, int *err)
{
	void *to = NULL;
	if (!*err && p && !(to = arena_alloc(keep, (n ? n : 1) * size)))
		*err = -ENOMEM;
	if (to)
		memcpy(to, p, n * size);
	free(p);
	return to;
}

/* The scan's last step: what outlives it goes into the keep arena at its
 * exact size (cu_scan's ownership rule), the scratch back to malloc,
 * which the thread's next CU takes again. Also on failure (err), so the
 * rule holds whatever happened. */
static int keep_all(struct cu_scan *o, struct arena *keep, int err)
{
	free(o->is_type);
	o->is_type = NULL;
	o->funcs = keep_array(keep, o->funcs, o->nfuncs, sizeof(*o->funcs), &err);
	o->fparams = keep_array(keep, o->fparams, o->nfparams, sizeof(*o->fparams), &err);
	o->vars = keep_array(keep, o->vars, o->nvars, sizeof(*o->vars), &err);
	o->annots = keep_array(keep, o->annots, o->nannots, sizeof(*o->annots), &err);
	o->exports = keep_array(keep, o->exports, o->nexports, sizeof(*o->exports), &err);
	if (!err)
		err = keep_strings(o, keep);
	return err;
}

static int is_type_kind(unsigned kind)
{
	return kind != CUS_FUNC && kind != CUS_PARAM && kind != CUS_VAR;
}

/* Named structs, unions, enums and base types (defined or declared) and
 * typedefs are referred to by name plus a stop edge; everything else is
 * inlined (imports.c keeps the same rule for other CUs' types). */
static int is_stop(const struct cus_rec *r)
{
	return xtargets__is_stop_kind(r->kind, r->name != 0);
}

/* An extern that imports.c copied into the CU is a local reference to the
 * copy: keyed like the type at home, never like a boundary. */
static cus_ref local_ref(const struct scanner *x, cus_ref ref)
{
	if (cus_ref_is_extern(ref) && x->im->ext_local) {
		uint32_t l = x->im->ext_local[cus_ref_index(ref)];
		if (l != NO_CLASS)
			return cus_ref_local(l);
	}
	return ref;
}

static char kind_class(unsigned kind)
{
	switch (kind) {
	case CUS_STRUCT: return 'S';
	case CUS_UNION: return 'U';
	case CUS_ENUM: return 'E';
	case CUS_BASE: return 'B';
	default: return 'T';
	}
}

/* A string goes into a key as its bytes and a NUL (no string holds a NUL,
 * so the encoding is still one-to-one). */
static void put_str(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s) + 1);
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* put_str() of string ref `ref` of the CU: measured and copied in one pass,
 * 8 bytes at a time while 8 remain in the CU's string table (whose last
 * byte is a NUL, checked by the decoder), with no call: a key takes a few
 * names per member, 13 M per vmlinux. Taken when the key buffer has room
 * for the rest of the table (scan__cu() reserves twice the blob), else
 * put_str(). */
static void put_cu_str(const struct scanner *x, struct buf *b, uint32_t ref)
{
	const char *s = cus_str(&x->cu, ref), *end = x->cu.str + x->cu.str_size;
	const char *p = s;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || b->err || b->cap - b->len < (size_t)(end - s) + 8) {
		put_str(b, s);
		return;
	}
	uint8_t *d = b->data + b->len;
	for (; end - p >= 8; p += 8, d += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		memcpy(d, &v, 8); /* room reserved: bytes past the NUL are cut off below */
		uint64_t z = (v - ONES) & ~v & HIGHS; /* its lowest set bit: the first NUL */
		if (z) {
			b->len += (size_t)(p - s) + ((unsigned)__builtin_ctzll(z) >> 3) + 1;
			return;
		}
	}
	size_t n = strlen(p) + 1; /* fewer than 8 bytes left, the last a NUL */
	memcpy(d, p, n);
	b->len += (size_t)(p - s) + n;
}

static int add_stop(struct scanner *x, uint32_t target)
{
	struct cu_scan *o = x->out;
	if (vec_grow(&o->stops, &o->cap_stops, o->nstops + 1))
		return -ENOMEM;
	o->stops[o->nstops++] = target;
	return 0;
}

static int key_of(struct scanner *x, uint32_t k, int depth);

/* Make sure every record that r's key inlines has its key. */
static int prepare_ref(struct scanner *x, cus_ref ref, int depth)
{
	ref = local_ref(x, ref);
	if (!ref || cus_ref_is_extern(ref))
		return 0;
	uint32_t t = cus_ref_index(ref);
	const struct cus_rec *tr = &x->cu.recs[t];
	if (!is_type_kind(tr->kind))
		return diag_fail(x->d, EBADMSG, "%s: record %u: a type reference names a %s record",
				 x->what, t, cus_kind_name(tr->kind));
	return is_stop(tr) ? 0 : key_of(x, t, depth + 1);
}

/* Append the key of a reference: V (void), N + kind class + name + stop (a
 * named type), or I + the target's own key and stops. A reference into
 * another CU is keyed exactly like one to the same type at home: imports.c
 * copied the anonymous ones into the CU, and a named one is its name. X +
 * stop is left for an extern with no record behind it, which the merge
 * reports when resolving. */
static int put_ref(struct scanner *x, struct buf *b, cus_ref ref)
{
	struct cu_scan *o = x->out;
	ref = local_ref(x, ref);
	if (!ref) {
		buf_u8(b, 'V');
		return 0;
	}
	if (cus_ref_is_extern(ref)) {
		uint32_t e = cus_ref_index(ref);
		const struct xtarget *t = x->xt ? xtargets__get(x->xt, x->cu.externs[e]) : NULL;
		if (t && t->kind == CUS_UNSPECIFIED) {
			buf_u8(b, 'V');
			return 0;
		}
		if (t && xtargets__is_stop_kind(t->kind, t->name_at != 0)) {
			buf_u8(b, 'N');
			buf_u8(b, (uint8_t)kind_class(t->kind));
			put_str(b, xtarget_name(x->xt, t));
		} else {
			buf_u8(b, 'X'); /* (no target: the merge reports it when resolving) */
		}
		return add_stop(x, STOP_XREF | e);
	}
	uint32_t t = cus_ref_index(ref);
	const struct cus_rec *tr = &x->cu.recs[t];
	if (tr->kind == CUS_UNSPECIFIED) {
		/* DW_TAG_unspecified_type is void to BTF: keyed as void. */
		buf_u8(b, 'V');
		return 0;
	}
	if (is_stop(tr)) {
		buf_u8(b, 'N');
		buf_u8(b, (uint8_t)kind_class(tr->kind));
		put_cu_str(x, b, tr->name);
		return add_stop(x, t + 1);
	}
	buf_u8(b, 'I');
	buf_put_self(b, o->key_off[t], o->key_len[t]);
	if (vec_grow(&o->stops, &o->cap_stops, o->nstops + o->stop_len[t]))
		return -ENOMEM;
	if (o->stop_len[t])
		memmove(o->stops + o->nstops, o->stops + o->stop_off[t], o->stop_len[t] * sizeof(*o->stops));
	o->nstops += o->stop_len[t];
	return 0;
}

static void put_annots(struct scanner *x, struct buf *b, uint32_t first, uint32_t count)
{
	buf_uleb(b, count);
	for (uint32_t i = 0; i < count; i++) {
		put_cu_str(x, b, x->cu.annots[first + i].name);
		put_cu_str(x, b, x->cu.annots[first + i].value);
	}
}

/* Record k's key (merge.h, step 1). Not made from cus.h's tables, on
 * purpose: a key is not the record's fields but what makes two types the
 * same type, and each kind has its own rules: a fwd is its name alone; an
 * array of unknown count and one of count 0 are one type (BTF writes both
 * as 0); an enum is its sign, not its underlying type; a struct's members
 * their artificial flag but no other; references are inlined or stopped by
 * kind; no DIE offset, address or alignment takes part. */
static int key_of(struct scanner *x, uint32_t k, int depth)
{
	struct cu_scan *o = x->out;
	const struct cus_rec *r = &x->cu.recs[k];
	const struct cus_item *it = x->cu.items + r->item_first;
	int err = 0;

	if (x->state[k] == K_DONE)
		return 0;
	if (x->state[k] == K_BUSY || depth > 10000)
		return diag_fail(x->d, EBADMSG, "%s: record %u (DIE 0x%llx): a cycle through anonymous types, "
				 "which C cannot express", x->what, k, (unsigned long long)r->die);
	x->state[k] = K_BUSY;

	/* First the keys this one inlines, so appending below copies finished bytes. */
	err = prepare_ref(x, r->type, depth);
	if (r->kind == CUS_STRUCT || r->kind == CUS_UNION || r->kind == CUS_SUBROUTINE)
		for (uint32_t i = 0; i < r->item_count && !err; i++)
			err = prepare_ref(x, it[i].type, depth);
	if (err)
		return err;

	struct buf *b = &o->keys;
	size_t start = b->len, sstart = o->nstops;
	int decl = (r->flags & CUS_F_DECL) != 0;
	buf_u8(b, r->kind);
	switch (r->kind) {
	case CUS_BASE:
		put_cu_str(x, b, r->name);
		buf_uleb(b, r->encoding);
		buf_uleb(b, r->size);
		buf_uleb(b, r->bit_size);
		buf_uleb(b, r->bit_offset);
		break;
	case CUS_PTR:
		buf_uleb(b, r->size);
		err = put_ref(x, b, r->type);
		break;
	case CUS_CONST: case CUS_VOLATILE: case CUS_RESTRICT: case CUS_ATOMIC:
		err = put_ref(x, b, r->type);
		break;
	case CUS_TYPEDEF:
		put_cu_str(x, b, r->name);
		err = put_ref(x, b, r->type);
		break;
	case CUS_STRUCT: case CUS_UNION: case CUS_ENUM:
		buf_u8(b, decl ? 'F' : 'D');
		put_cu_str(x, b, r->name);
		if (decl)
			break; /* a fwd: its name is all it has */
		buf_uleb(b, r->size);
		buf_uleb(b, r->flags & CUS_F_SIGNED);
		buf_uleb(b, r->item_count);
		for (uint32_t i = 0; i < r->item_count && !err; i++) {
			put_cu_str(x, b, it[i].name);
			buf_uleb(b, it[i].value);
			if (r->kind == CUS_ENUM)
				continue;
			buf_uleb(b, it[i].bit_size);
			buf_uleb(b, it[i].flags & CUS_F_ARTIFICIAL);
			if (it[i].flags & CUS_F_ANNOT)
				put_annots(x, b, it[i].annot_first, it[i].annot_count);
			else
				buf_uleb(b, 0);
			err = put_ref(x, b, it[i].type);
		}
		break;
	case CUS_ARRAY:
		/* A flexible array (value 0) and a zero-length one (value 1)
		 * are one type: BTF writes both as nelems 0. */
		buf_uleb(b, r->item_count);
		for (uint32_t i = 0; i < r->item_count; i++)
			buf_uleb(b, it[i].value ? it[i].value : 1);
		err = put_ref(x, b, r->type);
		break;
	case CUS_SUBROUTINE:
		buf_uleb(b, r->flags & CUS_F_VARARGS);
		buf_uleb(b, r->item_count);
		err = put_ref(x, b, r->type);
		for (uint32_t i = 0; i < r->item_count && !err; i++)
			err = put_ref(x, b, it[i].type);
		break;
	case CUS_UNSPECIFIED:
		put_cu_str(x, b, r->name);
		break;
	case CUS_UNSUPPORTED:
		buf_uleb(b, r->tag);
		put_cu_str(x, b, r->name);
		break;
	}
	if (!err)
		put_annots(x, b, r->annot_first, (r->flags & CUS_F_ANNOT) ? r->annot_count : 0);
	if (err)
		return err;
	if (b->err)
		return b->err;
	if (b->len - start > UINT32_MAX / 2)
		return diag_fail(x->d, E2BIG, "%s: record %u: type key too large", x->what, k);
	o->key_off[k] = (uint32_t)start;
	o->key_len[k] = (uint32_t)(b->len - start);
	o->key_hash[k] = hash64(b->data + start, b->len - start);
	o->stop_off[k] = (uint32_t)sstart;
	o->stop_len[k] = (uint32_t)(o->nstops - sstart);
	x->state[k] = K_DONE;
	return 0;
}

/* A typedef or qualifier chain that comes back to itself without a pointer,
 * struct or array in it exists only in malformed DWARF, and BTF would hold a
 * loop the kernel refuses: refuse it here, naming the DIE. */
static int check_modifier_cycles(struct scanner *x)
{
	for (uint32_t k = 0; k < x->cu.nrecs; k++) {
		uint32_t t = k;
		for (int steps = 0; steps < 256; steps++) {
			const struct cus_rec *r = &x->cu.recs[t];
			if (r->kind != CUS_TYPEDEF && r->kind != CUS_CONST && r->kind != CUS_VOLATILE &&
			    r->kind != CUS_RESTRICT && r->kind != CUS_ATOMIC)
				break;
			if (!r->type || cus_ref_is_extern(r->type))
				break;
			t = cus_ref_index(r->type);
			if (t == k)
				return diag_fail(x->d, EBADMSG, "%s: DIE 0x%llx: a cycle of typedefs or qualifiers "
						 "(malformed DWARF)", x->what,
						 (unsigned long long)x->cu.recs[k].die);
		}
	}
	return 0;
}

/* ---- candidates and exports ---- */

/* A type ref as an lref: record index + 1, or STOP_XREF | extern index (0 stays 0). */
static uint32_t ref_gid(const struct scanner *x, cus_ref ref)
{
	(void)x;
	if (!ref)
		return 0;
	if (cus_ref_is_extern(ref))
		return STOP_XREF | cus_ref_index(ref);
	return cus_ref_index(ref) + 1;
}

/* Follow DW_AT_abstract_origin / DW_AT_specification inside this CU to the
 * end of the chain (a concrete instance -> its abstract instance -> its
 * declaration), where the name and type live. Flags accumulate along the way.
 * A link to another CU stops the walk with its global offset in *pending. */
static const struct cus_rec *resolve_named(const struct scanner *x, const struct cus_rec *r,
					   uint32_t *flags, uint64_t *pending)
{
	*pending = 0;
	for (int depth = 0; depth < 8; depth++) {
		*flags |= r->flags & (CUS_F_EXTERNAL | CUS_F_VARARGS | CUS_F_PROTOTYPED);
		cus_ref next = r->origin ? r->origin : r->spec;
		if (!next)
			break;
		if (cus_ref_is_extern(next)) {
			*pending = x->cu.externs[cus_ref_index(next)];
			break;
		}
		const struct cus_rec *n = &x->cu.recs[cus_ref_index(next)];
		if (n->kind != r->kind)
			break;
		r = n;
	}
	return r;
}

static int add_annots(struct scanner *x, uint32_t first, uint32_t count, uint32_t *ofirst, uint32_t *ocount)
{
	struct cu_scan *o = x->out;
	size_t cap = o->nannots;
	if (!count)
		return 0;
	if (vec_grow(&o->annots, &cap, o->nannots + count))
		return -ENOMEM;
	*ofirst = (uint32_t)o->nannots;
	*ocount = count;
	for (uint32_t i = 0; i < count; i++)
		o->annots[o->nannots++] = (struct sannot){ cus_str(&x->cu, x->cu.annots[first + i].name),
							   cus_str(&x->cu, x->cu.annots[first + i].value) };
	return 0;
}

static int collect_func(struct scanner *x, uint32_t k, size_t *cap_f, size_t *cap_p)
{
	struct cu_scan *o = x->out;
	const struct cus_rec *r = &x->cu.recs[k];
	/* Every definition is a candidate, with code (HAS_PC) or not: an
	 * abstract instance describes a function whose body is elsewhere or
	 * inlined, and btf-emit decides with the symbol table. */
	if (r->flags & CUS_F_DECL)
		return 0;
	if (vec_grow(&o->funcs, cap_f, o->nfuncs + 1))
		return -ENOMEM;
	struct fcand *f = &o->funcs[o->nfuncs++];
	memset(f, 0, sizeof(*f));
	f->flags = r->flags;
	const struct cus_rec *named = resolve_named(x, r, &f->flags, &f->origin_off);
	/* Name and return type: from r itself, else the record it points to. */
	const struct cus_rec *nr = r->name ? r : named;
	f->name = nr->name ? cus_str(&x->cu, nr->name) : NULL;
	f->linkage = r->linkage ? cus_str(&x->cu, r->linkage)
				: named->linkage ? cus_str(&x->cu, named->linkage) : NULL;
	f->ret = r->type ? ref_gid(x, r->type) : ref_gid(x, named->type);
	f->inline_kind = named->inline_kind ? named->inline_kind : r->inline_kind;
	f->cc = r->cc ? r->cc : named->cc;
	f->pc = r->addr;
	f->shndx = r->shndx;
	f->addr_ord = x->naddr;
	/* An instance that lists no parameters of its own has its origin's
	 * (gcc -flto's abstract instances; for an origin in another CU,
	 * inherit_params() after the scan). */
	uint32_t pk = k;
	if (!r->item_count && named != r && named->kind == CUS_FUNC && named->item_count)
		pk = (uint32_t)(named - x->cu.recs);
	const struct cus_rec *pr = &x->cu.recs[pk];
	if (vec_grow(&o->fparams, cap_p, o->nfparams + pr->item_count))
		return -ENOMEM;
	f->param_first = (uint32_t)o->nfparams;
	f->param_count = pr->item_count;
	int err = 0;
	if (r->flags & CUS_F_ANNOT)
		err = add_annots(x, r->annot_first, r->annot_count, &f->annot_first, &f->annot_count);
	else if (named != r && (named->flags & CUS_F_ANNOT))
		err = add_annots(x, named->annot_first, named->annot_count, &f->annot_first, &f->annot_count);
	if (err)
		return err;
	if (named != r && (named->flags & CUS_F_ANNOT))
		f->flags |= CUS_F_ANNOT;
	for (uint32_t i = 0; i < pr->item_count; i++) {
		const struct cus_rec *p = &x->cu.recs[pk + 1 + i];
		struct fcand_param *fp = &o->fparams[o->nfparams++];
		memset(fp, 0, sizeof(*fp));
		fp->loc = p->loc;
		fp->loc_reg = p->loc_reg;
		const struct cus_rec *pn = p;
		if (p->origin && !cus_ref_is_extern(p->origin) && r->origin && !cus_ref_is_extern(r->origin)) {
			/* The i-th parameter's origin should be the origin
			 * function's i-th: a clone that reorders parameters has a
			 * signature the source does not. */
			uint32_t fo = cus_ref_index(r->origin);
			if (cus_ref_index(p->origin) != fo + 1 + i)
				f->flags |= G_F_REORDERED;
		}
		if ((!p->name || !p->type) && p->origin) {
			if (cus_ref_is_extern(p->origin))
				fp->origin_off = x->cu.externs[cus_ref_index(p->origin)];
			else
				pn = &x->cu.recs[cus_ref_index(p->origin)];
		}
		fp->name = p->name ? cus_str(&x->cu, p->name) : pn->name ? cus_str(&x->cu, pn->name) : NULL;
		fp->type = p->type ? ref_gid(x, p->type) : ref_gid(x, pn->type);
		const struct cus_rec *ar = (p->flags & CUS_F_ANNOT) ? p : pn;
		if ((ar->flags & CUS_F_ANNOT) &&
		    (err = add_annots(x, ar->annot_first, ar->annot_count, &fp->annot_first, &fp->annot_count)))
			return err;
	}
	return 0;
}

static int collect_var(struct scanner *x, uint32_t k, size_t *cap_v)
{
	struct cu_scan *o = x->out;
	const struct cus_rec *r = &x->cu.recs[k];
	if (!(r->flags & CUS_F_HAS_ADDR))
		return 0;
	if (vec_grow(&o->vars, cap_v, o->nvars + 1))
		return -ENOMEM;
	struct vcand *v = &o->vars[o->nvars++];
	memset(v, 0, sizeof(*v));
	v->flags = r->flags;
	const struct cus_rec *named = r;
	if ((!r->name || !r->type) && r->spec) {
		if (cus_ref_is_extern(r->spec)) {
			v->spec_off = x->cu.externs[cus_ref_index(r->spec)];
		} else {
			named = &x->cu.recs[cus_ref_index(r->spec)];
			v->flags |= named->flags & CUS_F_EXTERNAL;
		}
	}
	v->name = r->name ? cus_str(&x->cu, r->name) : named->name ? cus_str(&x->cu, named->name) : NULL;
	v->type = r->type ? ref_gid(x, r->type) : ref_gid(x, named->type);
	v->addr = r->addr;
	v->shndx = r->shndx;
	v->addr_ord = x->naddr;
	const struct cus_rec *ar = (r->flags & CUS_F_ANNOT) ? r : named;
	if (ar->flags & CUS_F_ANNOT) {
		v->flags |= CUS_F_ANNOT;
		return add_annots(x, ar->annot_first, ar->annot_count, &v->annot_first, &v->annot_count);
	}
	return 0;
}

static int collect_export(struct scanner *x, uint32_t k, size_t *cap_e)
{
	struct cu_scan *o = x->out;
	const struct cus_rec *r = &x->cu.recs[k];
	if (vec_grow(&o->exports, cap_e, o->nexports + 1))
		return -ENOMEM;
	struct export *e = &o->exports[o->nexports++];
	uint32_t flags = r->flags;
	uint64_t pending;
	const struct cus_rec *named = r->kind == CUS_FUNC || r->kind == CUS_VAR
					      ? resolve_named(x, r, &flags, &pending) : r;
	const struct cus_rec *nr = r->name ? r : named;
	*e = (struct export){
		.off = o->cu_offset + r->die, .gid = k + 1, .kind = r->kind,
		.flags = flags, .name = nr->name ? cus_str(&x->cu, nr->name) : NULL,
		.linkage = r->linkage ? cus_str(&x->cu, r->linkage) : NULL,
		.type = r->type ? ref_gid(x, r->type) : ref_gid(x, named->type),
	};
	if (e->type & STOP_XREF)
		e->type = 0; /* not followed across a second CU */
	return 0;
}

/* The scan's last step, still on its own thread: what it made in CU terms
 * (lrefs) becomes gids now that env->base says where the CU starts, the
 * stop edges are laid out in record order, and each key's weak class is
 * looked up in the table as earlier CUs' inserts have left it so far. A key
 * found there is written down here; the rest go on the miss list for the
 * ordered insert, which gives each the class it would have got anyway:
 * only where the work happens depends on timing, never a result. */
static int finish_gids(struct scanner *x, const struct scan_env *env)
{
	struct cu_scan *o = x->out;
	uint64_t base = env->base;
	uint32_t n = o->nrecs;
	size_t total = 0, nx = 0, cap_x = 0;
	for (uint32_t k = 0; k < n; k++)
		if (o->is_type[k])
			total += o->stop_len[k];
	if (total > UINT32_MAX - 1)
		return diag_fail(x->d, E2BIG, "%s: more than 4 billion type references", x->what);
	/* Without externs no stop edge leaves the CU (merge.h). */
	int narrow = n <= 65536 && x->cu.nexterns == 0;
	if (narrow && total <= UINT16_MAX)
		o->gstop_off16 = arena_alloc(env->arena, ((size_t)n + 1) * sizeof(uint16_t));
	else
		o->gstop_off = arena_alloc(env->arena, ((size_t)n + 1) * sizeof(uint32_t));
	if (narrow)
		o->gstops16 = arena_alloc(env->arena, (total + 1) * sizeof(uint16_t));
	else
		o->gstops = arena_alloc(env->arena, (total + 1) * sizeof(uint32_t));
	o->miss = malloc(((size_t)n + 1) * sizeof(uint32_t));
	if (!(o->gstop_off || o->gstop_off16) || !(o->gstops || o->gstops16) || !o->miss)
		return -ENOMEM;
	uint32_t at = 0;
	for (uint32_t k = 0; k < n; k++) {
		if (o->gstop_off16)
			o->gstop_off16[k] = (uint16_t)at;
		else
			o->gstop_off[k] = at;
		if (!o->is_type[k]) {
			env->weak[k] = NO_CLASS;
			continue;
		}
		const uint8_t *key = o->keys.data + o->key_off[k];
		int64_t w = classes__weak_find(env->wt, key, o->key_len[k], o->key_hash[k]);
		if (w >= 0)
			env->weak[k] = (uint32_t)w;
		else
			o->miss[o->nmiss++] = k;
		const uint32_t *st = o->stops + o->stop_off[k];
		if (narrow) {
			for (uint32_t e = 0; e < o->stop_len[k]; e++)
				o->gstops16[at++] = (uint16_t)(st[e] - 1);
			continue;
		}
		for (uint32_t e = 0; e < o->stop_len[k]; e++) {
			if (st[e] & STOP_XREF) {
				if (vec_grow(&o->xpos, &cap_x, nx + 1))
					return -ENOMEM;
				o->xpos[nx++] = at;
				o->gstops[at++] = st[e];
			} else if (st[e] - 1 >= n) {
				/* A stub imports.c made: the named type's own gid. */
				o->gstops[at++] = x->im->gid[st[e] - 1 - n];
			} else {
				o->gstops[at++] = (uint32_t)(base + st[e] - 1);
			}
		}
	}
	if (o->gstop_off16)
		o->gstop_off16[n] = (uint16_t)at;
	else
		o->gstop_off[n] = at;
	o->nxpos = nx;
	free(o->stops);
	free(o->stop_off);
	free(o->stop_len);
	o->stops = o->stop_off = o->stop_len = NULL;
	o->nstops = o->cap_stops = 0;

#define GID(lref) ((lref) && !((lref) & STOP_XREF) ? (uint32_t)(base + (lref) - 1) : (lref))
	for (size_t i = 0; i < o->nfuncs; i++)
		o->funcs[i].ret = GID(o->funcs[i].ret);
	for (size_t i = 0; i < o->nfparams; i++)
		o->fparams[i].type = GID(o->fparams[i].type);
	for (size_t i = 0; i < o->nvars; i++)
		o->vars[i].type = GID(o->vars[i].type);
	for (size_t i = 0; i < o->nexports; i++) {
		o->exports[i].gid = GID(o->exports[i].gid);
		o->exports[i].type = GID(o->exports[i].type);
	}
#undef GID
	return 0;
}

/* A function instance with no parameters of its own whose origin is in
 * another CU has the origin's, which the xtargets keep (gcc -flto names the
 * early DIE of another CU from an abstract instance in its link-time CU).
 * After finish_gids(): the types are gids here. */
static int inherit_params(struct scanner *x, size_t *cap_p)
{
	struct cu_scan *o = x->out;
	const struct xtargets *xt = x->xt;
	for (size_t i = 0; xt && i < o->nfuncs; i++) {
		struct fcand *f = &o->funcs[i];
		const struct xtarget *t = f->origin_off && !f->param_count ? xtargets__get(xt, f->origin_off) : NULL;
		if (!t || t->kind != CUS_FUNC || !t->nparams)
			continue;
		if (vec_grow(&o->fparams, cap_p, o->nfparams + t->nparams))
			return -ENOMEM;
		f->param_first = (uint32_t)o->nfparams;
		f->param_count = t->nparams;
		for (uint32_t j = 0; j < t->nparams; j++) {
			const struct xparam *xp = &xt->params[t->param_first + j];
			struct fcand_param *fp = &o->fparams[o->nfparams++];
			memset(fp, 0, sizeof(*fp));
			fp->name = xp->name_at ? (const char *)xt->strs.data + xp->name_at : NULL;
			if (xp->type) {
				const struct xtarget *tt = &xt->vals[cus_ref_index(xp->type)];
				fp->type = tt->kind ? tt->gid : 0;
			}
			if (!xp->annot_count)
				continue;
			size_t cap = o->nannots;
			if (vec_grow(&o->annots, &cap, o->nannots + xp->annot_count))
				return -ENOMEM;
			fp->annot_first = (uint32_t)o->nannots;
			fp->annot_count = xp->annot_count;
			for (uint32_t a = 0; a < xp->annot_count; a++) {
				const struct cus_annot *ca = &xt->annots[xp->annot_first + a];
				o->annots[o->nannots++] = (struct sannot){
					(const char *)xt->strs.data + ca->name, (const char *)xt->strs.data + ca->value };
			}
		}
	}
	return 0;
}

int scan__cu(const struct cus_file *f, size_t cu_index, uint32_t input, const struct scan_env *env,
	    struct cus_cu *cu_buf, struct cu_scan *out, struct diag *d)
{
	const struct offset_set *wanted = env->wanted;
	struct cu_imports im = { 0 };
	struct scanner x = { .out = out, .d = d, .wanted = wanted, .xt = env->xt, .im = &im, .cu = *cu_buf };
	const char *own_str = NULL;
	char what[CUS_WHAT_SIZE];
	cus_file__cu_what(f, cu_index, what);
	x.what = what;
	memset(out, 0, sizeof(*out));
	out->input = input;
	int err = cus_file__decode(f, cu_index, &x.cu, d);
	if (err)
		goto out;
	size_t n = x.cu.nrecs;
	if (n != env->nrecs) {
		/* The same bytes were read twice: the file changed under us. */
		err = diag_fail(d, EBADMSG, "%s: %zu records where the blob's head said %u a moment ago "
				"(was the file changed while being read?)", what, n, env->nrecs);
		goto out;
	}
	own_str = x.cu.str;
	if (env->xt && (err = imports__apply(&x.cu, env->xt, env->imp, &im, what, d)))
		goto out;
	/* Records [n, all) are the imported copies: keyed when inlined, never
	 * nodes of this CU. */
	size_t all = x.cu.nrecs;
	/* Keys come to about 1.9 times the blob's size on a vmlinux (2.6 at
	 * most): room for twice the blob up front spares most CUs the copies
	 * of growing from empty. */
	err = buf_reserve(&out->keys, 2 * (size_t)f->index[cu_index].blob_size + 64);
	if (err)
		goto out;
	out->nrecs = (uint32_t)n;
	out->cu_offset = x.cu.cu_offset;
	out->name = cus_str(&x.cu, x.cu.name);
	out->producer = cus_str(&x.cu, x.cu.producer);
	out->language = x.cu.language;
	out->is_type = calloc(n + 1, 1);
	out->key_off = calloc(all + 1, sizeof(uint32_t));
	out->key_len = calloc(all + 1, sizeof(uint32_t));
	out->key_hash = malloc((all + 1) * sizeof(uint64_t));
	out->stop_off = calloc(all + 1, sizeof(uint32_t));
	out->stop_len = calloc(all + 1, sizeof(uint32_t));
	/* Their final size is known: made in the keep arena straight away. */
	out->xrefs = arena_alloc(env->keep, (x.cu.nexterns + 1) * sizeof(uint64_t));
	size_t nckpt = (n + CUS_REC_STRIDE - 1) / CUS_REC_STRIDE;
	out->rec_ckpt = arena_alloc(env->keep, (nckpt + 1) * sizeof(uint32_t));
	x.state = calloc(all + 1, 1);
	err = -ENOMEM;
	if (!out->is_type || !out->key_off || !out->key_len || !out->key_hash || !out->stop_off || !out->stop_len ||
	    !out->xrefs || !out->rec_ckpt || !x.state)
		goto out;
	for (size_t q = 0; q < nckpt; q++)
		out->rec_ckpt[q] = x.cu.rec_off[q * CUS_REC_STRIDE];
	if (x.cu.nexterns)
		memcpy(out->xrefs, x.cu.externs, x.cu.nexterns * sizeof(uint64_t));
	out->nxrefs = x.cu.nexterns;

	size_t cap_f = 0, cap_p = 0, cap_v = 0, cap_e = 0;
	err = check_modifier_cycles(&x);
	for (uint32_t k = 0; k < n && !err; k++) {
		const struct cus_rec *r = &x.cu.recs[k];
		out->is_type[k] = (uint8_t)is_type_kind(r->kind);
		if (out->is_type[k])
			err = key_of(&x, k, 0);
		else if (r->kind == CUS_FUNC)
			err = collect_func(&x, k, &cap_f, &cap_p);
		else if (r->kind == CUS_VAR)
			err = collect_var(&x, k, &cap_v);
		if (!err && wanted && wanted->map.count && offset_set__has(wanted, x.cu.cu_offset + r->die))
			err = collect_export(&x, k, &cap_e);
		if ((r->kind == CUS_FUNC && (r->flags & CUS_F_HAS_PC)) ||
		    (r->kind == CUS_VAR && (r->flags & CUS_F_HAS_ADDR)))
			x.naddr++;
	}
	if (!err && out->keys.err)
		err = out->keys.err;
	if (!err)
		err = finish_gids(&x, env);
	if (!err)
		err = inherit_params(&x, &cap_p);
out:
	err = keep_all(out, env->keep, err);
	free(x.state);
	cu_imports__free(&im);
	if (own_str)
		x.cu.str = own_str; /* the imports' table is gone */
	*cu_buf = x.cu; /* its arrays, grown or not, go back to the caller */
	return err;
}

int scan__cu_excluded(const struct cus_file *f, size_t cu_index, uint32_t input,
		      struct arena *keep, struct cu_scan *out, struct diag *d)
{
	struct cus_cu cu = { 0 };
	memset(out, 0, sizeof(*out));
	out->input = input;
	int err = cus_file__decode_head(f, cu_index, 0, &cu, d);
	if (!err) {
		out->cu_offset = cu.cu_offset;
		out->name = cus_str(&cu, cu.name);
		out->producer = cus_str(&cu, cu.producer);
		out->language = cu.language;
		err = keep_strings(out, keep);
	}
	cus_cu__free(&cu);
	return err;
}
