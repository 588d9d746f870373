/* graph_read.c: a `.graph` file read into a graph (spec:
 * format/TYPE-GRAPH.md). The reader validates the header and section table
 * (graph_head.c's checks, which graph__peek() makes too), then every
 * checksum, then decodes with a bounds-checked cursor, the last four
 * sections block by block on the pool, and checks every string ref and
 * node id. */
#include "graph.h"
#include "graph_head.h"
#include "graph_sections.h"
#include "../common/buf.h"
#include "../common/diag.h"
#include "../common/mapfile.h"
#include "../common/pool.h"
#include "../common/vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* One block's decoder (or the decoder of a whole section that has no
 * blocks: inputs, CUs). The cursor runs over the block's bytes; its start
 * is the section's, so messages give offsets in the section. The block's
 * items (a node's members, a function's parameters, provenance entries)
 * and annotations go to the places its header gave them in the graph's
 * arrays, [a_at, a_end) and [b_at, b_end): blocks are decoded side by side,
 * each into its own part. */
struct gdec {
	struct cursor c;
	struct graph *g;
	const char *path;
	int sec;
	struct diag *d;
	unsigned flags;		/* GRAPH_READ_* */
	const char *str;	/* the strings section, in the file */
	size_t str_size;
	struct graph_annot *annots;	/* this section's list (join_annots()) */
	size_t a_at, a_end, b_at, b_end;
};

static int gfail(struct gdec *x, const char *why)
{
	return diag_fail(x->d, EBADMSG, "%s: section %s at offset %zu: %s", x->path,
			 graph_section_names[x->sec], cursor_off(&x->c), why);
}

/* Inlined: the reader calls these for every field (1.7 million times on a
 * vmlinux graph), where GCC kept them as calls. */
static inline __attribute__((always_inline)) uint32_t g_u32(struct gdec *x)
{
	uint64_t v = cur_uleb(&x->c);
	if (v > UINT32_MAX && !x->c.err)
		x->c.err = -EBADMSG;
	return (uint32_t)v;
}

static inline __attribute__((always_inline)) uint32_t g_str(struct gdec *x)
{
	uint32_t r = g_u32(x);
	if (!x->c.err && (r >= x->str_size || (r && x->str[r - 1])))
		x->c.err = -ERANGE;
	return r;
}

/* A count whose elements take at least min_bytes each. */
static int g_count(struct gdec *x, size_t *out, size_t min_bytes)
{
	uint64_t n = cur_uleb(&x->c);
	*out = 0;
	if (x->c.err)
		return x->c.err;
	if (n * min_bytes > cursor_left(&x->c) || n >= UINT32_MAX - 2)
		return gfail(x, "count larger than the rest of the section");
	*out = (size_t)n;
	return 0;
}

static const char more_than_header[] = "more records than its block's header counts";

/* *first: an index into this section's own list, until check_work() moves
 * it to where join_annots() put that list. */
static int g_annots(struct gdec *x, uint32_t *first, uint32_t *count)
{
	size_t n;
	if (g_count(x, &n, 2))
		return -EBADMSG;
	if (n > x->b_end - x->b_at)
		return gfail(x, more_than_header);
	*first = (uint32_t)x->b_at;
	*count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		x->annots[x->b_at].name = g_str(x);
		x->annots[x->b_at++].value = g_str(x);
	}
	return x->c.err;
}

/* The fields of graph.h's tables, each read as its encoding says; what a
 * ref or a name-giving u32 holds is checked after the read (check_nodes()
 * and the kind checks below). */
#define G_u32(x, n) g_u32(x)
#define G_u64(x, n) cur_uleb(&(x)->c)
#define G_ref(x, n) g_u32(x)
#define G_str(x, n) g_str(x)
#define G_ate(x, n) g_u32(x)
#define G_tag(x, n) g_u32(x)
#define G_fwd(x, n) g_u32(x)
#define G_loc(x, n) g_u32(x)
#define G_mflags(x, n) g_u32(x)
#define G_eval(x, n) (((n)->flags & G_F_SIGNED) ? (uint64_t)cur_sleb(&(x)->c) : cur_uleb(&(x)->c))

