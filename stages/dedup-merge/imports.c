/* imports.c: a reference into another CU keyed like one at home (LTO, dwz).
 *
 * A key (scan.c) inlines the keys of the anonymous types a record refers
 * to, pointers, qualifiers, arrays, prototypes and unnamed structs, and
 * cuts named ones to their name. For the partition of step 2 to be coarser
 * than the bisimulation (merge.h), a type's key must be a function of the
 * type alone, never of where its DIEs happen to live. Under LTO they live
 * anywhere: clang emits a type once per output module, in whichever CU met
 * it first, and the other CUs of the module refer to it with
 * DW_FORM_ref_addr; thin LTO makes such a module for every source file, so
 * one type is at home in some CUs and across a CU boundary in others.
 * Keying the boundary (a placeholder and a stop edge) made the same type two
 * keys, and the refinement, which only splits, could never join them: 151
 * copies of one struct in a 2,400-CU thin-LTO program.
 *
 * So a reference into another CU is followed: the xtargets of an input hold
 * every record some CU refers to from outside, and for each anonymous type
 * among them a copy of it (its body) and of everything its key inlines, with
 * references between them by index (xtargets__collect(), once per input,
 * before the scans). A scan then copies the bodies its externs need into
 * its own record table, after its own records (imports__apply()); the named
 * types those bodies name come along as stubs (kind and name: all a key
 * takes of them) that stand for their gid. key_of() keys the copies like
 * any record of the CU, and the key is the one the type has at home.
 *
 * Invariants: the xtargets are a pure function of the input file (built in
 * CU and record order on one thread); an import is a pure function of the CU
 * and the xtargets. Neither depends on the thread count.
 */
#include "merge.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Named structs, unions, enums and base types, and every typedef, are keyed
 * by name; everything else by its body. scan.c keys by the same rule. */
int xtargets__is_stop_kind(unsigned kind, int named)
{
	switch (kind) {
	case CUS_STRUCT: case CUS_UNION: case CUS_ENUM: case CUS_BASE:
		return named;
	case CUS_TYPEDEF:
		return 1;
	}
	return 0;
}

static int is_type_kind(unsigned kind)
{
	return kind && kind != CUS_FUNC && kind != CUS_PARAM && kind != CUS_VAR;
}

/* ---- the offset index: global DIE offset -> index in vals --------------- */

/* The index of off's entry, made empty (kind 0: no record seen there yet)
 * when new. Returns the index, or -ENOMEM. */
static int64_t xt_entry(struct xtargets *xt, uint64_t off)
{
	size_t j;
	xt->index.val_size = sizeof(uint32_t);
	if (offmap__reserve(&xt->index))
		return -ENOMEM;
	if (offmap__find(&xt->index, off, &j))
		return *(uint32_t *)offmap__val(&xt->index, j);
	if (xt->n >= STOP_XREF - 1 || vec_grow(&xt->vals, &xt->cap_vals, xt->n + 1))
		return -ENOMEM;
	offmap__put(&xt->index, j, off);
	*(uint32_t *)offmap__val(&xt->index, j) = (uint32_t)xt->n;
	xt->vals[xt->n] = (struct xtarget){ .off = off };
	return (int64_t)xt->n++;
}

const struct xtarget *xtargets__get(const struct xtargets *xt, uint64_t off)
{
	size_t j;
	return offmap__find(&xt->index, off, &j) ? &xt->vals[*(uint32_t *)offmap__val(&xt->index, j)] : NULL;
}

void xtargets__free(struct xtargets *xt)
{
	offmap__free(&xt->index);
	free(xt->vals);
	free(xt->recs);
	free(xt->items);
	free(xt->annots);
	free(xt->params);
	buf_free(&xt->strs);
	memset(xt, 0, sizeof(*xt));
}

/* ---- collecting: what other CUs refer to, and what their keys inline ---- */

struct collect {
	struct xtargets *xt;
	const struct cus_cu *cu;
	uint64_t gid0;		/* the gid of the CU's record 0 */
	struct pending_body {
		uint32_t rec, entry;
	} *work;		/* the CU's records whose bodies are still to copy */
	size_t nwork, cap_work;
};

static uint32_t xt_str(struct xtargets *xt, const struct cus_cu *cu, uint32_t ref)
{
	if (!ref)
		return 0;
	const char *s = cus_str(cu, ref);
	uint32_t at = (uint32_t)xt->strs.len;
	buf_put(&xt->strs, s, strlen(s) + 1);
	return at;
}

