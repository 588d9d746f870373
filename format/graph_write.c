/* graph_write.c: a graph encoded as a `.graph` file (spec:
 * format/TYPE-GRAPH.md), in pieces on the pool, written by the workers. */
#include "graph.h"
#include "graph_sections.h"
#include "../common/buf.h"
#include "../common/claim.h"
#include "../common/diag.h"
#include "../common/outfile.h"
#include "../common/pool.h"
#include "../common/vec.h"
#include "../common/version.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What a block's header counts of the records it holds (TYPE-GRAPH.md):
 * a = items (nodes), provenance entries, or parameters (funcs); b =
 * annotations, or the nodes with any provenance. */
struct bcount {
	uint64_t a, b;
};

static void put_annots(struct buf *b, const struct graph *g, uint32_t first, uint32_t count, struct bcount *bc)
{
	bc->b += count;
	buf_uleb(b, count);
	for (uint32_t i = 0; i < count; i++) {
		buf_uleb(b, g->annots[first + i].name);
		buf_uleb(b, g->annots[first + i].value);
	}
}

/* Every field a ULEB128 but an enumerator's value, an SLEB128 when its
 * enum is signed (graph.h's tables). */
#define PUT_u32(v) buf_uleb(b, v)
#define PUT_u64(v) buf_uleb(b, v)
#define PUT_ref(v) buf_uleb(b, v)
#define PUT_str(v) buf_uleb(b, v)
#define PUT_ate(v) buf_uleb(b, v)
#define PUT_tag(v) buf_uleb(b, v)
#define PUT_fwd(v) buf_uleb(b, v)
#define PUT_loc(v) buf_uleb(b, v)
#define PUT_mflags(v) buf_uleb(b, v)
#define PUT_eval(v) ((n->flags & G_F_SIGNED) ? buf_sleb(b, (int64_t)(v)) : buf_uleb(b, v))

static void put_node(struct buf *b, const struct graph *g, const struct graph_node *n, struct bcount *bc)
{
	const struct graph_item *it = n->item_count ? g->items + n->item_first : NULL; /* NULL + 0 is undefined */
	buf_u8(b, n->kind);
	buf_uleb(b, n->flags);
	buf_uleb(b, n->name);
#define PUT_FIELD(field, enc) PUT_##enc(n->field);
#define PUT_ITEM(field, enc) PUT_##enc(it->field);
#define ITEM_ONE(field, enc) +1
	switch (n->kind) {
#define PUT_KIND(kind, fields, items)                                                 \
	case kind:                                                                    \
		fields(PUT_FIELD)                                                     \
		if ((0 items(ITEM_ONE)) == 0)                                         \
			break;                                                        \
		buf_uleb(b, n->item_count);                                           \
		bc->a += n->item_count;                                               \
		for (uint32_t i = 0; i < n->item_count; i++, it++) {                  \
			items(PUT_ITEM)                                               \
			if ((kind == G_STRUCT || kind == G_UNION) && (it->flags & G_F_ANNOT)) \
				put_annots(b, g, it->annot_first, it->annot_count, bc); \
		}                                                                     \
		break;
		GRAPH_NODE_KINDS(PUT_KIND)
#undef PUT_KIND
	}
#undef ITEM_ONE
#undef PUT_ITEM
#undef PUT_FIELD
	if (n->flags & G_F_ANNOT)
		put_annots(b, g, n->annot_first, n->annot_count, bc);
}

