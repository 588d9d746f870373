/* abi.c: what the calling convention says about a function's parameters,
 * read by the FUNC rules (funcs.c: rules 6 and 7) and by the true
 * signature's planning (types.c) alike: the argument registers of an
 * architecture, a parameter's size and kind through typedefs, and which
 * parameters a clone is still passed. Facts of the ABI as pahole 1.32
 * reads them, so that both users read the same ones.
 */
#include "abi.h"
#include "../../format/cus.h"
#include "../../format/graph.h"

#include <dwarf.h>
#include <gelf.h>

#define DW_CC_nocall_ 0x3

/* ---- through qualifiers and typedefs ---- */

uint32_t abi__strip_cv(const struct graph *g, uint32_t t)
{
	while (t && (g->nodes[t].kind == G_CONST || g->nodes[t].kind == G_VOLATILE ||
		     g->nodes[t].kind == G_ATOMIC))
		t = g->nodes[t].type;
	return t;
}

/* t through typedefs and qualifiers. Bounded: funcs__select() runs before
 * types__plan() refuses a loop of typedefs. */
uint32_t abi__strip_typedefs(const struct graph *g, uint32_t t)
{
	for (int depth = 0; t && depth < 64; depth++) {
		t = abi__strip_cv(g, t);
		if (!t || g->nodes[t].kind != G_TYPEDEF)
			return t;
		t = g->nodes[t].type;
	}
	return t;
}

/* ---- the argument registers ---- */

/* pahole's arch__nr_register_params(): how many argument registers; 0 for
 * an architecture it has no count for (then only a missing location or a
 * constant is evidence). */
unsigned abi__arg_reg_count(uint16_t machine)
{
	switch (machine) {
	case EM_S390: return 5;
	case EM_SPARC: case EM_SPARCV9: case EM_X86_64: return 6;
	case EM_AARCH64: case EM_ARC: case EM_ARM: case EM_MIPS: case EM_PPC: case EM_PPC64: case EM_RISCV: return 8;
	}
	return 0;
}

int abi__is_struct_by_value(const struct graph *g, uint32_t t)
{
	for (int depth = 0; t && depth < 16; depth++) {
		const struct graph_node *n = &g->nodes[t];
		if (n->kind == G_STRUCT || n->kind == G_UNION)
			return 1;
		if (n->kind != G_TYPEDEF && n->kind != G_CONST && n->kind != G_VOLATILE)
			return 0;
		t = n->type;
	}
	return 0;
}

int abi__is_float(const struct graph *g, uint32_t t)
{
	t = abi__strip_typedefs(g, t);
	return t && g->nodes[t].kind == G_BASE &&
	       (g->nodes[t].encoding == DW_ATE_float || g->nodes[t].encoding == DW_ATE_complex_float);
}

/* The DWARF register numbers of the integer argument registers, in order. */
const uint8_t *abi__regs(uint16_t machine, size_t *n)
{
	static const uint8_t x86_64[] = { 5, 4, 1, 2, 8, 9 };
	static const uint8_t arm64[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	switch (machine) {
	case EM_X86_64: *n = sizeof(x86_64); return x86_64;
	case EM_AARCH64: *n = sizeof(arm64); return arm64;
	}
	*n = 0;
	return NULL;
}

/* ---- a parameter's type ---- */

/* A parameter's byte size through typedefs and qualifiers (pointers: 8). */
uint64_t abi__param_size(const struct graph *g, uint32_t t)
{
	t = abi__strip_typedefs(g, t);
	return !t ? 0 : g->nodes[t].kind == G_PTR ? 8 : g->nodes[t].size;
}

/* ---- true_signature's parameters ---- */

/* The direct member of struct type t (through typedefs and qualifiers)
 * that starts at byte off: its index in g->items, or UINT32_MAX (a union,
 * or no member starts there: pahole looks no deeper). */
static uint32_t member_at(const struct graph *g, uint32_t t, uint64_t off)
{
	t = abi__strip_typedefs(g, t);
	const struct graph_node *n = t ? &g->nodes[t] : NULL;
	for (uint32_t k = 0; n && n->kind == G_STRUCT && k < n->item_count; k++) {
		const struct graph_item *it = &g->items[n->item_first + k];
		if (it->value == off * 8 && *graph_str(g, it->name) && it->type)
			return n->item_first + k;
	}
	return UINT32_MAX;
}

/* The register a parameter's location names at entry, or -1. */
static int loc_register(const struct graph_loc *l)
{
	if (l->loc == CUS_LOC_REG)
		return (int)l->loc_reg;
	if (l->loc == CUS_LOC_PIECES && CUS_PIECE_REG(l->loc_reg) != CUS_PIECE_NO_REG)
		return (int)CUS_PIECE_REG(l->loc_reg);
	return -1;
}

void abi__true_sig_params(const struct graph *g, const struct graph_func *f, uint8_t *keep, uint32_t *member)
{
	const struct graph_node *p = &g->nodes[f->proto];
	size_t nregs;
	const uint8_t *regs = abi__regs(g->ninputs ? g->inputs[0].e_machine : 0, &nregs);
	uint32_t n = p->item_count < f->loc_count ? p->item_count : f->loc_count;
	for (uint32_t k = 0; k < p->item_count; k++) {
		keep[k] = k < n && g->locs[f->loc_first + k].loc == CUS_LOC_REG;
		member[k] = UINT32_MAX;
	}
	/* A GCC clone drops what it does not pass: the rule above. clang's
	 * DW_CC_nocall function keeps the ABI's register slots, as pahole's
	 * function__analyze_parameter_locations() walks them: a parameter
	 * with no location is kept when the next one still sits in the
	 * register after its slots (it was passed, just unused); an aggregate
	 * of two registers of which one piece is left becomes that field,
	 * unless the next parameter shows the aggregate still takes both. */
	if (f->cc != DW_CC_nocall_ || !regs)
		return;
	uint32_t reg_idx = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct graph_loc *l = &g->locs[f->loc_first + k];
		uint64_t size = abi__param_size(g, g->items[p->item_first + k].type);
		uint32_t slots = size > 8 && size <= 16 ? 2 : 1;
		const struct graph_loc *next = k + 1 < n ? &g->locs[f->loc_first + k + 1] : NULL;
		int next_keeps_slots = next && loc_register(next) >= 0 && reg_idx + slots < nregs &&
				       loc_register(next) == regs[reg_idx + slots];
		if (reg_idx >= nregs && (l->loc == CUS_LOC_REG || l->loc == CUS_LOC_STACK || l->loc == CUS_LOC_PIECES)) {
			keep[k] = 1; /* past the argument registers: passed as it was */
		} else if (l->loc == CUS_LOC_REG) {
			reg_idx += size > 16 ? 1 : slots;
		} else if (l->loc == CUS_LOC_STACK && size > 16) {
			keep[k] = 1; /* passed in memory, as the ABI passes it: no register */
		} else if (l->loc == CUS_LOC_PIECES) {
			keep[k] = 1;
			uint32_t at = CUS_PIECE_AT(l->loc_reg);
			if (at && !next_keeps_slots &&
			    (member[k] = member_at(g, g->items[p->item_first + k].type, at - 1)) != UINT32_MAX)
				reg_idx += 1;
			else
				reg_idx += slots;
		} else if ((l->loc == CUS_LOC_NONE || l->loc == CUS_LOC_CONST) && reg_idx < nregs && next_keeps_slots) {
			keep[k] = 1; /* passed, unused: no location, a register still taken */
			reg_idx += slots;
		}
	}
}