static int g_items(struct gdec *x, struct graph_node *n)
{
	struct graph *g = x->g;
	size_t count;
	if (g_count(x, &count, 1))
		return -EBADMSG;
	if (count > x->a_end - x->a_at)
		return gfail(x, more_than_header);
	n->item_first = (uint32_t)x->a_at;
	n->item_count = (uint32_t)count;
	for (size_t i = 0; i < count && !x->c.err; i++) {
		struct graph_item *it = &g->items[x->a_at++];
		memset(it, 0, sizeof(*it));
#define DEC_ITEM(field, enc) it->field = G_##enc(x, n);
		switch (n->kind) {
#define DEC_ITEMS(kind, fields, items) \
	case kind:                     \
		items(DEC_ITEM)        \
		break;
			GRAPH_NODE_KINDS(DEC_ITEMS)
#undef DEC_ITEMS
		}
#undef DEC_ITEM
		if (!x->c.err && (n->kind == G_STRUCT || n->kind == G_UNION) && (it->flags & G_F_ANNOT)) {
			int err = g_annots(x, &it->annot_first, &it->annot_count);
			if (err)
				return err;
		}
	}
	return x->c.err;
}

/* Nodes [lo, hi). */
static int dec_nodes(struct gdec *x, size_t lo, size_t hi)
{
	struct graph *g = x->g;
	for (size_t i = lo; i < hi; i++) {
		struct graph_node *nd = &g->nodes[i];
		int err = 0;
		nd->kind = cur_u8(&x->c);
		nd->flags = g_u32(x);
		nd->name = g_str(x);
		if (!x->c.err && (nd->kind < 1 || nd->kind > G_KIND_MAX))
			return gfail(x, "unknown node kind");
#define DEC_FIELD(field, enc) nd->field = G_##enc(x, nd);
#define ITEM_ONE(field, enc) +1
		switch (nd->kind) {
#define DEC_KIND(kind, fields, items)          \
	case kind:                             \
		fields(DEC_FIELD)              \
		if ((0 items(ITEM_ONE)) > 0)   \
			err = g_items(x, nd);  \
		break;
			GRAPH_NODE_KINDS(DEC_KIND)
#undef DEC_KIND
		}
#undef ITEM_ONE
#undef DEC_FIELD
		if (!err && !x->c.err && nd->kind == G_FWD && nd->fwd_kind > G_FWD_ENUM)
			return gfail(x, "unknown fwd kind");
		if (!err && !x->c.err && (nd->flags & G_F_ANNOT))
			err = g_annots(x, &nd->annot_first, &nd->annot_count);
		if (err || x->c.err) {
			char why[64];
			snprintf(why, sizeof(why), "node %zu truncated or malformed", i);
			return err == -ENOMEM ? err : gfail(x, why);
		}
	}
	return 0;
}

/* Nodes [lo, hi)'s provenance. The header's a counts its entries, b the
 * nodes with any; with GRAPH_READ_FIRST_PROV only each node's first CU is
 * kept, at [b_at, b_end). */
static int dec_prov(struct gdec *x, size_t lo, size_t hi)
{
	struct graph *g = x->g;
	int first = (x->flags & GRAPH_READ_FIRST_PROV) != 0;
	for (size_t i = lo; i < hi; i++) {
		size_t n;
		g->prov_off[i] = (uint32_t)(first ? x->b_at : x->a_at);
		if (g_count(x, &n, 1))
			return -EBADMSG;
		if (n > x->a_end - x->a_at || (n && x->b_at == x->b_end))
			return gfail(x, more_than_header);
		uint64_t prev = 0;
		for (size_t k = 0; k < n; k++) {
			uint64_t v = prev + cur_uleb(&x->c);
			if ((k && v <= prev) || v >= g->ncus)
				return gfail(x, "provenance CU index out of order or range");
			if (!first)
				g->prov[x->a_at + k] = (uint32_t)v;
			else if (!k)
				g->prov[x->b_at] = (uint32_t)v;
			prev = v;
		}
		x->a_at += n;
		x->b_at += n > 0;
	}
	return x->c.err ? gfail(x, "truncated") : 0;
}

