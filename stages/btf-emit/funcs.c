/* funcs.c: which function candidates become BTF FUNCs. The policy lives here
 * and only here, rule by rule as current pahole applies them for its
 * `default` features (its btf_encoder.c and dwarf_loader.c); every candidate left
 * out gets its reason in the skip report.
 *
 *  1. The symbol table decides which functions exist: STT_FUNC symbols with a
 *     value, grouped by the name before the first '.' (foo.isra.0 is foo);
 *     pieces of functions (.cold, .part) are not functions. No symbol: skip.
 *  2. Ambiguous address: one name, several distinct symbol addresses (a
 *     static foo in two files, or foo beside foo.constprop.0): skip, since
 *     no single prototype describes both.
 *  3. A parameter without a name, or a prototype needing a type BTF cannot
 *     express: that candidate is not usable.
 *  4. consistent_func: the usable candidates of a name must agree on the
 *     prototype (loosely: const ignored, structs/unions/enums/typedefs by
 *     name, a fwd equal to its struct); otherwise skip.
 *  5. The canonical candidate is one whose pc is the symbol's address (the
 *     strong definition beats a weak one), else the first in CU order.
 *     pahole 1.32 differs, wrongly (5-cold, t1016): it reads a function's
 *     address from DW_AT_low_pc only, so for a definition GCC split into
 *     foo and foo.cold (DW_AT_ranges) it finds none at the address and
 *     takes the first CU's description: the names of a weak stub the
 *     linker dropped (7.2's syscall wrappers: __unused, not regs).
 *  6. Optimized-out parameters (no location, a constant, or, while an
 *     argument register is left for it, a location that is not a single
 *     register at entry; past the argument registers a parameter is on the
 *     stack, as the ABI puts it) only matter when the calling convention
 *     changed: clang's DW_CC_nocall, or the symbol at the address is a
 *     .isra / .constprop clone. Then skip. pahole 1.32 differs, wrongly
 *     (6-cold, t1016): seeing no address for a clone split into foo.isra.0
 *     and its .cold, it never finds the clone's symbol, and encodes the
 *     source signature with parameters the clone is not passed (43 such
 *     functions in Debian's 7.2 vmlinux). And (6-pieces) where a clone is
 *     passed one field of a by-value aggregate in a register (DW_OP_piece),
 *     pahole takes that register for the whole aggregate, which the ABI
 *     passes in memory (ZSTD_customFree.isra.0 in a 7.2 gcc-12 build), or
 *     where clang's DW_CC_nocall function gets only one register of a
 *     two-register aggregate (map_delete_elem's bpfptr_t in a 7.2 thin-LTO
 *     build, t1015's ts_agg): for us a location in pieces is not a
 *     register, so optimized.
 *  7. Unexpected register (x86_64, arm64): a parameter in a register other
 *     than the ABI's for its position means the signature is not the one the
 *     code has: skip, unless a struct is passed by value (which takes several
 *     registers and shifts the rest) or the parameter is floating point
 *     (passed in vector registers; pahole skips these, wrongly). Any usable
 *     candidate with code counts, as pahole 1.32 ORs unexpected_reg over a
 *     name: GCC's foo.part.0 body of a partly inlined foo, whose parameters
 *     sit in callee-saved registers (6.12's ZSTD_DCtx_refDDict).
 *  8. Reordered parameters: the i-th parameter's abstract origin is not the
 *     origin's i-th parameter (a clone dropped or moved some) in any usable
 *     candidate, the canonical one or another (GCC 16's foo.part.0 clones
 *     beside foo): skip, as pahole 1.32 ORs reordered_parm over a name.
 *  9. Uncertain location: a named packed struct passed by value past the
 *     argument registers, where no tracer can tell where its bytes are:
 *     skip (pahole 1.32's rule, t1000's fs_packed_7th / fs_packed_2nd).
 * With the opt-in feature true_signature, a function that rule 6 would skip
 * is encoded instead with the signature its code has: under the clone's
 * symbol name (foo.isra.0) and with only the parameters still passed
 * (abi__true_sig_params(): for clang's DW_CC_nocall, pahole's walk over
 * the ABI's register slots, an aggregate of which one field is left
 * written as that field, `param__field`).
 * FUNCs are added in name order with linkage static, as pahole writes them
 * all, each with its decl tags and, for kfuncs, bpf_kfunc / bpf_fastcall.
 *
 * With attributes (and decl_tag_kfuncs), an arena kfunc's flagged pointers
 * point to an address_space(1) attribute: its prototype is its own
 * (types.c, plan_pick_protos()).
 */
