/* die_record.c: where a DWARF tag becomes a record.
 *
 * die_record__add() is the one switch from DW_TAG_* to a record kind (spec:
 * format/CU-RECORDS.md, "Records"). Each rec_*() reads the DIE's attributes
 * and children and fills one record; a subprogram also adds its param
 * records right after it. No function here adds any other record, so a
 * record's items (members, enumerators, dimensions) stay contiguous.
 * Records hold references as provisional slots; cu_walk.c resolves them.
 */
#include "cu_walk.h"
#include "die_attrs.h"
#include "../../common/diag.h"
#include "../../common/vec.h"

#include <dwarf.h>
#include <errno.h>
#include <string.h>

#define DW_TAG_LLVM_annotation 0x6000

static struct cus_rec *rec_at(struct cu_walk *w, uint32_t idx) { return &w->cu.recs[idx]; }

static uint32_t common_flags(const struct die_attrs *a)
{
	uint32_t f = 0;
	if (HAS(a, DECLARATION)) f |= CUS_F_DECL;
	if (HAS(a, EXTERNAL)) f |= CUS_F_EXTERNAL;
	if (HAS(a, ARTIFICIAL)) f |= CUS_F_ARTIFICIAL;
	if (HAS(a, PROTOTYPED)) f |= CUS_F_PROTOTYPED;
	return f;
}

/* A new record with the fields every kind shares. */
static int rec_begin(struct cu_walk *w, Dwarf_Die *die, uint8_t kind, const struct die_attrs *a,
		     uint32_t *idx)
{
	int err = cu_recs__new_rec(w, die, kind, idx);
	if (err)
		return err;
	struct cus_rec *r = rec_at(w, *idx);
	uint32_t name;
	cus_ref type;
	if ((err = cu_recs__str(w, a->name, &name)) ||
	    (err = cu_recs__ref(w, HAS(a, TYPE) ? a->type : 0, &type)))
		return err;
	r = rec_at(w, *idx);
	r->name = name;
	r->type = type;
	r->flags = common_flags(a);
	return 0;
}

/* An annotation DIE (clang's btf_decl_tag / btf_type_tag) as name/value. */
static int read_annot(struct cu_walk *w, Dwarf_Die *child, struct cus_annot *out)
{
	struct die_attrs a;
	int err = die_attrs__read(&w->rd, child, w->dw, &a, w->d);
	if (!err)
		err = cu_recs__str(w, a.name, &out->name);
	if (!err)
		err = cu_recs__str(w, a.const_str, &out->value);
	return err;
}

/* Hold an annotation of the record being built until its items are done. */
static int pend_annot(struct cu_walk *w, Dwarf_Die *child)
{
	if (vec_grow(&w->pend_annots, &w->cap_pend_annots, w->npend_annots + 1))
		return -ENOMEM;
	return read_annot(w, child, &w->pend_annots[w->npend_annots++]);
}

/* Move the annotations held since index `base` to the CU and point (first,
 * count) at them. A parameter's own annotations are flushed while its
 * function's are still held (clang puts a function's annotation before its
 * parameters), so each caller flushes only what it pended. */
static int flush_annots(struct cu_walk *w, size_t base, uint32_t *flags, uint32_t *first, uint32_t *count)
{
	size_t n = w->npend_annots - base;
	if (!n)
		return 0;
	struct cus_cu *cu = &w->cu;
	if (vec_grow(&cu->annots, &cu->cap_annots, cu->nannots + n))
		return -ENOMEM;
	*first = (uint32_t)cu->nannots;
	*count = (uint32_t)n;
	memcpy(cu->annots + cu->nannots, w->pend_annots + base, n * sizeof(*cu->annots));
	cu->nannots += n;
	w->npend_annots = base;
	*flags |= CUS_F_ANNOT;
	return 0;
}

/* Annotations are the only children of pointers, typedefs, vars, params
 * and members that we keep. */
