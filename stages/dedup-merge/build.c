/* build.c: step 5 of the merge (see merge.h): the graph itself.
 *
 * Here a class becomes a graph node: node ids go to classes in order of their
 * first gid; each node is made from that first record (its representative)
 * with every reference turned into the node id of the target's class. Then
 * cands.c adds the function and variable candidates and their prototypes,
 * and this file the provenance.
 */
#include "merge.h"
#include "../../common/diag.h"
#include "../../common/pool.h"
#include "../../common/strtab.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A node's flags are its representative record's (CUS_F_*, format/cus.h),
 * copied as they are; readers of the .graph test them as G_F_* (graph.h).
 * The two sets name the same bits, and the graph's own sit above them. */
_Static_assert(G_F_DECL == CUS_F_DECL && G_F_EXTERNAL == CUS_F_EXTERNAL &&
		       G_F_ARTIFICIAL == CUS_F_ARTIFICIAL && G_F_ANNOT == CUS_F_ANNOT &&
		       G_F_VARARGS == CUS_F_VARARGS && G_F_HAS_PC == CUS_F_HAS_PC &&
		       G_F_SIGNED == CUS_F_SIGNED && G_F_TOPLEVEL == CUS_F_TOPLEVEL,
	       "graph flags are the record flags");
_Static_assert(!((G_F_UNNAMED_PARAM | G_F_REORDERED) & CUS_F_ALL), "the graph's own flags are free bits");

struct builder {
	struct merge *m;
	struct graph *g;
	/* Capacities of the graph's arrays while the nodes are made; void once
	 * cands__build() has sized them exactly. */
	size_t cap_nodes, cap_items, cap_annots;
};

static int str_of(struct builder *b, const char *s, uint32_t *out)
{
	int64_t off = strtab__add(b->m->strs, s);
	if (off == -E2BIG) /* one serial caller at a time: m->d is the stage's */
		return diag_fail(b->m->d, E2BIG, "the type graph's strings pass 4 GiB, the limit of its 32-bit "
				 "offsets and of BTF's, at the name \"%.*s%s\" (%zu bytes)", DIAG_CLIP(s), strlen(s));
	if (off < 0)
		return (int)off;
	*out = (uint32_t)off;
	return 0;
}

/* The node a gid's class became (0 for void, which an unspecified type is:
 * scan.c keys references to it as void, so they must point at void too). */
static uint32_t node_of(const struct merge *m, uint32_t gid)
{
	if (!gid)
		return 0;
	if (m->gid_node)
		return m->gid_node[gid];
	if (classes__rec_kind(m, gid) == CUS_UNSPECIFIED)
		return 0;
	return m->node_of_class[classes__final(m, gid)];
}

int build__lref_node(const struct merge *m, size_t ci, uint32_t lref_or_gid, uint32_t *node, struct diag *d)
{
	uint32_t gid = lref_or_gid;
	if (gid & STOP_XREF) {
		int err = classes__xref_gid(m, ci, m->scans[ci].xrefs[gid & ~STOP_XREF], &gid, d);
		if (err)
			return err;
	}
	*node = node_of(m, gid);
	return 0;
}

static int rec_ref_node(struct builder *b, size_t ci, const struct cus_cu *cu, cus_ref r, uint32_t *node)
{
	if (!r) {
		*node = 0;
		return 0;
	}
	uint32_t gid = (uint32_t)(b->m->cu_base[ci] + cus_ref_index(r));
	if (cus_ref_is_extern(r)) {
		int err = classes__xref_gid(b->m, ci, cu->externs[cus_ref_index(r)], &gid, b->m->d);
		if (err)
			return err;
	}
	*node = node_of(b->m, gid);
	return 0;
}

