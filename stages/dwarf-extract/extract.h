/* extract.h: dwarf-extract's internals, shared by its own files only.
 *
 * The flow (main.c): input__open() maps the ELF and lists its units;
 * pool_ordered() runs cu_walk__extract() for each unit on a worker's own
 * Dwarf handle and hands the blobs, in unit order, to the .cus writer; the
 * same pool hashes the DWARF's pieces (dwarf_hash.c), each unit's by its
 * walker and the rest as items after the units, for the identity block
 * the writer gets last.
 *   input.c       the ELF: handles, sections, identity, the unit list
 *   dwarf_hash.c  the identity's DWARF hash, hashed in pieces by the workers
 *   abbrev.c      a unit's abbreviation table, from .debug_abbrev's bytes
 *   die_reader.c  tags, children, siblings and attribute values read from
 *                 .debug_info's bytes (libdw for what it does not know)
 *   die_attrs.c   one pass over a DIE's attributes into struct die_attrs
 *   die_record.c  where a DWARF tag becomes a record
 *   cu_walk.c     the walk over one CU, references, records made on demand
 */
#ifndef BTFPIPE_EXTRACT_H
#define BTFPIPE_EXTRACT_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdint.h>

#include "../../common/buf.h"
#include "../../common/cachedir.h"
#include "../../common/offmap.h"
#include "../../common/cli.h"
#include "../../format/cus.h"

struct diag;
struct strtab;

struct extract_opts {
	const char *input;
	struct cli_common cli;	/* -j (workers: input__open()), -o, --stats, -q, ... */
	const char *dump;	/* --dump FILE.cus: print it and stop */
	struct cachedir_cli cache; /* --cache and friends (common/cachedir.h) */
	int cache_verify;	/* --cache-verify or $BTFPIPE_CACHE_VERIFY */
	int libdw_only;		/* --libdw-only: no DIE reader (die_reader.c), libdwfl relocates */
};

struct section {
	uint64_t addr, size;
	uint32_t index;
};

struct unit {
	uint64_t offset;	/* the unit header's offset in .debug_info */
	uint64_t end;		/* the next unit's offset */
	uint8_t unit_type, version;
};

/* A unit header's initial length (DWARF 5 section 7.4) from its first got
 * bytes at h, big-endian when big: *lsize is the field's own size (4, or
 * 12 in 64-bit DWARF) and *len what follows it. Returns -1 when got is
 * shorter than the field or the value is a reserved one. Shared by the
 * unit list (input.c) and the DWARF hash's pieces (dwarf_hash.c), which
 * must cut .debug_info at the same places. */
static inline int unit_initial_length(const uint8_t *h, size_t got, int big, uint64_t *len, size_t *lsize)
{
	if (got < 4)
		return -1;
	uint32_t l32 = big ? (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3]
			   : le32_get(h);
	if (l32 < 0xfffffff0u) {
		*len = l32;
		*lsize = 4;
		return 0;
	}
	if (l32 != 0xffffffffu || got < 12)
		return -1;
	uint64_t l64 = 0;
	for (int i = 0; i < 8; i++)
		l64 |= (uint64_t)h[4 + i] << (8 * (big ? 7 - i : i));
	*len = l64;
	*lsize = 12;
	return 0;
}

/* A DWARF section's bytes as libdw reads them (relocated for ET_REL,
 * decompressed), for the readers that do not go through libdw (cu_key.c). */
struct dwsec {
	const uint8_t *p;
	size_t n;
};
enum { DWS_INFO, DWS_ABBREV, DWS_STR, DWS_LINE_STR, DWS_STR_OFF, DWS_LOCLISTS, DWS_LOC, DWS_N };