static int annots_of(struct cu_walk *w, Dwarf_Die *die, uint32_t *flags, uint32_t *first,
		     uint32_t *count)
{
	Dwarf_Die c;
	size_t base = w->npend_annots;
	if (!die_first_child(&w->rd, die, &c))
		return 0;
	do {
		if (die_tag(&w->rd, &c) == DW_TAG_LLVM_annotation) {
			int err = pend_annot(w, &c);
			if (err)
				return err;
		}
	} while (die_next(&w->rd, &c));
	return flush_annots(w, base, flags, first, count);
}

static int rec_with_annots(struct cu_walk *w, Dwarf_Die *die, uint8_t kind,
			   const struct die_attrs *a, uint32_t *idx)
{
	int err = rec_begin(w, die, kind, a, idx);
	if (err)
		return err;
	struct cus_rec *r = rec_at(w, *idx);
	uint32_t flags = r->flags, first = 0, count = 0;
	err = annots_of(w, die, &flags, &first, &count);
	r = rec_at(w, *idx);
	r->flags = flags;
	r->annot_first = first;
	r->annot_count = count;
	return err;
}

/* Follow DW_AT_type from the DIE at off (through typedefs and qualifiers)
 * to the first DIE that has attribute `stop` (ATTR_BYTE_SIZE, ATTR_ENCODING);
 * its attributes go to *out. Returns 1 found, 0 not found, or -errno. */
static int follow_type(struct cu_walk *w, uint64_t off, int stop, struct die_attrs *out)
{
	for (int depth = 0; depth < 16 && off; depth++) {
		Dwarf_Die t;
		int err = cu_recs__offdie(w, off, &t);
		if (!err)
			err = die_attrs__read(&w->rd, &t, w->dw, out, w->d);
		if (err)
			return err;
		if ((out->present >> stop) & 1)
			return 1;
		off = HAS(out, TYPE) ? out->type : 0;
	}
	return 0;
}

/* The byte size of a type (DWARF 2/3 bitfields count their DW_AT_bit_offset
 * from the top of this storage unit). */
static int type_byte_size(struct cu_walk *w, uint64_t off, uint64_t *size)
{
	struct die_attrs a;
	int r = follow_type(w, off, ATTR_BYTE_SIZE, &a);
	*size = r > 0 ? a.byte_size : 0;
	return r < 0 ? r : 0;
}

/* Whether a type's base encoding is signed, and its size. */
static int type_is_signed(struct cu_walk *w, uint64_t off, int *is_signed, uint64_t *size)
{
	struct die_attrs a;
	int r = follow_type(w, off, ATTR_ENCODING, &a);
	*is_signed = r > 0 && (a.encoding == DW_ATE_signed || a.encoding == DW_ATE_signed_char);
	if (r > 0)
		*size = a.byte_size;
	return r < 0 ? r : 0;
}

static int rec_base(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx;
	int err = rec_begin(w, die, CUS_BASE, a, &idx);
	if (err)
		return err;
	struct cus_rec *r = rec_at(w, idx);
	r->encoding = (uint32_t)a->encoding;
	r->size = a->byte_size;
	r->bit_size = (uint32_t)a->bit_size;
	r->bit_offset = (uint32_t)a->data_bit_offset;
	return 0;
}

static int rec_ptr(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx;
	int err = rec_with_annots(w, die, CUS_PTR, a, &idx);
	if (!err)
		rec_at(w, idx)->size = HAS(a, BYTE_SIZE) ? a->byte_size : w->cu.addr_size;
	return err;
}

