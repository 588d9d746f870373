/* die_reader.c: a unit's DIEs read from .debug_info's bytes (see extract.h).
 *
 * Each function here answers exactly as the libdw call it stands for would
 * (dwarf_tag, dwarf_child, dwarf_siblingof, dwarf_getattrs), from the
 * unit's abbreviation table, and calls that libdw function for anything it
 * does not read itself: a DIE of another unit or file, an abbreviation code
 * not in the table, a form it does not know, a value that runs past the
 * unit. Those cases are rare in real input and are exactly where libdw's
 * own error handling matters, so they stay libdw's.
 *
 * Invariant while r->on: r->start .. r->end are the unit's bytes inside the
 * very buffer libdw reads (checked in die_reader__begin()), so a pointer
 * made here is a valid Dwarf_Die address or attribute value for libdw.
 */
#include "die_reader.h"
#include "attr_bits.h"
#include "../../common/vec.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_VAR 0xff		/* a value whose size is in its bytes */
#define SPEC_UNKNOWN 0xfe	/* a form not read here: the DIE goes to libdw */

/* What the reader keeps per abbreviation code, besides the table. */
struct rd_decl {
	int32_t len;		/* all its values' fixed size, or -1 */
	int32_t sib_at;		/* where DW_AT_sibling's value is (fixed prefix), -1 none, -2 not fixed */
	uint16_t sib_form;
	uint8_t slow;		/* a form not read here: libdw reads its DIEs */
	/* When len >= 0: the wanted values, wants[want_first .. + nwant). */
	uint32_t want_first, nwant;
};

/* A wanted value at a fixed offset from the DIE's first value. */
struct rd_want {
	uint32_t spec;		/* index into ab.specs */
	uint32_t off;
};

/* The size of a form's value, when fixed (32-bit DWARF 4 or 5). */
static uint8_t form_len(unsigned form, unsigned addr_size)
{
	switch (form) {
	case DW_FORM_flag_present: case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strp: case DW_FORM_line_strp:
	case DW_FORM_sec_offset: case DW_FORM_ref_addr: case DW_FORM_strx4: case DW_FORM_addrx4:
	case DW_FORM_ref_sup4: case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
	case DW_FORM_strp_sup:
		return 4;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return (uint8_t)addr_size;
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx:
	case DW_FORM_addrx: case DW_FORM_loclistx: case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index: case DW_FORM_string:
	case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4: case DW_FORM_block:
	case DW_FORM_exprloc:
		return SPEC_VAR;
	}
	return SPEC_UNKNOWN;
}

/* The byte after the value at p, or NULL when it does not fit in the unit
 * (or a LEB128 in it is over 64 bits: libdw decides then). */
static const uint8_t *skip_value(const struct die_reader *r, uint8_t len, unsigned form, const uint8_t *p)
{
	if (len != SPEC_VAR)
		return (size_t)(r->end - p) >= len ? p + len : NULL;
	struct cursor c;
	cursor_init(&c, p, (size_t)(r->end - p));
	uint64_t n;
	switch (form) {
	case DW_FORM_string: {
		const uint8_t *nul = memchr(p, 0, (size_t)(r->end - p));
		return nul ? nul + 1 : NULL;
	}
	case DW_FORM_block1: n = cur_u8(&c); break;
	case DW_FORM_block2: n = cur_le16(&c); break;
	case DW_FORM_block4: n = cur_le32(&c); break;
	case DW_FORM_block: case DW_FORM_exprloc: n = cur_uleb(&c); break;
	default:
		cur_uleb(&c); /* sdata, udata, strx, ...: the LEB128 is the value */
		return c.err ? NULL : c.p;
	}
	return !c.err && n <= cursor_left(&c) ? c.p + n : NULL;
}

/* The DIE's abbreviation (and where its values start), or NULL when this
 * reader does not read it. */
static const struct abbrev_decl *decl_of(const struct die_reader *r, const void *addr,
					 const uint8_t **vals, uint64_t *code)
{
	const uint8_t *p = addr;
	if (p < r->start || p >= r->end)
		return NULL;
	struct cursor cur;
	cursor_init(&cur, p, (size_t)(r->end - p));
	uint64_t c = cur_uleb(&cur);
	p = cur.p;
	if (cur.err)
		return NULL;
	if (c >= r->ab.ndecls || !r->ab.decls[c].defined || r->dd[c].slow)
		return NULL;
	*vals = p;
	*code = c;
	return &r->ab.decls[c];
}

