/* graph_file.c: the `.graph` file written and read (spec: format/TYPE-GRAPH.md).
 *
 * Each section has an encoder and a decoder next to each other. The reader
 * validates the header and section table, then every checksum, then decodes
 * with a bounds-checked cursor and checks every string ref and node id.
 */
#include "graph.h"
#include "../common/buf.h"
#include "../common/claim.h"
#include "../common/diag.h"
#include "../common/mapfile.h"
#include "../common/outfile.h"
#include "../common/pool.h"
#include "../common/vec.h"
#include "../common/version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { S_STRINGS = 1, S_INPUTS, S_CUS, S_NODES, S_PROV, S_FUNCS, S_VARS };
static const char *const section_names[] = {
	[S_STRINGS] = "strings", [S_INPUTS] = "inputs", [S_CUS] = "cus", [S_NODES] = "nodes",
	[S_PROV] = "provenance", [S_FUNCS] = "funcs", [S_VARS] = "vars",
};

const char *graph_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[G_BASE] = "base", [G_PTR] = "ptr", [G_CONST] = "const", [G_VOLATILE] = "volatile",
		[G_RESTRICT] = "restrict", [G_ATOMIC] = "atomic", [G_TYPEDEF] = "typedef",
		[G_STRUCT] = "struct", [G_UNION] = "union", [G_ENUM] = "enum", [G_ARRAY] = "array",
		[G_FUNC_PROTO] = "func_proto", [G_FWD] = "fwd", [G_UNSPEC] = "unspecified",
		[G_UNSUPPORTED] = "unsupported",
	};
	return kind >= 1 && kind <= G_KIND_MAX ? names[kind] : "?";
}

void graph__free(struct graph *g)
{
	free(g->str);
	free(g->inputs);
	free(g->cus);
	free(g->nodes);
	free(g->items);
	free(g->annots);
	free(g->prov_off);
	free(g->prov);
	free(g->funcs);
	free(g->locs);
	free(g->vars);
	memset(g, 0, sizeof(*g));
}

/* ---- encoding ---------------------------------------------------------- */

static void put_annots(struct buf *b, const struct graph *g, uint32_t first, uint32_t count)
{
	buf_uleb(b, count);
	for (uint32_t i = 0; i < count; i++) {
		buf_uleb(b, g->annots[first + i].name);
		buf_uleb(b, g->annots[first + i].value);
	}
}

static void put_node(struct buf *b, const struct graph *g, const struct graph_node *n)
{
	const struct graph_item *it = n->item_count ? g->items + n->item_first : NULL; /* NULL + 0 is undefined */
	buf_u8(b, n->kind);
	buf_uleb(b, n->flags);
	buf_uleb(b, n->name);
	switch (n->kind) {
	case G_BASE:
		buf_uleb(b, n->encoding);
		buf_uleb(b, n->size);
		buf_uleb(b, n->bit_size);
		buf_uleb(b, n->bit_offset);
		break;
	case G_PTR: case G_CONST: case G_VOLATILE: case G_RESTRICT: case G_ATOMIC: case G_TYPEDEF:
		buf_uleb(b, n->type);
		break;
	case G_STRUCT: case G_UNION:
		buf_uleb(b, n->size);
		buf_uleb(b, n->item_count);
		for (uint32_t i = 0; i < n->item_count; i++, it++) {
			buf_uleb(b, it->flags);
			buf_uleb(b, it->name);
			buf_uleb(b, it->type);
			buf_uleb(b, it->value);
			buf_uleb(b, it->bit_size);
			if (it->flags & G_F_ANNOT)
				put_annots(b, g, it->annot_first, it->annot_count);
		}
		break;
	case G_ENUM:
		buf_uleb(b, n->size);
		buf_uleb(b, n->item_count);
		for (uint32_t i = 0; i < n->item_count; i++, it++) {
			buf_uleb(b, it->name);
			if (n->flags & G_F_SIGNED)
				buf_sleb(b, (int64_t)it->value);
			else
				buf_uleb(b, it->value);
		}
		break;
	case G_ARRAY:
		buf_uleb(b, n->type);
		buf_uleb(b, n->item_count);
		for (uint32_t i = 0; i < n->item_count; i++, it++)
			buf_uleb(b, it->value);
		break;
	case G_FUNC_PROTO:
		buf_uleb(b, n->type);
		buf_uleb(b, n->item_count);
		for (uint32_t i = 0; i < n->item_count; i++, it++) {
			buf_uleb(b, it->name);
			buf_uleb(b, it->type);
		}
		break;
	case G_FWD:
		buf_uleb(b, n->fwd_kind);
		break;
	case G_UNSPEC:
		break;
	case G_UNSUPPORTED:
		buf_uleb(b, n->tag);
		buf_uleb(b, n->type);
		break;
	}
	if (n->flags & G_F_ANNOT)
		put_annots(b, g, n->annot_first, n->annot_count);
}