/* One member: its bit offset from the struct's start (spec: "Members"). */
static int add_member(struct cu_walk *w, Dwarf_Die *m)
{
	struct die_attrs a;
	int err = die_attrs__read(&w->rd, m, w->dw, &a, w->d);
	if (err)
		return err;
	if (HAS(&a, EXTERNAL) || HAS(&a, DECLARATION))
		return 0; /* a C++ static member takes no room */
	uint64_t bitoff;
	if (HAS(&a, DATA_BIT_OFFSET)) {
		bitoff = a.data_bit_offset;
	} else {
		bitoff = a.member_loc * 8;
		if (HAS(&a, BIT_OFFSET) && HAS(&a, BIT_SIZE)) {
			uint64_t storage = a.byte_size;
			if (!HAS(&a, BYTE_SIZE) && (err = type_byte_size(w, HAS(&a, TYPE) ? a.type : 0, &storage)))
				return err;
			if (w->in->ident.ei_data == ELFDATA2MSB)
				bitoff += a.bit_offset;
			else
				bitoff += storage * 8 - a.bit_offset - a.bit_size;
		}
	}
	uint32_t ii;
	struct cus_item it = { .bit_size = (uint32_t)a.bit_size, .value = bitoff };
	if (HAS(&a, ARTIFICIAL))
		it.flags |= CUS_F_ARTIFICIAL;
	if ((err = cu_recs__str(w, a.name, &it.name)) ||
	    (err = cu_recs__ref(w, HAS(&a, TYPE) ? a.type : 0, &it.type)) ||
	    (err = annots_of(w, m, &it.flags, &it.annot_first, &it.annot_count)) ||
	    (err = cu_recs__new_item(w, &ii)))
		return err;
	w->cu.items[ii] = it;
	return 0;
}

static int is_template_param(int tag)
{
	return tag == DW_TAG_template_type_parameter || tag == DW_TAG_template_value_parameter ||
	       tag == DW_TAG_GNU_template_template_param || tag == DW_TAG_GNU_template_parameter_pack;
}

static int rec_struct(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a, int tag)
{
	uint32_t idx;
	int err = rec_begin(w, die, tag == DW_TAG_union_type ? CUS_UNION : CUS_STRUCT, a, &idx);
	if (err)
		return err;
	uint32_t flags = rec_at(w, idx)->flags | (tag == DW_TAG_class_type ? CUS_F_CLASS : 0);
	uint32_t first = (uint32_t)w->cu.nitems, afirst = 0, acount = 0;
	size_t base = w->npend_annots;
	Dwarf_Die c;
	if (die_first_child(&w->rd, die, &c)) {
		do {
			int ct = die_tag(&w->rd, &c);
			if (ct == DW_TAG_member)
				err = add_member(w, &c);
			else if (ct == DW_TAG_LLVM_annotation)
				err = pend_annot(w, &c);
			else if (is_template_param(ct))
				flags |= CUS_F_TEMPLATE;
			/* Nested types (C++, and clang's anonymous members) are
			 * made on demand when a member refers to them. */
			if (err)
				return err;
		} while (die_next(&w->rd, &c));
	}
	if ((err = flush_annots(w, base, &flags, &afirst, &acount)))
		return err;
	struct cus_rec *r = rec_at(w, idx);
	r->flags = flags;
	r->size = a->byte_size;
	r->alignment = (uint32_t)a->alignment;
	r->item_first = first;
	r->item_count = (uint32_t)w->cu.nitems - first;
	r->annot_first = afirst;
	r->annot_count = acount;
	return 0;
}

/* Enumerator values: sdata is signed, udata unsigned; a dataN constant as
 * wide as a signed underlying type carries that type's sign bit. */