/* Functions [lo, hi). */
static int dec_funcs(struct gdec *x, size_t lo, size_t hi)
{
	struct graph *g = x->g;
	for (size_t i = lo; i < hi && !x->c.err; i++) {
		struct graph_func *f = &g->funcs[i];
#define DEC_FUNC(field, enc) f->field = G_##enc(x, f);
		GRAPH_FUNC_FIELDS(DEC_FUNC)
#undef DEC_FUNC
		size_t np;
		if (g_count(x, &np, 3))
			return -EBADMSG;
		if (np > x->a_end - x->a_at)
			return gfail(x, more_than_header);
		f->loc_first = (uint32_t)x->a_at;
		f->loc_count = (uint32_t)np;
		for (size_t k = 0; k < np && !x->c.err; k++) {
			struct graph_loc *l = &g->locs[x->a_at++];
			memset(l, 0, sizeof(*l));
#define DEC_LOC(field, enc) l->field = G_##enc(x, l);
			GRAPH_LOC_FIELDS(DEC_LOC)
#undef DEC_LOC
			if (g_annots(x, &l->annot_first, &l->annot_count))
				return gfail(x, "parameter annotations malformed");
		}
		if (!x->c.err && (f->flags & G_F_ANNOT) && g_annots(x, &f->annot_first, &f->annot_count))
			return gfail(x, "annotations malformed");
		if (!x->c.err && f->cu >= g->ncus)
			return gfail(x, "function names a CU that does not exist");
	}
	return x->c.err ? gfail(x, "truncated") : 0;
}

/* Variables [lo, hi). */
static int dec_vars(struct gdec *x, size_t lo, size_t hi)
{
	struct graph *g = x->g;
	for (size_t i = lo; i < hi && !x->c.err; i++) {
		struct graph_var *v = &g->vars[i];
#define DEC_VAR(field, enc) v->field = G_##enc(x, v);
		GRAPH_VAR_FIELDS(DEC_VAR)
#undef DEC_VAR
		if (!x->c.err && (v->flags & G_F_ANNOT) && g_annots(x, &v->annot_first, &v->annot_count))
			return gfail(x, "annotations malformed");
		if (!x->c.err && v->cu >= g->ncus)
			return gfail(x, "variable names a CU that does not exist");
	}
	return x->c.err ? gfail(x, "truncated") : 0;
}

/* The inputs and CUs sections: small, and what the others check their
 * references against; decoded whole, before the rest. */
static int dec_head_section(struct gdec *x)
{
	struct graph *g = x->g;
	size_t n;
	switch (x->sec) {
	case S_INPUTS:
		if (g_count(x, &n, 20))
			return -EBADMSG;
		if (!(g->inputs = calloc(n ? n : 1, sizeof(*g->inputs))))
			return -ENOMEM;
		g->ninputs = n;
		for (size_t i = 0; i < n; i++) {
			struct graph_input *in = &g->inputs[i];
			in->name = g_str(x);
			in->dwarf_hash.lo = cur_le64(&x->c);
			in->dwarf_hash.hi = cur_le64(&x->c);
			in->e_machine = (uint16_t)g_u32(x);
			in->ei_class = cur_u8(&x->c);
			in->ei_data = cur_u8(&x->c);
			in->flags = g_u32(x);
			in->build_id_len = g_u32(x);
			const uint8_t *bid = in->build_id_len <= sizeof(in->build_id)
						     ? cur_bytes(&x->c, in->build_id_len) : NULL;
			if (!bid)
				return gfail(x, "build id malformed");
			if (in->build_id_len)
				memcpy(in->build_id, bid, in->build_id_len);
			in->ncus = g_u32(x);
		}
		return x->c.err ? gfail(x, "truncated") : 0;
	case S_CUS:
		if (g_count(x, &n, 5))
			return -EBADMSG;
		if (!(g->cus = calloc(n ? n : 1, sizeof(*g->cus))))
			return -ENOMEM;
		g->ncus = n;
		for (size_t i = 0; i < n; i++) {
			struct graph_cu *c = &g->cus[i];
			c->input = g_u32(x);
			c->cu_offset = cur_uleb(&x->c);
			c->name = g_str(x);
			c->producer = g_str(x);
			c->language = g_u32(x);
			if (!x->c.err && c->input >= g->ninputs)
				return gfail(x, "CU names an input that does not exist");
		}
		return x->c.err ? gfail(x, "truncated") : 0;
	}
	return 0;
}

/* Every node id in the graph must name a node: three parts, the nodes, the
 * functions and the variables, each on its own (check_work()). */