/* Records [lo, hi) of section id (nodes and provenance: node ids; funcs,
 * vars: indexes), appended to b. The piece that starts a counted section
 * (lo at its first record) writes the count. Inputs and CUs are one piece
 * each, encoded whole (lo and hi unused). Strings are not encoded: they are
 * written from g->str as they are. */
static void encode_piece(struct buf *b, const struct graph *g, int id, size_t lo, size_t hi)
{
	switch (id) {
	case S_INPUTS:
		buf_uleb(b, g->ninputs);
		for (size_t i = 0; i < g->ninputs; i++) {
			const struct graph_input *in = &g->inputs[i];
			buf_uleb(b, in->name);
			buf_le64(b, in->dwarf_hash.lo);
			buf_le64(b, in->dwarf_hash.hi);
			buf_uleb(b, in->e_machine);
			buf_u8(b, in->ei_class);
			buf_u8(b, in->ei_data);
			buf_uleb(b, in->flags);
			buf_uleb(b, in->build_id_len);
			buf_put(b, in->build_id, in->build_id_len);
			buf_uleb(b, in->ncus);
		}
		break;
	case S_CUS:
		buf_uleb(b, g->ncus);
		for (size_t i = 0; i < g->ncus; i++) {
			const struct graph_cu *c = &g->cus[i];
			buf_uleb(b, c->input);
			buf_uleb(b, c->cu_offset);
			buf_uleb(b, c->name);
			buf_uleb(b, c->producer);
			buf_uleb(b, c->language);
		}
		break;
	case S_NODES:
		if (lo == 1)
			buf_uleb(b, g->nnodes);
		for (size_t i = lo; i < hi; i++)
			put_node(b, g, &g->nodes[i]);
		break;
	case S_PROV:
		for (size_t i = lo; i < hi; i++) {
			uint32_t a = g->prov_off[i], e = g->prov_off[i + 1], prev = 0;
			buf_uleb(b, e - a);
			for (uint32_t k = a; k < e; k++) {
				buf_uleb(b, g->prov[k] - prev);
				prev = g->prov[k];
			}
		}
		break;
	case S_FUNCS:
		if (lo == 0)
			buf_uleb(b, g->nfuncs);
		for (size_t i = lo; i < hi; i++) {
			const struct graph_func *f = &g->funcs[i];
			buf_uleb(b, f->name);
			buf_uleb(b, f->linkage);
			buf_uleb(b, f->proto);
			buf_uleb(b, f->cu);
			buf_uleb(b, f->flags);
			buf_uleb(b, f->inline_kind);
			buf_uleb(b, f->cc);
			buf_uleb(b, f->pc);
			buf_uleb(b, f->shndx);
			buf_uleb(b, f->loc_count);
			for (uint32_t k = 0; k < f->loc_count; k++) {
				const struct graph_loc *l = &g->locs[f->loc_first + k];
				buf_uleb(b, l->loc);
				buf_uleb(b, l->loc_reg);
				put_annots(b, g, l->annot_first, l->annot_count);
			}
			if (f->flags & G_F_ANNOT)
				put_annots(b, g, f->annot_first, f->annot_count);
		}
		break;
	case S_VARS:
		if (lo == 0)
			buf_uleb(b, g->nvars);
		for (size_t i = lo; i < hi; i++) {
			const struct graph_var *v = &g->vars[i];
			buf_uleb(b, v->name);
			buf_uleb(b, v->type);
			buf_uleb(b, v->cu);
			buf_uleb(b, v->flags);
			buf_uleb(b, v->addr);
			buf_uleb(b, v->shndx);
			if (v->flags & G_F_ANNOT)
				put_annots(b, g, v->annot_first, v->annot_count);
		}
		break;
	}
}