static int rec_enum(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx;
	int err = rec_begin(w, die, CUS_ENUM, a, &idx);
	if (err)
		return err;
	int is_signed = 0;
	uint64_t under_size = 0;
	if (HAS(a, TYPE) && (err = type_is_signed(w, a->type, &is_signed, &under_size)))
		return err;
	uint32_t flags = rec_at(w, idx)->flags | (is_signed ? CUS_F_SIGNED : 0);
	uint32_t first = (uint32_t)w->cu.nitems;
	Dwarf_Die c;
	if (die_first_child(&w->rd, die, &c)) {
		do {
			if (die_tag(&w->rd, &c) != DW_TAG_enumerator)
				continue;
			struct die_attrs ea;
			uint32_t ii, name;
			if ((err = die_attrs__read(&w->rd, &c, w->dw, &ea, w->d)) ||
			    (err = cu_recs__str(w, ea.name, &name)))
				return err;
			if (!HAS(&ea, CONST_VALUE))
				return diag_fail(w->d, EBADMSG, "DIE 0x%llx: enumerator without a value",
						 (unsigned long long)dwarf_dieoffset(&c));
			uint64_t v = 0;
			unsigned form = dwarf_whatform(&ea.const_value);
			if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
				Dwarf_Sword sv;
				if (dwarf_formsdata(&ea.const_value, &sv))
					return diag_fail(w->d, EBADMSG, "DIE 0x%llx: bad enumerator value",
							 (unsigned long long)dwarf_dieoffset(&c));
				v = (uint64_t)sv;
				if (sv < 0)
					flags |= CUS_F_SIGNED;
			} else {
				Dwarf_Word uv;
				if (dwarf_formudata(&ea.const_value, &uv))
					return diag_fail(w->d, EBADMSG, "DIE 0x%llx: bad enumerator value",
							 (unsigned long long)dwarf_dieoffset(&c));
				unsigned width = form == DW_FORM_data1 ? 1 : form == DW_FORM_data2 ? 2
					       : form == DW_FORM_data4 ? 4 : 8;
				v = uv;
				if (is_signed && width < 8 && width == under_size && (uv >> (8 * width - 1)) & 1)
					v = uv | (~(uint64_t)0 << (8 * width));
			}
			if ((err = cu_recs__new_item(w, &ii)))
				return err;
			w->cu.items[ii] = (struct cus_item){ .name = name, .value = v };
		} while (die_next(&w->rd, &c));
	}
	struct cus_rec *r = rec_at(w, idx);
	r->flags = flags;
	r->size = a->byte_size;
	r->item_first = first;
	r->item_count = (uint32_t)w->cu.nitems - first;
	return 0;
}

/* One array dimension as count + 1, or 0 when the count is unknown. */
static uint64_t dimension(const struct die_attrs *s)
{
	if (HAS(s, COUNT))
		return s->count_unknown ? 0 : s->count + 1;
	if (HAS(s, UPPER) && !s->upper_unknown) {
		int64_t lower = HAS(s, LOWER) ? (int64_t)s->lower : 0;
		int64_t upper = (int64_t)s->upper;
		if (!s->upper_is_signed && s->upper > INT64_MAX)
			return 0;
		if (upper < lower - 1)
			return 0;
		return (uint64_t)(upper - lower + 1) + 1;
	}
	return 0; /* no bound: a flexible array member */
}

static int rec_array(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx;
	int err = rec_begin(w, die, CUS_ARRAY, a, &idx);
	if (err)
		return err;
	uint32_t first = (uint32_t)w->cu.nitems;
	Dwarf_Die c;
	if (die_first_child(&w->rd, die, &c)) {
		do {
			int ct = die_tag(&w->rd, &c);
			if (ct != DW_TAG_subrange_type && ct != DW_TAG_enumeration_type)
				continue;
			struct die_attrs s;
			uint32_t ii;
			if ((err = die_attrs__read(&w->rd, &c, w->dw, &s, w->d)) ||
			    (err = cu_recs__new_item(w, &ii)))
				return err;
			w->cu.items[ii] = (struct cus_item){ .value = ct == DW_TAG_subrange_type ? dimension(&s) : 0 };
		} while (die_next(&w->rd, &c));
	}
	struct cus_rec *r = rec_at(w, idx);
	r->item_first = first;
	r->item_count = (uint32_t)w->cu.nitems - first;
	return 0;
}

static int rec_subroutine(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx;
	int err = rec_begin(w, die, CUS_SUBROUTINE, a, &idx);
	if (err)
		return err;
	uint32_t flags = rec_at(w, idx)->flags, first = (uint32_t)w->cu.nitems;
	Dwarf_Die c;
	if (die_first_child(&w->rd, die, &c)) {
		do {
			int ct = die_tag(&w->rd, &c);
			if (ct == DW_TAG_unspecified_parameters) {
				flags |= CUS_F_VARARGS;
			} else if (ct == DW_TAG_formal_parameter) {
				struct die_attrs p;
				uint32_t ii;
				cus_ref t;
				if ((err = die_attrs__read(&w->rd, &c, w->dw, &p, w->d)) ||
				    (err = cu_recs__ref(w, HAS(&p, TYPE) ? p.type : 0, &t)) ||
				    (err = cu_recs__new_item(w, &ii)))
					return err;
				w->cu.items[ii] = (struct cus_item){ .type = t };
			}
		} while (die_next(&w->rd, &c));
	}
	struct cus_rec *r = rec_at(w, idx);
	r->flags = flags;
	r->item_first = first;
	r->item_count = (uint32_t)w->cu.nitems - first;
	return 0;
}