static int copy_annots(struct builder *b, const struct cus_cu *cu, uint32_t first, uint32_t count,
		       uint32_t *gfirst, uint32_t *gcount)
{
	struct graph *g = b->g;
	if (vec_grow(&g->annots, &b->cap_annots, g->nannots + count))
		return -ENOMEM;
	*gfirst = (uint32_t)g->nannots;
	*gcount = count;
	for (uint32_t i = 0; i < count; i++) {
		struct graph_annot *a = &g->annots[g->nannots++];
		int err = str_of(b, cus_str(cu, cu->annots[first + i].name), &a->name);
		if (!err)
			err = str_of(b, cus_str(cu, cu->annots[first + i].value), &a->value);
		if (err)
			return err;
	}
	return 0;
}

static uint8_t graph_kind(const struct cus_rec *r)
{
	int decl = (r->flags & CUS_F_DECL) != 0;
	switch (r->kind) {
	case CUS_BASE: return G_BASE;
	case CUS_PTR: return G_PTR;
	case CUS_CONST: return G_CONST;
	case CUS_VOLATILE: return G_VOLATILE;
	case CUS_RESTRICT: return G_RESTRICT;
	case CUS_ATOMIC: return G_ATOMIC;
	case CUS_TYPEDEF: return G_TYPEDEF;
	case CUS_STRUCT: return decl ? G_FWD : G_STRUCT;
	case CUS_UNION: return decl ? G_FWD : G_UNION;
	case CUS_ENUM: return decl ? G_FWD : G_ENUM;
	case CUS_ARRAY: return G_ARRAY;
	case CUS_SUBROUTINE: return G_FUNC_PROTO;
	case CUS_UNSPECIFIED: return G_UNSPEC;
	default: return G_UNSUPPORTED;
	}
}

/* Node flags keep what BTF can tell apart, so equal BTF means equal nodes. */
static uint32_t node_flags(uint8_t gkind, uint32_t f)
{
	switch (gkind) {
	case G_ENUM: return f & CUS_F_SIGNED;
	case G_FUNC_PROTO: return f & CUS_F_VARARGS;
	default: return 0;
	}
}

/* A graph field from the record's field of the same name, as the graph's
 * table (graph.h) encodes it: numbers copied, refs made node ids, strings
 * put in the graph's table. A member keeps only the flag BTF shows
 * (artificial: libbpf's dedup tells such members apart; annot is set with
 * the annotations); a fwd's kind is the record's. */
#define MK_u32(dst, src, field) (dst)->field = (src)->field;
#define MK_u64(dst, src, field) (dst)->field = (src)->field;
#define MK_ate(dst, src, field) (dst)->field = (src)->field;
#define MK_tag(dst, src, field) (dst)->field = (src)->field;
#define MK_eval(dst, src, field) (dst)->field = (src)->field;
#define MK_mflags(dst, src, field) (dst)->field = (src)->field & CUS_F_ARTIFICIAL;
#define MK_fwd(dst, src, field) \
	(dst)->field = r->kind == CUS_UNION ? G_FWD_UNION : r->kind == CUS_ENUM ? G_FWD_ENUM : G_FWD_STRUCT;
#define MK_ref(dst, src, field)                                                  \
	if ((err = rec_ref_node(b, ci, cu, (src)->field, &(dst)->field)))        \
		return err;
#define MK_str(dst, src, field)                                                  \
	if ((err = str_of(b, cus_str(cu, (src)->field), &(dst)->field)))        \
		return err;