struct input;
/* dwarf_hash.c: the identity block's DWARF hash (format/CU-RECORDS.md),
 * made of pieces hashed anywhere. dwarf_hash__sections() lists the
 * .debug_* sections before libdw decompresses or relocates anything;
 * dwarf_hash__plan() cuts them into pieces once the units are listed; each
 * piece is then hashed by dwarf_hash__piece() or, for .debug_info's units
 * when units_by_walkers, by the worker that walked the unit
 * (dwarf_hash__unit()); dwarf_hash__digest() gives the value. All owned by
 * struct dwarf_hash; section names point into the input's section name
 * table, which outlives it. */
struct dh_section {
	const char *name;
	uint64_t size;
	uint64_t file_off;	/* where its bytes are in the file (read with pread()), */
	const uint8_t *mem;	/* or, when not NULL, in memory (hashed at once) */
	size_t first;		/* its pieces: pieces[first .. first + npieces) */
	uint32_t npieces;
	uint8_t by_units;	/* an uncompressed .debug_info: cut at its units */
};
struct dh_piece {
	uint32_t sec;
	uint64_t at, size;	/* in the section */
	struct key128 h;
};
struct dwarf_hash {
	struct dh_section *secs;
	size_t nsecs;
	struct dh_piece *pieces;
	size_t npieces, cap_pieces;
	size_t nby_units;	/* sections cut at units (one, but for odd files) */
	size_t *todo;		/* the pieces for dwarf_hash__piece(), in plan order */
	size_t ntodo;
	int units_by_walkers;	/* .debug_info's piece first + k is in->units[k], */
	size_t info_first;	/* hashed by its walker from in->info_map */
	uint32_t info_sec;
};
int dwarf_hash__sections(struct dwarf_hash *h, const struct input *in, struct diag *d);
/* by_walkers: the workers may hash the units (when the hash is not needed
 * before them). Returns 0 or -errno (detail in d). */
int dwarf_hash__plan(struct dwarf_hash *h, const struct input *in, int by_walkers, struct diag *d);
/* Piece i from its bytes, read through buf (bufsize bytes at a time; buf
 * may be NULL for a section in memory). */
int dwarf_hash__piece(struct dwarf_hash *h, const struct input *in, size_t i, uint8_t *buf, size_t bufsize,
		      struct diag *d);
/* Unit `unit`'s piece, from its bytes (units_by_walkers only). */
void dwarf_hash__unit(struct dwarf_hash *h, size_t unit, const uint8_t *bytes);
struct key128 dwarf_hash__digest(const struct dwarf_hash *h);
void dwarf_hash__free(struct dwarf_hash *h);

struct input {
	const char *path;
	int fd;
	Elf *file_elf;		/* the file as it is on disk (identity, sections) */
	Elf *elf;		/* what the Dwarf handles read: file_elf, or for ET_REL
				 * the relocated copy: rel_elf, or libdwfl's (owned by dwfl) */
	Dwfl *dwfl;		/* ET_REL only: applies the relocations */
	Elf *rel_elf;		/* ET_REL relocated by reloc.c instead (owned), or NULL */
	unsigned reloc_threads;	/* (then) the threads its relocation ran on */
	int is_rel;
	Dwarf **dw;		/* one Dwarf handle per worker */
	Dwarf **alt;		/* each handle's dwz alternate file, or NULL */
	int alt_fd;
	Elf *alt_elf;		/* the alternate file, shared by the alt handles */
	unsigned ndw;
	struct section *secs;	/* SHF_ALLOC sections, sorted by address */
	size_t nsecs;
	struct unit *units;
	size_t nunits;
	struct cus_ident ident;
	struct dwarf_hash dh;	/* its DWARF hash's sections, listed by input__open() */
	/* .debug_info's bytes inside the file's own mapping (NULL when they are
	 * a private copy: relocated, decompressed): finished units' pages can be
	 * dropped from RSS there, since the page cache gives them back. */
	const uint8_t *info_map;
	size_t info_size;
	size_t info_dropped;	/* [0, info_dropped) of it is dropped (input__done_with_unit()) */
	/* elf_rawfile() of the file is a read-only mapping of it (checked once,
	 * in identify()): only then may its pages be dropped. */
	int raw_is_file_map;
	/* The DWARF sections by kind; dws_ok is 0 when one could not be read
	 * plainly (still compressed, big-endian input): no CU is then cached. */
	struct dwsec dws[DWS_N];
	int dws_ok;
};