/* Remember the DIE's abbreviation in padding__ (die_known(), extract.h). */
static void die_remember(Dwarf_Die *die, uint64_t code, const uint8_t *vals)
{
	die->padding__ = (long)(code << 4 | (uint64_t)(vals - (const uint8_t *)die->addr));
}

/* The DIE at p of r's unit, as dwarf_child()/dwarf_siblingof() make it,
 * with its abbreviation remembered when the reader knows it. */
static void die_at(const struct die_reader *r, const uint8_t *p, Dwarf_Die *out)
{
	const uint8_t *vals;
	uint64_t code;
	*out = (Dwarf_Die){ .addr = (void *)p, .cu = r->cu };
	if (decl_of(r, p, &vals, &code))
		die_remember(out, code, vals);
}

static const struct abbrev_decl *die_decl(const struct die_reader *r, Dwarf_Die *die,
					  const uint8_t **vals, uint64_t *code)
{
	if (!r || !r->on || die->cu != r->cu)
		return NULL;
	if (die->padding__ > 0) {
		*code = (uint64_t)die->padding__ >> 4;
		*vals = (const uint8_t *)die->addr + (die->padding__ & 15);
		return &r->ab.decls[*code];
	}
	const struct abbrev_decl *d = decl_of(r, die->addr, vals, code);
	if (d)
		die_remember(die, *code, *vals);
	return d;
}

/* The byte after the DIE's last value, or NULL (a value past the unit). */
static const uint8_t *skip_values(const struct die_reader *r, const struct abbrev_decl *d, uint64_t code,
				  const uint8_t *p)
{
	int32_t fixed = r->dd[code].len;
	if (fixed >= 0)
		return (size_t)(r->end - p) >= (size_t)fixed ? p + fixed : NULL;
	const struct abbrev_spec *sp = r->ab.specs + d->first;
	const uint8_t *len = r->spec_len + d->first;
	for (uint32_t i = 0; i < d->n && p; i++)
		p = skip_value(r, len[i], sp[i].form, p);
	return p;
}

void die_reader__free(struct die_reader *r)
{
	abbrev_table__free(&r->ab);
	free(r->spec_len);
	free(r->spec_want);
	free(r->dd);
	free(r->wants);
	memset(r, 0, sizeof(*r));
}

static int section_ends_in_nul(const struct dwsec *s)
{
	return s->n && s->p[s->n - 1] == 0;
}