/* Record i's items as node n's (the items table of n's kind). */
static int make_items(struct builder *b, size_t ci, const struct cus_cu *cu, const struct cus_rec *r,
		      struct graph_node *n)
{
	struct graph *g = b->g;
	const struct cus_item *it = r->item_count ? cu->items + r->item_first : NULL; /* NULL + 0 is undefined */
	int err;
	if (vec_grow(&g->items, &b->cap_items, g->nitems + r->item_count))
		return -ENOMEM;
	n->item_first = (uint32_t)g->nitems;
	n->item_count = r->item_count;
	for (uint32_t i = 0; i < r->item_count; i++, it++) {
		struct graph_item gi = { 0 };
#define MK_ITEM(field, enc) MK_##enc(&gi, it, field)
		switch (n->kind) {
#define MK_ITEMS(kind, fields, its) \
	case kind:                  \
		its(MK_ITEM)        \
		break;
			GRAPH_NODE_KINDS(MK_ITEMS)
#undef MK_ITEMS
		}
#undef MK_ITEM
		if ((n->kind == G_STRUCT || n->kind == G_UNION) && (it->flags & CUS_F_ANNOT)) {
			if ((err = copy_annots(b, cu, it->annot_first, it->annot_count, &gi.annot_first,
					       &gi.annot_count)))
				return err;
			gi.flags |= CUS_F_ANNOT;
		}
		g->items[g->nitems++] = gi;
	}
	return 0;
}

/* The representative record k of CU ci becomes node id: its kind's fields
 * (graph.h's table), each from the record's field of the same name, and
 * its items. */
static int make_node(struct builder *b, size_t ci, const struct cus_cu *cu, uint32_t k, uint32_t id)
{
	struct graph *g = b->g;
	const struct cus_rec *r = &cu->recs[k];
	struct graph_node nn = { 0 };
	int err;
	nn.kind = graph_kind(r);
	nn.flags = node_flags(nn.kind, r->flags);
	if ((err = str_of(b, cus_str(cu, r->name), &nn.name)))
		return err;
#define MK_FIELD(field, enc) MK_##enc(&nn, r, field)
#define ITEM_ONE(field, enc) +1
	switch (nn.kind) {
#define MK_KIND(kind, fields, its)                                       \
	case kind:                                                       \
		fields(MK_FIELD)                                         \
		if ((0 its(ITEM_ONE)) > 0 && (err = make_items(b, ci, cu, r, &nn))) \
			return err;                                      \
		break;
		GRAPH_NODE_KINDS(MK_KIND)
#undef MK_KIND
	}
#undef ITEM_ONE
#undef MK_FIELD
	g->nodes[id] = nn;
	struct graph_node *n = &g->nodes[id];
	if (r->flags & CUS_F_ANNOT) {
		uint32_t af, ac;
		if ((err = copy_annots(b, cu, r->annot_first, r->annot_count, &af, &ac)))
			return err;
		n = &g->nodes[id];
		n->annot_first = af;
		n->annot_count = ac;
		n->flags |= CUS_F_ANNOT;
	}
	return 0;
}

static int grow_graph_nodes(struct builder *b, size_t need)
{
	struct graph *g = b->g;
	size_t old = b->cap_nodes;
	if (vec_grow(&g->nodes, &b->cap_nodes, need + 1))
		return -ENOMEM;
	if (b->cap_nodes > old)
		memset(g->nodes + old, 0, (b->cap_nodes - old) * sizeof(*g->nodes));
	return 0;
}

/* ---- passes cut into chunks ---- */

/* How many chunks a pass with per-chunk arrays (one entry per node or per
 * class) is cut into: one per thread, at most 8, so that -j1024 does not
 * allocate a thousand of them. The result never depends on it. */
static size_t build_chunks(const struct merge *m)
{
	unsigned jobs = m->jobs;
	return jobs < 8 ? jobs : 8;
}

/* ---- provenance ---- */

/* Per node, the CUs it came from in CU order: type records, then the
 * prototypes of each CU's functions. The CUs are cut into contiguous
 * ranges counted and then filled in parallel; a range's entries for a node
 * go after those of the ranges before it, so the lists are what one pass
 * in CU order would write, whatever the thread count. */
struct prov_run {
	struct builder *b;
	size_t nchunks;
	uint32_t **last;	/* per chunk: per node, the last CU seen */
	uint32_t **cnt;		/* per chunk: per node, its count; then its cursor in prov */
	int fill;		/* 0 count, 1 store */
};