#include "funcs.h"
#include "abi.h"
#include "btf_writer.h"
#include "elf_info.h"
#include "emit.h"
#include "skip_log.h"
#include "types.h"
#include "../../format/cus.h"
#include "../../format/graph.h"
#include "../../common/diag.h"
#include "../../common/pool.h"
#include "../../common/strsort.h"

#include <bpf/btf.h>
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define DW_CC_nocall_ 0x3

/* ---- rule 1 and 2: the symbol group of a name ---- */

struct sym_group {
	size_t naddrs;
	uint64_t addr;		/* the address, when naddrs == 1 */
	uint32_t shndx;
	int clone;		/* the symbol at addr is a .isra/.constprop clone */
};

static int is_piece(const char *name)
{
	return strstr(name, ".cold") || strstr(name, ".part");
}

/* The STT_FUNC symbols named base or base.suffix: how many distinct
 * addresses they have, and whether a clone's name sits at the address.
 * *hint: where the last group began (names come in sorted order), then
 * where this one begins. */
static void symbol_group(const struct elf_info *ei, const char *base, struct sym_group *grp, size_t *hint)
{
	size_t len = strlen(base);
	memset(grp, 0, sizeof(*grp));
	*hint = elf_info__lower_bound_from(ei, base, *hint);
	for (size_t i = *hint; i < ei->nsyms && !strncmp(ei->syms[i].name, base, len); i++) {
		const struct elf_sym *s = &ei->syms[i];
		char next = s->name[len];
		/* A function of a .o/.ko can sit at offset 0 of its own section;
		 * in a linked file a zero value means no code. */
		int defined = ei->is_rel ? s->shndx != SHN_UNDEF : s->value != 0;
		if ((next && next != '.') || s->type != STT_FUNC || !defined || is_piece(s->name))
			continue;
		if (!grp->naddrs) {
			grp->naddrs = 1;
			grp->addr = s->value;
			grp->shndx = s->shndx;
		} else if (grp->addr != s->value || (ei->is_rel && grp->shndx != s->shndx)) {
			grp->naddrs = 2; /* that is all rule 2 needs to know */
		}
		if (strstr(s->name, ".isra") || strstr(s->name, ".constprop"))
			grp->clone = 1;
	}
}

/* ---- rule 4: loose prototype comparison ---- */

static int named_kind(const struct graph_node *n)
{
	switch (n->kind) {
	case G_STRUCT: case G_FWD: return n->kind == G_FWD && n->fwd_kind == G_FWD_UNION ? 'U' :
						 n->kind == G_FWD && n->fwd_kind == G_FWD_ENUM ? 'E' : 'S';
	case G_UNION: return 'U';
	case G_ENUM: return 'E';
	case G_TYPEDEF: return 'T';
	}
	return 0;
}

static int types_match(const struct graph *g, uint32_t a, uint32_t b, int depth)
{
	a = abi__strip_cv(g, a);
	b = abi__strip_cv(g, b);
	if (a == b)
		return 1;
	if (!a || !b || depth > 16)
		return 0;
	const struct graph_node *x = &g->nodes[a], *y = &g->nodes[b];
	int ka = named_kind(x), kb = named_kind(y);
	if (ka || kb)
		return ka == kb && x->name == y->name;
	if (x->kind != y->kind || x->name != y->name)
		return 0;
	switch (x->kind) {
	case G_PTR:
		return types_match(g, x->type, y->type, depth + 1);
	case G_ARRAY:
		if (x->item_count != y->item_count)
			return 0;
		for (uint32_t i = 0; i < x->item_count; i++)
			if (g->items[x->item_first + i].value != g->items[y->item_first + i].value)
				return 0;
		return types_match(g, x->type, y->type, depth + 1);
	case G_FUNC_PROTO:
		if (x->item_count != y->item_count || ((x->flags ^ y->flags) & G_F_VARARGS) ||
		    !types_match(g, x->type, y->type, depth + 1))
			return 0;
		for (uint32_t i = 0; i < x->item_count; i++)
			if (!types_match(g, g->items[x->item_first + i].type, g->items[y->item_first + i].type,
					 depth + 1))
				return 0;
		return 1;
	case G_BASE:
		return x->size == y->size && x->encoding == y->encoding;
	}
	return 0;
}

