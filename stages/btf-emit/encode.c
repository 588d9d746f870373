/* encode.c: the graph's BTF written, on one thread or in pieces on several.
 *
 * The BTF is, in this order: the nodes' types and the extra types with the
 * index type (types.c, ids planned by types__plan()), the nodes' decl tags,
 * the FUNCs with theirs (funcs.c), then the VARs and DATASECs (vars.c).
 *
 * On one thread one writer (btf_writer.c) adds them all. On more, that list
 * is cut into pieces, each written by a writer of its own on the pool:
 *   - a piece of nodes, or the extras, knows its ids from the plan;
 *   - a piece of decl tags or functions, or the variables, does not (how
 *     many tags and true signatures come before it is only known once the
 *     pieces before it are written): its ids are local (BW_LOCAL | n), and
 *     the writer notes where it stored one.
 * The join counts the pieces' types in order (a loop over pieces), gives
 * each local id its place, joins the strings (str_join.c) and rewrites each
 * name offset, all on the pool. The bytes are the one writer's at any
 * thread count: same ids, same strings at the same offsets (t0860).
 */
#include "encode.h"
#include "btf_writer.h"
#include "emit.h"
#include "funcs.h"
#include "type_encode.h"
#include "types.h"
#include "vars.h"
#include "str_join.h"
#include "../../format/graph.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/pool.h"
#include "../../common/vec.h"

#include <errno.h>
#include <limits.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>

/* Items per piece: small enough that a vmlinux makes dozens of pieces,
 * so that the threads share them evenly. */
#define NODES_PER_PIECE 4096
#define FUNCS_PER_PIECE 2048
/* Fewer nodes and functions than this per thread, and one writer does it:
 * the join has a cost of its own (five pool runs, each starting threads),
 * and a module's whole encode is short (even xfs.ko's thousands of nodes
 * and functions), so modules stay on one writer. Where the two cross was
 * not measured. */
#define ITEMS_PER_THREAD 30000

enum piece_kind { P_NODES, P_EXTRAS, P_TAGS, P_FUNCS, P_VARS };

struct piece {
	enum piece_kind kind;
	size_t a, b;		/* nodes or picks [a, b) */
	uint32_t base;		/* planned: its ids start after base */
	struct bw *w;
	int err;
	struct diag d;
	uint32_t first;		/* the join: its first id */
	size_t types_at;	/* the join: where its types start */
};

struct encode {
	const struct encode_in *in;
	struct piece *p;
	size_t np;
	struct bw *one;		/* one writer for every piece, or NULL */
	struct str_join *sj;
	uint8_t *types;		/* the join: the joined types */
	/* The join: each worker's map of a piece's string offsets, reused
	 * from piece to piece (a new one per piece cost more in page faults
	 * than the rest of the join). */
	struct { uint32_t *v; size_t cap; } *maps;
};

static int planned(const struct piece *p)
{
	return p->kind == P_NODES || p->kind == P_EXTRAS;
}

/* Write piece p into its writer. */
static int write_to(struct encode *e, struct piece *p)
{
	const struct encode_in *in = e->in;
	p->base = p->kind == P_NODES ? type_encode__base(in->g, in->map, p->a, p->b)
		: p->kind == P_EXTRAS ? type_encode__extras_base(in->map) : 0;
	struct bw *w = e->one ? e->one : (p->w = bw__new_piece(p->base, !planned(p)));
	if (!w)
		return -ENOMEM;
	switch (p->kind) {
	case P_NODES:
		return type_encode__nodes(w, in->g, in->map, in->o, p->a, p->b, &p->d);
	case P_EXTRAS:
		return type_encode__extras(w, in->g, in->map, &p->d);
	case P_TAGS:
		return type_encode__tags(w, in->g, in->map, p->a, p->b, &p->d);
	case P_FUNCS:
		return funcs__encode(w, in->g, in->ei, in->picks, p->a, p->b, in->map, in->o, &p->d);
	case P_VARS:
		return vars__encode(w, in->g, in->ei, in->map, in->o, in->skips, &p->d);
	}
	return -EINVAL;
}

