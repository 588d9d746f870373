/* intern.c: ordered interning on the pool (see intern.h).
 *
 * 1. Pushes go to per-worker buffers, one per shard (the hash's top bits),
 *    so no two threads ever write the same buffer.
 * 2. Per shard: its buffers joined, equal uses found with an open-addressing
 *    table (hash, then ops->eq: never the hash alone), each unique keeping
 *    the smallest place of its uses; the new ones listed by range of places.
 * 3. Per range: its uniques from every shard, sorted by place, sizes summed.
 *    Places are distinct (one use, one place), so the sort is total.
 * 4. A prefix sum over the ranges (a handful of numbers), ops->alloc, then
 *    per range: each unique put at its index and position.
 * 5. Per shard: every use resolved to its unique's value.
 */
#include "intern.h"
#include "../../common/idmap.h"
#include "../../common/pool.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NSHARD 64

/* Uses one worker pushed to one shard. */
struct use_buf {
	struct use *v;
	size_t n, cap;
};

struct unique {
	uint64_t place;		/* the smallest of its uses' */
	uint32_t first;		/* a use of it (its bytes), index in the shard */
	uint32_t val;		/* the offset or node id it gets */
};

struct shard {
	struct use *use;
	size_t nuse;
	uint32_t *uq_of;	/* per use: its unique */
	struct unique *uq;
	size_t nuq;
	size_t *rstart;		/* per range: where its new uniques start in rlist */
	uint32_t *rlist;	/* the new uniques, by range */
};

/* A new unique, as a range sorts it. */
struct ritem {
	uint64_t place;
	uint32_t shard, uq;
};

/* The new uniques whose smallest place falls in one range (range_of()). */
struct range {
	struct ritem *it;
	size_t n;
	uint64_t size;		/* what its uniques take (bytes, items) */
	uint64_t idx0, pos0;	/* the uniques and the size of the ranges before it */
};

struct intern {
	const struct intern_ops *ops;
	void *ctx;
	unsigned workers;
	struct use_buf *wb;	/* [worker * NSHARD + shard] */
	struct shard sh[NSHARD];
	size_t nranges, chunks, ncus;
	struct range *r;
	enum { STEP_DEDUP, STEP_SORT, STEP_PUT, STEP_RESOLVE } step; /* the pool pass running */
};

static size_t range_of(const struct intern *in, uint64_t place)
{
	return place_pass(place) * in->chunks + place_cu(place) * in->chunks / in->ncus;
}

int intern__push(struct intern *in, unsigned worker, const struct use *u)
{
	struct use_buf *b = &in->wb[(size_t)worker * NSHARD + (u->hash >> 58)];
	if (vec_grow(&b->v, &b->cap, b->n + 1))
		return -ENOMEM;
	b->v[b->n++] = *u;
	return 0;
}

/* For the shard's table: does unique id's first use equal use `key`? */
struct shard_eq {
	const struct intern *in;
	const struct shard *s;
};

static int use_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct shard_eq *e = ctx;
	const struct use *f = &e->s->use[e->s->uq[id].first], *u = key;
	return e->in->ops->eq(e->in->ctx, f, u);
}

static int dedup_shard(struct intern *in, struct shard *s, size_t k)
{
	size_t n = 0;
	for (unsigned w = 0; w < in->workers; w++)
		n += in->wb[(size_t)w * NSHARD + k].n;
	if (n >= UINT32_MAX)
		return -E2BIG;
	s->rstart = calloc(in->nranges + 1, sizeof(*s->rstart));
	s->use = malloc((n ? n : 1) * sizeof(*s->use));
	s->uq_of = malloc((n ? n : 1) * sizeof(*s->uq_of));
	s->uq = malloc((n ? n : 1) * sizeof(*s->uq));
	struct idmap map = { 0 };
	if (!s->rstart || !s->use || !s->uq_of || !s->uq || idmap__reserve(&map, n)) {
		idmap__free(&map);
		return -ENOMEM;
	}
	for (unsigned w = 0; w < in->workers; w++) {
		struct use_buf *b = &in->wb[(size_t)w * NSHARD + k];
		if (b->n)
			memcpy(s->use + s->nuse, b->v, b->n * sizeof(*b->v));
		s->nuse += b->n;
		free(b->v);
		*b = (struct use_buf){ 0 };
	}
	struct shard_eq ctx = { in, s };
	for (size_t j = 0; j < n; j++) {
		const struct use *u = &s->use[j];
		size_t i = idmap__slot(&map, u->hash, use_eq, &ctx, u);
		int64_t id = idmap__at(&map, i);
		if (id < 0) {
			s->uq[s->nuq] = (struct unique){ .place = u->place, .first = (uint32_t)j };
			id = (int64_t)s->nuq++;
			idmap__put(&map, i, u->hash, (uint32_t)id);
		}
		struct unique *q = &s->uq[id];
		if (u->place < q->place)
			q->place = u->place;
		s->uq_of[j] = (uint32_t)id;
	}
	idmap__free(&map);
	/* Pass 0 uniques keep the node id they have; the rest are new, listed
	 * by range for the sort. */
	for (size_t q = 0; q < s->nuq; q++) {
		if (place_pass(s->uq[q].place))
			s->rstart[range_of(in, s->uq[q].place) + 1]++;
		else
			s->uq[q].val = place_n(s->uq[q].place);
	}
	for (size_t r = 0; r < in->nranges; r++)
		s->rstart[r + 1] += s->rstart[r];
	s->rlist = malloc((s->rstart[in->nranges] + 1) * sizeof(*s->rlist));
	if (!s->rlist)
		return -ENOMEM;
	size_t *fill = calloc(in->nranges, sizeof(*fill));
	if (!fill)
		return -ENOMEM;
	for (size_t q = 0; q < s->nuq; q++) {
		if (!place_pass(s->uq[q].place))
			continue;
		size_t r = range_of(in, s->uq[q].place);
		s->rlist[s->rstart[r] + fill[r]++] = (uint32_t)q;
	}
	free(fill);
	return 0;
}