/* ---- rules 6 and 7 ---- */

/* Rule 6's evidence, as pahole 1.32 reads it (dwarf_loader.c,
 * function__analyze_parameter_locations() without true_signature): a
 * parameter with no location or a constant one, or one that still has an
 * argument register left (counted as pahole counts them: an aggregate of
 * two address sizes at most takes its size's worth, anything else one) but
 * whose location is not a single register at entry. A parameter past the
 * argument registers is passed on the stack, where its location says
 * nothing about the ABI (qdisc_notify.isra.0's 7th, at its stack slot). */
static int params_optimized(const struct graph *g, const struct graph_func *f)
{
	const struct graph_input *in = g->ninputs ? &g->inputs[0] : NULL;
	uint16_t machine = in ? in->e_machine : 0;
	unsigned nregs = abi__arg_reg_count(machine), reg_idx = 0;
	uint64_t asz = in && in->ei_class == ELFCLASS32 ? 4 : 8;
	int two_regs = machine != EM_S390;
	const struct graph_node *p = &g->nodes[f->proto];
	for (uint32_t i = 0; i < f->loc_count; i++) {
		const struct graph_loc *l = &g->locs[f->loc_first + i];
		if (l->loc == CUS_LOC_NONE || l->loc == CUS_LOC_CONST)
			return 1;
		if (reg_idx < nregs && l->loc != CUS_LOC_REG)
			return 1;
		uint64_t size = i < p->item_count ? abi__param_size(g, g->items[p->item_first + i].type) : 0;
		reg_idx += !two_regs || size <= asz || size > 2 * asz ? 1 : (unsigned)((size + asz - 1) / asz);
	}
	return 0;
}

static int unexpected_register(const struct graph *g, const struct graph_func *f, uint16_t machine)
{
	size_t nregs;
	const uint8_t *regs = abi__regs(machine, &nregs);
	const struct graph_node *p = &g->nodes[f->proto];
	if (!regs || !(f->flags & G_F_HAS_PC))
		return 0;
	for (uint32_t i = 0; i < p->item_count; i++)
		if (abi__is_struct_by_value(g, g->items[p->item_first + i].type))
			return 0;
	for (uint32_t i = 0; i < f->loc_count && i < nregs && i < p->item_count; i++) {
		const struct graph_loc *l = &g->locs[f->loc_first + i];
		if (l->loc == 1 && l->loc_reg != regs[i] && !abi__is_float(g, g->items[p->item_first + i].type))
			return 1;
	}
	return 0;
}

/* ---- rule 9 ---- */

static uint64_t type_align(const struct graph *g, uint32_t t, int depth)
{
	t = abi__strip_cv(g, t);
	if (!t || depth > 16)
		return 1;
	const struct graph_node *n = &g->nodes[t];
	switch (n->kind) {
	case G_TYPEDEF:
		return type_align(g, n->type, depth + 1);
	case G_ARRAY:
		return type_align(g, n->type, depth + 1);
	case G_STRUCT: case G_UNION: {
		uint64_t a = 1;
		for (uint32_t i = 0; i < n->item_count; i++) {
			uint64_t m = type_align(g, g->items[n->item_first + i].type, depth + 1);
			a = m > a ? m : a;
		}
		return a;
	}
	case G_PTR:
		return 8;
	default:
		return n->size && n->size <= 8 ? n->size : n->size > 8 ? 8 : 1;
	}
}

/* A struct whose members sit off their natural alignment was packed. */
static int is_packed(const struct graph *g, uint32_t t)
{
	t = abi__strip_cv(g, t);
	while (t && g->nodes[t].kind == G_TYPEDEF)
		t = abi__strip_cv(g, g->nodes[t].type);
	const struct graph_node *n = t ? &g->nodes[t] : NULL;
	if (!n || (n->kind != G_STRUCT && n->kind != G_UNION))
		return 0;
	for (uint32_t i = 0; i < n->item_count; i++) {
		const struct graph_item *m = &g->items[n->item_first + i];
		if (!m->bit_size && m->value % (8 * type_align(g, m->type, 0)))
			return 1;
	}
	return n->size % type_align(g, t, 0) != 0;
}

