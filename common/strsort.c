/* strsort.c: see strsort.h. */
#include "strsort.h"
#include "pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Below this many items a bucket is finished by insertion sort. */
#define SMALL 24
/* Past this depth a bucket is finished by qsort(): the recursion (one level
 * per byte) stays bounded for any string, hostile symbol names included. */
#define MAX_DEPTH 48

static int cmp_from(const struct strsort_item *a, const struct strsort_item *b, size_t d)
{
	int c = strcmp(a->s + d, b->s + d);
	if (c)
		return c;
	if (a->tie != b->tie)
		return a->tie < b->tie ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_whole(const void *a, const void *b)
{
	return cmp_from(a, b, 0);
}

static void insertion(struct strsort_item *v, size_t n, size_t d)
{
	for (size_t i = 1; i < n; i++) {
		struct strsort_item x = v[i];
		size_t j = i;
		for (; j > 0 && cmp_from(&v[j - 1], &x, d) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* v[0..n), which share their first d bytes, by comparisons: what is
 * left below SMALL items, past MAX_DEPTH, or of equal strings. */
static void by_comparison(struct strsort_item *v, size_t n, size_t d)
{
	if (n < SMALL)
		insertion(v, n, d);
	else
		qsort(v, n, sizeof(*v), cmp_whole); /* equal prefixes: the same order */
}

/* v[0..n) share their first d bytes; tmp has room for n items. */
static void msd(struct strsort_item *v, struct strsort_item *tmp, size_t n, size_t d)
{
	if (n < SMALL || d >= MAX_DEPTH) {
		by_comparison(v, n, d);
		return;
	}
	size_t count[257] = { 0 };
	for (size_t i = 0; i < n; i++)
		count[(unsigned char)v[i].s[d] + 1]++;
	for (int b = 1; b <= 256; b++)
		count[b] += count[b - 1];
	/* count[b] is where bucket b starts; moving items in input order keeps
	 * each bucket in input order (stable), though ties are sorted anyway. */
	size_t start[257];
	memcpy(start, count, sizeof(start));
	for (size_t i = 0; i < n; i++)
		tmp[count[(unsigned char)v[i].s[d]]++] = v[i];
	memcpy(v, tmp, n * sizeof(*v));
	/* Bucket 0: strings that end here, all equal: by tie and index. */
	by_comparison(v, start[1], d);
	for (int b = 1; b < 256; b++) {
		size_t lo = start[b], hi = start[b + 1];
		if (hi - lo > 1)
			msd(v + lo, tmp, hi - lo, d + 1);
	}
}

int strsort(struct strsort_item *v, size_t n)
{
	if (n < 2)
		return 0;
	struct strsort_item *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	msd(v, tmp, n, 0);
	free(tmp);
	return 0;
}

/* ---- strsort_threads(): buckets of the first two bytes, on the pool ---- */

#define KEYS 65536
/* Fewer items than this are sorted on one thread. */
#define PAR_MIN 16384

/* The first two bytes as one bucket, in strcmp() order: a string that
 * ends sorts before any that goes on (byte 0 first at each place). */
static unsigned key2(const char *s)
{
	unsigned char c0 = (unsigned char)s[0];
	return (unsigned)c0 << 8 | (c0 ? (unsigned char)s[1] : 0);
}

struct par_run {
	struct strsort_item *v, *tmp;	/* the items are bucketed into tmp */
	const size_t *start;		/* [KEYS + 1]: where each bucket starts in tmp */
	const unsigned *cut;		/* [nchunks + 1]: each chunk's first bucket */
};

/* One chunk: its buckets sorted in tmp (v's same range is the scratch),
 * then copied back to v. Chunks are disjoint ranges of v and tmp. */
static int par_chunk(void *ctx, unsigned worker, size_t k)
{
	struct par_run *r = ctx;
	(void)worker;
	for (unsigned b = r->cut[k]; b < r->cut[k + 1]; b++) {
		size_t lo = r->start[b], cnt = r->start[b + 1] - lo;
		if (cnt < 2)
			continue;
		if (b == 0) /* empty strings */
			by_comparison(r->tmp + lo, cnt, 0);
		else if (!(b & 0xff)) /* one byte long: all equal */
			by_comparison(r->tmp + lo, cnt, 1);
		else
			msd(r->tmp + lo, r->v + lo, cnt, 2);
	}
	size_t lo = r->start[r->cut[k]], hi = r->start[r->cut[k + 1]];
	memcpy(r->v + lo, r->tmp + lo, (hi - lo) * sizeof(*r->v));
	return 0;
}

/* One thread buckets too: the bucketing pass is the only part that does
 * not go to the pool, so a run on one thread shows (in --stats' serial
 * time) what more threads would share, and costs what strsort()'s first two
 * levels would. */
int strsort_threads(struct strsort_item *v, size_t n, unsigned threads)
{
	if (n < PAR_MIN)
		return strsort(v, n);
	if (!threads)
		threads = 1;
	size_t nchunks = 4 * (size_t)threads;
	struct strsort_item *tmp = malloc(n * sizeof(*tmp));
	size_t *start = calloc(KEYS + 1, sizeof(*start));
	unsigned *cut = calloc(nchunks + 1, sizeof(*cut));
	int err = tmp && start && cut ? 0 : -ENOMEM;
	if (!err) {
		for (size_t i = 0; i < n; i++)
			start[key2(v[i].s) + 1]++;
		for (unsigned b = 1; b <= KEYS; b++)
			start[b] += start[b - 1];
		size_t *at = malloc(KEYS * sizeof(*at));
		if (!at) {
			err = -ENOMEM;
		} else {
			memcpy(at, start, KEYS * sizeof(*at));
			for (size_t i = 0; i < n; i++)
				tmp[at[key2(v[i].s)]++] = v[i];
			free(at);
		}
	}
	if (!err) {
		/* Chunks of about n / nchunks items, cut between buckets. The
		 * order never depends on the cuts: each bucket is sorted whole. */
		unsigned b = 0;
		for (size_t k = 1; k < nchunks; k++) {
			while (b < KEYS && start[b] < n * k / nchunks)
				b++;
			cut[k] = b;
		}
		cut[nchunks] = KEYS;
		struct par_run r = { .v = v, .tmp = tmp, .start = start, .cut = cut };
		err = pool_ordered(threads, nchunks, nchunks, par_chunk, NULL, &r);
	}
	free(tmp);
	free(start);
	free(cut);
	return err;
}