/* The entry of the CU's record k, filled (and its body queued) when new.
 * Returns its index, or -ENOMEM. */
static int64_t collect_rec(struct collect *c, uint32_t k)
{
	struct xtargets *xt = c->xt;
	const struct cus_rec *r = &c->cu->recs[k];
	int64_t i = xt_entry(xt, c->cu->cu_offset + r->die);
	if (i < 0 || xt->vals[i].kind)
		return i;
	struct xtarget *t = &xt->vals[i];
	t->kind = r->kind;
	t->name_at = xt_str(xt, c->cu, r->name);
	t->gid = (uint32_t)(c->gid0 + k);
	if (is_type_kind(r->kind) && !xtargets__is_stop_kind(r->kind, r->name != 0)) {
		if (vec_grow(&c->work, &c->cap_work, c->nwork + 1))
			return -ENOMEM;
		c->work[c->nwork++] = (struct pending_body){ k, (uint32_t)i };
	}
	return i;
}

/* A type ref of the CU as a ref to an entry: cus_ref_local(entry index). */
static int xt_ref(struct collect *c, cus_ref ref, cus_ref *out)
{
	*out = 0;
	if (!ref)
		return 0;
	int64_t i = cus_ref_is_extern(ref) ? xt_entry(c->xt, c->cu->externs[cus_ref_index(ref)])
					   : collect_rec(c, cus_ref_index(ref));
	if (i < 0)
		return (int)i;
	*out = cus_ref_local((uint32_t)i);
	return 0;
}

static int copy_annots(struct xtargets *xt, const struct cus_cu *cu, uint32_t first, uint32_t count,
		       uint32_t *ofirst)
{
	*ofirst = (uint32_t)xt->nannots;
	if (vec_grow(&xt->annots, &xt->cap_annots, xt->nannots + count))
		return -ENOMEM;
	for (uint32_t a = 0; a < count; a++) {
		struct cus_annot *d = &xt->annots[xt->nannots++];
		d->name = xt_str(xt, cu, cu->annots[first + a].name);
		d->value = xt_str(xt, cu, cu->annots[first + a].value);
	}
	return 0;
}

/* The body of the CU's record k (entry `entry`): a copy whose refs and
 * strings are the xtargets' own. */
static int copy_body(struct collect *c, uint32_t k, uint32_t entry)
{
	struct xtargets *xt = c->xt;
	const struct cus_cu *cu = c->cu;
	const struct cus_rec *r = &cu->recs[k];
	if (vec_grow(&xt->recs, &xt->cap_recs, xt->nrecs + 1) ||
	    vec_grow(&xt->items, &xt->cap_items, xt->nitems + r->item_count))
		return -ENOMEM;
	struct cus_rec b = *r;
	b.die = cu->cu_offset + r->die; /* for messages: there is no home CU */
	b.name = xt_str(xt, cu, r->name);
	b.linkage = b.origin = b.spec = 0;
	b.item_first = (uint32_t)xt->nitems;
	int err = xt_ref(c, r->type, &b.type);
	if (!err && (r->flags & CUS_F_ANNOT))
		err = copy_annots(xt, cu, r->annot_first, r->annot_count, &b.annot_first);
	for (uint32_t i = 0; i < r->item_count && !err; i++) {
		const struct cus_item *it = &cu->items[r->item_first + i];
		struct cus_item d = *it;
		d.name = xt_str(xt, cu, it->name);
		err = xt_ref(c, it->type, &d.type);
		if (!err && (it->flags & CUS_F_ANNOT))
			err = copy_annots(xt, cu, it->annot_first, it->annot_count, &d.annot_first);
		xt->items[xt->nitems++] = d;
	}
	if (err)
		return err;
	xt->vals[entry].body = (uint32_t)xt->nrecs + 1;
	xt->recs[xt->nrecs++] = b;
	return xt->strs.err;
}

/* The parameters of the CU's function record k (entry `entry`): the param
 * records that follow it. */
