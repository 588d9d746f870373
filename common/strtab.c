/* strtab.c: interning string table (see strtab.h).
 *
 * An id map (idmap.h) of offsets into the byte array: equal hashes are
 * always confirmed by comparing the bytes.
 */
#include "strtab.h"
#include "buf.h"
#include "hash.h"
#include "idmap.h"
#include "vec.h"

#include <errno.h>
#include <string.h>

struct strtab {
	struct buf bytes;
	struct idmap set;	/* ids: the strings' offsets */
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
	idmap__free(&t->set);
	free(t);
}

void strtab__reset(struct strtab *t)
{
	buf_reset(&t->bytes);
	buf_u8(&t->bytes, 0);
	idmap__clear(&t->set);
}

uint64_t strtab__hash(const char *s, size_t len)
{
	return hash64(s, len);
}

struct str_key {
	const char *s;
	size_t len;
};

static int str_eq(const void *ctx, uint32_t off, const void *key)
{
	const struct strtab *t = ctx;
	const struct str_key *k = key;
	const char *cand = (const char *)t->bytes.data + off;
	return !strncmp(cand, k->s, k->len) && cand[k->len] == 0;
}

int64_t strtab__find_hashed(const struct strtab *t, const char *s, size_t len, uint64_t hash)
{
	if (!s || !len)
		return 0;
	struct str_key k = { s, len };
	int64_t off = idmap__find(&t->set, hash, str_eq, t, &k);
	return off >= 0 ? off : -ENOENT;
}

int64_t strtab__add_hashed(struct strtab *t, const char *s, size_t len, uint64_t hash)
{
	if (!s || !len)
		return 0;
	int err = idmap__reserve(&t->set, 1);
	if (err)
		return err;
	struct str_key k = { s, len };
	size_t j = idmap__slot(&t->set, hash, str_eq, t, &k);
	if (idmap__at(&t->set, j) >= 0)
		return idmap__at(&t->set, j);
	size_t off = t->bytes.len;
	if (off + len + 1 >= UINT32_MAX)
		return -E2BIG;
	buf_put(&t->bytes, s, len);
	buf_u8(&t->bytes, 0);
	if (t->bytes.err)
		return t->bytes.err;
	idmap__put(&t->set, j, hash, (uint32_t)off);
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