/* The sections are cut into pieces of at most PIECE_RECORDS records, each
 * encoded on its own (on the pool when there are threads) and placed one
 * after the other, so the bytes are those of one encoder going through the
 * records in order, at any thread count. The strings section is the first
 * piece, with nothing to encode: its bytes are the graph's own. On the cloud
 * vmlinux's graph (12.6 MB) the encoding was most of the merge's write
 * phase on one thread, and writing the pieces in order after it most of
 * what was left: now the in-order emit only hashes a piece and gives it its
 * offset, and the workers write the placed pieces between their own
 * (claim.h), the calling thread what is left after the pool. */
enum { PIECE_RECORDS = 8192 };

struct piece {
	int sec;
	size_t lo, hi;
	struct buf b;		/* its bytes, until written; the strings' stay in the graph */
	uint64_t off;		/* its place in the file, from encode_emit() */
	int werr;		/* its write failed: the error, the detail in d */
	struct diag d;
};

struct wrun {
	const struct graph *g;
	struct outfile *o;
	struct piece *p;
	size_t np;
	struct claim cl;
	uint64_t at;				/* where the next piece is placed */
	XXH3_state_t st[GRAPH_NSECTIONS + 1];	/* each section's checksum, streamed */
	uint64_t len[GRAPH_NSECTIONS + 1];
};

static const void *piece_bytes(const struct wrun *r, const struct piece *p, size_t *n)
{
	if (p->sec == S_STRINGS) {
		*n = r->g->str_size;
		return r->g->str;
	}
	*n = p->b.len;
	return p->b.data;
}

/* A failed write stays in its piece. Only placed pieces are written, and
 * a piece is placed only after every piece before it encoded, so the lowest
 * piece with an error is the one a serial write meets first. */
static void write_placed(struct wrun *r)
{
	size_t k, n;
	while (claim_next(&r->cl, &k)) {
		struct piece *p = &r->p[k];
		const void *bytes = piece_bytes(r, p, &n);
		p->werr = outfile__pwrite(r->o, bytes, n, p->off, &p->d);
		buf_free(&p->b);
	}
}

static int encode_work(void *ctx, unsigned worker, size_t i)
{
	(void)worker;
	struct wrun *r = ctx;
	struct piece *p = &r->p[i];
	write_placed(r);
	if (p->sec != S_STRINGS)
		encode_piece(&p->b, r->g, p->sec, p->lo, p->hi);
	return p->b.err;
}

/* In piece order: each section's checksum over its pieces as they come,
 * and the piece's place in the file. */
static int encode_emit(void *ctx, size_t i)
{
	struct wrun *r = ctx;
	struct piece *p = &r->p[i];
	size_t n;
	const void *bytes = piece_bytes(r, p, &n);
	XXH3_64bits_update(&r->st[p->sec], bytes, n);
	r->len[p->sec] += n;
	p->off = r->at;
	r->at += n;
	claim_publish(&r->cl, i + 1);
	return 0;
}

/* Appends the pieces of records [lo, hi) of section sec to r->p. */
static int plan_pieces(struct wrun *r, size_t *cap, int sec, size_t lo, size_t hi)
{
	do {
		size_t end = hi - lo > PIECE_RECORDS ? lo + PIECE_RECORDS : hi;
		if (vec_grow(&r->p, cap, r->np + 1))
			return -ENOMEM;
		r->p[r->np++] = (struct piece){ .sec = sec, .lo = lo, .hi = end };
		lo = end;
	} while (lo < hi);
	return 0;
}

