/* str_join.c: the string tables of BTF pieces joined into one.
 *
 * Each piece (encode.c) has its own table: "" at 0, then each of its strings
 * once, in the order it first used them. The joined table is the one a
 * single writer adding the pieces' strings in piece order makes: "" at 0,
 * then each distinct string once, where it was first used. So a string
 * belongs to the first piece that has it, and each piece's strings keep
 * their order.
 *
 * Every step runs on the pool; what runs on one thread is a loop over the
 * pieces (a prefix sum), never over strings:
 *   1. per piece: list its strings by shard (bits of their hashes);
 *   2. per shard: the pieces' strings, piece by piece, into the shard's
 *      set; the piece that adds a string first owns it;
 *   3. on one thread, over pieces: where each piece's strings start;
 *   4. per piece: its strings written at their joined offsets.
 * A string is only ever compared with those of its own shard, and a shard
 * is only ever read and written by one thread at a time.
 */
#include "str_join.h"
#include "../../common/idmap.h"
#include "../../common/pool.h"
#include "../../common/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SHARD_BITS 6
#define NSHARDS (1u << SHARD_BITS)

struct ent {
	const char *s;
	uint64_t hash;
	uint32_t len;
	uint32_t owner;		/* the first piece that has it */
	uint32_t off;		/* in the joined table (step 4) */
};

struct shard {
	struct ent *ents;
	size_t n;
	uint64_t *own_bytes;	/* per piece: the bytes of the strings it owns here */
};

/* One piece's strings, in its own order (by offset). */
struct local {
	const char *strs;
	size_t len;
	size_t n;		/* strings, "" at 0 not counted */
	const uint32_t *off;
	const uint64_t *hash;
	struct ent **ent;	/* step 2: each string's entry */
	uint32_t *by_shard;	/* string indexes, by shard, in order within one */
	uint32_t start[NSHARDS + 1];
	uint64_t base;		/* where its own strings start */
};

struct str_join {
	struct local *p;
	size_t np;
	struct shard sh[NSHARDS];
	unsigned threads;
	char *dst;
};

static unsigned shard_of(uint64_t hash)
{
	return (unsigned)(hash >> (64 - SHARD_BITS));
}

static int step_list(void *ctx, unsigned worker, size_t i)
{
	(void)worker;
	struct local *l = &((struct str_join *)ctx)->p[i];
	l->ent = malloc((l->n + 1) * sizeof(*l->ent));
	l->by_shard = malloc((l->n + 1) * sizeof(*l->by_shard));
	if (!l->ent || !l->by_shard)
		return -ENOMEM;
	uint32_t count[NSHARDS] = { 0 };
	for (size_t k = 0; k < l->n; k++)
		count[shard_of(l->hash[k])]++;
	l->start[0] = 0;
	for (unsigned s = 0; s < NSHARDS; s++)
		l->start[s + 1] = l->start[s] + count[s];
	uint32_t fill[NSHARDS];
	memcpy(fill, l->start, sizeof(fill));
	for (size_t k = 0; k < l->n; k++)
		l->by_shard[fill[shard_of(l->hash[k])]++] = (uint32_t)k;
	return 0;
}

struct ent_key {
	const char *s;
	size_t len;
};

/* Is shard sh's entry id the key's string? */
static int ent_eq(const void *sh, uint32_t id, const void *key)
{
	const struct ent *c = &((const struct shard *)sh)->ents[id];
	const struct ent_key *k = key;
	return c->len == k->len && !memcmp(c->s, k->s, k->len);
}