static int prov_chunk(void *ctx, unsigned worker, size_t k)
{
	struct prov_run *r = ctx;
	struct merge *m = r->b->m;
	struct graph *g = r->b->g;
	uint32_t *last = r->last[k], *cnt = r->cnt[k];
	size_t lo = m->ncus * k / r->nchunks, hi = m->ncus * (k + 1) / r->nchunks;
	(void)worker;
	memset(last, 0xff, (g->nnodes + 1) * sizeof(*last));
	/* The range's first function: funcs are in CU order. */
	size_t fi = 0, fhi = g->nfuncs;
	while (fi < fhi) {
		size_t mid = (fi + fhi) / 2;
		if (g->funcs[mid].cu < lo)
			fi = mid + 1;
		else
			fhi = mid;
	}
#define SEEN(n) do { \
		if (last[n] != ci) { \
			last[n] = (uint32_t)ci; \
			if (r->fill) \
				g->prov[cnt[n]++] = (uint32_t)ci; \
			else \
				cnt[n]++; \
		} \
	} while (0)
	for (size_t ci = lo; ci < hi; ci++) {
		uint64_t base = m->cu_base[ci];
		for (uint32_t k2 = 0; k2 < m->scans[ci].nrecs; k2++) {
			uint32_t gid = (uint32_t)(base + k2);
			uint32_t n = m->gid_node[gid];
			if (n == GID_NOT_TYPE)
				continue;
			SEEN(n);
		}
		for (; fi < g->nfuncs && g->funcs[fi].cu == ci; fi++) {
			uint32_t n = g->funcs[fi].proto;
			SEEN(n);
		}
	}
#undef SEEN
	return 0;
}

static int build_provenance(struct builder *b)
{
	struct merge *m = b->m;
	struct graph *g = b->g;
	unsigned jobs = m->jobs;
	struct prov_run r = { .b = b, .nchunks = build_chunks(m) };
	if (r.nchunks > m->ncus)
		r.nchunks = m->ncus ? m->ncus : 1;
	int err = -ENOMEM;
	r.last = calloc(r.nchunks, sizeof(*r.last));
	r.cnt = calloc(r.nchunks, sizeof(*r.cnt));
	g->prov_off = calloc(g->nnodes + 2, sizeof(*g->prov_off));
	if (!r.last || !r.cnt || !g->prov_off)
		goto out;
	for (size_t k = 0; k < r.nchunks; k++)
		if (!(r.last[k] = malloc((g->nnodes + 1) * sizeof(uint32_t))) ||
		    !(r.cnt[k] = calloc(g->nnodes + 1, sizeof(uint32_t))))
			goto out;
	if ((err = pool_ordered(jobs, r.nchunks, r.nchunks, prov_chunk, NULL, &r)))
		goto out;
	/* Counts -> starts: node by node, chunk by chunk. */
	uint64_t sum = 0;
	for (size_t n = 0; n <= g->nnodes; n++) {
		g->prov_off[n] = (uint32_t)sum;
		for (size_t k = 0; k < r.nchunks; k++) {
			uint32_t c = r.cnt[k][n];
			r.cnt[k][n] = (uint32_t)sum;
			sum += c;
		}
	}
	err = -E2BIG;
	if (sum > UINT32_MAX)
		goto out;
	g->prov_off[g->nnodes + 1] = (uint32_t)sum;
	g->nprov = sum;
	err = -ENOMEM;
	if (!(g->prov = malloc((sum ? sum : 1) * sizeof(*g->prov))))
		goto out;
	r.fill = 1;
	err = pool_ordered(jobs, r.nchunks, r.nchunks, prov_chunk, NULL, &r);
out:
	for (size_t k = 0; k < r.nchunks; k++) {
		if (r.last)
			free(r.last[k]);
		if (r.cnt)
			free(r.cnt[k]);
	}
	free(r.last);
	free(r.cnt);
	return err;
}

/* ---- the driver ---- */