static int copy_params(struct collect *c, uint32_t k, uint32_t entry)
{
	struct xtargets *xt = c->xt;
	const struct cus_cu *cu = c->cu;
	uint32_t n = cu->recs[k].item_count;
	if (vec_grow(&xt->params, &xt->cap_params, xt->nparams + n))
		return -ENOMEM;
	uint32_t first = (uint32_t)xt->nparams;
	int err = 0;
	for (uint32_t i = 0; i < n && !err && k + 1 + i < cu->nrecs; i++) {
		const struct cus_rec *p = &cu->recs[k + 1 + i];
		struct xparam *xp = &xt->params[xt->nparams++];
		*xp = (struct xparam){ .name_at = xt_str(xt, cu, p->name) };
		cus_ref type = 0;
		err = xt_ref(c, p->type, &type);
		xt->params[first + i].type = type;
		if (!err && (p->flags & CUS_F_ANNOT)) {
			uint32_t af = 0;
			err = copy_annots(xt, cu, p->annot_first, p->annot_count, &af);
			xt->params[first + i].annot_first = af;
			xt->params[first + i].annot_count = p->annot_count;
		}
	}
	xt->vals[entry].param_first = first;
	xt->vals[entry].nparams = (uint32_t)xt->nparams - first;
	return err;
}

int xtargets__collect(const struct cus_file *f, const struct offset_set *wanted, const uint64_t *cu_base,
		     struct xtargets *xt, struct diag *d)
{
	memset(xt, 0, sizeof(*xt));
	if (!wanted->map.count)
		return 0;
	buf_u8(&xt->strs, 0); /* name_at 0: no name */
	struct cus_cu cu = { 0 };
	struct collect c = { .xt = xt, .cu = &cu };
	int err = 0;
	for (size_t i = 0; i < f->count && !err; i++) {
		err = cus_file__decode(f, i, &cu, d);
		c.gid0 = cu_base[i];
		c.nwork = 0;
		for (uint32_t k = 0; !err && k < cu.nrecs; k++)
			if (offset_set__has(wanted, cu.cu_offset + cu.recs[k].die)) {
				int64_t e = collect_rec(&c, k);
				err = e < 0 ? (int)e : 0;
				if (!err && cu.recs[k].kind == CUS_FUNC && cu.recs[k].item_count)
					err = copy_params(&c, k, (uint32_t)e);
			}
		/* The bodies, and the records they inline, as they are found. */
		for (size_t w = 0; w < c.nwork && !err; w++)
			err = copy_body(&c, c.work[w].rec, c.work[w].entry);
	}
	free(c.work);
	cus_cu__free(&cu);
	return err ? err : xt->strs.err;
}

/* ---- importing into a CU ------------------------------------------------ */

void import_scratch__free(struct import_scratch *s)
{
	free(s->stamp);
	free(s->local);
	free(s->queue);
	memset(s, 0, sizeof(*s));
}

void cu_imports__free(struct cu_imports *im)
{
	free(im->ext_local);
	free(im->gid);
	buf_free(&im->str);
	memset(im, 0, sizeof(*im));
}

/* The local index of entry i, queued for copying when new. */
static int import_entry(struct import_scratch *s, uint32_t i, uint32_t first, uint32_t *local)
{
	if (s->stamp[i] == s->epoch) {
		*local = s->local[i];
		return 0;
	}
	if (vec_grow(&s->queue, &s->cap_queue, s->nqueue + 1))
		return -ENOMEM;
	s->stamp[i] = s->epoch;
	*local = s->local[i] = first + (uint32_t)s->nqueue;
	s->queue[s->nqueue++] = i;
	return 0;
}

static int import_ref(struct import_scratch *s, const struct xtargets *xt, cus_ref ref, uint32_t first,
		      cus_ref *out, const char *what, struct diag *d)
{
	*out = 0;
	if (!ref)
		return 0;
	uint32_t i = cus_ref_index(ref), local = 0;
	if (!xt->vals[i].kind)
		return diag_fail(d, EBADMSG, "%s: a type it refers to in another CU refers to DIE 0x%llx, "
				 "but no CU of the file has a record there", what,
				 (unsigned long long)xt->vals[i].off);
	int err = import_entry(s, i, first, &local);
	*out = cus_ref_local(local);
	return err;
}

static uint32_t import_str(struct cu_imports *im, const struct xtargets *xt, uint32_t at)
{
	if (!at)
		return 0;
	const char *s = (const char *)xt->strs.data + at;
	uint32_t ref = (uint32_t)im->str.len;
	buf_put(&im->str, s, strlen(s) + 1);
	return ref;
}