/* reloc.c: open fd privately mapped with its .debug_* sections relocated
 * and its SHF_ALLOC sections given addresses, exactly as libdwfl would (an
 * x86-64 ELF64 LSB relocatable file with RELA only, defined symbols only,
 * the simple relocation types), on up to `threads` threads (*used: how
 * many it ran on, for --stats). Returns 1 with *out (the caller's to
 * elf_end()), 0 when the file is not such a file (libdwfl then relocates
 * it), or -ENOMEM / -EAGAIN. */
int reloc_open(int fd, unsigned threads, Elf **out, unsigned *used);

/* Unit u is written: let its .debug_info pages go (see info_map), with
 * those of the units before it, a batch at a time. Called in unit order. */
void input__done_with_unit(struct input *in, const struct unit *u);

/* libdw_only: relocate through libdwfl even where reloc.c could. Opens
 * one Dwarf handle per worker (in->ndw): `workers`, or fewer when
 * info_per_worker is not 0 and .debug_info is small (pool_threads_for()). */
#define INFO_PER_WORKER (512u << 10)
int input__open(struct input *in, const char *path, unsigned workers, uint64_t info_per_worker,
		int libdw_only, struct diag *d);
void input__close(struct input *in);
/* The section holding addr, and addr made section-relative for ET_REL.
 * Returns the ELF section index, 0 when no allocated section holds it. */
uint32_t input__section_of(const struct input *in, uint64_t *addr);

/* abbrev.c: one unit's abbreviation table. */
struct abbrev_spec {
	uint32_t attr, form;
	int64_t implicit;	/* DW_FORM_implicit_const's value */
};
struct abbrev_decl {
	uint32_t tag;
	uint32_t first, n;	/* its specs: specs[first .. first + n) */
	uint8_t children, defined;
};
struct abbrev_table {
	struct abbrev_decl *decls;	/* by code; a code not in the table has defined 0 */
	size_t ndecls, cap_decls;
	struct abbrev_spec *specs;
	size_t nspecs, cap_specs;
	size_t len;			/* the table's length in .debug_abbrev */
};
/* Read the table at off (replacing what t held). Returns: 0, -EBADMSG
 * (malformed), -ENOTSUP (a code too large to index), -ENOMEM. */
int abbrev_table__read(struct abbrev_table *t, const struct dwsec *ab, uint64_t off);
void abbrev_table__free(struct abbrev_table *t);

/* die_reader.c: a unit's DIEs read from .debug_info's bytes, for the hot
 * path of the walk: libdw looks each DIE's abbreviation up in a shared,
 * locked hash and computes every attribute's size by a call, which was half
 * the extraction. The reader is on only for units it fully understands
 * (32-bit DWARF 4 or 5, little-endian, the bytes libdw reads); anywhere else,
 * and for any DIE or value it does not know, each function below does
 * exactly what the libdw call it replaces does, by calling it. The Dwarf_Die
 * values it makes are libdw's too (address and unit set), so libdw functions
 * work on them. */
struct die_reader {
	int on;
	struct Dwarf_CU *cu;	/* libdw's unit: the DIEs and attributes made here carry it */
	const uint8_t *start, *end; /* the unit's bytes, header included */
	uint64_t unit_off;
	uint8_t addr_size;
	const struct dwsec *s;	/* the input's sections (struct input.dws) */
	int str_ok, line_str_ok; /* the string section ends in a NUL */
	struct abbrev_table ab;
	uint8_t *spec_len;	/* per spec: its value's fixed size, or SPEC_VAR */
	uint8_t *spec_want;	/* per spec: die_attrs__wanted() */
	struct rd_decl *dd;	/* per code (die_reader.c) */
	struct rd_want *wants;	/* (die_reader.c) */
	size_t nwants;
	size_t cap_spec_len, cap_spec_want, cap_dd, cap_wants;
};
/* Set r up for the unit at unit_off (its CU DIE cudie, from libdw). */
void die_reader__begin(struct die_reader *r, const struct input *in, Dwarf_Die *cudie,
		       uint64_t unit_off, uint64_t unit_end, unsigned version, unsigned addr_size,
		       unsigned off_size, uint64_t abbrev_off);