static int step_shard(void *ctx, unsigned worker, size_t s)
{
	(void)worker;
	struct str_join *j = ctx;
	size_t total = 0;
	for (size_t p = 0; p < j->np; p++)
		total += j->p[p].start[s + 1] - j->p[p].start[s];
	struct shard *sh = &j->sh[s];
	struct idmap map = { 0 };
	sh->ents = malloc((total + 1) * sizeof(*sh->ents));
	sh->own_bytes = calloc(j->np ? j->np : 1, sizeof(*sh->own_bytes));
	if (!sh->ents || !sh->own_bytes || idmap__reserve(&map, total)) {
		idmap__free(&map);
		return -ENOMEM;
	}
	for (size_t p = 0; p < j->np; p++) {
		struct local *l = &j->p[p];
		for (uint32_t k = l->start[s]; k < l->start[s + 1]; k++) {
			uint32_t i = l->by_shard[k];
			const char *str = l->strs + l->off[i];
			size_t len = (i + 1 < l->n ? l->off[i + 1] : l->len) - l->off[i] - 1;
			struct ent_key key = { str, len };
			size_t slot = idmap__slot(&map, l->hash[i], ent_eq, sh, &key);
			int64_t id = idmap__at(&map, slot);
			if (id < 0) {
				id = (int64_t)sh->n++;
				sh->ents[id] = (struct ent){ str, l->hash[i], (uint32_t)len, (uint32_t)p, 0 };
				idmap__put(&map, slot, l->hash[i], (uint32_t)id);
				sh->own_bytes[p] += len + 1;
			}
			l->ent[i] = &sh->ents[id];
		}
	}
	idmap__free(&map);
	return 0;
}

static int step_write(void *ctx, unsigned worker, size_t p)
{
	(void)worker;
	struct str_join *j = ctx;
	struct local *l = &j->p[p];
	uint64_t at = l->base;
	for (size_t i = 0; i < l->n; i++) {
		struct ent *e = l->ent[i];
		if (e->owner != p)
			continue;
		e->off = (uint32_t)at;
		memcpy(j->dst + at, e->s, e->len + 1);
		at += e->len + 1;
	}
	return 0;
}

static int run(struct str_join *j, size_t n, pool_work_fn fn)
{
	return pool_ordered(j->threads, n, n, fn, NULL, j);
}

int str_join__plan(const struct sj_in *in, size_t n, unsigned threads, struct str_join **out,
		  size_t *joined_len)
{
	struct str_join *j = calloc(1, sizeof(*j));
	*out = j;
	if (!j || !(j->p = calloc(n ? n : 1, sizeof(*j->p)))) {
		return -ENOMEM;
	}
	j->np = n;
	j->threads = threads;
	for (size_t p = 0; p < n; p++) {
		j->p[p].strs = in[p].strs;
		j->p[p].len = in[p].len;
		j->p[p].off = in[p].off;
		j->p[p].hash = in[p].hash;
		j->p[p].n = in[p].n;
	}
	int err = run(j, n, step_list);
	if (!err)
		err = run(j, NSHARDS, step_shard);
	if (err)
		return err;
	uint64_t at = 1; /* "" */
	for (size_t p = 0; p < n; p++) {
		j->p[p].base = at;
		for (unsigned sh = 0; sh < NSHARDS; sh++)
			at += j->sh[sh].own_bytes[p];
	}
	*joined_len = (size_t)at; /* also when too long: for the message */
	return at > UINT32_MAX ? -E2BIG : 0;
}

int str_join__write(struct str_join *j, char *dst)
{
	j->dst = dst;
	dst[0] = 0;
	return run(j, j->np, step_write);
}

size_t str_join__map_len(const struct str_join *j, size_t piece)
{
	return j->p[piece].len ? j->p[piece].len : 1;
}

void str_join__map(const struct str_join *j, size_t piece, uint32_t *map)
{
	const struct local *l = &j->p[piece];
	map[0] = 0;
	for (size_t i = 0; i < l->n; i++)
		map[l->off[i]] = l->ent[i]->off;
}

void str_join__free(struct str_join *j)
{
	if (!j)
		return;
	for (size_t p = 0; p < j->np; p++) {
		struct local *l = &j->p[p];
		free(l->ent);
		free(l->by_shard);
	}
	for (unsigned s = 0; s < NSHARDS; s++) {
		free(j->sh[s].ents);
		free(j->sh[s].own_bytes);
	}
	free(j->p);
	free(j);
}