/* The byte size of a parameter's type (through its abstract origin, typedefs
 * and qualifiers), or 0. */
static Dwarf_Word param_type_size(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Die t;
	Dwarf_Word size;
	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, &t) ||
	    dwarf_aggregate_size(&t, &size))
		return 0;
	return size;
}

static int is_reg_op(uint8_t atom)
{
	return (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) || atom == DW_OP_regx;
}

static uint32_t reg_of(const Dwarf_Op *op)
{
	return op->atom == DW_OP_regx ? (uint32_t)op->number : (uint32_t)(op->atom - DW_OP_reg0);
}

/* An aggregate of one to two registers' size whose location is in pieces
 * (clang writes `DW_OP_reg5, DW_OP_piece 8` for a struct of which only the
 * first eight bytes are live): which bytes each register still carries,
 * over every entry of the location list, as pahole's dwarf_loader.c
 * (parameter__multi_exprs) counts them, for true_signature's
 * `param__field`. A leading piece is a part that is absent; the register is
 * the one that holds the first bytes, else the first one named. Returns 1
 * with *loc_reg (CUS_LOC_PIECES's encoding) when there are pieces. */
static int param_pieces(Dwarf_Attribute *at, unsigned addr_size, uint32_t *loc_reg)
{
	Dwarf_Addr base, start, end;
	Dwarf_Op *ops;
	size_t n;
	uint64_t first = 0, second = 0;
	uint32_t reg = CUS_PIECE_NO_REG;
	ptrdiff_t next = 0;
	for (int entries = 0; entries < 4096 && (next = dwarf_getlocations(at, next, &base, &start, &end, &ops, &n)) > 0;
	     entries++) {
		uint64_t off = 0;
		if (n && (ops[0].atom == DW_OP_constu || ops[0].atom == DW_OP_consts ||
			  (ops[0].atom >= DW_OP_lit0 && ops[0].atom <= DW_OP_lit31)))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (ops[i].atom == DW_OP_piece) {
				if (i == 0) {
					off = ops[i].number;
					continue;
				}
				if (off < addr_size)
					first |= 1ull << off;
				else if (off - addr_size < 64)
					second |= 1ull << (off - addr_size);
				off += ops[i].number;
			} else if (is_reg_op(ops[i].atom) && (off < addr_size || reg == CUS_PIECE_NO_REG)) {
				reg = reg_of(&ops[i]) < CUS_PIECE_NO_REG ? reg_of(&ops[i]) : CUS_PIECE_NO_REG;
			}
		}
	}
	if (!first && !second)
		return 0;
	uint32_t at_plus1 = 0;
	if (!(first && second) && __builtin_popcountll(first | second) == 1)
		at_plus1 = (first ? (uint32_t)__builtin_ctzll(first) : addr_size + (uint32_t)__builtin_ctzll(second)) + 1;
	*loc_reg = reg | (at_plus1 < 256 ? at_plus1 << 16 : 0);
	return 1;
}

/* The register pahole 1.32 reads a parameter's location as
 * (dwarf_loader.c, parameter__decode_location()), for a location that is
 * not a plain register: in the list's first entry, DW_OP_bregN with a
 * DW_OP_stack_value (the value is register N's, computed on: clang's
 * `DW_OP_breg1 RDX+0, DW_OP_constu 0xffffffff, DW_OP_and, ...,
 * DW_OP_stack_value` for a bool in rdx), or DW_OP_regN first among several
 * operations of a parameter no larger than a register; else, in any entry,
 * `DW_OP_entry_value(DW_OP_regN)`: the value the caller passed in N.
 * Returns the register, or -1. */
