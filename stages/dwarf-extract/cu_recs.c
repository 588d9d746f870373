/* cu_recs.c: the CU's records as die_record.c makes them.
 *
 * die_record.c reads a DIE and asks here for a new record or item, a
 * string's offset in the CU's table, a provisional reference to another
 * DIE (resolved by cu_walk.c's second pass), or a note that a record read
 * an address. All of it lives in the walker's state (struct cu_walk), one
 * per worker, emptied for each CU by cu_recs__clear().
 */
#include "cu_walk.h"
#include "die_attrs.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../common/offmap.h"
#include "../../common/strtab.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

void cu_recs__clear(struct cu_walk *w)
{
	/* Their sizes are the previous CU's. */
	offmap__clear(&w->recs_at);
	offmap__clear(&w->exts);
	if (table_drop_on_reset(w->str_count, w->str_cap)) {
		free(w->str_map);
		w->str_map = NULL;
		w->str_cap = 0;
	} else if (w->str_cap) {
		memset(w->str_map, 0, w->str_cap * sizeof(*w->str_map));
	}
	w->str_count = 0;
}

int cu_recs__str(struct cu_walk *w, const char *s, uint32_t *out)
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

int cu_recs__ref(struct cu_walk *w, uint64_t die_off, cus_ref *out)
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

int cu_recs__new_rec(struct cu_walk *w, Dwarf_Die *die, uint8_t kind, uint32_t *idx)
{
	struct cus_cu *cu = &w->cu;
	uint64_t off = die_gid(w->dw, die);
	if (cu->nrecs >= UINT32_MAX / 2 - 1 || vec_grow(&cu->recs, &cu->cap_recs, cu->nrecs + 1) ||
	    offmap__reserve(&w->recs_at))
		return -ENOMEM;
	size_t s;
	if (offmap__find(&w->recs_at, off, &s))
		return diag_fail(w->d, EBADMSG, "DIE 0x%llx recorded twice (malformed DIE tree)",
				 (unsigned long long)off);
	offmap__put(&w->recs_at, s, off);
	*(uint32_t *)offmap__val(&w->recs_at, s) = (uint32_t)cu->nrecs;
	*idx = (uint32_t)cu->nrecs++;
	struct cus_rec *r = &cu->recs[*idx];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->die = off - w->unit_off;
	return 0;
}

int cu_recs__new_item(struct cu_walk *w, uint32_t *idx)
{
	struct cus_cu *cu = &w->cu;
	if (cu->nitems >= UINT32_MAX || vec_grow(&cu->items, &cu->cap_items, cu->nitems + 1))
		return -ENOMEM;
	*idx = (uint32_t)cu->nitems++;
	memset(&cu->items[*idx], 0, sizeof(cu->items[*idx]));
	return 0;
}

int cu_recs__patch(struct cu_walk *w, uint32_t idx)
{
	if (vec_grow(&w->patch_recs, &w->cap_patch_recs, w->npatch_recs + 1))
		return -ENOMEM;
	w->patch_recs[w->npatch_recs++] = idx;
	return 0;
}

int cu_recs__offdie(struct cu_walk *w, uint64_t off, Dwarf_Die *out)
{
	Dwarf *dw = (off & CUS_ALT_BIT) ? w->alt : w->dw;
	if (!dw || !dwarf_offdie(dw, off & ~CUS_ALT_BIT, out))
		return diag_fail(w->d, EBADMSG, "reference to DIE 0x%llx, which does not exist",
				 (unsigned long long)off);
	return 0;
}
