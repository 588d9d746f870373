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
#include "extract.h"
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
	w->strs = strtab__new();
	return w->strs ? 0 : -ENOMEM;
}

void cu_walk__free(struct cu_walk *w)
{
	cus_cu__free(&w->cu);
	die_reader__free(&w->rd);
	strtab__free(w->strs);
	free(w->slots);
	free(w->map_keys);
	free(w->map_vals);
	free(w->ext_keys);
	free(w->ext_vals);
	free(w->str_map);
	free(w->pend_annots);
	free(w->patch_recs);
	free(w->addr_pos);
	buf_free(&w->blob);
	memset(w, 0, sizeof(*w));
}

/* ---- offset maps: open addressing, key 0 = empty (no DIE is at 0) ---- */

static int map_find(const uint64_t *keys, size_t cap, uint64_t key, size_t *slot)
{
	*slot = 0;
	if (!cap)
		return 0;
	size_t i = hash_step(0, key) & (cap - 1); /* a multiply: an XXH3 round per DIE cost more */
	while (keys[i] && keys[i] != key)
		i = (i + 1) & (cap - 1);
	*slot = i;
	return keys[i] == key;
}

static int map_grow(uint64_t **keys, uint32_t **vals, size_t *cap, size_t count)
{
	if ((count + 1) * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *cap; i++) {
		if (!(*keys)[i])
			continue;
		size_t s;
		map_find(nk, ncap, (*keys)[i], &s);
		nk[s] = (*keys)[i];
		nv[s] = (*vals)[i];
	}
	free(*keys);
	free(*vals);
	*keys = nk;
	*vals = nv;
	*cap = ncap;
	return 0;
}

/* Empty a map for the next CU. A table grown for the largest CU would cost
 * its whole size to clear after every small one (megabytes per CU on a
 * vmlinux), so a table that was mostly empty is dropped and regrown on
 * demand instead: clearing stays proportional to what the CU used. */
static void map_clear(uint64_t **keys, uint32_t **vals, size_t *cap, size_t used)
{
	if (*cap && used * 8 < *cap) {
		free(*keys);
		free(*vals);
		*keys = NULL;
		*vals = NULL;
		*cap = 0;
	} else if (*cap) {
		memset(*keys, 0, *cap * sizeof(**keys));
	}
}

/* ---- services for die_record.c ---- */

/* Where str_map's probe for key starts (mask: the capacity - 1). */
static size_t str_home(uint32_t key, size_t mask)
{
	return (key * 0x9e3779b1u) & mask;
}

/* Room in str_map for one more key, the load kept below 1/2. */
static int str_map_grow(struct cu_walk *w)
{
	if ((w->str_count + 1) * 2 <= w->str_cap)
		return 0;
	size_t ncap = w->str_cap ? w->str_cap * 2 : 1024;
	struct str_slot *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t j = 0; j < w->str_cap; j++) {
		uint32_t key = w->str_map[j].key;
		if (!key)
			continue;
		size_t i = str_home(key, ncap - 1);
		while (n[i].key)
			i = (i + 1) & (ncap - 1);
		n[i] = w->str_map[j];
	}
	free(w->str_map);
	w->str_map = n;
	w->str_cap = ncap;
	return 0;
}

/* Empty str_map for the next CU, as map_clear() does its maps. */
static void str_map_clear(struct cu_walk *w)
{
	if (w->str_cap && w->str_count * 8 < w->str_cap) {
		free(w->str_map);
		w->str_map = NULL;
		w->str_cap = 0;
	} else if (w->str_cap) {
		memset(w->str_map, 0, w->str_cap * sizeof(*w->str_map));
	}
	w->str_count = 0;
}

int cu_walk__str(struct cu_walk *w, const char *s, uint32_t *out)
{
	const struct dwsec *sec = &w->in->dws[DWS_STR];
	const char *base = (const char *)sec->p;
	int64_t off;
	/* Compared as addresses: s may point into any buffer, and there may be
	 * no .debug_str at all (base NULL). */
	if (s && w->in->dws_ok && sec->n && sec->n < UINT32_MAX && (uintptr_t)s - (uintptr_t)base < sec->n) {
		/* A string of .debug_str (most names) is the same string wherever
		 * it is met from, so it is interned by its place there: an integer
		 * lookup, where interning by content hashed and compared its bytes
		 * (a fifth of the extraction). A name met again is not even read:
		 * its first byte was a cache miss in .debug_str. The rare equal
		 * string that comes from elsewhere (DW_FORM_string, another
		 * offset) is stored twice; readers go by content, never by ref. */
		if (str_map_grow(w))
			return -ENOMEM;
		uint32_t key = (uint32_t)(s - base) + 1;
		size_t mask = w->str_cap - 1, i = str_home(key, mask);
		for (; w->str_map[i].key; i = (i + 1) & mask)
			if (w->str_map[i].key == key) {
				*out = w->str_map[i].val;
				return 0;
			}
		size_t len = strlen(s);
		off = len ? strtab__append(w->strs, s, len) : 0; /* "" is ref 0, as strtab__add() gives */
		if (off < 0)
			return (int)off;
		w->str_map[i] = (struct str_slot){ key, (uint32_t)off };
		w->str_count++;
		*out = (uint32_t)off;
		return 0;
	}
	off = strtab__add(w->strs, s);
	if (off < 0)
		return (int)off;
	*out = (uint32_t)off;
	return 0;
}

