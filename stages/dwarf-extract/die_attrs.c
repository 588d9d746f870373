/* die_attrs.c: read every attribute dwarf-extract needs from a DIE in one pass.
 *
 * One walk over the DIE's attributes (die_reader__attrs(), else
 * dwarf_getattrs()); asking dwarf_attr() for each attribute instead would
 * rescan it for every question. Attributes we do not use cost one switch
 * miss. On the reader's walk, the common forms (strp, ref4, dataN, flags)
 * are decoded here from their bytes; every other form goes to the libdw
 * function that reads it, with the same result either way.
 */
#include "die_attrs.h"
#include "../../common/diag.h"

#include <dwarf.h>
#include <errno.h>
#include <string.h>

struct attrs_ctx {
	struct die_attrs *a;
	Dwarf *main_dw;
	const struct die_reader *raw;	/* the attribute came from this reader, or NULL: libdw's */
	int err;
	int retry;	/* a value only libdw can read came from the reader: read the DIE with libdw */
};

/* An attribute from the reader that is about to go to libdw: fine, unless
 * its value is an implicit constant, which the reader keeps in its own
 * memory (extract.h): then the DIE is read again through libdw. */
static int libdw_can_read(struct attrs_ctx *x, const Dwarf_Attribute *at)
{
	if (x->raw && at->form == DW_FORM_implicit_const) {
		x->retry = 1;
		return 0;
	}
	return 1;
}

/* A LEB128 value of the reader's, bounded by its unit. Returns 0 when it
 * does not decode (too long): then libdw reads it. */
static int raw_leb(const struct die_reader *r, const uint8_t *v, int is_signed, uint64_t *out)
{
	struct cursor c;
	cursor_init(&c, v, (size_t)(r->end - v));
	*out = is_signed ? (uint64_t)cur_sleb(&c) : cur_uleb(&c);
	return !c.err;
}

/* The global offset of the DIE a reference attribute names (a CU-relative
 * form, DW_FORM_ref_addr across CUs, or a type signature). */
static int ref_target(Dwarf_Attribute *at, Dwarf *main_dw, uint64_t *out)
{
	Dwarf_Die t;
	if (!dwarf_formref_die(at, &t))
		return -EBADMSG;
	*out = die_gid(main_dw, &t);
	/* Offset 0 is a unit header, never a DIE; 0 also means "no reference"
	 * to the callers, so it must not pass for one. */
	return (*out & ~CUS_ALT_BIT) ? 0 : -EBADMSG;
}

/* ref_target(), with the reader's CU-local forms read here. */
static int form_ref(struct attrs_ctx *x, Dwarf_Attribute *at, uint64_t *out)
{
	const struct die_reader *r = x->raw;
	if (r) {
		uint64_t off;
		int local = die_local_ref(at->form, at->valp, r->end, &off);
		/* Inside the unit, libdw finds the DIE at unit + off; outside, it
		 * looks further, so it decides. */
		if (local && off < (uint64_t)(r->end - r->start)) {
			*out = r->unit_off + off;
			return *out ? 0 : -EBADMSG;
		}
		if (!libdw_can_read(x, at))
			return 0;
	}
	return ref_target(at, x->main_dw, out);
}

uint64_t die_gid(Dwarf *main_dw, Dwarf_Die *die)
{
	uint64_t off = dwarf_dieoffset(die);
	return dwarf_cu_getdwarf(die->cu) == main_dw ? off : off | CUS_ALT_BIT;
}

/* Constants: a signed form is kept signed so bounds like -1 survive. */
static int read_const(Dwarf_Attribute *at, uint64_t *out, int *is_signed)
{
	unsigned form = dwarf_whatform(at);
	*is_signed = 0;
	if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
		Dwarf_Sword v;
		if (dwarf_formsdata(at, &v))
			return -EBADMSG;
		*out = (uint64_t)v;
		*is_signed = v < 0;
		return 0;
	}
	Dwarf_Word v;
	if (dwarf_formudata(at, &v))
		return -EBADMSG;
	*out = v;
	return 0;
}