static int param_entry_reg(Dwarf_Attribute *at, unsigned addr_size, Dwarf_Word size)
{
	Dwarf_Addr base, start, end;
	Dwarf_Op *ops;
	size_t n;
	ptrdiff_t next = 0;
	for (int k = 0; k < 4096 && (next = dwarf_getlocations(at, next, &base, &start, &end, &ops, &n)) > 0; k++) {
		if (!n)
			continue;
		int sv = ops[n - 1].atom == DW_OP_stack_value;
		size_t len = n == 2 && sv ? 1 : n;
		uint8_t op0 = ops[0].atom;
		if (len > 1) {
			if (k == 0 && size <= addr_size) {
				if (op0 >= DW_OP_reg0 && op0 <= DW_OP_reg31)
					return op0 - DW_OP_reg0;
				for (size_t i = 0; op0 >= DW_OP_breg0 && op0 <= DW_OP_breg31 && i < n; i++)
					if (ops[i].atom == DW_OP_stack_value)
						return op0 - DW_OP_breg0;
			}
			continue;
		}
		if (k == 0 && op0 >= DW_OP_breg0 && op0 <= DW_OP_breg31 && sv)
			return op0 - DW_OP_breg0;
		if (op0 == DW_OP_entry_value || op0 == DW_OP_GNU_entry_value) {
			Dwarf_Attribute ea;
			Dwarf_Op *eops;
			size_t en;
			if (dwarf_getlocation_attr(at, &ops[0], &ea) == 0 && dwarf_getlocation(&ea, &eops, &en) == 0 && en == 1 &&
			    eops[0].atom >= DW_OP_reg0 && eops[0].atom <= DW_OP_reg31)
				return eops[0].atom - DW_OP_reg0;
		}
	}
	return -1;
}

/* Where a parameter lives at function entry (spec: "loc"). */
static void param_loc(Dwarf_Die *die, const struct die_attrs *a, unsigned addr_size, struct cus_rec *r)
{
	if (!HAS(a, LOCATION)) {
		r->loc = HAS(a, CONST_VALUE) ? CUS_LOC_CONST : CUS_LOC_NONE;
		return;
	}
	Dwarf_Attribute at = a->location;
	Dwarf_Addr base, start, end;
	Dwarf_Op *ops;
	size_t n;
	ptrdiff_t got = dwarf_getlocations(&at, 0, &base, &start, &end, &ops, &n);
	if (got <= 0) {
		r->loc = got == 0 ? CUS_LOC_EMPTY : CUS_LOC_EXPR;
		return;
	}
	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		r->loc = CUS_LOC_REG;
		r->loc_reg = ops[0].atom - DW_OP_reg0;
		return;
	}
	if (n == 1 && ops[0].atom == DW_OP_regx) {
		r->loc = CUS_LOC_REG;
		r->loc_reg = (uint32_t)ops[0].number;
		return;
	}
	r->loc = n == 1 && ops[0].atom == DW_OP_fbreg ? CUS_LOC_STACK : n ? CUS_LOC_EXPR : CUS_LOC_EMPTY;
	Dwarf_Word size = addr_size ? param_type_size(die) : 0;
	/* Pieces only matter for an aggregate passed in two registers
	 * (pahole's agg_use_two_regs: not on s390, whose ABI passes larger
	 * ones by reference). */
	if (n > 1 && size > addr_size && size <= 2 * addr_size && param_pieces(&at, addr_size, &r->loc_reg)) {
		r->loc = CUS_LOC_PIECES;
		return;
	}
	/* Not a register as written, but one as pahole reads it: a register. */
	int reg = param_entry_reg(&at, addr_size, size);
	if (reg >= 0) {
		r->loc = CUS_LOC_REG;
		r->loc_reg = (uint32_t)reg;
	}
}