static int ritem_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct ritem *)a)->place, y = ((const struct ritem *)b)->place;
	return x < y ? -1 : x > y;
}

static int sort_range(struct intern *in, struct range *r, size_t k)
{
	size_t n = 0;
	for (size_t sh = 0; sh < NSHARD; sh++)
		n += in->sh[sh].rstart[k + 1] - in->sh[sh].rstart[k];
	r->it = malloc((n ? n : 1) * sizeof(*r->it));
	if (!r->it)
		return -ENOMEM;
	for (size_t sh = 0; sh < NSHARD; sh++) {
		const struct shard *s = &in->sh[sh];
		for (size_t j = s->rstart[k]; j < s->rstart[k + 1]; j++)
			r->it[r->n++] = (struct ritem){ s->uq[s->rlist[j]].place, (uint32_t)sh, s->rlist[j] };
	}
	qsort(r->it, r->n, sizeof(*r->it), ritem_cmp);
	for (size_t j = 0; j < r->n; j++) {
		const struct shard *s = &in->sh[r->it[j].shard];
		r->size += in->ops->size(in->ctx, &s->use[s->uq[r->it[j].uq].first]);
	}
	return 0;
}

static void put_range(struct intern *in, struct range *r)
{
	uint64_t pos = r->pos0;
	for (size_t j = 0; j < r->n; j++) {
		struct shard *s = &in->sh[r->it[j].shard];
		struct unique *q = &s->uq[r->it[j].uq];
		const struct use *u = &s->use[q->first];
		q->val = in->ops->put(in->ctx, u, r->idx0 + j, pos);
		pos += in->ops->size(in->ctx, u);
	}
}

static int intern_work(void *ctx, unsigned worker, size_t k)
{
	struct intern *in = ctx;
	(void)worker;
	switch (in->step) {
	case STEP_DEDUP: return dedup_shard(in, &in->sh[k], k);
	case STEP_SORT: return sort_range(in, &in->r[k], k);
	case STEP_PUT: put_range(in, &in->r[k]); return 0;
	case STEP_RESOLVE:
		for (size_t j = 0; j < in->sh[k].nuse; j++)
			in->ops->resolve(in->ctx, &in->sh[k].use[j], in->sh[k].uq[in->sh[k].uq_of[j]].val);
		return 0;
	}
	return -EINVAL;
}

void intern__free(struct intern *in)
{
	if (!in)
		return;
	for (size_t i = 0; in->wb && i < (size_t)in->workers * NSHARD; i++)
		free(in->wb[i].v);
	free(in->wb);
	for (size_t k = 0; k < NSHARD; k++) {
		free(in->sh[k].use);
		free(in->sh[k].uq_of);
		free(in->sh[k].uq);
		free(in->sh[k].rstart);
		free(in->sh[k].rlist);
	}
	for (size_t k = 0; in->r && k < in->nranges; k++)
		free(in->r[k].it);
	free(in->r);
	free(in);
}

struct intern *intern__new(const struct intern_ops *ops, void *ctx, unsigned workers, size_t chunks,
			  size_t ncus)
{
	struct intern *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	*in = (struct intern){ .ops = ops, .ctx = ctx, .workers = workers ? workers : 1,
			       .chunks = chunks ? chunks : 1, .ncus = ncus ? ncus : 1 };
	in->nranges = 3 * in->chunks;
	in->wb = calloc((size_t)in->workers * NSHARD, sizeof(*in->wb));
	in->r = calloc(in->nranges, sizeof(*in->r));
	if (!in->wb || !in->r) {
		intern__free(in);
		return NULL;
	}
	return in;
}

int intern__run(struct intern *in, unsigned jobs)
{
	int err;
	in->step = STEP_DEDUP;
	if ((err = pool_ordered(jobs, NSHARD, NSHARD, intern_work, NULL, in)))
		return err;
	in->step = STEP_SORT;
	if ((err = pool_ordered(jobs, in->nranges, in->nranges, intern_work, NULL, in)))
		return err;
	uint64_t idx = 0, pos = 0;
	for (size_t k = 0; k < in->nranges; k++) {
		in->r[k].idx0 = idx;
		in->r[k].pos0 = pos;
		idx += in->r[k].n;
		pos += in->r[k].size;
	}
	if ((err = in->ops->alloc(in->ctx, idx, pos)))
		return err;
	in->step = STEP_PUT;
	if ((err = pool_ordered(jobs, in->nranges, in->nranges, intern_work, NULL, in)))
		return err;
	in->step = STEP_RESOLVE;
	return pool_ordered(jobs, NSHARD, NSHARD, intern_work, NULL, in);
}