static int build_header(struct builder *b)
{
	struct merge *m = b->m;
	struct graph *g = b->g;
	int err;
	g->inputs = calloc(m->o->ninputs, sizeof(*g->inputs));
	g->cus = calloc(m->ncus ? m->ncus : 1, sizeof(*g->cus));
	if (!g->inputs || !g->cus)
		return -ENOMEM;
	g->ninputs = m->o->ninputs;
	for (size_t i = 0; i < g->ninputs; i++) {
		const struct cus_ident *id = &m->files[i].ident;
		struct graph_input *in = &g->inputs[i];
		if ((err = str_of(b, id->name, &in->name)))
			return err;
		in->dwarf_hash = id->dwarf_hash;
		in->e_machine = id->e_machine;
		in->ei_class = id->ei_class;
		in->ei_data = id->ei_data;
		in->flags = id->flags;
		memcpy(in->build_id, id->build_id, id->build_id_len);
		in->build_id_len = id->build_id_len;
		in->ncus = (uint32_t)m->files[i].count;
	}
	g->ncus = m->ncus;
	for (size_t ci = 0; ci < m->ncus; ci++) {
		struct graph_cu *c = &g->cus[ci];
		c->input = m->cu_input[ci];
		c->cu_offset = m->scans[ci].cu_offset;
		c->language = m->scans[ci].language;
		if ((err = str_of(b, m->scans[ci].name, &c->name)) ||
		    (err = str_of(b, m->scans[ci].producer, &c->producer)))
			return err;
	}
	return 0;
}

/* Decoding the representatives' CUs is most of this step (nearly every CU
 * holds some class's first record), so the decoding runs in parallel and the
 * nodes are made in CU order on the calling thread (node contents and string
 * offsets depend on that order). Slot ci % window holds CU ci's records:
 * pool_ordered() never has two items window apart in flight. */
struct rep_run {
	struct builder *b;
	const uint32_t *rep;
	size_t window;
	struct cus_cu *cus;	/* window slots */
	struct diag *ds;	/* window slots */
	struct { uint32_t *idx; size_t n, cap_idx; } *sel; /* window slots: which records */
};

/* Whether gid is its class's representative. rep[] holds only gids that
 * number_classes() found to be types standing for their own class, so its
 * own entry is the whole test: no gid can equal another's representative.
 * (Every gid has a class or NO_CLASS in cls[], which is not below ncls.) */
static int is_rep(const struct merge *m, const uint32_t *rep, uint32_t gid)
{
	uint32_t c = m->cls[gid];
	return c < m->ncls && rep[c] == gid;
}

static int rep_decode(void *ctx, unsigned worker, size_t ci)
{
	struct rep_run *r = ctx;
	const struct merge *m = r->b->m;
	size_t slot = ci % r->window;
	(void)worker;
	r->sel[slot].n = 0;
	r->ds[slot].set = 0;
	/* Only the representatives are decoded, from the offsets the scan
	 * kept: most of a CU's records are copies of types an earlier CU has. */
	size_t n = 0;
	for (uint32_t k = 0; k < m->scans[ci].nrecs; k++) {
		if (!is_rep(m, r->rep, (uint32_t)(m->cu_base[ci] + k)))
			continue;
		if (vec_grow(&r->sel[slot].idx, &r->sel[slot].cap_idx, n + 1))
			return -ENOMEM;
		r->sel[slot].idx[n++] = k;
	}
	if (!n)
		return 0;
	r->sel[slot].n = n;
	return cus_file__decode_some(&m->files[m->cu_input[ci]], m->cu_index[ci], &r->cus[slot], r->sel[slot].idx,
				     m->scans[ci].rec_ckpt, n, m->scans[ci].nrecs, &r->ds[slot]);
}

static int rep_make(void *ctx, size_t ci)
{
	struct rep_run *r = ctx;
	struct builder *b = r->b;
	struct merge *m = b->m;
	size_t slot = ci % r->window;
	int err = 0;
	/* The representatives rep_decode() selected, in record order. */
	for (size_t j = 0; j < r->sel[slot].n && !err; j++) {
		uint32_t k = r->sel[slot].idx[j], gid = (uint32_t)(m->cu_base[ci] + k);
		err = make_node(b, ci, &r->cus[slot], k, b->m->node_of_class[m->cls[gid]]);
	}
	return err;
}