static int rec_param(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx;
	int err = rec_with_annots(w, die, CUS_PARAM, a, &idx);
	if (err)
		return err;
	cus_ref origin;
	if ((err = cu_recs__ref(w, HAS(a, ORIGIN) ? a->origin : 0, &origin)))
		return err;
	struct cus_rec *r = rec_at(w, idx);
	r->origin = origin;
	param_loc(die, a, w->in->ident.e_machine == EM_S390 ? 0 : w->cu.addr_size, r);
	return 0;
}

/* A function's entry address: DW_AT_low_pc, else DW_AT_entry_pc, else the
 * first of DW_AT_ranges. Returns 1 when it has code. */
static int func_pc(Dwarf_Die *die, const struct die_attrs *a, Dwarf_Addr *pc)
{
	if (HAS(a, LOW_PC) && dwarf_lowpc(die, pc) == 0)
		return 1;
	if (HAS(a, ENTRY_PC) && dwarf_entrypc(die, pc) == 0)
		return 1;
	if (HAS(a, RANGES)) {
		Dwarf_Addr base, start, end;
		if (dwarf_ranges(die, 0, &base, &start, &end) > 0) {
			*pc = start;
			return 1;
		}
	}
	return 0;
}

static int rec_func(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a)
{
	uint32_t idx, linkage;
	cus_ref origin, spec;
	int err = rec_begin(w, die, CUS_FUNC, a, &idx);
	if (err || (err = cu_recs__str(w, a->linkage_name, &linkage)) ||
	    (err = cu_recs__ref(w, HAS(a, ORIGIN) ? a->origin : 0, &origin)) ||
	    (err = cu_recs__ref(w, HAS(a, SPEC) ? a->spec : 0, &spec)))
		return err;
	uint32_t flags = rec_at(w, idx)->flags, nparams = 0, afirst = 0, acount = 0;
	size_t base = w->npend_annots;
	Dwarf_Die c;
	if (die_first_child(&w->rd, die, &c)) {
		do {
			int ct = die_tag(&w->rd, &c);
			if (ct == DW_TAG_formal_parameter) {
				struct die_attrs p;
				if ((err = die_attrs__read(&w->rd, &c, w->dw, &p, w->d)) ||
				    (err = rec_param(w, &c, &p)))
					return err;
				nparams++;
			} else if (ct == DW_TAG_unspecified_parameters) {
				flags |= CUS_F_VARARGS;
			} else if (ct == DW_TAG_LLVM_annotation) {
				err = pend_annot(w, &c);
			} else if (is_template_param(ct)) {
				flags |= CUS_F_TEMPLATE;
			}
			if (err)
				return err;
		} while (die_next(&w->rd, &c));
	}
	if ((err = flush_annots(w, base, &flags, &afirst, &acount)))
		return err;
	Dwarf_Addr pc = 0;
	uint32_t shndx = 0;
	if ((HAS(a, LOW_PC) || HAS(a, ENTRY_PC) || HAS(a, RANGES)) && (err = cu_recs__patch(w, idx)))
		return err;
	if (func_pc(die, a, &pc)) {
		flags |= CUS_F_HAS_PC;
		shndx = input__section_of(w->in, &pc);
	}
	struct cus_rec *r = rec_at(w, idx);
	r->flags = flags;
	r->linkage = linkage;
	r->origin = origin;
	r->spec = spec;
	r->inline_kind = (uint32_t)a->inline_kind;
	r->cc = (uint32_t)a->cc;
	r->item_count = nparams;
	r->addr = pc;
	r->shndx = shndx;
	r->annot_first = afirst;
	r->annot_count = acount;
	return 0;
}

/* A static address: a location that is exactly DW_OP_addr or DW_OP_addrx. */
static int var_addr(const struct die_attrs *a, Dwarf_Addr *addr)
{
	Dwarf_Attribute at = a->location;
	Dwarf_Op *ops;
	size_t n;
	if (dwarf_getlocation(&at, &ops, &n) != 0 || n != 1)
		return 0;
	if (ops[0].atom == DW_OP_addr) {
		*addr = ops[0].number;
		return 1;
	}
	if (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) {
		Dwarf_Attribute res;
		return dwarf_getlocation_attr(&at, &ops[0], &res) == 0 && dwarf_formaddr(&res, addr) == 0;
	}
	return 0;
}