void die_reader__free(struct die_reader *r);
/* dwarf_getattrs(die, cb, arg, 0) over the DIE's bytes: cb sees every
 * attribute die_attrs__bit() knows (the others are all no-ops of cb), with
 * that bit, as a Dwarf_Attribute whose valp points at its value, except
 * that a DW_FORM_implicit_const value is at (const int64_t *)valp.
 * Returns: 1 done (cb may have aborted), 0 not read here: the caller asks
 * libdw (cb may have seen some attributes already). */
int die_reader__attrs(const struct die_reader *r, Dwarf_Die *die,
		      int (*cb)(Dwarf_Attribute *, int bit, void *), void *arg);
/* A Dwarf_Die's padding__ is never read or written by libdw (it zeroes it
 * in every DIE it makes): the reader keeps the DIE's decoded abbreviation
 * there, code << 4 | the code's length in bytes, so that asking a DIE for
 * its tag, attributes, child and sibling decodes it once. This is that
 * abbreviation when the reader made the DIE, else NULL. Inline, as are the
 * fast paths below: a walk asks each DIE two to four questions, and
 * die_tag(), die_first_child() and die_next() were 18% of kvm.ko's
 * extraction instructions, much of it the calls themselves. */
static inline const struct abbrev_decl *die_known(const struct die_reader *r, const Dwarf_Die *die)
{
	return r->on && die->cu == r->cu && die->padding__ > 0 ? &r->ab.decls[(uint64_t)die->padding__ >> 4]
								: NULL;
}
int die_tag_slow(const struct die_reader *r, Dwarf_Die *die);
int die_first_child_slow(const struct die_reader *r, Dwarf_Die *die, Dwarf_Die *child);
/* dwarf_tag() */
static inline int die_tag(const struct die_reader *r, Dwarf_Die *die)
{
	const struct abbrev_decl *d = die_known(r, die);
	return d ? (int)d->tag : die_tag_slow(r, die);
}
/* dwarf_haschildren() && dwarf_child() == 0: 1 with *child set, else 0. */
static inline int die_first_child(const struct die_reader *r, Dwarf_Die *die, Dwarf_Die *child)
{
	const struct abbrev_decl *d = die_known(r, die);
	return d && !d->children ? 0 : die_first_child_slow(r, die, child);
}
/* dwarf_siblingof(die, die) == 0: 1 with *die moved to its next sibling. */
int die_next(const struct die_reader *r, Dwarf_Die *die);
/* A CU-local reference's value (ref1/2/4/8/udata at v, the unit ending at
 * end), as libdw's __libdw_formref reads it. Returns 0 for any other form,
 * or a ref_udata that does not decode. Inline: every type reference of
 * every DIE comes through here. */
static inline int die_local_ref(unsigned form, const uint8_t *v, const uint8_t *end, uint64_t *out)
{
	switch (form) {
	case DW_FORM_ref1: *out = v[0]; return 1;
	case DW_FORM_ref2: *out = le16_get(v); return 1;
	case DW_FORM_ref4: *out = le32_get(v); return 1;
	case DW_FORM_ref8: *out = le64_get(v); return 1;
	case DW_FORM_ref_udata: {
		struct cursor c;
		cursor_init(&c, v, (size_t)(end - v));
		*out = cur_uleb(&c);
		return !c.err;
	}
	}
	return 0;
}

