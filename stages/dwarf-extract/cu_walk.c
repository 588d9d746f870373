/* cu_walk.c: extract one CU into a blob.
 *
 * Three passes over one CU, all on the calling worker's own Dwarf handle:
 *  1. walk: every child of the CU DIE (and of C++ namespaces) becomes a
 *     record through die_record__add(); references are noted as slots
 *     holding the target's global DIE offset.
 *  2. resolve: slot by slot, in order, a target already recorded becomes a
 *     local index; a target inside this CU that the walk skipped (a type
 *     declared in a function, clang's nested anonymous structs) is recorded
 *     now, on demand, which may add slots; a target outside the CU becomes
 *     an extern. The order of slots fixes the order of on-demand records and
 *     externs, so the result does not depend on anything but the DWARF.
 *  3. encode the cus_cu into w->blob.
 */
#include "cu_walk.h"
#include "die_attrs.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/strtab.h"
#include "../../common/vec.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cu_walk__init(struct cu_walk *w, const struct input *in, Dwarf *dw, struct diag *d)
{
	memset(w, 0, sizeof(*w));
	w->in = in;
	w->dw = dw;
	for (unsigned i = 0; i < in->ndw; i++)
		if (in->dw[i] == dw)
			w->alt = in->alt[i];
	w->d = d;
	w->recs_at.val_size = sizeof(uint32_t);
	w->exts.val_size = sizeof(uint32_t);
	w->str_at.val_size = sizeof(uint32_t);
	w->strs = strtab__new();
	return w->strs ? 0 : -ENOMEM;
}

void cu_walk__free(struct cu_walk *w)
{
	cus_cu__free(&w->cu);
	die_reader__free(&w->rd);
	strtab__free(w->strs);
	free(w->slots);
	offmap__free(&w->recs_at);
	offmap__free(&w->exts);
	offmap__free(&w->str_at);
	free(w->pend_annots);
	free(w->patch_recs);
	free(w->addr_pos);
	free(w->addr_at);
	buf_free(&w->blob);
	memset(w, 0, sizeof(*w));
}

/* ---- pass 1: the walk ---- */

static int is_type_tag(int tag)
{
	switch (tag) {
	case DW_TAG_base_type: case DW_TAG_pointer_type: case DW_TAG_const_type:
	case DW_TAG_volatile_type: case DW_TAG_restrict_type: case DW_TAG_atomic_type:
	case DW_TAG_typedef: case DW_TAG_structure_type: case DW_TAG_class_type:
	case DW_TAG_union_type: case DW_TAG_enumeration_type: case DW_TAG_array_type:
	case DW_TAG_subroutine_type: case DW_TAG_unspecified_type:
		return 1;
	}
	return 0;
}

/* Types declared inside a function (a local struct, enum or array type) are
 * types of the program too, and pahole describes them: record every type
 * DIE of the function's body and its lexical blocks. Nothing else of the body
 * (variables, inlined calls, call sites) is read. */
static int walk_body_types(struct cu_walk *w, Dwarf_Die *scope, int depth)
{
	Dwarf_Die c;
	if (!die_first_child(&w->rd, scope, &c))
		return 0;
	do {
		int err = 0, tag = die_tag(&w->rd, &c);
		if (is_type_tag(tag))
			err = die_record__add(w, &c, 0);
		else if (tag == DW_TAG_lexical_block && depth < 256)
			err = walk_body_types(w, &c, depth + 1);
		if (err)
			return err;
	} while (die_next(&w->rd, &c));
	return 0;
}

static int walk_children(struct cu_walk *w, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	if (!die_first_child(&w->rd, parent, &c))
		return 0;
	do {
		int err, tag = die_tag(&w->rd, &c);
		if (tag == DW_TAG_namespace && depth < 64)
			err = walk_children(w, &c, depth + 1);
		else
			err = die_record__add(w, &c, 1);
		/* After the function and its params, so those stay together. */
		if (!err && tag == DW_TAG_subprogram)
			err = walk_body_types(w, &c, 0);
		if (err)
			return err;
	} while (die_next(&w->rd, &c));
	return 0;
}

/* ---- pass 2: references ---- */

static int resolve_slot(struct cu_walk *w, uint64_t off, cus_ref *out)
{
	size_t s;
	if (offmap__find(&w->recs_at, off, &s)) {
		*out = cus_ref_local(*(uint32_t *)offmap__val(&w->recs_at, s));
		return 0;
	}
	if (off >= w->unit_off && off < w->unit_end) {
		Dwarf_Die die;
		if (off < w->first_die)
			return diag_fail(w->d, EBADMSG, "a reference to 0x%llx, inside the unit header, not a DIE",
					 (unsigned long long)(off & ~CUS_ALT_BIT));
		int err = cu_recs__offdie(w, off, &die);
		if (!err)
			err = die_record__add(w, &die, 0);
		if (err)
			return err;
		if (!offmap__find(&w->recs_at, off, &s))
			return diag_fail(w->d, EBADMSG, "DIE 0x%llx: referenced, but made no record",
					 (unsigned long long)off);
		*out = cus_ref_local(*(uint32_t *)offmap__val(&w->recs_at, s));
		return 0;
	}
	/* Another CU's DIE (DW_FORM_ref_addr): symbolic until dedup-merge. */
	struct cus_cu *cu = &w->cu;
	if (offmap__reserve(&w->exts))
		return -ENOMEM;
	if (!offmap__find(&w->exts, off, &s)) {
		if (vec_grow(&cu->externs, &cu->cap_externs, cu->nexterns + 1))
			return -ENOMEM;
		offmap__put(&w->exts, s, off);
		*(uint32_t *)offmap__val(&w->exts, s) = (uint32_t)cu->nexterns;
		cu->externs[cu->nexterns++] = off;
	}
	*out = cus_ref_extern(*(uint32_t *)offmap__val(&w->exts, s));
	return 0;
}