/* Rule 9, as pahole 1.32 decides it (btf_encoder.c,
 * ftype__has_uncertain_arg_loc()): a parameter past the argument registers
 * whose own type (no typedef or qualifier looked through) is a named,
 * packed struct. Such a struct sits in a stack slot whose alignment no
 * tracer can be sure of. A packed struct passed in memory before that (a
 * 20-byte one as the 2nd parameter, zero_fill_bio_iter(bio, start) in 6.12)
 * starts the stack arguments, where the ABI puts it: encoded. */
static int uncertain_location(const struct graph *g, const struct graph_func *f, uint16_t machine)
{
	const struct graph_node *p = &g->nodes[f->proto];
	unsigned nregs = abi__arg_reg_count(machine);
	for (uint32_t i = nregs; nregs && i < p->item_count; i++) {
		uint32_t t = g->items[p->item_first + i].type;
		const struct graph_node *n = t ? &g->nodes[t] : NULL;
		if (n && n->kind == G_STRUCT && *graph_str(g, n->name) && is_packed(g, t))
			return 1;
	}
	return 0;
}

/* ---- the rules applied to one name ---- */

static const char *judge(const struct graph *g, const struct elf_info *ei, const struct emit_opts *o,
			 const uint8_t *dropped, const uint32_t *cand, size_t n, size_t *pick, int *true_sig,
			 size_t *hint)
{
	*true_sig = 0;
	const char *name = graph_str(g, g->funcs[cand[0]].name);
	struct sym_group grp = { .naddrs = 1 };
	*pick = n;
	if (!*name)
		return "no name";
	if (!types__name_ok(name))
		return "a name BTF does not allow (C++ template or operator)";
	if (ei && ei->nsyms) {
		symbol_group(ei, name, &grp, hint);
		if (!grp.naddrs)
			return "no function symbol of that name";
		if (grp.naddrs > 1)
			return "ambiguous address: several symbols of that name at different addresses";
	}
	size_t usable = 0, first = n, at_addr = n;
	int reordered = 0; /* rule 8: any usable candidate, canonical or not */
	int unexpected = 0; /* rule 7: the same */
	const char *why = NULL;
	for (size_t k = 0; k < n; k++) {
		const struct graph_func *f = &g->funcs[cand[k]];
		if (f->flags & G_F_UNNAMED_PARAM) {
			why = "a parameter has no name";
			continue;
		}
		if (dropped[f->proto]) {
			why = "its prototype needs a type with no BTF form";
			continue;
		}
		usable++;
		reordered |= (f->flags & G_F_REORDERED) != 0;
		unexpected |= ei && !(f->flags & G_F_REORDERED) && unexpected_register(g, f, ei->machine);
		/* A clone that reordered or dropped parameters (rule 8) describes
		 * the same source function: it is judged by rule 8, not compared
		 * for consistency with the source's own description. */
		if (f->flags & G_F_REORDERED) {
		} else if (first == n) {
			first = k;
		} else if (HAS_FEAT(o, FEAT_CONSISTENT_FUNC) &&
			   !types_match(g, g->funcs[cand[first]].proto, f->proto, 0)) {
			return "inconsistent prototype across CUs";
		}
		int here = (f->flags & G_F_HAS_PC) && ei && ei->nsyms && f->pc == grp.addr &&
			   (!ei->is_rel || f->shndx == grp.shndx);
		if (here && (at_addr == n || (!unexpected_register(g, f, ei->machine) &&
					      unexpected_register(g, &g->funcs[cand[at_addr]], ei->machine))))
			at_addr = k;
	}
	if (!usable)
		return why;
	if (first == n) /* only reordered clones */
		first = 0;
	size_t c = at_addr < n ? at_addr : first;
	const struct graph_func *f = &g->funcs[cand[c]];
	int optimized = params_optimized(g, f);
	/* The ABI rules first: a clone's own parameter list (its order, its
	 * registers) is no evidence against the source signature. */
	const char *abi = NULL;
	if (optimized && f->cc == DW_CC_nocall_)
		abi = "optimized parameters: the calling convention changed (DW_CC_nocall)";
	else if (optimized && grp.clone && (f->flags & G_F_HAS_PC))
		abi = "optimized parameters: the symbol is a .isra/.constprop clone";
	if (abi && !HAS_FEAT(o, FEAT_TRUE_SIGNATURE))
		return abi;
	if (!abi && reordered)
		return "reordered parameters: a parameter's origin is at another position";
	if (!abi && unexpected)
		return "a parameter is in an unexpected register";
	if (ei && uncertain_location(g, f, ei->machine))
		return "uncertain parameter location: a packed struct passed on the stack";
	*pick = c;
	*true_sig = abi != NULL;
	return NULL;
}