static int check_nodes(struct graph *g, const char *path, struct diag *d)
{
	uint32_t n = (uint32_t)g->nnodes;
	for (size_t i = 1; i <= g->nnodes; i++) {
		const struct graph_node *nd = &g->nodes[i];
		if (nd->type > n)
			return diag_fail(d, EBADMSG, "%s: node %zu refers to node %u of %u", path, i, nd->type, n);
		if (nd->kind == G_STRUCT || nd->kind == G_UNION || nd->kind == G_FUNC_PROTO)
			for (uint32_t k = 0; k < nd->item_count; k++)
				if (g->items[nd->item_first + k].type > n)
					return diag_fail(d, EBADMSG, "%s: node %zu item %u refers to node %u of %u",
							 path, i, k, g->items[nd->item_first + k].type, n);
	}
	return 0;
}

static int check_funcs(struct graph *g, const char *path, struct diag *d)
{
	uint32_t n = (uint32_t)g->nnodes;
	for (size_t i = 0; i < g->nfuncs; i++)
		if (g->funcs[i].proto > n || !g->funcs[i].proto ||
		    g->nodes[g->funcs[i].proto].kind != G_FUNC_PROTO)
			return diag_fail(d, EBADMSG, "%s: function %zu: prototype is not a func_proto node", path, i);
	return 0;
}

static int check_vars(struct graph *g, const char *path, struct diag *d)
{
	for (size_t i = 0; i < g->nvars; i++)
		if (g->vars[i].type > g->nnodes)
			return diag_fail(d, EBADMSG, "%s: variable %zu refers to node %u of %zu", path, i,
					 g->vars[i].type, g->nnodes);
	return 0;
}

int graph__read(struct graph *g, const char *path, struct diag *d)
{
	return graph__read_flags(g, path, 0, 1, d);
}

/* A section's message, if it has one, into the caller's d, whose phase
 * stays: a copy of the whole struct lost the phase that the out-of-memory
 * line names. */
static void take_diag(struct diag *d, const struct diag *from)
{
	if (d && from->set)
		diag_take(d, from);
}

/* ---- reading, section by section --------------------------------------- */

/* A read in progress. The strings, the inputs and the CUs (small, and what
 * the others check their references against) are read first, on the
 * calling thread. Then the block headers of the nodes, provenance,
 * functions and variables are read (hop_section(): a few bytes per 8,192
 * records), which gives every block the place of its records, items and
 * annotations in the graph's arrays; then the strings are copied, each
 * section's checksum checked and every block decoded side by side; then
 * the node ids are checked, again side by side. Each part records its
 * error and message in its own slot, and the one reported is the first in
 * file order: the message of a bad file is the same at any thread count,
 * and the same as reading the sections one after the other. */
struct gblock {
	int sec;
	size_t lo, hi;			/* its records: node ids, or indexes */
	const uint8_t *p;		/* its records' bytes */
	size_t n;
	size_t a_first, a_n;		/* its items, parameters or provenance entries */
	size_t b_first, b_n;		/* its annotations, or its nodes with provenance */
	int err;
	struct diag d;
};

struct gread {
	struct graph *g;
	const char *path;
	unsigned flags;
	struct graph_section sec[GRAPH_NSECTIONS + 1];	/* by section id */
	struct diag d[GRAPH_NSECTIONS + 1];		/* a section's checksum or decoding */
	int err[GRAPH_NSECTIONS + 1];
	/* The blocked sections, from hop_section(): */
	size_t count[GRAPH_NSECTIONS + 1];		/* records */
	size_t a_total[GRAPH_NSECTIONS + 1], b_total[GRAPH_NSECTIONS + 1];
	size_t annot_base[GRAPH_NSECTIONS + 1];		/* its annotations' start in g->annots */
	size_t blk_first[GRAPH_NSECTIONS + 1], blk_n[GRAPH_NSECTIONS + 1];
	struct diag hop_d[GRAPH_NSECTIONS + 1];		/* a block header that is wrong: */
	int hop_err[GRAPH_NSECTIONS + 1];		/* after the blocks before it */
	struct gblock *blk;
	size_t nblk, cap_blk;
	size_t *item_blk;				/* pool item -> block + 1; 0 a checksum */
	int *item_sec;
};

/* Section id (strings, inputs or CUs): its checksum, then its records,
 * then nothing left over. */
static int read_checksum(struct gread *r, int id)
{
	return graph_check_section(&r->sec[id], id, r->path, &r->d[id]);
}