static int resolve_refs(struct cu_walk *w)
{
	/* res[i]: the final ref of slot i. Slots grow while on-demand records
	 * are made, so res is grown alongside. */
	cus_ref *res = NULL;
	size_t cap = 0;
	int err = 0;
	for (size_t i = 0; i < w->nslots && !err; i++) {
		cus_ref r = 0;
		err = resolve_slot(w, w->slots[i], &r);
		if (!err && vec_grow(&res, &cap, i + 1))
			err = -ENOMEM;
		if (!err)
			res[i] = r;
	}
	if (!err) {
		struct cus_cu *cu = &w->cu;
#define FIX(ref) do { if (ref) (ref) = res[(ref) - 1]; } while (0)
		for (size_t i = 0; i < cu->nrecs; i++) {
			FIX(cu->recs[i].type);
			FIX(cu->recs[i].origin);
			FIX(cu->recs[i].spec);
		}
		for (size_t i = 0; i < cu->nitems; i++)
			FIX(cu->items[i].type);
#undef FIX
	}
	free(res);
	return err;
}

/* ---- the whole CU ---- */

static int unit_header(struct cu_walk *w, const struct unit *u, Dwarf_Die *cudie)
{
	Dwarf_Off next;
	size_t hsize;
	Dwarf_Half version;
	uint8_t addr_size, off_size;
	Dwarf_Off abbrev;
	/* The type-signature arguments stay NULL: non-NULL means .debug_types. */
	uint64_t alt = u->offset & CUS_ALT_BIT, off = u->offset & ~CUS_ALT_BIT;
	Dwarf *dw = alt ? w->alt : w->dw;
	if (!dw || dwarf_next_unit(dw, off, &next, &hsize, &version, &abbrev, &addr_size,
				   &off_size, NULL, NULL) != 0 ||
	    !dwarf_offdie(dw, off + hsize, cudie))
		return diag_fail(w->d, diag_lib_errno(dwarf_errmsg(-1), EBADMSG), "unit header unreadable: %s", dwarf_errmsg(-1));
	w->unit_off = u->offset;
	w->unit_end = next | alt;
	if (w->libdw_only)
		w->rd.on = 0;
	else
		die_reader__begin(&w->rd, w->in, cudie, u->offset, next | alt, version, addr_size, off_size,
				  abbrev);
	w->reader_units += w->rd.on;
	w->first_die = (off + hsize) | alt;
	w->cu.cu_offset = u->offset;
	w->cu.unit_type = u->unit_type;
	w->cu.dwarf_version = version;
	w->cu.addr_size = addr_size;
	int lang = dwarf_srclang(cudie);
	w->cu.language = lang > 0 ? (uint32_t)lang : 0;
	Dwarf_Attribute at;
	int err = cu_recs__str(w, dwarf_formstring(dwarf_attr(cudie, DW_AT_producer, &at)), &w->cu.producer);
	if (!err)
		err = cu_recs__str(w, dwarf_diename(cudie), &w->cu.name);
	if (!err)
		err = cu_recs__str(w, dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &at)), &w->cu.comp_dir);
	return err;
}

/* The blob's address pairs in blob order (w->addr_at): the records with
 * one, in record order, where encode_at() put them. */
static int note_addr_at(struct cu_walk *w)
{
	w->naddr = 0;
	for (size_t i = 0; i < w->cu.nrecs; i++) {
		const struct cus_rec *r = &w->cu.recs[i];
		if (!((r->kind == CUS_FUNC && (r->flags & CUS_F_HAS_PC)) ||
		      (r->kind == CUS_VAR && (r->flags & CUS_F_HAS_ADDR))))
			continue;
		if (vec_grow(&w->addr_at, &w->cap_addr_at, w->naddr + 1))
			return -ENOMEM;
		w->addr_at[w->naddr++] = w->addr_pos[i];
	}
	return 0;
}

int cu_walk__extract(struct cu_walk *w, const struct unit *u)
{
	Dwarf_Die cudie;
	cu_recs__clear(w);
	cus_cu__clear(&w->cu);
	strtab__reset(w->strs);
	w->nslots = 0;
	w->npend_annots = 0;
	w->npatch_recs = 0;
	buf_reset(&w->blob);

	int err = unit_header(w, u, &cudie);
	if (!err)
		err = walk_children(w, &cudie, 0);
	if (!err)
		err = resolve_refs(w);
	if (!err) {
		w->cu.str = strtab__data(w->strs);
		w->cu.str_size = strtab__size(w->strs);
		err = vec_grow(&w->addr_pos, &w->cap_addr_pos, w->cu.nrecs + 1);
		if (!err)
			err = cus_cu__encode_at(&w->cu, &w->blob, w->addr_pos);
		if (!err)
			err = note_addr_at(w);
	}
	if (err)
		diag_prefix(w->d, "CU at 0x%llx: ", (unsigned long long)u->offset);
	return err;
}
