/* die_reader.h: a unit's DIEs read from .debug_info's bytes (die_reader.c). */
#ifndef BTFPIPE_EXTRACT_DIE_READER_H
#define BTFPIPE_EXTRACT_DIE_READER_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>
#include "abbrev.h"
#include "input.h"
#include "../../common/buf.h"

/* A unit's DIEs read from .debug_info's bytes, for the hot
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
 * attribute attr_bits__of() knows (the others are all no-ops of cb), with
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

#endif