int graph__write(const struct graph *g, const char *path, unsigned threads, struct diag *d)
{
	uint8_t head[GRAPH_HEADER_SIZE + GRAPH_NSECTIONS * 32];
	struct outfile o;
	struct wrun r = { .g = g, .o = &o, .at = sizeof(head) };
	size_t cap = 0;
	int err = 0;
	if (g->prov_cut)
		return diag_fail(d, EINVAL, "%s: not written: the graph was read without its full provenance",
				 path);
	memset(head, 0, sizeof(head));
	for (int id = 1; id <= GRAPH_NSECTIONS; id++)
		XXH3_64bits_reset(&r.st[id]);
	if ((err = plan_pieces(&r, &cap, S_STRINGS, 0, 0)) || (err = plan_pieces(&r, &cap, S_INPUTS, 0, 0)) ||
	    (err = plan_pieces(&r, &cap, S_CUS, 0, 0)) ||
	    (err = plan_pieces(&r, &cap, S_NODES, 1, g->nnodes + 1)) ||
	    (err = plan_pieces(&r, &cap, S_PROV, 1, g->nnodes + 1)) ||
	    (err = plan_pieces(&r, &cap, S_FUNCS, 0, g->nfuncs)) ||
	    (err = plan_pieces(&r, &cap, S_VARS, 0, g->nvars)))
		goto out_plan;
	if ((err = outfile__open(&o, path, d)))
		goto out_plan;
	err = pool_ordered(threads, r.np, r.np, encode_work, encode_emit, &r);
	if (!err)
		write_placed(&r); /* what the workers left */
	for (size_t i = 0; i < r.np && !err; i++)
		if (r.p[i].werr) {
			diag_take(d, &r.p[i].d);
			err = r.p[i].werr;
		}
	if (err)
		goto out;
	uint64_t off = sizeof(head);
	for (int id = 1; id <= GRAPH_NSECTIONS; id++) {
		uint8_t *e = head + GRAPH_HEADER_SIZE + (id - 1) * 32;
		le32_put(e, (uint32_t)id);
		le64_put(e + 8, off);
		le64_put(e + 16, r.len[id]);
		le64_put(e + 24, XXH3_64bits_digest(&r.st[id]));
		off += r.len[id];
	}
	if ((err = VERIFY(d, off == r.at, "the sections end at %llu, the pieces at %llu", (unsigned long long)off,
			  (unsigned long long)r.at)))
		goto out;
	memcpy(head, GRAPH_MAGIC, 8);
	le32_put(head + 8, GRAPH_FORMAT_VERSION);
	le32_put(head + 12, BTFPIPE_VERSION_CODE);
	le32_put(head + 16, 0);
	le32_put(head + 20, GRAPH_NSECTIONS);
	le64_put(head + 24, off);
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, head, 32);
	XXH3_64bits_update(&st, head + GRAPH_HEADER_SIZE, GRAPH_NSECTIONS * 32);
	le64_put(head + 32, XXH3_64bits_digest(&st));
	if (!(err = outfile__pwrite(&o, head, sizeof(head), 0, d)))
		err = outfile__commit(&o, d);
out:
	outfile__abort(&o);
out_plan:
	for (size_t i = 0; i < r.np; i++)
		buf_free(&r.p[i].b);
	free(r.p);
	return err;
}

/* ---- decoding ---------------------------------------------------------- */

struct gdec {
	struct cursor c;
	struct graph *g;
	const char *path;
	int sec;
	struct diag *d;
	unsigned flags;		/* GRAPH_READ_* */
	const char *str;	/* the strings section, in the file */
	size_t str_size;
	/* This section's annotations: sections are decoded side by side,
	 * and their lists are joined in file order after (join_annots()). */
	struct graph_annot *annots;
	size_t nannots, annots_cap;
	size_t nnodes;		/* S_PROV: the nodes section's count */
};

static int gfail(struct gdec *x, const char *why)
{
	return diag_fail(x->d, EBADMSG, "%s: section %s at offset %zu: %s", x->path,
			 section_names[x->sec], cursor_off(&x->c), why);
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

/* *first: an index into this section's own list, until check_work() moves
 * it to where join_annots() put that list. */
static int g_annots(struct gdec *x, uint32_t *first, uint32_t *count)
{
	size_t n;
	if (g_count(x, &n, 2))
		return -EBADMSG;
	if (vec_grow(&x->annots, &x->annots_cap, x->nannots + n))
		return -ENOMEM;
	*first = (uint32_t)x->nannots;
	*count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		x->annots[x->nannots].name = g_str(x);
		x->annots[x->nannots++].value = g_str(x);
	}
	return x->c.err;
}

