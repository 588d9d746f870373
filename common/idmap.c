/* idmap.c: see idmap.h. */
#include "idmap.h"
#include "hash.h"
#include "vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int idmap__reserve(struct idmap *m, size_t more)
{
	if ((m->count + more) * 2 <= m->cap)
		return 0;
	size_t ncap = m->cap ? m->cap : 64;
	while (ncap < (m->count + more) * 2)
		ncap *= 2;
	if (ncap > VEC_MAX_BYTES / (sizeof(*m->hash) + sizeof(*m->id)))
		return -ENOMEM;
	uint64_t *nh = malloc(ncap * sizeof(*nh));
	uint32_t *ni = calloc(ncap, sizeof(*ni));
	if (!nh || !ni) {
		free(nh);
		free(ni);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->id[i])
			continue;
		size_t j = m->hash[i] & (ncap - 1);
		while (ni[j])
			j = (j + 1) & (ncap - 1);
		nh[j] = m->hash[i];
		ni[j] = m->id[i];
	}
	free(m->hash);
	free(m->id);
	m->hash = nh;
	m->id = ni;
	m->cap = ncap;
	return 0;
}

void idmap__clear(struct idmap *m)
{
	if (table_drop_on_reset(m->count, m->cap)) {
		idmap__free(m);
		return;
	}
	if (m->cap)
		memset(m->id, 0, m->cap * sizeof(*m->id));
	m->count = 0;
}

void idmap__free(struct idmap *m)
{
	free(m->hash);
	free(m->id);
	memset(m, 0, sizeof(*m));
}