/* v as a uleb at p; returns its length (at most 10). */
static size_t uleb_at(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Room before a piece's records for what precedes them: the section's
 * count (in its first piece) and the block header, five ulebs at most. */
enum { PIECE_HEAD_ROOM = 50 };

/* Records [lo, hi) of section id (nodes and provenance: node ids; funcs,
 * vars: indexes), appended to b as one block (TYPE-GRAPH.md): the header
 * goes in front once the records are encoded and counted, right-aligned in
 * the room left for it, and *skip is where the piece's bytes start. The
 * piece that starts a counted section (lo at its first record) begins with
 * the count; a section without records has no block. Inputs and CUs are
 * one piece each, encoded whole (lo and hi unused). Strings are not
 * encoded: they are written from g->str as they are. */
static void encode_piece(struct buf *b, const struct graph *g, int id, size_t lo, size_t hi, size_t *skip)
{
	*skip = 0;
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
		return;
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
		return;
	}
	uint8_t head[PIECE_HEAD_ROOM] = { 0 };
	buf_put(b, head, sizeof(head)); /* the room, filled below */
	struct bcount bc = { 0 };
	switch (id) {
	case S_NODES:
		for (size_t i = lo; i < hi; i++)
			put_node(b, g, &g->nodes[i], &bc);
		break;
	case S_PROV:
		for (size_t i = lo; i < hi; i++) {
			uint32_t a = g->prov_off[i], e = g->prov_off[i + 1], prev = 0;
			buf_uleb(b, e - a);
			bc.a += e - a;
			bc.b += e > a;
			for (uint32_t k = a; k < e; k++) {
				buf_uleb(b, g->prov[k] - prev);
				prev = g->prov[k];
			}
		}
		break;
	case S_FUNCS:
		for (size_t i = lo; i < hi; i++) {
			const struct graph_func *f = &g->funcs[i];
#define PUT_FUNC(field, enc) PUT_##enc(f->field);
			GRAPH_FUNC_FIELDS(PUT_FUNC)
#undef PUT_FUNC
			buf_uleb(b, f->loc_count);
			bc.a += f->loc_count;
			for (uint32_t k = 0; k < f->loc_count; k++) {
				const struct graph_loc *l = &g->locs[f->loc_first + k];
#define PUT_LOC(field, enc) PUT_##enc(l->field);
				GRAPH_LOC_FIELDS(PUT_LOC)
#undef PUT_LOC
				put_annots(b, g, l->annot_first, l->annot_count, &bc);
			}
			if (f->flags & G_F_ANNOT)
				put_annots(b, g, f->annot_first, f->annot_count, &bc);
		}
		break;
	case S_VARS:
		for (size_t i = lo; i < hi; i++) {
			const struct graph_var *v = &g->vars[i];
#define PUT_VAR(field, enc) PUT_##enc(v->field);
			GRAPH_VAR_FIELDS(PUT_VAR)
#undef PUT_VAR
			if (v->flags & G_F_ANNOT)
				put_annots(b, g, v->annot_first, v->annot_count, &bc);
		}
		break;
	}
	if (b->err)
		return;
	size_t n = 0;
	if (id == S_NODES && lo == 1)
		n += uleb_at(head + n, g->nnodes);
	else if ((id == S_FUNCS || id == S_VARS) && lo == 0)
		n += uleb_at(head + n, id == S_FUNCS ? g->nfuncs : g->nvars);
	if (hi > lo) {
		n += uleb_at(head + n, hi - lo);
		n += uleb_at(head + n, b->len - PIECE_HEAD_ROOM);
		n += uleb_at(head + n, bc.a);
		n += uleb_at(head + n, bc.b);
	}
	*skip = PIECE_HEAD_ROOM - n;
	memcpy(b->data + *skip, head, n);
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
	struct buf b;		/* its bytes from skip on, until written; the strings' stay in the graph */
	size_t skip;
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
	*n = p->b.len - p->skip;
	return p->b.data + p->skip;
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
		encode_piece(&p->b, r->g, p->sec, p->lo, p->hi, &p->skip);
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

/* The file's bytes into o: opened here from path and committed when fd
 * is -1, else o is fd itself (owned by the caller, never committed). */
static int write_graph(const struct graph *g, const char *path, int fd, unsigned threads, struct diag *d)
{
	uint8_t head[GRAPH_HEADER_SIZE + GRAPH_NSECTIONS * 32];
	struct outfile o = { .path = (char *)path, .fd = fd };
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
	if (fd < 0 && (err = outfile__open(&o, path, d)))
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
	if (!(err = outfile__pwrite(&o, head, sizeof(head), 0, d)) && fd < 0)
		err = outfile__commit(&o, d);
out:
	if (fd < 0)
		outfile__abort(&o);
out_plan:
	for (size_t i = 0; i < r.np; i++)
		buf_free(&r.p[i].b);
	free(r.p);
	return err;
}

int graph__write(const struct graph *g, const char *path, unsigned threads, struct diag *d)
{
	return write_graph(g, path, -1, threads, d);
}

int graph__write_fd(const struct graph *g, int fd, const char *what, unsigned threads, struct diag *d)
{
	return write_graph(g, what, fd, threads, d);
}