static int read_head_section(struct gread *r, int id)
{
	int err = read_checksum(r, id);
	if (err)
		return err;
	if (id == S_STRINGS) {
		if (!r->sec[id].len || r->sec[id].p[0] || r->sec[id].p[r->sec[id].len - 1])
			return diag_fail(&r->d[id], EBADMSG, "%s: string section malformed at offset %llu", r->path,
					 (unsigned long long)r->sec[id].off);
		return 0; /* copied by read_work() */
	}
	struct gdec x = { .g = r->g, .path = r->path, .sec = id, .d = &r->d[id], .flags = r->flags,
			  .str = (const char *)r->sec[S_STRINGS].p, .str_size = r->sec[S_STRINGS].len };
	cursor_init(&x.c, r->sec[id].p, r->sec[id].len);
	err = dec_head_section(&x);
	if (!err && (x.c.err || cursor_left(&x.c)))
		err = gfail(&x, x.c.err == -ERANGE ? "string reference out of range"
			       : x.c.err ? "truncated" : "trailing bytes");
	return err;
}

/* The count (nodes, funcs, vars; provenance has the nodes') and the block
 * headers of section id, into r->blk: each block's records, bytes, and the
 * place of its items and annotations. Every count is held to what the
 * bytes can hold, so nothing here allocates more than the file could
 * describe. The checksum is not checked yet: a block header that is wrong
 * is reported after the checksum and the blocks before it. */
static int hop_section(struct gread *r, int id)
{
	struct gdec x = { .path = r->path, .sec = id, .d = &r->hop_d[id] };
	cursor_init(&x.c, r->sec[id].p, r->sec[id].len);
	r->blk_first[id] = r->nblk;
	size_t count, base = id == S_NODES || id == S_PROV ? 1 : 0;
	if (id == S_PROV)
		count = r->count[S_NODES];
	else if (g_count(&x, &count, id == S_NODES ? 2 : id == S_FUNCS ? 10 : 6))
		return x.d->set ? -EBADMSG : gfail(&x, "truncated");
	r->count[id] = count;
	size_t rec = 0;
	while (cursor_left(&x.c)) {
		uint64_t nrec = cur_uleb(&x.c), n = cur_uleb(&x.c), a = cur_uleb(&x.c), b = cur_uleb(&x.c);
		if (x.c.err)
			return gfail(&x, "block header truncated");
		if (!nrec || nrec > count - rec)
			return gfail(&x, "block holds more records than the section's count");
		if (n < nrec || n > cursor_left(&x.c))
			return gfail(&x, "block longer than the rest of the section");
		/* Each record, item, parameter and provenance entry takes a byte
		 * at least, an annotation two. */
		if (a > n || b > (id == S_PROV ? nrec : n / 2) || r->a_total[id] + a >= UINT32_MAX - 2 ||
		    r->b_total[id] + b >= UINT32_MAX - 2)
			return gfail(&x, "block header counts more than its bytes hold");
		if (vec_grow(&r->blk, &r->cap_blk, r->nblk + 1))
			return -ENOMEM;
		r->blk[r->nblk++] = (struct gblock){ .sec = id, .lo = base + rec, .hi = base + rec + nrec, .p = x.c.p,
						     .n = n, .a_first = r->a_total[id], .a_n = a,
						     .b_first = r->b_total[id], .b_n = b };
		r->blk_n[id]++;
		x.c.p += n;
		rec += nrec;
		r->a_total[id] += a;
		r->b_total[id] += b;
	}
	if (rec != count)
		return gfail(&x, "its blocks hold fewer records than its count");
	return 0;
}

/* The graph's arrays for what the blocked sections [S_NODES, last] hold,
 * at the sizes their block headers give. Not cleared here: each block
 * clears its own records where it decodes them, so the pages are first
 * touched on the threads, not on this one. */