static int g_items(struct gdec *x, struct graph_node *n, size_t *cap)
{
	struct graph *g = x->g;
	size_t count;
	if (g_count(x, &count, 1))
		return -EBADMSG;
	if (vec_grow(&g->items, cap, g->nitems + count))
		return -ENOMEM;
	n->item_first = (uint32_t)g->nitems;
	n->item_count = (uint32_t)count;
	for (size_t i = 0; i < count && !x->c.err; i++) {
		struct graph_item *it = &g->items[g->nitems++];
		memset(it, 0, sizeof(*it));
		switch (n->kind) {
		case G_STRUCT: case G_UNION:
			it->flags = g_u32(x);
			it->name = g_str(x);
			it->type = g_u32(x);
			it->value = cur_uleb(&x->c);
			it->bit_size = g_u32(x);
			if (!x->c.err && (it->flags & G_F_ANNOT)) {
				int err = g_annots(x, &it->annot_first, &it->annot_count);
				if (err)
					return err;
			}
			break;
		case G_ENUM:
			it->name = g_str(x);
			it->value = (n->flags & G_F_SIGNED) ? (uint64_t)cur_sleb(&x->c) : cur_uleb(&x->c);
			break;
		case G_ARRAY:
			it->value = cur_uleb(&x->c);
			break;
		case G_FUNC_PROTO:
			it->name = g_str(x);
			it->type = g_u32(x);
			break;
		}
	}
	return x->c.err;
}