/* Judging one name depends on no other (judge()'s symbol hint only saves a
 * search), so the candidates, sorted by name, are cut into chunks at name
 * boundaries and judged on the pool's threads; the verdicts are then taken
 * in name order, so the picks and the skip report are one thread's. */
enum { JUDGE_PER_THREAD = 16384 }; /* candidates: fewer are judged faster than a thread starts */

struct judge_run {
	const struct graph *g;
	const struct elf_info *ei;
	const struct emit_opts *o;
	const uint8_t *dropped;
	const uint32_t *order;	/* the candidates by name, then graph order */
	const size_t *bound;	/* chunk k: order[bound[k] .. bound[k + 1]), whole names */
	/* Per name, at the index of its first candidate in order[]: */
	uint32_t *end;		/* one past its last */
	const char **why;	/* why none is encoded, or NULL */
	uint32_t *pick;		/* else: the one encoded, with PICK_TRUE_SIG */
};

static const char *cand_name(const struct judge_run *r, size_t i)
{
	return graph_str(r->g, r->g->funcs[r->order[i]].name);
}

static int judge_chunk(void *ctx, unsigned worker, size_t k)
{
	struct judge_run *r = ctx;
	size_t hint = 0;
	(void)worker;
	for (size_t i = r->bound[k]; i < r->bound[k + 1];) {
		const char *name = cand_name(r, i);
		size_t end = i + 1, pick;
		while (end < r->bound[k + 1] && !strcmp(cand_name(r, end), name))
			end++;
		int true_sig;
		r->why[i] = judge(r->g, r->ei, r->o, r->dropped, r->order + i, end - i, &pick, &true_sig, &hint);
		if (!r->why[i])
			r->pick[i] = r->order[i + pick] | (true_sig ? PICK_TRUE_SIG : 0);
		r->end[i] = (uint32_t)end;
		i = end;
	}
	return 0;
}

int funcs__select(const struct graph *g, const struct elf_info *ei, const uint8_t *dropped,
		 const struct emit_opts *o, struct skip_log *skips, uint32_t **picks_out, size_t *npicks)
{
	size_t n = g->nfuncs;
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	uint32_t *picks = malloc((n + 1) * sizeof(*picks));
	struct strsort_item *by_name = malloc((n + 1) * sizeof(*by_name));
	int err = order && picks && by_name ? 0 : -ENOMEM;
	unsigned threads = pool_threads_for(o->cli.jobs, n, o->cli.jobs_exact ? 0 : JUDGE_PER_THREAD);
	/* By name, then graph order. */
	for (uint32_t i = 0; !err && i < n; i++)
		by_name[i] = (struct strsort_item){ graph_str(g, g->funcs[i].name), 0, i };
	if (!err)
		err = strsort_threads(by_name, n, threads);
	for (uint32_t i = 0; !err && i < n; i++)
		order[i] = by_name[i].idx;
	free(by_name);
	if (err) {
		free(order);
		free(picks);
		return err;
	}

	size_t nchunks = threads > 1 ? 4 * (size_t)threads : 1;
	size_t *bound = calloc(nchunks + 1, sizeof(*bound));
	struct judge_run r = { .g = g, .ei = ei, .o = o, .dropped = dropped, .order = order, .bound = bound };
	r.end = malloc((n + 1) * sizeof(*r.end));
	r.why = malloc((n + 1) * sizeof(*r.why));
	r.pick = malloc((n + 1) * sizeof(*r.pick));
	if (!bound || !r.end || !r.why || !r.pick)
		err = -ENOMEM;
	if (!err) {
		/* Even cuts, each moved on to the first candidate of a name. */
		for (size_t k = 1; k < nchunks; k++) {
			size_t b = n * k / nchunks;
			if (b < bound[k - 1])
				b = bound[k - 1];
			while (b > 0 && b < n && !strcmp(cand_name(&r, b - 1), cand_name(&r, b)))
				b++;
			bound[k] = b;
		}
		bound[nchunks] = n;
		/* judge_chunk() cannot fail: an error is the pool's own (threads
		 * that did not start), reported as in every stage, not hidden. */
		err = pool_ordered(threads, nchunks, nchunks, judge_chunk, NULL, &r);
	}
	size_t np = 0;
	for (size_t i = 0; !err && i < n; i = r.end[i]) {
		if (!r.why[i])
			picks[np++] = r.pick[i];
		else if (skips) {
			const char *name = cand_name(&r, i);
			skip_log__add(skips, "func", *name ? name : "(unnamed)", r.why[i], g, g->funcs[order[i]].cu);
		}
	}
	free(r.end);
	free(r.why);
	free(r.pick);
	free(bound);
	free(order);
	if (err) {
		free(picks);
		return err;
	}
	*picks_out = picks;
	*npicks = np;
	return 0;
}

