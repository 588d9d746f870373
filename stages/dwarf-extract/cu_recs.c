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

void cu_recs__clear(struct cu_walk *w)
{
	/* Their sizes are the previous CU's. */
	offmap__clear(&w->recs_at);
	offmap__clear(&w->exts);
	offmap__clear(&w->str_at);
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
		if (offmap__reserve(&w->str_at))
			return -ENOMEM;
		uint32_t key = (uint32_t)(s - base) + 1;
		size_t i;
		if (offmap__find(&w->str_at, key, &i)) {
			*out = *(uint32_t *)offmap__val(&w->str_at, i);
			return 0;
		}
		size_t len = strlen(s);
		off = len ? strtab__append(w->strs, s, len) : 0; /* "" is ref 0, as strtab__add() gives */
		if (off < 0)
			return (int)off;
		offmap__put(&w->str_at, i, key);
		*(uint32_t *)offmap__val(&w->str_at, i) = (uint32_t)off;
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