static int alloc_blocked(struct gread *r, int last)
{
	struct graph *g = r->g;
	int first_prov = (r->flags & GRAPH_READ_FIRST_PROV) != 0;
	size_t annots = 0;
	for (int id = S_NODES; id <= last; id++) {
		r->annot_base[id] = annots;
		if (id != S_PROV)
			annots += r->b_total[id];
	}
	g->nnodes = r->count[S_NODES];
	g->nitems = r->a_total[S_NODES];
	g->nannots = annots;
	if (!(g->nodes = malloc((g->nnodes + 1) * sizeof(*g->nodes))) ||
	    !(g->items = malloc((g->nitems ? g->nitems : 1) * sizeof(*g->items))) ||
	    !(g->annots = malloc((annots ? annots : 1) * sizeof(*g->annots))))
		return -ENOMEM;
	memset(&g->nodes[0], 0, sizeof(g->nodes[0])); /* void */
	if (last >= S_PROV) {
		g->nprov = first_prov ? r->b_total[S_PROV] : r->a_total[S_PROV];
		if (!(g->prov_off = malloc((g->nnodes + 2) * sizeof(*g->prov_off))) ||
		    !(g->prov = malloc((g->nprov ? g->nprov : 1) * sizeof(*g->prov))))
			return -ENOMEM;
		g->prov_off[0] = 0;
		g->prov_off[g->nnodes + 1] = (uint32_t)g->nprov;
	}
	if (last >= S_FUNCS) {
		g->nfuncs = r->count[S_FUNCS];
		g->nlocs = r->a_total[S_FUNCS];
		if (!(g->funcs = malloc((g->nfuncs ? g->nfuncs : 1) * sizeof(*g->funcs))) ||
		    !(g->locs = malloc((g->nlocs ? g->nlocs : 1) * sizeof(*g->locs))))
			return -ENOMEM;
	}
	if (last >= S_VARS) {
		g->nvars = r->count[S_VARS];
		if (!(g->vars = malloc((g->nvars ? g->nvars : 1) * sizeof(*g->vars))))
			return -ENOMEM;
	}
	return 0;
}

static int decode_block(struct gread *r, struct gblock *b)
{
	size_t ab = r->annot_base[b->sec];
	struct gdec x = { .g = r->g, .path = r->path, .sec = b->sec, .d = &b->d, .flags = r->flags,
			  .str = (const char *)r->sec[S_STRINGS].p, .str_size = r->sec[S_STRINGS].len,
			  .annots = r->g->annots, .a_at = b->a_first, .a_end = b->a_first + b->a_n };
	if (b->sec == S_PROV) {
		x.b_at = b->b_first;
		x.b_end = b->b_first + b->b_n;
	} else {
		x.b_at = ab + b->b_first;
		x.b_end = ab + b->b_first + b->b_n;
	}
	x.c = (struct cursor){ .start = r->sec[b->sec].p, .p = b->p, .end = b->p + b->n };
	int err;
	struct graph *g = r->g;
	switch (b->sec) {
	case S_NODES:
		memset(&g->nodes[b->lo], 0, (b->hi - b->lo) * sizeof(*g->nodes));
		err = dec_nodes(&x, b->lo, b->hi);
		break;
	case S_PROV:
		err = dec_prov(&x, b->lo, b->hi);
		break;
	case S_FUNCS:
		memset(&g->funcs[b->lo], 0, (b->hi - b->lo) * sizeof(*g->funcs));
		err = dec_funcs(&x, b->lo, b->hi);
		break;
	default:
		memset(&g->vars[b->lo], 0, (b->hi - b->lo) * sizeof(*g->vars));
		err = dec_vars(&x, b->lo, b->hi);
		break;
	}
	if (!err && (x.c.err || cursor_left(&x.c)))
		err = gfail(&x, x.c.err == -ERANGE ? "string reference out of range"
			       : x.c.err ? "truncated" : "trailing bytes");
	if (!err && (x.a_at != x.a_end || x.b_at != x.b_end))
		err = gfail(&x, "fewer records than its block's header counts");
	return err;
}

/* Per blocked section its checksum, then its blocks. */
static int read_work(void *ctx, unsigned worker, size_t item)
{
	(void)worker;
	struct gread *r = ctx;
	if (!r->item_blk[item])
		return r->err[r->item_sec[item]] = read_checksum(r, r->item_sec[item]);
	struct gblock *b = &r->blk[r->item_blk[item] - 1];
	return b->err = decode_block(r, b);
}

/* The first error of the blocked sections [S_NODES, last] in file order:
 * a section's checksum, its blocks, the block header that stopped the hop. */
static int first_blocked_error(struct gread *r, int last, struct diag *d)
{
	for (int id = S_NODES; id <= last; id++) {
		if (r->err[id]) {
			take_diag(d, &r->d[id]);
			return r->err[id];
		}
		for (size_t k = r->blk_first[id]; k < r->blk_first[id] + r->blk_n[id]; k++)
			if (r->blk[k].err) {
				take_diag(d, &r->blk[k].d);
				return r->blk[k].err;
			}
		if (r->hop_err[id]) {
			take_diag(d, &r->hop_d[id]);
			return r->hop_err[id];
		}
	}
	return 0;
}