/* Every attribute dwarf-extract reads, from one pass over a DIE. */
int die_attrs__bit(unsigned attr);	/* its ATTR_* bit, or -1: not one of them */
struct die_attrs {
	uint64_t present;	/* bit (1 << ATTR_x) per attribute found */
	const char *name, *linkage_name, *const_str;
	uint64_t type, origin, spec; /* referenced DIEs: global offsets */
	uint64_t byte_size, bit_size, data_bit_offset, bit_offset, member_loc;
	uint64_t encoding, inline_kind, cc, alignment, count, lower, upper;
	int upper_is_signed, upper_unknown, count_unknown, member_loc_unknown;
	Dwarf_Attribute location, const_value;
};

enum {
	ATTR_NAME, ATTR_TYPE, ATTR_BYTE_SIZE, ATTR_BIT_SIZE, ATTR_DATA_BIT_OFFSET,
	ATTR_BIT_OFFSET, ATTR_MEMBER_LOC, ATTR_ENCODING, ATTR_DECLARATION,
	ATTR_EXTERNAL, ATTR_ARTIFICIAL, ATTR_PROTOTYPED, ATTR_INLINE, ATTR_CC,
	ATTR_ORIGIN, ATTR_SPEC, ATTR_LOW_PC, ATTR_ENTRY_PC, ATTR_RANGES,
	ATTR_LOCATION, ATTR_CONST_VALUE, ATTR_LINKAGE_NAME, ATTR_ALIGNMENT,
	ATTR_COUNT, ATTR_LOWER, ATTR_UPPER,
};

#define HAS(a, x) (((a)->present >> ATTR_##x) & 1)

/* Returns: 0, or -EBADMSG with the DIE named in d. References are read as
 * global DIE offsets of main_dw's file, with CUS_ALT_BIT for a DIE of the
 * dwz alternate file. r reads the DIE when it can (NULL: libdw only). */
int die_attrs__read(const struct die_reader *r, Dwarf_Die *die, Dwarf *main_dw, struct die_attrs *a,
		    struct diag *d);
/* A DIE's global offset, CUS_ALT_BIT set when it lives in the alternate file. */
uint64_t die_gid(Dwarf *main_dw, Dwarf_Die *die);

/* cu_key.c: a CU's relink-stable content key (format/CU-CACHE.md). */
enum cu_key_kind {
	KEY_NONE,	/* not cacheable: extract it as always */
	KEY_OK,		/* the key depends on this CU alone */
	KEY_WHOLE,	/* its records may read other units: the caller adds the input's hash */
};
struct cu_key;
struct cu_key *cu_key__new(const struct dwsec *s);
void cu_key__free(struct cu_key *k);
enum cu_key_kind cu_key__compute(struct cu_key *k, const struct unit *u, struct key128 *out);

/* Per-worker state for walking a CU; reused from CU to CU. */
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
	/* .debug_str offset + 1 -> the string's offset in strs (cu_recs__str):
	 * open addressing, key 0 = empty, key and value side by side. */
	struct str_slot { uint32_t key, val; } *str_map;
	size_t str_cap, str_count;
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

/* cached.c: one unit through the extracted-CU cache (format/CU-CACHE.md). */
struct cachedir;
struct cache_patch;
struct cached {
	struct cachedir *cache;	/* kind "cu-v1" */
	const struct input *in;
	struct key128 salt;	/* this binary and the input's ELF facts */
	int verify;		/* --cache-verify: extract hits too and compare */
};
/* A worker's scratch for cached__unit(), reused from unit to unit. */
struct cached_worker {
	struct cu_key *key;
	struct buf norm, check;
	struct cache_patch *patches;
	size_t cap_patches;
};
int cached__init(struct cached *c, struct cachedir *cache, const struct input *in, int verify);
void cached_worker__free(struct cached_worker *cw);
/* Unit u into w->blob, from the cache or extracted (and then stored).
 * Returns: 0 or -errno (detail in w->d). */
int cached__unit(const struct cached *c, struct cached_worker *cw, struct cu_walk *w,
		 const struct unit *u, uint16_t *language, size_t *nrecs);

#endif