void die_reader__begin(struct die_reader *r, const struct input *in, Dwarf_Die *cudie,
		       uint64_t unit_off, uint64_t unit_end, unsigned version, unsigned addr_size,
		       unsigned off_size, uint64_t abbrev_off)
{
	r->on = 0;
	if (!in->dws_ok || (unit_off & CUS_ALT_BIT) || off_size != 4 || version < 4 || version > 5)
		return;
	const struct dwsec *info = &in->dws[DWS_INFO];
	Dwarf_Off cu_die = dwarf_dieoffset(cudie);
	/* libdw must be reading these very bytes (not a copy of its own). */
	if (unit_end > info->n || unit_off >= unit_end || cu_die <= unit_off || cu_die >= unit_end ||
	    (const uint8_t *)cudie->addr != info->p + cu_die)
		return;
	if (addr_size != 4 && addr_size != 8)
		return;
	if (abbrev_table__read(&r->ab, &in->dws[DWS_ABBREV], abbrev_off))
		return;
	size_t nd = r->ab.ndecls ? r->ab.ndecls : 1;
	if (vec_grow(&r->spec_len, &r->cap_spec_len, r->ab.nspecs + 1) ||
	    vec_grow(&r->spec_want, &r->cap_spec_want, r->ab.nspecs + 1) ||
	    vec_grow(&r->dd, &r->cap_dd, nd))
		return;
	for (size_t i = 0; i < r->ab.nspecs; i++) {
		r->spec_len[i] = form_len(r->ab.specs[i].form, addr_size);
		r->spec_want[i] = (uint8_t)(attr_bits__of(r->ab.specs[i].attr) + 1);
	}
	r->nwants = 0;
	for (size_t code = 0; code < r->ab.ndecls; code++) {
		const struct abbrev_decl *d = &r->ab.decls[code];
		struct rd_decl *dd = &r->dd[code];
		int32_t fixed = 0;
		*dd = (struct rd_decl){ .sib_at = -1, .want_first = (uint32_t)r->nwants };
		for (uint32_t i = 0; i < d->n; i++) {
			uint8_t len = r->spec_len[d->first + i];
			if (fixed >= 0 && len < SPEC_UNKNOWN && r->spec_want[d->first + i]) {
				if (vec_grow(&r->wants, &r->cap_wants, r->nwants + 1))
					return;
				r->wants[r->nwants++] = (struct rd_want){ d->first + i, (uint32_t)fixed };
				dd->nwant++;
			}
			if (r->ab.specs[d->first + i].attr == DW_AT_sibling && dd->sib_at == -1) {
				dd->sib_at = fixed >= 0 ? fixed : -2;
				dd->sib_form = (uint16_t)r->ab.specs[d->first + i].form;
			}
			if (len == SPEC_UNKNOWN)
				dd->slow = 1;
			if (len >= SPEC_UNKNOWN || fixed < 0)
				fixed = -1;
			else
				fixed += len;
		}
		dd->len = fixed;
		if (fixed < 0) {
			r->nwants = dd->want_first; /* the generic walk reads it */
			dd->nwant = 0;
		}
	}
	r->cu = cudie->cu;
	r->start = info->p + unit_off;
	r->end = info->p + unit_end;
	r->unit_off = unit_off;
	r->addr_size = addr_size;
	r->s = in->dws;
	r->str_ok = section_ends_in_nul(&in->dws[DWS_STR]);
	r->line_str_ok = section_ends_in_nul(&in->dws[DWS_LINE_STR]);
	r->on = 1;
}

/* spec's value at p as libdw's Dwarf_Attribute, an implicit constant's
 * value in the table (extract.h). */
static Dwarf_Attribute attr_at(const struct die_reader *r, const struct abbrev_spec *sp, const uint8_t *p)
{
	const void *v = sp->form == DW_FORM_implicit_const ? (const void *)&sp->implicit : (const void *)p;
	return (Dwarf_Attribute){ .code = sp->attr, .form = sp->form, .valp = (unsigned char *)v, .cu = r->cu };
}

int die_reader__attrs(const struct die_reader *r, Dwarf_Die *die,
		      int (*cb)(Dwarf_Attribute *, int bit, void *), void *arg)
{
	const uint8_t *p;
	uint64_t code;
	const struct abbrev_decl *d = die_decl(r, die, &p, &code);
	if (!d)
		return 0;
	const struct rd_decl *dd = &r->dd[code];
	if (dd->len >= 0) {
		/* All values fixed-size: straight to the wanted ones. */
		if ((size_t)(r->end - p) < (size_t)dd->len)
			return 0;
		for (uint32_t k = 0; k < dd->nwant; k++) {
			const struct rd_want *w = &r->wants[dd->want_first + k];
			Dwarf_Attribute at = attr_at(r, &r->ab.specs[w->spec], p + w->off);
			if (cb(&at, r->spec_want[w->spec] - 1, arg) != DWARF_CB_OK)
				return 1;
		}
		return 1;
	}
	const struct abbrev_spec *sp = r->ab.specs + d->first;
	const uint8_t *len = r->spec_len + d->first, *want = r->spec_want + d->first;
	for (uint32_t i = 0; i < d->n; i++) {
		/* The whole value is checked to be in the unit before cb reads it. */
		const uint8_t *next;
		if (len[i] < SPEC_UNKNOWN)
			next = (size_t)(r->end - p) >= len[i] ? p + len[i] : NULL;
		else
			next = skip_value(r, len[i], sp[i].form, p);
		if (!next)
			return 0;
		if (want[i]) {
			Dwarf_Attribute at = attr_at(r, &sp[i], p);
			if (cb(&at, want[i] - 1, arg) != DWARF_CB_OK)
				return 1;
		}
		p = next;
	}
	return 1;
}

int die_tag_slow(const struct die_reader *r, Dwarf_Die *die)
{
	const uint8_t *p;
	uint64_t code;
	const struct abbrev_decl *d = die_decl(r, die, &p, &code);
	return d ? (int)d->tag : dwarf_tag(die);
}

