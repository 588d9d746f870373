/* cu_walk.h: one CU extracted into a blob, by a worker's walker (cu_walk.c, die_record.c, cu_recs.c). */
#ifndef BTFPIPE_EXTRACT_CU_WALK_H
#define BTFPIPE_EXTRACT_CU_WALK_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>
#include "die_reader.h"
#include "input.h"
#include "../../common/buf.h"
#include "../../common/offmap.h"
#include "../../format/cus.h"

struct diag;
struct strtab;

/* Per-worker state for walking a CU; reused from CU to CU. The walker owns
 * everything it points to but in, dw and alt (the input's), until
 * cu_walk__free(). */
struct cu_walk {
	const struct input *in;
	Dwarf *dw;
	Dwarf *alt;		/* the dwz alternate file, or NULL */
	struct diag *d;
	uint64_t unit_off, unit_end;	/* this CU's range in .debug_info */
	uint64_t first_die;		/* the CU DIE: nothing before it is a DIE */
	struct die_reader rd;		/* this CU's DIEs, read from their bytes */
	int libdw_only;			/* rd stays off: every DIE through libdw */
	uint64_t reader_units;		/* units this walker read with rd on (--stats) */
	struct cus_cu cu;
	struct strtab *strs;
	/* References are collected as global DIE offsets (slots) while walking
	 * and resolved to record indexes or externs once the walk is done. */
	uint64_t *slots;
	size_t nslots, cap_slots;
	/* DIE offset -> record index (u32), for this CU. */
	struct offmap recs_at;
	/* extern offset -> extern index (u32). */
	struct offmap exts;
	/* .debug_str offset + 1 -> the string's offset in strs (u32; cu_recs__str()). */
	struct offmap str_at;
	/* A record's own annotations, held until its items are done, so that
	 * each record's and each item's annotations stay contiguous. */
	struct cus_annot *pend_annots;
	size_t npend_annots, cap_pend_annots;
	struct buf blob;
	/* Records whose address fields were read (funcs with a pc attribute,
	 * vars with a static address): the cache re-reads these on a hit. */
	uint32_t *patch_recs;
	size_t npatch_recs, cap_patch_recs;
	/* Per record, where its address field is in blob (cus_cu__encode_at). */
	uint32_t *addr_pos;
	size_t cap_addr_pos;
	/* Where blob's address pairs are, in blob order, however blob was
	 * made (extracted, or spliced from a cache entry): the .cus index's
	 * content and address table are read from there (cus_blob__content). */
	uint32_t *addr_at;
	size_t naddr, cap_addr_at;
};

int cu_walk__init(struct cu_walk *w, const struct input *in, Dwarf *dw, struct diag *d);
void cu_walk__free(struct cu_walk *w);
/* Extract unit u into w->blob. Returns: 0 or a negative errno (detail in d). */
int cu_walk__extract(struct cu_walk *w, const struct unit *u);

/* die_record.c: the records for one DIE (and, for a func, its params).
 * `toplevel` says the DIE is a child of the CU. Returns: 0 or -errno. */
int die_record__add(struct cu_walk *w, Dwarf_Die *die, int toplevel);
/* The address a func (its pc) or var (its static address) record of the DIE
 * at die_off has, read again as die_record__add() read it, with its section.
 * Returns 1 with *addr and *shndx set, 0 when it has none, or -errno. */
int die_record__addr(struct cu_walk *w, uint64_t die_off, uint8_t kind, uint64_t *addr,
		     uint32_t *shndx);

/* cu_recs.c: the CU's records as die_record.c makes them, in the walk's
 * state (the services die_record.c uses; cu_walk.c drives both). */
int cu_recs__ref(struct cu_walk *w, uint64_t die_off, cus_ref *out); /* 0 -> 0 */
int cu_recs__str(struct cu_walk *w, const char *s, uint32_t *out);
int cu_recs__new_rec(struct cu_walk *w, Dwarf_Die *die, uint8_t kind, uint32_t *idx);
int cu_recs__new_item(struct cu_walk *w, uint32_t *idx);
/* Note that record idx read address fields (see patch_recs). */
int cu_recs__patch(struct cu_walk *w, uint32_t idx);
/* Resolve a DIE offset to its DWARF tag and attributes in this walk's handle. */
int cu_recs__offdie(struct cu_walk *w, uint64_t off, Dwarf_Die *out);
/* Empty the record and string maps for the next CU. */
void cu_recs__clear(struct cu_walk *w);

#endif