static int import_annots(struct cus_cu *cu, struct cu_imports *im, const struct xtargets *xt,
			 uint32_t first, uint32_t count, uint32_t *ofirst)
{
	*ofirst = (uint32_t)cu->nannots;
	if (vec_grow(&cu->annots, &cu->cap_annots, cu->nannots + count))
		return -ENOMEM;
	for (uint32_t a = 0; a < count; a++) {
		const struct cus_annot *sa = &xt->annots[first + a];
		cu->annots[cu->nannots++] = (struct cus_annot){ import_str(im, xt, sa->name),
								 import_str(im, xt, sa->value) };
	}
	return 0;
}

/* Entry i as the CU's record at cu->nrecs: its body, or a stub. */
static int import_one(struct cus_cu *cu, struct cu_imports *im, struct import_scratch *s,
		      const struct xtargets *xt, uint32_t i, uint32_t first, const char *what, struct diag *d)
{
	const struct xtarget *t = &xt->vals[i];
	if (vec_grow(&cu->recs, &cu->cap_recs, cu->nrecs + 1))
		return -ENOMEM;
	struct cus_rec *r = &cu->recs[cu->nrecs];
	int err = 0;
	if (!t->body) {
		*r = (struct cus_rec){ .kind = t->kind, .die = t->off, .name = import_str(im, xt, t->name_at) };
	} else {
		const struct cus_rec *b = &xt->recs[t->body - 1];
		*r = *b;
		r->name = import_str(im, xt, b->name);
		r->item_first = (uint32_t)cu->nitems;
		err = import_ref(s, xt, b->type, first, &r->type, what, d);
		if (!err && (b->flags & CUS_F_ANNOT))
			err = import_annots(cu, im, xt, b->annot_first, b->annot_count, &r->annot_first);
		if (!err && vec_grow(&cu->items, &cu->cap_items, cu->nitems + b->item_count))
			err = -ENOMEM;
		for (uint32_t k = 0; k < b->item_count && !err; k++) {
			struct cus_item it = xt->items[b->item_first + k];
			it.name = import_str(im, xt, it.name);
			err = import_ref(s, xt, it.type, first, &it.type, what, d);
			if (!err && (it.flags & CUS_F_ANNOT))
				err = import_annots(cu, im, xt, it.annot_first, it.annot_count, &it.annot_first);
			cu->items[cu->nitems++] = it;
		}
	}
	im->gid[cu->nrecs - first] = t->gid;
	cu->nrecs++;
	return err;
}

int imports__apply(struct cus_cu *cu, const struct xtargets *xt, struct import_scratch *s,
		  struct cu_imports *im, const char *what, struct diag *d)
{
	memset(im, 0, sizeof(*im));
	im->first = (uint32_t)cu->nrecs;
	if (!cu->nexterns || !xt->n)
		return 0;
	if (s->cap < xt->n) {
		free(s->stamp);
		free(s->local);
		s->stamp = calloc(xt->n, sizeof(*s->stamp));
		s->local = malloc(xt->n * sizeof(*s->local));
		s->cap = xt->n;
		s->epoch = 0;
		if (!s->stamp || !s->local)
			return -ENOMEM;
	}
	if (++s->epoch == 0) { /* wrapped: every stamp is stale again */
		memset(s->stamp, 0, s->cap * sizeof(*s->stamp));
		s->epoch = 1;
	}
	s->nqueue = 0;
	if (!(im->ext_local = malloc(cu->nexterns * sizeof(*im->ext_local))))
		return -ENOMEM;
	int err = 0;
	for (size_t e = 0; e < cu->nexterns && !err; e++) {
		const struct xtarget *t = xtargets__get(xt, cu->externs[e]);
		im->ext_local[e] = NO_CLASS;
		if (t && t->body)
			err = import_entry(s, (uint32_t)(t - xt->vals), im->first, &im->ext_local[e]);
	}
	if (err || !s->nqueue)
		return err;
	/* The imports' strings after the CU's own: string refs stay offsets
	 * into one table, as key_of() reads them. */
	buf_put(&im->str, cu->str, cu->str_size);
	size_t cap_gid = 0;
	for (size_t q = 0; q < s->nqueue && !err; q++) {
		if (vec_grow(&im->gid, &cap_gid, q + 1))
			return -ENOMEM;
		err = import_one(cu, im, s, xt, s->queue[q], im->first, what, d);
	}
	buf_u8(&im->str, 0); /* the table ends in a NUL, as a decoded one does */
	if (err || (err = im->str.err))
		return err;
	im->count = (uint32_t)s->nqueue;
	cu->str = (const char *)im->str.data;
	cu->str_size = im->str.len;
	return 0;
}
