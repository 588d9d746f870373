/* bucket.c: see bucket.h. */
#include "bucket.h"

#include <errno.h>
#include <stdlib.h>

int bucket__make(const struct bi_pair *in, size_t n, uint32_t bits, uint32_t **bucket, struct bi_ent **ents)
{
	size_t nb = (size_t)1 << bits;
	uint32_t *bk = calloc(nb + 2, sizeof(*bk));
	struct bi_ent *e = malloc((n + 1) * sizeof(*e));
	if (!bk || !e) {
		free(bk);
		free(e);
		return -ENOMEM;
	}
	/* Counts at bk[b + 2]; after the sums bk[b + 1] is where b starts.
	 * Placing moves bk[b + 1] to b's end, which is b + 1's start: ids
	 * ascend within a bucket. */
	for (size_t i = 0; i < n; i++)
		bk[BI_BUCKET(in[i].h, bits) + 2]++;
	for (size_t b = 2; b < nb + 2; b++)
		bk[b] += bk[b - 1];
	for (size_t i = 0; i < n; i++)
		e[bk[BI_BUCKET(in[i].h, bits) + 1]++] = (struct bi_ent){ BI_CHECK(in[i].h), in[i].id };
	*bucket = bk;
	*ents = e;
	return 0;
}