static int write_piece(void *ctx, unsigned worker, size_t k)
{
	(void)worker;
	struct encode *e = ctx;
	return e->p[k].err = write_to(e, &e->p[k]);
}

/* Cut [from, to) into pieces of `per` items. */
static int add_pieces(struct piece **v, size_t *n, size_t *cap, enum piece_kind kind, size_t from,
		      size_t to, size_t per)
{
	do {
		if (vec_grow(v, cap, *n + 1))
			return -ENOMEM;
		size_t end = to - from > per ? from + per : to;
		(*v)[(*n)++] = (struct piece){ .kind = kind, .a = from, .b = end };
		from = end;
	} while (from < to);
	return 0;
}

static int plan_pieces(struct encode *e, size_t nodes_per, size_t funcs_per)
{
	const struct encode_in *in = e->in;
	size_t cap = 0, n = 0;
	struct piece *v = NULL;
	size_t nodes_end = in->g->nnodes + 1;
	int err = add_pieces(&v, &n, &cap, P_NODES, 1, nodes_end, nodes_per);
	if (!err)
		err = add_pieces(&v, &n, &cap, P_EXTRAS, 0, 0, 1);
	if (!err && in->map->decl_tags)
		err = add_pieces(&v, &n, &cap, P_TAGS, 1, nodes_end, nodes_per);
	if (!err)
		err = add_pieces(&v, &n, &cap, P_FUNCS, 0, in->npicks, funcs_per);
	if (!err)
		err = add_pieces(&v, &n, &cap, P_VARS, 0, 0, 1);
	e->p = v;
	e->np = n;
	return err;
}

/* The first failing piece's error and message, as one writer would stop
 * at it (the pool returns the same error). */
static int piece_failed(struct encode *e, int err, struct diag *d)
{
	for (size_t k = 0; k < e->np; k++)
		if (e->p[k].err) {
			err = e->p[k].err;
			return e->p[k].d.set ? diag_fail(d, -err, "%s", e->p[k].d.msg) : err;
		}
	return err;
}

/* Copy piece k's types to their place, with its local ids and name offsets
 * made the BTF's. */
static int join_piece(void *ctx, unsigned worker, size_t k)
{
	struct encode *e = ctx;
	const struct piece *p = &e->p[k];
	struct bw_piece v;
	bw__piece_view(p->w, &v);
	uint8_t *t = e->types + p->types_at;
	if (v.types_len) /* an empty piece's buffer is NULL */
		memcpy(t, v.types, v.types_len);
	size_t need = str_join__map_len(e->sj, k);
	if (need > e->maps[worker].cap) {
		free(e->maps[worker].v);
		e->maps[worker].cap = 0;
		if (!(e->maps[worker].v = malloc(need * sizeof(uint32_t))))
			return -ENOMEM;
		e->maps[worker].cap = need;
	}
	uint32_t *map = e->maps[worker].v;
	str_join__map(e->sj, k, map);
	for (size_t i = 0; i < v.n_name; i++) {
		uint32_t off;
		memcpy(&off, t + v.name_at[i], 4);
		off = map[off];
		memcpy(t + v.name_at[i], &off, 4);
	}
	for (size_t i = 0; i < v.n_local; i++) {
		uint32_t id;
		memcpy(&id, t + v.local_at[i], 4);
		id = p->first - 1 + (id & ~BW_LOCAL);
		memcpy(t + v.local_at[i], &id, 4);
	}
	return 0;
}

/* Past a limit of BTF's in all, though each piece fitted: a message with
 * the totals (no one type is to blame). */
static int too_big(struct diag *d, uint64_t nr_types, uint64_t types_len, uint64_t strs_len)
{
	return diag_fail(d, E2BIG, "the BTF would hold %llu types in %llu bytes and %llu bytes of strings: "
			 "past a limit of BTF's (2,147,483,646 types, 4 GiB in all)", (unsigned long long)nr_types,
			 (unsigned long long)types_len, (unsigned long long)strs_len);
}