static int rec_var(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a, int toplevel)
{
	uint32_t idx, linkage;
	cus_ref spec;
	int err = rec_with_annots(w, die, CUS_VAR, a, &idx);
	if (err || (err = cu_recs__str(w, a->linkage_name, &linkage)) ||
	    (err = cu_recs__ref(w, HAS(a, SPEC) ? a->spec : 0, &spec)))
		return err;
	struct cus_rec *r = rec_at(w, idx);
	r->linkage = linkage;
	r->spec = spec;
	if (toplevel)
		r->flags |= CUS_F_TOPLEVEL;
	if (HAS(a, CONST_VALUE))
		r->flags |= CUS_F_CONST_VALUE;
	Dwarf_Addr addr;
	if (HAS(a, LOCATION) && var_addr(a, &addr)) {
		if ((err = cu_recs__patch(w, idx)))
			return err;
		r = rec_at(w, idx);
		r->flags |= CUS_F_HAS_ADDR;
		r->shndx = input__section_of(w->in, &addr);
		r->addr = addr;
	}
	return 0;
}

static int rec_unsupported(struct cu_walk *w, Dwarf_Die *die, const struct die_attrs *a, int tag)
{
	uint32_t idx;
	int err = rec_begin(w, die, CUS_UNSUPPORTED, a, &idx);
	if (!err)
		rec_at(w, idx)->tag = (uint32_t)tag;
	return err;
}

int die_record__addr(struct cu_walk *w, uint64_t die_off, uint8_t kind, uint64_t *addr,
		     uint32_t *shndx)
{
	Dwarf_Die die;
	struct die_attrs a;
	int err = cu_recs__offdie(w, die_off, &die);
	if (!err)
		err = die_attrs__read(&w->rd, &die, w->dw, &a, w->d);
	if (err)
		return err;
	Dwarf_Addr at = 0;
	int has = kind == CUS_FUNC ? func_pc(&die, &a, &at)
				   : kind == CUS_VAR && HAS(&a, LOCATION) && var_addr(&a, &at);
	if (has)
		*shndx = input__section_of(w->in, &at);
	*addr = at;
	return has;
}

int die_record__add(struct cu_walk *w, Dwarf_Die *die, int toplevel)
{
	struct die_attrs a;
	int tag = die_tag(&w->rd, die);
	int err = die_attrs__read(&w->rd, die, w->dw, &a, w->d);
	if (err)
		return err;
	uint32_t idx;
	switch (tag) {
	case DW_TAG_base_type:
		return rec_base(w, die, &a);
	case DW_TAG_pointer_type:
		return rec_ptr(w, die, &a);
	case DW_TAG_const_type:
		return rec_with_annots(w, die, CUS_CONST, &a, &idx);
	case DW_TAG_volatile_type:
		return rec_with_annots(w, die, CUS_VOLATILE, &a, &idx);
	case DW_TAG_restrict_type:
		return rec_with_annots(w, die, CUS_RESTRICT, &a, &idx);
	case DW_TAG_atomic_type:
		return rec_with_annots(w, die, CUS_ATOMIC, &a, &idx);
	case DW_TAG_typedef:
		return rec_with_annots(w, die, CUS_TYPEDEF, &a, &idx);
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return rec_struct(w, die, &a, tag);
	case DW_TAG_enumeration_type:
		return rec_enum(w, die, &a);
	case DW_TAG_array_type:
		return rec_array(w, die, &a);
	case DW_TAG_subroutine_type:
		return rec_subroutine(w, die, &a);
	case DW_TAG_subprogram:
		return rec_func(w, die, &a);
	case DW_TAG_formal_parameter:
		return rec_param(w, die, &a); /* only on demand: normally after its func */
	case DW_TAG_variable:
		return rec_var(w, die, &a, toplevel);
	case DW_TAG_unspecified_type:
		return rec_begin(w, die, CUS_UNSPECIFIED, &a, &idx);
	default:
		return rec_unsupported(w, die, &a, tag);
	}
}
