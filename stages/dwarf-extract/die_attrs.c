/* die_attrs.c: read every attribute dwarf-extract needs from a DIE in one pass.
 *
 * dwarf_getattrs() walks the abbreviation once; asking dwarf_attr() for each
 * attribute instead would rescan it for every question. Attributes we do not
 * use cost one switch miss.
 */
#include "extract.h"
#include "../../common/diag.h"

#include <dwarf.h>
#include <errno.h>
#include <string.h>

struct attrs_ctx {
	struct die_attrs *a;
	Dwarf *main_dw;
	int err;
};

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
static int read_member_loc(Dwarf_Attribute *at, struct die_attrs *a)
{
	if (is_const_form(dwarf_whatform(at))) {
		int s;
		return read_const(at, &a->member_loc, &s);
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

static int attr_cb(Dwarf_Attribute *at, void *arg)
{
	struct attrs_ctx *x = arg;
	struct die_attrs *a = x->a;
	int bit = -1, s, err = 0;
	bool flag;

	switch (dwarf_whatattr(at)) {
	case DW_AT_name:
		bit = ATTR_NAME;
		a->name = dwarf_formstring(at);
		break;
	case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name:
		bit = ATTR_LINKAGE_NAME;
		a->linkage_name = dwarf_formstring(at);
		break;
	case DW_AT_type:
		bit = ATTR_TYPE;
		err = ref_target(at, x->main_dw, &a->type);
		break;
	case DW_AT_abstract_origin:
		bit = ATTR_ORIGIN;
		err = ref_target(at, x->main_dw, &a->origin);
		break;
	case DW_AT_specification:
		bit = ATTR_SPEC;
		err = ref_target(at, x->main_dw, &a->spec);
		break;
	case DW_AT_byte_size:
		bit = ATTR_BYTE_SIZE;
		err = is_const_form(dwarf_whatform(at)) ? read_const(at, &a->byte_size, &s) : 0;
		break;
	case DW_AT_bit_size:
		bit = ATTR_BIT_SIZE;
		err = read_const(at, &a->bit_size, &s);
		break;
	case DW_AT_data_bit_offset:
		bit = ATTR_DATA_BIT_OFFSET;
		err = read_const(at, &a->data_bit_offset, &s);
		break;
	case DW_AT_bit_offset:
		bit = ATTR_BIT_OFFSET;
		err = read_const(at, &a->bit_offset, &s);
		break;
	case DW_AT_data_member_location:
		bit = ATTR_MEMBER_LOC;
		err = read_member_loc(at, a);
		break;
	case DW_AT_encoding:
		bit = ATTR_ENCODING;
		err = read_const(at, &a->encoding, &s);
		break;
	case DW_AT_inline:
		bit = ATTR_INLINE;
		err = read_const(at, &a->inline_kind, &s);
		break;
	case DW_AT_calling_convention:
		bit = ATTR_CC;
		err = read_const(at, &a->cc, &s);
		break;
	case DW_AT_alignment:
		bit = ATTR_ALIGNMENT;
		err = read_const(at, &a->alignment, &s);
		break;
	case DW_AT_count:
		bit = ATTR_COUNT;
		if (is_const_form(dwarf_whatform(at)))
			err = read_const(at, &a->count, &s);
		else
			a->count_unknown = 1; /* a VLA: the count is an expression */
		break;
	case DW_AT_lower_bound:
		bit = ATTR_LOWER;
		if (is_const_form(dwarf_whatform(at)))
			err = read_const(at, &a->lower, &s);
		break;
	case DW_AT_upper_bound:
		bit = ATTR_UPPER;
		if (is_const_form(dwarf_whatform(at)))
			err = read_const(at, &a->upper, &a->upper_is_signed);
		else
			a->upper_unknown = 1;
		break;
	case DW_AT_declaration:
	case DW_AT_external:
	case DW_AT_artificial:
	case DW_AT_prototyped:
		if (dwarf_formflag(at, &flag))
			err = -EBADMSG;
		else if (flag)
			bit = dwarf_whatattr(at) == DW_AT_declaration ? ATTR_DECLARATION
			    : dwarf_whatattr(at) == DW_AT_external ? ATTR_EXTERNAL
			    : dwarf_whatattr(at) == DW_AT_artificial ? ATTR_ARTIFICIAL
								      : ATTR_PROTOTYPED;
		break;
	case DW_AT_low_pc:
		bit = ATTR_LOW_PC;
		break;
	case DW_AT_entry_pc:
		bit = ATTR_ENTRY_PC;
		break;
	case DW_AT_ranges:
		bit = ATTR_RANGES;
		break;
	case DW_AT_location:
		bit = ATTR_LOCATION;
		a->location = *at;
		break;
	case DW_AT_const_value:
		bit = ATTR_CONST_VALUE;
		a->const_value = *at;
		if (dwarf_whatform(at) == DW_FORM_string || dwarf_whatform(at) == DW_FORM_strp ||
		    dwarf_whatform(at) == DW_FORM_line_strp || dwarf_whatform(at) == DW_FORM_strx ||
		    dwarf_whatform(at) == DW_FORM_strx1 || dwarf_whatform(at) == DW_FORM_strx2 ||
		    dwarf_whatform(at) == DW_FORM_strx4 || dwarf_whatform(at) == DW_FORM_GNU_strp_alt)
			a->const_str = dwarf_formstring(at);
		break;
	}
	if (err) {
		x->err = err;
		return DWARF_CB_ABORT;
	}
	if (bit >= 0)
		a->present |= 1ull << bit;
	return DWARF_CB_OK;
}

int die_attrs__read(Dwarf_Die *die, Dwarf *main_dw, struct die_attrs *a, struct diag *d)
{
	memset(a, 0, sizeof(*a));
	struct attrs_ctx x = { .a = a, .main_dw = main_dw };
	if (dwarf_getattrs(die, attr_cb, &x, 0) < 0 || x.err)
		return diag_fail(d, EBADMSG, "DIE 0x%llx: unreadable attribute: %s",
				 (unsigned long long)dwarf_dieoffset(die),
				 x.err ? "bad reference or constant" : dwarf_errmsg(-1));
	return 0;
}