static int join(struct encode *e, unsigned threads, struct buf *out, uint32_t *nr_types, struct diag *d)
{
	struct sj_in *si = calloc(e->np, sizeof(*si));
	if (!si)
		return -ENOMEM;
	/* In order, over pieces: where each one's ids and types start. A
	 * planned piece must start where the plan put it. */
	uint64_t next_id = 1, types_len = 0;
	int err = 0;
	for (size_t k = 0; k < e->np && !err; k++) {
		struct piece *p = &e->p[k];
		struct bw_piece v;
		bw__piece_view(p->w, &v);
		if (v.err) {
			err = v.err;
			break;
		}
		p->first = (uint32_t)next_id;
		if (planned(p) && v.nr_types && p->base + 1 != next_id)
			err = -EPROTO; /* a bug: join() reports it */
		p->types_at = (size_t)types_len;
		next_id += v.nr_types;
		types_len += v.types_len;
		si[k] = (struct sj_in){ v.strs, v.strs_len, v.str_at, v.str_hash, v.n_str };
	}
	if (!err && next_id - 1 > (uint64_t)INT_MAX - 1)
		err = too_big(d, next_id - 1, types_len, 0); /* one writer stops at INT_MAX - 1 types */
	size_t strs_len = 0;
	if (!err && (err = str_join__plan(si, e->np, threads, &e->sj, &strs_len)) == -E2BIG)
		err = too_big(d, next_id - 1, types_len, strs_len); /* the strings alone, past 4 GiB */
	free(si);
	if (!err && (types_len > UINT32_MAX - sizeof(struct btf_header) ||
		     strs_len > UINT32_MAX - sizeof(struct btf_header) - types_len))
		err = too_big(d, next_id - 1, types_len, strs_len);
	if (err)
		return err;
	struct btf_header h = {
		.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h),
		.type_off = 0, .type_len = (uint32_t)types_len,
		.str_off = (uint32_t)types_len, .str_len = (uint32_t)strs_len,
	};
	buf_reset(out);
	if ((err = buf_reserve(out, sizeof(h) + types_len + strs_len)))
		return err;
	memcpy(out->data, &h, sizeof(h));
	e->types = out->data + sizeof(h);
	out->len = sizeof(h) + types_len + strs_len;
	if ((err = str_join__write(e->sj, (char *)e->types + types_len)))
		return err;
	*nr_types = (uint32_t)(next_id - 1);
	if (!(e->maps = calloc(threads, sizeof(*e->maps))))
		return -ENOMEM;
	err = pool_ordered(threads, e->np, e->np, join_piece, NULL, e);
	for (unsigned t = 0; t < threads; t++)
		free(e->maps[t].v);
	free(e->maps);
	return err;
}

int encode__btf(const struct encode_in *in, unsigned *threads_used, struct buf *out,
	       uint32_t *nr_types, struct diag *d)
{
	const struct emit_opts *o = in->o;
	unsigned threads = pool_threads_for(o->cli.jobs, in->g->nnodes + in->npicks,
					    o->cli.jobs_exact ? 0 : ITEMS_PER_THREAD);
	/* Local ids must not be taken for planned ones. */
	if (in->map->after_extras >= BW_LOCAL)
		threads = 1;
	*threads_used = threads;
	struct encode e = { .in = in };
	int err = plan_pieces(&e, NODES_PER_PIECE, FUNCS_PER_PIECE);
	if (!err && threads <= 1 && !(e.one = bw__new()))
		err = -ENOMEM;
	if (!err)
		err = pool_ordered(threads, e.np, e.np, write_piece, NULL, &e);
	if (err) {
		err = piece_failed(&e, err, d);
	} else if (e.one) {
		*nr_types = bw__type_cnt(e.one) - 1;
		err = bw__raw(e.one, out);
		if (err == -E2BIG)
			err = too_big(d, *nr_types, bw__types_len(e.one), bw__strs_len(e.one));
	} else {
		err = join(&e, threads, out, nr_types, d);
		if (err == -EPROTO)
			err = DIAG_BUG(d, "BTF pieces' ids are not where planned");
	}
	for (size_t k = 0; k < e.np; k++)
		bw__free(e.p[k].w);
	bw__free(e.one);
	str_join__free(e.sj);
	free(e.p);
	return err;
}
