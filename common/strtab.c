/* strtab.c: interning string table (see strtab.h).
 *
 * An open-addressing hash set of offsets into the byte array. The set keeps
 * the load below 1/2; equal hashes are always confirmed with memcmp.
 */
#include "strtab.h"
#include "buf.h"
#include "hash.h"
#include "vec.h"

#include <errno.h>
#include <string.h>

struct strtab {
	struct buf bytes;
	uint32_t *slots; /* offset + 1; 0 = empty */
	size_t nslots, count;
};

struct strtab *strtab__new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	buf_u8(&t->bytes, 0);
	if (t->bytes.err) {
		free(t);
		return NULL;
	}
	return t;
}

void strtab__free(struct strtab *t)
{
	if (!t)
		return;
	buf_free(&t->bytes);
	free(t->slots);
	free(t);
}

void strtab__reset(struct strtab *t)
{
	buf_reset(&t->bytes);
	buf_u8(&t->bytes, 0);
	/* By the rule of hash.h: a reset costs what was used, not the largest size. */
	if (t->slots && table_drop_on_reset(t->count, t->nslots)) {
		free(t->slots);
		t->slots = NULL;
		t->nslots = 0;
	} else if (t->slots) {
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	}
	t->count = 0;
}

static int strtab_rehash(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++) {
		uint32_t v = t->slots[i];
		if (!v)
			continue;
		const char *str = (const char *)t->bytes.data + v - 1;
		size_t j = hash64(str, strlen(str)) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = v;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

uint64_t strtab__hash(const char *s, size_t len)
{
	return hash64(s, len);
}

/* The slot that holds s, or the empty slot where it would go. */
static size_t strtab_slot(const struct strtab *t, const char *s, size_t len, uint64_t hash)
{
	size_t mask = t->nslots - 1;
	size_t j = hash & mask;
	for (; t->slots[j]; j = (j + 1) & mask) {
		const char *cand = (const char *)t->bytes.data + t->slots[j] - 1;
		if (!strncmp(cand, s, len) && cand[len] == 0)
			break;
	}
	return j;
}

int64_t strtab__find_hashed(const struct strtab *t, const char *s, size_t len, uint64_t hash)
{
	if (!s || !len)
		return 0;
	if (!t->nslots)
		return -ENOENT;
	size_t j = strtab_slot(t, s, len, hash);
	return t->slots[j] ? (int64_t)t->slots[j] - 1 : -ENOENT;
}

int64_t strtab__add_hashed(struct strtab *t, const char *s, size_t len, uint64_t hash)
{
	if (!s || !len)
		return 0;
	if ((t->count + 1) * 2 > t->nslots) {
		int err = strtab_rehash(t);
		if (err)
			return err;
	}
	size_t j = strtab_slot(t, s, len, hash);
	if (t->slots[j])
		return t->slots[j] - 1;
	size_t off = t->bytes.len;
	if (off + len + 1 >= UINT32_MAX)
		return -E2BIG;
	buf_put(&t->bytes, s, len);
	buf_u8(&t->bytes, 0);
	if (t->bytes.err)
		return t->bytes.err;
	t->slots[j] = (uint32_t)off + 1;
	t->count++;
	return (int64_t)off;
}

int64_t strtab__addn(struct strtab *t, const char *s, size_t len)
{
	return s && len ? strtab__add_hashed(t, s, len, hash64(s, len)) : 0;
}

int64_t strtab__append(struct strtab *t, const char *s, size_t len)
{
	size_t off = t->bytes.len;
	if (off + len + 1 >= UINT32_MAX)
		return -E2BIG;
	buf_put(&t->bytes, s, len);
	buf_u8(&t->bytes, 0);
	return t->bytes.err ? t->bytes.err : (int64_t)off;
}

int64_t strtab__add(struct strtab *t, const char *s)
{
	return s ? strtab__addn(t, s, strlen(s)) : 0;
}

const char *strtab__data(const struct strtab *t) { return (const char *)t->bytes.data; }
size_t strtab__size(const struct strtab *t) { return t->bytes.len; }