/* The first error in file order, its message into d. */
static int first_error(struct gread *r, int n, struct diag *d)
{
	for (int i = 0; i < n; i++)
		if (r->err[i]) {
			take_diag(d, &r->d[i]);
			return r->err[i];
		}
	return 0;
}

static int check_work(void *ctx, unsigned worker, size_t item)
{
	(void)worker;
	struct gread *r = ctx;
	struct graph *g = r->g;
	switch (item) {
	case 0:
		return r->err[0] = check_nodes(g, r->path, &r->d[0]);
	case 1:
		return r->err[1] = check_funcs(g, r->path, &r->d[1]);
	default:
		return r->err[2] = check_vars(g, r->path, &r->d[2]);
	}
}

int graph__read_flags(struct graph *g, const char *path, unsigned flags, unsigned threads, struct diag *d)
{
	memset(g, 0, sizeof(*g));
	g->prov_cut = (flags & GRAPH_READ_FIRST_PROV) != 0;
	size_t size, head_size = GRAPH_HEAD_SIZE;
	const void *map;
	int err = mapfile_open(path, head_size, ".graph header", &map, &size, d);
	if (err)
		return err;
	const uint8_t *m = map;
	struct gread *r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	*r = (struct gread){ .g = g, .path = path, .flags = flags };
	if ((err = graph_check_header(m, size, path, d)))
		goto out;
	/* A section out of place is reported after the errors of the sections
	 * before it, as a reader going through the file in order would. */
	uint64_t expect = head_size;
	struct diag place_d = { 0 };
	int placed = graph_place_sections(m, size, path, r->sec, &expect, &place_d);
	/* The strings, inputs and CUs, in order, on this thread. */
	for (int id = S_STRINGS; id <= S_CUS && id <= placed; id++)
		if ((err = read_head_section(r, id))) {
			take_diag(d, &r->d[id]);
			goto out;
		}
	/* Then the rest: their block headers, the arrays, and side by side
	 * each section's checksum and its blocks. */
	if (placed >= S_CUS) {
		int last = placed;
		for (int id = S_NODES; id <= last; id++)
			if ((r->hop_err[id] = hop_section(r, id)) == -ENOMEM) {
				err = -ENOMEM;
				goto out;
			}
		if (last >= S_NODES && (err = alloc_blocked(r, last)))
			goto out;
		size_t nitems = (size_t)(last - S_CUS) + r->nblk;
		r->item_blk = calloc(nitems + 1, sizeof(*r->item_blk));
		r->item_sec = calloc(nitems + 1, sizeof(*r->item_sec));
		if (!r->item_blk || !r->item_sec) {
			err = -ENOMEM;
			goto out;
		}
		size_t it = 0;
		for (int id = S_NODES; id <= last; id++) {
			r->item_sec[it++] = id;
			for (size_t k = 0; k < r->blk_n[id]; k++) {
				r->item_sec[it] = id;
				r->item_blk[it++] = r->blk_first[id] + k + 1;
			}
		}
		int perr = nitems ? pool_ordered(threads, nitems, nitems, read_work, NULL, r) : 0;
		if ((err = first_blocked_error(r, last, d)) || (err = perr))
			goto out;
	}
	if (placed < GRAPH_NSECTIONS) {
		take_diag(d, &place_d);
		err = -EBADMSG;
		goto out;
	}
	if (expect != size) {
		err = diag_fail(d, EBADMSG, "%s: %llu stray bytes after the last section", path,
			  (unsigned long long)(size - expect));
		goto out;
	}
	memset(r->err, 0, sizeof(r->err));
	memset(r->d, 0, sizeof(r->d));
	int perr = pool_ordered(threads, 3, 3, check_work, NULL, r);
	if (!(err = first_error(r, 3, d)))
		err = perr;
	if (!err) {
		/* The strings stay where they are; the graph owns the mapping. */
		g->str = (char *)r->sec[S_STRINGS].p;
		g->str_size = r->sec[S_STRINGS].len;
		g->map = (void *)m;
		g->map_size = size;
	}
out:
	if (r) {
		free(r->blk);
		free(r->item_blk);
		free(r->item_sec);
	}
	free(r);
	if (err) {
		munmap((void *)m, size);
		graph__free(g);
	}
	return err;
}