int die_first_child_slow(const struct die_reader *r, Dwarf_Die *die, Dwarf_Die *child)
{
	const uint8_t *p;
	uint64_t code;
	const struct abbrev_decl *d = die_decl(r, die, &p, &code);
	if (d && !d->children)
		return 0;
	if (d)
		p = skip_values(r, d, code, p);
	if (!d || !p)
		return dwarf_haschildren(die) != 0 && dwarf_child(die, child) == 0;
	/* As dwarf_child(): a null entry first (even a padded ULEB128 0) is no
	 * child; the child starts at p either way. */
	const uint8_t *q = p;
	while (q < r->end && *q == 0x80)
		q++;
	if (q >= r->end || *q == 0)
		return 0;
	die_at(r, p, child);
	return 1;
}

/* The address after the DIE at p and its children, as dwarf_siblingof()
 * finds it: through DW_AT_sibling when the DIE has one, else by walking
 * its subtree. Returns 1 with *next set, 0 when there is no next sibling,
 * -1 when this reader cannot tell (libdw decides). */
static int sibling_addr(const struct die_reader *r, Dwarf_Die *die, const uint8_t **next)
{
	unsigned level = 0;
	const uint8_t *p = die->addr;
	do {
		const uint8_t *v;
		uint64_t code;
		/* The DIE itself has its abbreviation decoded already. */
		const struct abbrev_decl *d = p == die->addr ? die_decl(r, die, &v, &code)
							     : decl_of(r, p, &v, &code);
		if (!d)
			return -1;
		const struct rd_decl *dd = &r->dd[code];
		const uint8_t *sib = NULL;
		unsigned sib_form = dd->sib_form;
		if (dd->sib_at == -1) {
			v = skip_values(r, d, code, v);
		} else if (dd->sib_at >= 0) {
			sib = v + dd->sib_at;
		} else {
			/* The first DW_AT_sibling, as libdw's __libdw_find_attr(). */
			const struct abbrev_spec *sp = r->ab.specs + d->first;
			const uint8_t *len = r->spec_len + d->first;
			for (uint32_t i = 0; i < d->n && v && !sib; i++) {
				if (sp[i].attr == DW_AT_sibling)
					sib = v;
				else
					v = skip_value(r, len[i], sp[i].form, v);
			}
		}
		if (!v)
			return -1;
		if (sib) {
			uint64_t off;
			if (!skip_value(r, form_len(sib_form, r->addr_size), sib_form, sib) ||
			    !die_local_ref(sib_form, sib, r->end, &off))
				return -1;
			/* libdw refuses a sibling that does not point forward in the unit. */
			if (off >= (uint64_t)(r->end - r->start) || off <= (uint64_t)(p - r->start))
				return -1;
			v = r->start + off;
		} else if (d->children) {
			level++;
		}
		p = v;
		for (;;) {
			if (p >= r->end)
				return 0;
			if (*p)
				break;
			if (level-- == 0)
				return 0;
			p++;
		}
	} while (level > 0);
	*next = p;
	return 1;
}

int die_next(const struct die_reader *r, Dwarf_Die *die)
{
	/* Most DIEs asked are members, enumerators and parameters: no
	 * children, no DW_AT_sibling, values of a fixed size. The next entry
	 * is then right after the values, as sibling_addr() would find it. */
	const struct abbrev_decl *d = r ? die_known(r, die) : NULL;
	if (d && !d->children) {
		const struct rd_decl *dd = &r->dd[(uint64_t)die->padding__ >> 4];
		const uint8_t *v = (const uint8_t *)die->addr + (die->padding__ & 15);
		if (dd->len >= 0 && dd->sib_at == -1 && (size_t)(r->end - v) >= (size_t)dd->len) {
			v += dd->len;
			if (v >= r->end || !*v)
				return 0;
			die_at(r, v, die);
			return 1;
		}
	}
	if (r && r->on && die->cu == r->cu) {
		const uint8_t *next;
		int got = sibling_addr(r, die, &next);
		if (got == 1) {
			die_at(r, next, die);
			return 1;
		}
		if (got == 0)
			return 0;
	}
	return dwarf_siblingof(die, die) == 0;
}