int cu_walk__ref(struct cu_walk *w, uint64_t die_off, cus_ref *out)
{
	if (!die_off) {
		*out = 0;
		return 0;
	}
	if (w->nslots >= UINT32_MAX / 2 || vec_grow(&w->slots, &w->cap_slots, w->nslots + 1))
		return -ENOMEM;
	w->slots[w->nslots++] = die_off;
	*out = (cus_ref)w->nslots; /* provisional: slot + 1, resolved later */
	return 0;
}

int cu_walk__new_rec(struct cu_walk *w, Dwarf_Die *die, uint8_t kind, uint32_t *idx)
{
	struct cus_cu *cu = &w->cu;
	uint64_t off = die_gid(w->dw, die);
	if (cu->nrecs >= UINT32_MAX / 2 - 1 || vec_grow(&cu->recs, &cu->cap_recs, cu->nrecs + 1) ||
	    map_grow(&w->map_keys, &w->map_vals, &w->map_cap, w->map_count))
		return -ENOMEM;
	size_t s;
	if (map_find(w->map_keys, w->map_cap, off, &s))
		return diag_fail(w->d, EBADMSG, "DIE 0x%llx recorded twice (malformed DIE tree)",
				 (unsigned long long)off);
	w->map_keys[s] = off;
	w->map_vals[s] = (uint32_t)cu->nrecs;
	w->map_count++;
	*idx = (uint32_t)cu->nrecs++;
	struct cus_rec *r = &cu->recs[*idx];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->die = off - w->unit_off;
	return 0;
}

int cu_walk__new_item(struct cu_walk *w, uint32_t *idx)
{
	struct cus_cu *cu = &w->cu;
	if (cu->nitems >= UINT32_MAX || vec_grow(&cu->items, &cu->cap_items, cu->nitems + 1))
		return -ENOMEM;
	*idx = (uint32_t)cu->nitems++;
	memset(&cu->items[*idx], 0, sizeof(cu->items[*idx]));
	return 0;
}

int cu_walk__patch(struct cu_walk *w, uint32_t idx)
{
	if (vec_grow(&w->patch_recs, &w->cap_patch_recs, w->npatch_recs + 1))
		return -ENOMEM;
	w->patch_recs[w->npatch_recs++] = idx;
	return 0;
}

int cu_walk__offdie(struct cu_walk *w, uint64_t off, Dwarf_Die *out)
{
	Dwarf *dw = (off & CUS_ALT_BIT) ? w->alt : w->dw;
	if (!dw || !dwarf_offdie(dw, off & ~CUS_ALT_BIT, out))
		return diag_fail(w->d, EBADMSG, "reference to DIE 0x%llx, which does not exist",
				 (unsigned long long)off);
	return 0;
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
	if (map_find(w->map_keys, w->map_cap, off, &s)) {
		*out = cus_ref_local(w->map_vals[s]);
		return 0;
	}
	if (off >= w->unit_off && off < w->unit_end) {
		Dwarf_Die die;
		if (off < w->first_die)
			return diag_fail(w->d, EBADMSG, "a reference to 0x%llx, inside the unit header, not a DIE",
					 (unsigned long long)(off & ~CUS_ALT_BIT));
		int err = cu_walk__offdie(w, off, &die);
		if (!err)
			err = die_record__add(w, &die, 0);
		if (err)
			return err;
		if (!map_find(w->map_keys, w->map_cap, off, &s))
			return diag_fail(w->d, EBADMSG, "DIE 0x%llx: referenced, but made no record",
					 (unsigned long long)off);
		*out = cus_ref_local(w->map_vals[s]);
		return 0;
	}
	/* Another CU's DIE (DW_FORM_ref_addr): symbolic until dedup-merge. */
	struct cus_cu *cu = &w->cu;
	if (map_grow(&w->ext_keys, &w->ext_vals, &w->ext_cap, cu->nexterns))
		return -ENOMEM;
	if (!map_find(w->ext_keys, w->ext_cap, off, &s)) {
		if (vec_grow(&cu->externs, &cu->cap_externs, cu->nexterns + 1))
			return -ENOMEM;
		w->ext_keys[s] = off;
		w->ext_vals[s] = (uint32_t)cu->nexterns;
		cu->externs[cu->nexterns++] = off;
	}
	*out = cus_ref_extern(w->ext_vals[s]);
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
		return diag_fail(w->d, EBADMSG, "unit header unreadable: %s", dwarf_errmsg(-1));
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
	int err = cu_walk__str(w, dwarf_formstring(dwarf_attr(cudie, DW_AT_producer, &at)), &w->cu.producer);
	if (!err)
		err = cu_walk__str(w, dwarf_diename(cudie), &w->cu.name);
	if (!err)
		err = cu_walk__str(w, dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &at)), &w->cu.comp_dir);
	return err;
}

int cu_walk__extract(struct cu_walk *w, const struct unit *u)
{
	Dwarf_Die cudie;
	/* The maps first: their sizes are the previous CU's. */
	map_clear(&w->map_keys, &w->map_vals, &w->map_cap, w->map_count);
	map_clear(&w->ext_keys, &w->ext_vals, &w->ext_cap, w->cu.nexterns);
	str_map_clear(w);
	w->map_count = 0;
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
	}
	if (err)
		diag_prefix(w->d, "CU at 0x%llx: ", (unsigned long long)u->offset);
	return err;
}