/* read_const(), with the reader's fixed and LEB128 forms read here. */
static int form_const(struct attrs_ctx *x, Dwarf_Attribute *at, uint64_t *out, int *is_signed)
{
	if (x->raw) {
		const uint8_t *v = at->valp;
		*is_signed = 0;
		switch (at->form) {
		case DW_FORM_data1: *out = v[0]; return 0;
		case DW_FORM_data2: *out = le16_get(v); return 0;
		case DW_FORM_data4: *out = le32_get(v); return 0;
		case DW_FORM_data8: *out = le64_get(v); return 0;
		case DW_FORM_udata:
			if (raw_leb(x->raw, v, 0, out))
				return 0;
			break;
		case DW_FORM_sdata:
			if (raw_leb(x->raw, v, 1, out)) {
				*is_signed = (int64_t)*out < 0;
				return 0;
			}
			break;
		case DW_FORM_implicit_const: {
			int64_t s = *(const int64_t *)(const void *)v;
			*out = (uint64_t)s;
			*is_signed = s < 0;
			return 0;
		}
		}
	}
	return read_const(at, out, is_signed);
}

/* dwarf_formstring(), with the reader's inline and .debug_str forms read here. */
static const char *form_str(struct attrs_ctx *x, Dwarf_Attribute *at)
{
	const struct die_reader *r = x->raw;
	if (r) {
		uint32_t off;
		switch (at->form) {
		case DW_FORM_string:
			return (const char *)at->valp; /* checked to end in the unit */
		case DW_FORM_strp:
			off = le32_get(at->valp);
			if (r->str_ok && off < r->s[DWS_STR].n)
				return (const char *)r->s[DWS_STR].p + off;
			break;
		case DW_FORM_line_strp:
			off = le32_get(at->valp);
			if (r->line_str_ok && off < r->s[DWS_LINE_STR].n)
				return (const char *)r->s[DWS_LINE_STR].p + off;
			break;
		}
		if (!libdw_can_read(x, at))
			return NULL;
	}
	return dwarf_formstring(at);
}

/* dwarf_formflag(). */
static int form_flag(struct attrs_ctx *x, Dwarf_Attribute *at, bool *flag)
{
	if (x->raw) {
		if (at->form == DW_FORM_flag_present) {
			*flag = true;
			return 0;
		}
		if (at->form == DW_FORM_flag) {
			*flag = *at->valp != 0;
			return 0;
		}
		if (!libdw_can_read(x, at)) {
			*flag = false;
			return 0;
		}
	}
	return dwarf_formflag(at, flag);
}

static int is_const_form(unsigned form)
{
	switch (form) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_implicit_const:
		return 1;
	}
	return 0;
}