/* Node ids go to classes in order of their first gid, with no sort. Each
 * chunk of gids finds the first gid of every class it holds (in parallel);
 * the first chunk that has a class has its first gid, and counts one node.
 * A chunk's nodes follow those of the chunks before it, so after a prefix
 * sum each chunk numbers its own representatives in gid order (in parallel
 * again): the same ids whatever the thread count. */
struct num_run {
	const struct merge *m;
	size_t nchunks;
	int pass;		/* 0: find first gids; 1: number the representatives */
	uint32_t **first;	/* per chunk: per class, its first gid in the chunk, or 0 */
	const uint32_t *rep;	/* pass 1: per class, its first gid */
	uint32_t *next;		/* pass 1: per chunk, the node id before its first */
	uint32_t *node_of_class;
};

static int num_chunk(void *ctx, unsigned worker, size_t k)
{
	struct num_run *r = ctx;
	const struct merge *m = r->m;
	uint64_t lo = 1 + m->nnodes * k / r->nchunks, hi = 1 + m->nnodes * (k + 1) / r->nchunks;
	uint32_t *first = r->first[k];
	(void)worker;
	for (uint64_t gid = lo; gid < hi; gid++) {
		if (r->pass == 1) {
			if (is_rep(m, r->rep, (uint32_t)gid))
				r->node_of_class[m->cls[gid]] = ++r->next[k];
			continue;
		}
		if (m->weak[gid] == NO_CLASS || classes__final(m, (uint32_t)gid) != m->cls[gid])
			continue; /* not a type, or a fwd that stands for its definition */
		if (!first[m->cls[gid]])
			first[m->cls[gid]] = (uint32_t)gid;
	}
	return 0;
}

/* rep[c] := class c's first gid, node_of_class[c] := its node id (1-based,
 * 0 for a class no node stands for), *count := the number of nodes. */
static int number_classes(const struct merge *m, uint32_t *rep, uint32_t *node_of_class, uint32_t *count)
{
	unsigned jobs = m->jobs;
	struct num_run r = { .m = m, .nchunks = build_chunks(m), .rep = rep, .node_of_class = node_of_class };
	int err = -ENOMEM;
	if (!(r.first = calloc(r.nchunks, sizeof(*r.first))) || !(r.next = calloc(r.nchunks, sizeof(*r.next))))
		goto out;
	for (size_t k = 0; k < r.nchunks; k++)
		if (!(r.first[k] = calloc((size_t)m->ncls + 1, sizeof(uint32_t))))
			goto out;
	if ((err = pool_ordered(jobs, r.nchunks, r.nchunks, num_chunk, NULL, &r)))
		goto out;
	for (uint32_t c = 0; c < m->ncls; c++) {
		size_t k = 0;
		while (k < r.nchunks && !r.first[k][c])
			k++;
		rep[c] = k < r.nchunks ? r.first[k][c] : 0;
		if (k < r.nchunks)
			r.next[k]++;
	}
	uint32_t n = 0;
	for (size_t k = 0; k < r.nchunks; k++) {
		uint32_t here = r.next[k];
		r.next[k] = n;
		n += here;
	}
	r.pass = 1;
	if ((err = pool_ordered(jobs, r.nchunks, r.nchunks, num_chunk, NULL, &r)))
		goto out;
	*count = n;
out:
	for (size_t k = 0; r.first && k < r.nchunks; k++)
		free(r.first[k]);
	free(r.first);
	free(r.next);
	return err;
}

