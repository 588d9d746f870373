/* offmap.c: see offmap.h. */
#include "offmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int offmap__reserve(struct offmap *m)
{
	if ((m->count + 1) * 2 <= m->cap)
		return 0;
	size_t ncap = m->cap ? m->cap * 2 : 1024;
	struct offmap n = { .val_size = m->val_size, .cap = ncap, .count = m->count };
	n.keys = calloc(ncap, sizeof(*n.keys));
	n.vals = m->val_size ? calloc(ncap, m->val_size) : NULL;
	if (!n.keys || (m->val_size && !n.vals)) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t s;
		offmap__find(&n, m->keys[i], &s);
		n.keys[s] = m->keys[i];
		if (m->val_size)
			memcpy(offmap__val(&n, s), offmap__val(m, i), m->val_size);
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

void offmap__clear(struct offmap *m)
{
	if (table_drop_on_reset(m->count, m->cap)) {
		free(m->keys);
		free(m->vals);
		m->keys = NULL;
		m->vals = NULL;
		m->cap = 0;
	} else if (m->cap) {
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
	}
	m->count = 0;
}

void offmap__free(struct offmap *m)
{
	free(m->keys);
	free(m->vals);
	size_t vs = m->val_size;
	memset(m, 0, sizeof(*m));
	m->val_size = vs;
}