/* true_signature: the clone's symbol name at the function's address (or the
 * name itself for DW_CC_nocall), with the prototype of only the parameters
 * that are still passed (a register location at entry) that types__plan()
 * planned. Returns the FUNC's id. */
static int add_true_signature(struct bw *btf, const struct graph_func *f, const struct elf_info *ei,
			      uint32_t proto, const char **name)
{
	const char *base = *name;
	size_t len = strlen(base);
	for (size_t i = elf_info__lower_bound(ei, base); ei && i < ei->nsyms && !strncmp(ei->syms[i].name, base, len); i++)
		if (ei->syms[i].name[len] == '.' && ei->syms[i].type == STT_FUNC && ei->syms[i].value == f->pc &&
		    (!ei->is_rel || ei->syms[i].shndx == f->shndx)) {
			*name = ei->syms[i].name;
			break;
		}
	return bw__add_func(btf, *name, BTF_FUNC_STATIC, (int)proto);
}

static int add_tag(struct bw *btf, const char *value, int id, int comp, const char *name, struct diag *d)
{
	int r = bw__add_decl_tag(btf, value, id, comp);
	return r < 0 ? diag_fail(d, -r, "function %.*s%s: decl tag %.*s%s refused: %s", DIAG_CLIP(name),
				 DIAG_CLIP(value), bw__strerror(r)) : 0;
}

int funcs__encode(struct bw *btf, const struct graph *g, const struct elf_info *ei, const uint32_t *picks,
		 size_t a, size_t b, const struct type_map *map, const struct emit_opts *o, struct diag *d)
{
	int err = 0, tags = HAS_FEAT(o, FEAT_DECL_TAG);
	for (size_t i = a; i < b && !err; i++) {
		const struct graph_func *f = &g->funcs[PICK_INDEX(picks[i])];
		const char *name = graph_str(g, f->name);
		/* A prototype of its own: a true signature's, an arena kfunc's. */
		uint32_t proto = map->pick_proto && map->pick_proto[i] ? map->pick_proto[i] : map->ids[f->proto];
		int id = (picks[i] & PICK_TRUE_SIG) ? add_true_signature(btf, f, ei, proto, &name)
						    : bw__add_func(btf, name, BTF_FUNC_STATIC, (int)proto);
		if (id < 0)
			return diag_fail(d, -id, "function %.*s%s: BTF cannot hold it: %s", DIAG_CLIP(name), bw__strerror(id));
		/* Decl tags: the parameters' (component = index), then the
		 * function's (-1), the order clang's own BTF has. */
		/* A true signature dropped parameters: only the function's own tags. */
		int first_comp = (picks[i] & PICK_TRUE_SIG) ? (int)f->loc_count : 0;
		for (int comp = first_comp; tags && comp <= (int)f->loc_count && !err; comp++) {
			int c = comp < (int)f->loc_count ? comp : -1;
			const struct graph_loc *l = c >= 0 ? &g->locs[f->loc_first + c] : NULL;
			uint32_t first = l ? l->annot_first : f->annot_first;
			uint32_t count = l ? l->annot_count : f->annot_count;
			for (uint32_t a = 0; a < count && !err; a++) {
				const struct graph_annot *an = &g->annots[first + a];
				if (!strcmp(graph_str(g, an->name), "btf_decl_tag"))
					err = add_tag(btf, graph_str(g, an->value), id, c, name, d);
			}
		}
		/* pahole writes these only with decl_tag on too. */
		uint32_t kflags;
		if (!err && tags && HAS_FEAT(o, FEAT_DECL_TAG_KFUNCS) && ei && elf_info__kfunc(ei, name, &kflags)) {
			err = add_tag(btf, "bpf_kfunc", id, -1, name, d);
			if (!err && (kflags & KF_FASTCALL))
				err = add_tag(btf, "bpf_fastcall", id, -1, name, d);
		}
	}
	return err;
}