/* One node per class, made from the class's first gid. */
static int build_nodes(struct builder *b)
{
	struct merge *m = b->m;
	struct graph *g = b->g;
	uint32_t *rep = malloc(((size_t)m->ncls + 1) * sizeof(*rep));
	b->m->node_of_class = calloc((size_t)m->ncls + 1, sizeof(uint32_t));
	if (!rep || !b->m->node_of_class) {
		free(rep);
		return -ENOMEM;
	}
	uint32_t count = 0;
	int err = number_classes(m, rep, b->m->node_of_class, &count);
	if (!err)
		err = grow_graph_nodes(b, count);
	if (err) {
		free(rep);
		return err;
	}
	g->nnodes = count;
	unsigned jobs = m->jobs;
	struct rep_run r = { .b = b, .rep = rep, .window = 4 * (size_t)jobs };
	r.cus = calloc(r.window, sizeof(*r.cus));
	r.ds = calloc(r.window, sizeof(*r.ds));
	r.sel = calloc(r.window, sizeof(*r.sel));
	if (!r.cus || !r.ds || !r.sel)
		err = -ENOMEM;
	if (!err)
		err = pool_ordered(jobs, m->ncus, r.window, rep_decode, rep_make, &r);
	/* The failing item is the lowest one; its slot still holds its detail
	 * unless make_node failed (then m->d has it already). */
	for (size_t i = 0; err && r.ds && i < r.window; i++)
		if (r.ds[i].set && !m->d->set)
			diag_take(m->d, &r.ds[i]);
	for (size_t i = 0; r.cus && i < r.window; i++)
		cus_cu__free(&r.cus[i]);
	for (size_t i = 0; r.sel && i < r.window; i++) {
		free(r.sel[i].idx);
	}
	free(r.sel);
	free(r.cus);
	free(r.ds);
	free(rep);
	return err;
}

/* ---- per gid, its node (merge.gid_node) ---- */

#define GID_CHUNK 65536

struct gid_run {
	struct merge *m;
	uint64_t *types;	/* per chunk: its type records */
};

/* cls[g] becomes g's node in place: node_of() reads g's own entries of
 * weak and cls (and per-class arrays) only, and each chunk is one
 * thread's. */
static int gid_chunk(void *ctx, unsigned worker, size_t chunk)
{
	struct gid_run *r = ctx;
	struct merge *m = r->m;
	uint64_t lo = 1 + chunk * GID_CHUNK, hi = lo + GID_CHUNK, n = 0;
	(void)worker;
	if (hi > m->nnodes + 1)
		hi = m->nnodes + 1;
	for (uint64_t g = lo; g < hi; g++) {
		if (m->weak[g] == NO_CLASS) {
			m->cls[g] = GID_NOT_TYPE;
			continue;
		}
		m->cls[g] = node_of(m, (uint32_t)g);
		n++;
	}
	r->types[chunk] = n;
	return 0;
}

static int make_gid_nodes(struct merge *m)
{
	size_t nchunks = (size_t)((m->nnodes + GID_CHUNK - 1) / GID_CHUNK);
	struct gid_run r = { .m = m, .types = calloc(nchunks + 1, sizeof(uint64_t)) };
	if (!r.types)
		return -ENOMEM;
	int err = pool_ordered(m->jobs, nchunks, 4 * (size_t)m->jobs, gid_chunk, NULL, &r);
	if (!err) {
		m->ntypes = 0;
		for (size_t k = 0; k < nchunks; k++)
			m->ntypes += r.types[k];
		m->gid_node = m->cls;
		m->cls = NULL;
		free(m->weak);
		m->weak = NULL;
	}
	free(r.types);
	return err;
}

int build__graph(struct merge *m)
{
	struct builder b = { .m = m, .g = &m->g };
	int err = build_header(&b);
	if (!err)
		err = build_nodes(&b);
	return err ? err : make_gid_nodes(m);
}

int build__finish(struct merge *m)
{
	struct builder b = { .m = m, .g = &m->g };
	int err = build_provenance(&b);
	free(m->node_of_class);
	m->node_of_class = NULL;
	return err;
}