static int dec_nodes(struct gdec *x)
{
	struct graph *g = x->g;
	size_t n, icap = 0;
	if (g_count(x, &n, 2))
		return -EBADMSG;
	g->nodes = calloc(n + 1, sizeof(*g->nodes));
	if (!g->nodes)
		return -ENOMEM;
	g->nnodes = n;
	for (size_t i = 1; i <= n; i++) {
		struct graph_node *nd = &g->nodes[i];
		int err = 0;
		nd->kind = cur_u8(&x->c);
		nd->flags = g_u32(x);
		nd->name = g_str(x);
		if (!x->c.err && (nd->kind < 1 || nd->kind > G_KIND_MAX))
			return gfail(x, "unknown node kind");
		switch (nd->kind) {
		case G_BASE:
			nd->encoding = g_u32(x);
			nd->size = cur_uleb(&x->c);
			nd->bit_size = g_u32(x);
			nd->bit_offset = g_u32(x);
			break;
		case G_PTR: case G_CONST: case G_VOLATILE: case G_RESTRICT: case G_ATOMIC: case G_TYPEDEF:
			nd->type = g_u32(x);
			break;
		case G_STRUCT: case G_UNION: case G_ENUM:
			nd->size = cur_uleb(&x->c);
			err = g_items(x, nd, &icap);
			break;
		case G_ARRAY: case G_FUNC_PROTO:
			nd->type = g_u32(x);
			err = g_items(x, nd, &icap);
			break;
		case G_FWD:
			nd->fwd_kind = g_u32(x);
			if (!x->c.err && nd->fwd_kind > G_FWD_ENUM)
				return gfail(x, "unknown fwd kind");
			break;
		case G_UNSPEC:
			break;
		case G_UNSUPPORTED:
			nd->tag = g_u32(x);
			nd->type = g_u32(x);
			break;
		}
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

static int dec_section(struct gdec *x)
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
	case S_NODES:
		return dec_nodes(x);
	case S_PROV: {
		/* The node count from the nodes section's first field: that
		 * section may still be being decoded. */
		size_t nnodes = x->nnodes;
		if (!(g->prov_off = calloc(nnodes + 2, sizeof(*g->prov_off))))
			return -ENOMEM;
		size_t cap = 0;
		for (size_t i = 1; i <= nnodes; i++) {
			g->prov_off[i] = (uint32_t)g->nprov;
			if (g_count(x, &n, 1))
				return -EBADMSG;
			size_t keep = (x->flags & GRAPH_READ_FIRST_PROV) && n > 1 ? 1 : n;
			if (vec_grow(&g->prov, &cap, g->nprov + keep))
				return -ENOMEM;
			uint64_t prev = 0;
			for (size_t k = 0; k < n; k++) {
				uint64_t v = prev + cur_uleb(&x->c);
				if ((k && v <= prev) || v >= g->ncus)
					return gfail(x, "provenance CU index out of order or range");
				if (k < keep)
					g->prov[g->nprov++] = (uint32_t)v;
				prev = v;
			}
		}
		g->prov_off[nnodes + 1] = (uint32_t)g->nprov;
		return x->c.err ? gfail(x, "truncated") : 0;
	}
	case S_FUNCS: {
		size_t lcap = 0;
		if (g_count(x, &n, 10))
			return -EBADMSG;
		if (!(g->funcs = calloc(n ? n : 1, sizeof(*g->funcs))))
			return -ENOMEM;
		g->nfuncs = n;
		for (size_t i = 0; i < n && !x->c.err; i++) {
			struct graph_func *f = &g->funcs[i];
			f->name = g_str(x);
			f->linkage = g_str(x);
			f->proto = g_u32(x);
			f->cu = g_u32(x);
			f->flags = g_u32(x);
			f->inline_kind = g_u32(x);
			f->cc = g_u32(x);
			f->pc = cur_uleb(&x->c);
			f->shndx = g_u32(x);
			size_t np;
			if (g_count(x, &np, 3))
				return -EBADMSG;
			if (vec_grow(&g->locs, &lcap, g->nlocs + np))
				return -ENOMEM;
			f->loc_first = (uint32_t)g->nlocs;
			f->loc_count = (uint32_t)np;
			for (size_t k = 0; k < np && !x->c.err; k++) {
				struct graph_loc *l = &g->locs[g->nlocs++];
				memset(l, 0, sizeof(*l));
				l->loc = g_u32(x);
				l->loc_reg = g_u32(x);
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
	case S_VARS:
		if (g_count(x, &n, 6))
			return -EBADMSG;
		if (!(g->vars = calloc(n ? n : 1, sizeof(*g->vars))))
			return -ENOMEM;
		g->nvars = n;
		for (size_t i = 0; i < n && !x->c.err; i++) {
			struct graph_var *v = &g->vars[i];
			v->name = g_str(x);
			v->type = g_u32(x);
			v->cu = g_u32(x);
			v->flags = g_u32(x);
			v->addr = cur_uleb(&x->c);
			v->shndx = g_u32(x);
			if (!x->c.err && (v->flags & G_F_ANNOT) && g_annots(x, &v->annot_first, &v->annot_count))
				return gfail(x, "annotations malformed");
			if (!x->c.err && v->cu >= g->ncus)
				return gfail(x, "variable names a CU that does not exist");
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

/* ---- reading, section by section --------------------------------------- */

/* A read in progress. The strings, the inputs and the CUs (small, and what
 * the others check their references against) are read first, on the
 * calling thread; then the strings are copied and the nodes, provenance,
 * functions and variables decoded side by side, each into fields of the
 * graph of its own; then the annotation lists are joined and the node ids
 * checked, again side by side. Each part records its error and message in
 * its own slot, and the one reported is the first in file order: the
 * message of a bad file is the same at any thread count, and the same as
 * reading the sections one after the other. */
struct gread {
	struct graph *g;
	const char *path;
	unsigned flags;
	const uint8_t *sec[GRAPH_NSECTIONS + 1];	/* by section id */
	size_t len[GRAPH_NSECTIONS + 1];
	uint64_t off[GRAPH_NSECTIONS + 1];		/* in the file */
	uint64_t check[GRAPH_NSECTIONS + 1];
	struct gdec x[GRAPH_NSECTIONS + 1];
	struct diag d[GRAPH_NSECTIONS + 1];
	int err[GRAPH_NSECTIONS + 1];
};

/* Section id: its checksum, then its records, then nothing left over. */
static int read_section(struct gread *r, int id)
{
	struct diag *d = &r->d[id];
	if (XXH3_64bits(r->sec[id], r->len[id]) != r->check[id])
		return diag_fail(d, EBADMSG, "%s: section %s (offset %llu, %llu bytes): checksum mismatch: "
				 "the file is corrupted", r->path, section_names[id],
				 (unsigned long long)r->off[id], (unsigned long long)r->len[id]);
	if (id == S_STRINGS) {
		if (!r->len[id] || r->sec[id][0] || r->sec[id][r->len[id] - 1])
			return diag_fail(d, EBADMSG, "%s: string section malformed at offset %llu", r->path,
					 (unsigned long long)r->off[id]);
		return 0; /* copied by read_work() */
	}
	struct gdec *x = &r->x[id];
	*x = (struct gdec){ .g = r->g, .path = r->path, .sec = id, .d = d, .flags = r->flags,
			    .str = (const char *)r->sec[S_STRINGS], .str_size = r->len[S_STRINGS] };
	if (id == S_PROV) {
		/* The nodes section's count, read as dec_nodes() reads it. A
		 * count it refuses gives 0 here: nothing is allocated for it,
		 * and the nodes section's error is the one reported. (No diag:
		 * that message is the nodes section's to make.) */
		struct gdec peek = { .path = r->path, .sec = S_NODES };
		cursor_init(&peek.c, r->sec[S_NODES], r->len[S_NODES]);
		g_count(&peek, &x->nnodes, 2);
	}
	cursor_init(&x->c, r->sec[id], r->len[id]);
	int err = dec_section(x);
	if (!err && (x->c.err || cursor_left(&x->c)))
		err = gfail(x, x->c.err == -ERANGE ? "string reference out of range"
			       : x->c.err ? "truncated" : "trailing bytes");
	return err;
}

static int read_work(void *ctx, unsigned worker, size_t item)
{
	(void)worker;
	struct gread *r = ctx;
	if (item == 0) { /* the strings, checked already */
		struct graph *g = r->g;
		if (!(g->str = malloc(r->len[S_STRINGS])))
			return r->err[S_STRINGS] = -ENOMEM;
		memcpy(g->str, r->sec[S_STRINGS], r->len[S_STRINGS]);
		g->str_size = r->len[S_STRINGS];
		return 0;
	}
	int id = S_CUS + (int)item; /* items 1.. are the sections after the CUs */
	return r->err[id] = read_section(r, id);
}

/* The sections' annotation lists as one, in file order (check_work()
 * then adds each list's start to the references into it). */
static int join_annots(struct gread *r)
{
	struct graph *g = r->g;
	size_t total = 0;
	for (int id = S_NODES; id <= S_VARS; id++)
		total += r->x[id].nannots;
	if (!(g->annots = malloc((total ? total : 1) * sizeof(*g->annots))))
		return -ENOMEM;
	size_t at = 0;
	for (int id = S_NODES; id <= S_VARS; id++) {
		if (r->x[id].nannots)
			memcpy(g->annots + at, r->x[id].annots, r->x[id].nannots * sizeof(*g->annots));
		at += r->x[id].nannots;
	}
	g->nannots = total;
	return 0;
}

static int check_work(void *ctx, unsigned worker, size_t item)
{
	(void)worker;
	struct gread *r = ctx;
	struct graph *g = r->g;
	/* Where the functions' and the variables' lists start in the joined one. */
	uint32_t funcs_at = (uint32_t)r->x[S_NODES].nannots;
	uint32_t vars_at = funcs_at + (uint32_t)r->x[S_FUNCS].nannots;
	switch (item) {
	case 0:
		return r->err[0] = check_nodes(g, r->path, &r->d[0]);
	case 1:
		for (size_t i = 0; i < g->nfuncs; i++)
			g->funcs[i].annot_first += funcs_at;
		for (size_t i = 0; i < g->nlocs; i++)
			g->locs[i].annot_first += funcs_at;
		return r->err[1] = check_funcs(g, r->path, &r->d[1]);
	default:
		for (size_t i = 0; i < g->nvars; i++)
			g->vars[i].annot_first += vars_at;
		return r->err[2] = check_vars(g, r->path, &r->d[2]);
	}
}

/* A section's message, if it has one, into the caller's d, whose phase
 * stays: a copy of the whole struct lost the phase that the out-of-memory
 * line names. */
static void take_diag(struct diag *d, const struct diag *from)
{
	if (d && from->set)
		diag_take(d, from);
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

/* The header of the mapped file m (size bytes): magic, version, size and
 * the checksum over it and the section table. */
static int check_header(const uint8_t *m, size_t size, const char *path, struct diag *d)
{
	if (memcmp(m, GRAPH_MAGIC, 8))
		return diag_fail(d, EBADMSG, "%s: not a .graph file (bad magic at offset 0)", path);
	uint32_t version = le32_get(m + 8);
	if (version != GRAPH_FORMAT_VERSION)
		return diag_fail(d, EPROTO, "%s: .graph format version %u, this btfpipe reads version %u: "
				 "merge again with this btfpipe", path, version, GRAPH_FORMAT_VERSION);
	if (le64_get(m + 24) != size)
		return diag_fail(d, EBADMSG, "%s: file is %zu bytes but its header says %llu (truncated or appended to)",
				 path, size, (unsigned long long)le64_get(m + 24));
	XXH3_state_t hs;
	XXH3_64bits_reset(&hs);
	XXH3_64bits_update(&hs, m, 32);
	XXH3_64bits_update(&hs, m + GRAPH_HEADER_SIZE, GRAPH_NSECTIONS * 32);
	int reserved_zero = 1;
	for (int i = 40; i < GRAPH_HEADER_SIZE; i++)
		reserved_zero &= m[i] == 0;
	if (le32_get(m + 20) != GRAPH_NSECTIONS || le32_get(m + 16) != 0 || !reserved_zero ||
	    XXH3_64bits_digest(&hs) != le64_get(m + 32))
		return diag_fail(d, EBADMSG, "%s: header or section table corrupted (checksum mismatch at offset 32)",
				 path);
	return 0;
}

/* Where each section is, from the section table into r: sections 1 ..
 * (the result) lie where the table says, each after the one before; the
 * first one that does not is described in *place_d. *expect: where the
 * last placed one ends. */
static int place_sections(struct gread *r, const uint8_t *m, size_t size, uint64_t *expect,
			  struct diag *place_d)
{
	int placed = 0;
	for (int id = 1; id <= GRAPH_NSECTIONS; id++) {
		const uint8_t *e = m + GRAPH_HEADER_SIZE + (id - 1) * 32;
		uint64_t off = le64_get(e + 8), len = le64_get(e + 16);
		if (le32_get(e) != (uint32_t)id || off != *expect || len > size - off) {
			diag_fail(place_d, EBADMSG, "%s: section %s out of place (offset %llu)", r->path,
				  section_names[id], (unsigned long long)off);
			break;
		}
		r->sec[id] = m + off;
		r->off[id] = off;
		r->len[id] = (size_t)len;
		r->check[id] = le64_get(e + 24);
		*expect = off + len;
		placed = id;
	}
	return placed;
}

int graph__read_flags(struct graph *g, const char *path, unsigned flags, unsigned threads, struct diag *d)
{
	memset(g, 0, sizeof(*g));
	g->prov_cut = (flags & GRAPH_READ_FIRST_PROV) != 0;
	size_t size, head_size = GRAPH_HEADER_SIZE + GRAPH_NSECTIONS * 32;
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
	if ((err = check_header(m, size, path, d)))
		goto out;
	/* A section out of place is reported after the errors of the sections
	 * before it, as a reader going through the file in order would. */
	uint64_t expect = head_size;
	struct diag place_d = { 0 };
	int placed = place_sections(r, m, size, &expect, &place_d);
	/* The strings, inputs and CUs, in order, on this thread. */
	for (int id = S_STRINGS; id <= S_CUS && id <= placed; id++)
		if ((err = read_section(r, id))) {
			take_diag(d, &r->d[id]);
			goto out;
		}
	/* Then the rest side by side: item 0 copies the strings. */
	if (placed >= S_CUS) {
		size_t jobs = (size_t)(placed - S_CUS) + 1;
		int perr = pool_ordered(threads, jobs, jobs, read_work, NULL, r);
		if ((err = first_error(r, GRAPH_NSECTIONS + 1, d)) || (err = perr))
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
	if ((err = join_annots(r)))
		goto out;
	memset(r->err, 0, sizeof(r->err));
	memset(r->d, 0, sizeof(r->d));
	int perr = pool_ordered(threads, 3, 3, check_work, NULL, r);
	if (!(err = first_error(r, 3, d)))
		err = perr;
out:
	if (r)
		for (int id = 0; id <= GRAPH_NSECTIONS; id++)
			free(r->x[id].annots);
	free(r);
	munmap((void *)m, size);
	if (err)
		graph__free(g);
	return err;
}
