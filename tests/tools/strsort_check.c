/* strsort_check: common/strsort.c against qsort() with the same order
 * (strcmp, then tie, then index) on inputs made to be hard for a radix
 * sort: shared prefixes longer than its depth limit, strings that are
 * prefixes of others, empty strings, equal strings with equal and different
 * ties, bytes >= 0x80, and sizes around its small-bucket cut-off.
 * Prints one line per case and exits 1 on the first difference. */
#include "../../common/strsort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	const struct strsort_item *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	if (c)
		return c;
	if (x->tie != y->tie)
		return x->tie < y->tie ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static unsigned long long rng = 88172645463325252ull;
static unsigned next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

/* n strings from an alphabet of `alpha` bytes (from `first`), after a
 * common prefix of `prefix` bytes, of length up to `maxlen`. */
static int run(const char *desc, size_t n, size_t prefix, size_t maxlen, unsigned alpha, unsigned first,
	       unsigned ties)
{
	char **strs = calloc(n, sizeof(*strs));
	struct strsort_item *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	if (!strs || !a || !b)
		return 1;
	for (size_t i = 0; i < n; i++) {
		size_t len = prefix + (maxlen ? next() % (maxlen + 1) : 0);
		strs[i] = malloc(len + 1);
		memset(strs[i], 'p', prefix);
		for (size_t k = prefix; k < len; k++)
			strs[i][k] = (char)(first + next() % alpha);
		strs[i][len] = 0;
		a[i] = (struct strsort_item){ strs[i], ties ? next() % ties : 0, (uint32_t)i };
		b[i] = a[i];
	}
	struct strsort_item *c = malloc(n * sizeof(*c));
	if (!c)
		return 1;
	qsort(a, n, sizeof(*a), cmp);
	/* strsort(), then strsort_threads() on 1, 2, 3 and 8 threads. */
	static const unsigned threads[] = { 0, 1, 2, 3, 8 };
	int bad = 0;
	for (size_t t = 0; t < 5 && !bad; t++) {
		memcpy(c, b, n * sizeof(*c));
		bad = (t ? strsort_threads(c, n, threads[t]) : strsort(c, n)) != 0;
		for (size_t i = 0; i < n && !bad; i++)
			bad = a[i].s != c[i].s || a[i].tie != c[i].tie || a[i].idx != c[i].idx;
		if (bad)
			printf("DIFFERENT %s (%zu items, %s)\n", desc, n, t ? "threads" : "one thread");
	}
	if (!bad)
		printf("same %s (%zu items; strsort, and 1, 2, 3, 8 threads)\n", desc, n);
	free(c);
	for (size_t i = 0; i < n; i++)
		free(strs[i]);
	free(strs);
	free(a);
	free(b);
	return bad;
}

int main(void)
{
	int bad = 0;
	bad |= run("short random names", 20000, 0, 12, 26, 'a', 0);
	bad |= run("a two-letter alphabet (many equal strings and prefixes)", 20000, 0, 6, 2, 'a', 3);
	bad |= run("a 100-byte common prefix (past the depth limit)", 5000, 100, 4, 3, 'a', 2);
	bad |= run("empty strings among others", 3000, 0, 1, 2, 'x', 5);
	bad |= run("bytes 0x80 and up", 10000, 0, 8, 200, 0x30, 0);
	/* Past strsort_threads()'s 16,384: its buckets of two bytes. */
	bad |= run("threaded: empty, one-byte and long names, bytes 0xfe and 0xff", 40000, 0, 5, 2, 0xfe, 4);
	bad |= run("threaded: one common first byte (one bucket per second byte)", 50000, 1, 6, 4, 'a', 0);
	bad |= run("threaded: bytes 0x30 to 0xf7", 30000, 0, 6, 200, 0x30, 0);
	bad |= run("threaded: all in one bucket (a 20-byte prefix)", 30000, 20, 3, 2, 'a', 2);
	for (size_t n = 1; n < 60; n++)
		bad |= run("around the small-bucket size", n, 3, 3, 3, 'a', 2);
	return bad;
}
