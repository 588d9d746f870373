/* strsort.c: see strsort.h. */
#include "strsort.h"

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