/* DW_AT_data_member_location: a constant, or (DWARF 2) DW_OP_plus_uconst N. */
static int read_member_loc(struct attrs_ctx *x, Dwarf_Attribute *at, struct die_attrs *a)
{
	if (is_const_form(at->form)) {
		int s;
		return form_const(x, at, &a->member_loc, &s);
	}
	Dwarf_Op *ops;
	size_t n;
	if (dwarf_getlocation(at, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
		a->member_loc = ops[0].number;
		return 0;
	}
	a->member_loc_unknown = 1;
	return 0;
}

/* One attribute into x->a; bit is attr_bits__of() of its code (attr_bits.c). */
static int attr_cb(Dwarf_Attribute *at, int bit, void *arg)
{
	struct attrs_ctx *x = arg;
	struct die_attrs *a = x->a;
	int s, err = 0;
	unsigned form = at->form; /* dwarf_whatform(at), without the call */
	bool flag;

	switch (bit) {
	case -1:
		return DWARF_CB_OK;
	case ATTR_NAME:
		a->name = form_str(x, at);
		break;
	case ATTR_LINKAGE_NAME:
		a->linkage_name = form_str(x, at);
		break;
	case ATTR_TYPE:
		err = form_ref(x, at, &a->type);
		break;
	case ATTR_ORIGIN:
		err = form_ref(x, at, &a->origin);
		break;
	case ATTR_SPEC:
		err = form_ref(x, at, &a->spec);
		break;
	case ATTR_BYTE_SIZE:
		err = is_const_form(form) ? form_const(x, at, &a->byte_size, &s) : 0;
		break;
	case ATTR_BIT_SIZE:
		err = form_const(x, at, &a->bit_size, &s);
		break;
	case ATTR_DATA_BIT_OFFSET:
		err = form_const(x, at, &a->data_bit_offset, &s);
		break;
	case ATTR_BIT_OFFSET:
		err = form_const(x, at, &a->bit_offset, &s);
		break;
	case ATTR_MEMBER_LOC:
		err = read_member_loc(x, at, a);
		break;
	case ATTR_ENCODING:
		err = form_const(x, at, &a->encoding, &s);
		break;
	case ATTR_INLINE:
		err = form_const(x, at, &a->inline_kind, &s);
		break;
	case ATTR_CC:
		err = form_const(x, at, &a->cc, &s);
		break;
	case ATTR_ALIGNMENT:
		err = form_const(x, at, &a->alignment, &s);
		break;
	case ATTR_COUNT:
		if (is_const_form(form))
			err = form_const(x, at, &a->count, &s);
		else
			a->count_unknown = 1; /* a VLA: the count is an expression */
		break;
	case ATTR_LOWER:
		if (is_const_form(form))
			err = form_const(x, at, &a->lower, &s);
		break;
	case ATTR_UPPER:
		if (is_const_form(form))
			err = form_const(x, at, &a->upper, &a->upper_is_signed);
		else
			a->upper_unknown = 1;
		break;
	case ATTR_DECLARATION: case ATTR_EXTERNAL: case ATTR_ARTIFICIAL: case ATTR_PROTOTYPED:
		/* Present only when true. */
		if (form_flag(x, at, &flag))
			err = -EBADMSG;
		else if (!flag)
			bit = -1;
		break;
	case ATTR_LOW_PC: case ATTR_ENTRY_PC: case ATTR_RANGES:
		break; /* read later, by libdw, from the DIE */
	case ATTR_LOCATION:
		a->location = *at;
		libdw_can_read(x, at); /* read later, by libdw */
		break;
	case ATTR_CONST_VALUE:
		a->const_value = *at;
		libdw_can_read(x, at);
		if (form == DW_FORM_string || form == DW_FORM_strp || form == DW_FORM_line_strp ||
		    form == DW_FORM_strx || form == DW_FORM_strx1 || form == DW_FORM_strx2 ||
		    form == DW_FORM_strx4 || form == DW_FORM_GNU_strp_alt)
			a->const_str = form_str(x, at);
		break;
	}
	if (x->retry)
		return DWARF_CB_ABORT;
	if (err) {
		x->err = err;
		return DWARF_CB_ABORT;
	}
	if (bit >= 0)
		a->present |= 1ull << bit;
	return DWARF_CB_OK;
}

/* dwarf_getattrs()'s callback. */
static int attr_cb_libdw(Dwarf_Attribute *at, void *arg)
{
	return attr_cb(at, attr_bits__of(dwarf_whatattr(at)), arg);
}

int die_attrs__read(const struct die_reader *r, Dwarf_Die *die, Dwarf *main_dw, struct die_attrs *a,
		    struct diag *d)
{
	memset(a, 0, sizeof(*a));
	struct attrs_ctx x = { .a = a, .main_dw = main_dw, .raw = r };
	if (!r || !die_reader__attrs(r, die, attr_cb, &x) || x.retry) {
		/* Not the reader's: libdw reads the DIE, from the start. */
		memset(a, 0, sizeof(*a));
		x = (struct attrs_ctx){ .a = a, .main_dw = main_dw };
		if (dwarf_getattrs(die, attr_cb_libdw, &x, 0) < 0 && !x.err)
			return diag_fail(d, diag_lib_errno(dwarf_errmsg(-1), EBADMSG), "DIE 0x%llx: unreadable attribute: %s",
					 (unsigned long long)dwarf_dieoffset(die), dwarf_errmsg(-1));
	}
	if (x.err)
		return diag_fail(d, EBADMSG, "DIE 0x%llx: unreadable attribute: %s",
				 (unsigned long long)dwarf_dieoffset(die), "bad reference or constant");
	return 0;
}
