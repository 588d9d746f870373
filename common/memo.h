/* memo.h: a stage's whole output, reused when nothing it reads changed.
 *
 * The key is an xxh3-128 over: what is memoized (a fixed text per stage),
 * the running binary's own bytes (another build may write other bytes), the
 * options that change the output, and the bytes of every file the stage
 * reads. The value is the output file's bytes, in the cache directory's
 * kind "out-v1" (cachedir.h; spec format/CU-CACHE.md, "Stage outputs").
 * Used where a whole input is commonly unchanged between builds: a kernel
 * module after vmlinux changed, its .cus, its .graph, its split BTF.
 */
#ifndef BTFPIPE_MEMO_H
#define BTFPIPE_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct cachedir;
struct diag;

struct memo_key {
	XXH3_state_t st;
	int err;	/* the first failure (-errno): such a key is never used */
	unsigned jobs;	/* threads memo_key_file() may use on a big file (0 or 1:
			 * the caller's only; set after memo_key_begin()) */
};

/* The xxh3-128 of /proc/self/exe, computed once per process. */
int memo_self_hash(struct key128 *out);

void memo_key_begin(struct memo_key *k, const char *what);
void memo_key_str(struct memo_key *k, const char *s);	/* NULL hashes differently from "" */
void memo_key_u64(struct memo_key *k, uint64_t v);
/* n, then n bytes at p. */
void memo_key_bytes(struct memo_key *k, const void *p, size_t n);
/* The file's size and bytes (read through a mapping). A file of more than
 * two 32 MiB windows is keyed on its size and each window's xxh3-128,
 * hashed on up to k->jobs threads: the same key at any thread count. */
void memo_key_file(struct memo_key *k, const char *path);
/* Another program's identity: its build id (NT_GNU_BUILD_ID, read from
 * the file's notes), else its size and bytes. The driver that runs the
 * stages keys on theirs; a stage keys on its own in memo_key_begin(). */
void memo_key_program(struct memo_key *k, const char *path);
/* Returns 0 with the key, or the first failure (the caller then runs as
 * without a cache). */
int memo_key_end(struct memo_key *k, struct key128 *out);

/* A hit: write the memoized bytes to out_path (atomically) and return 1;
 * 0 on a miss (counted), or -errno with d set when out_path cannot be written. */
int memo_fetch_to_file(struct cachedir *c, struct key128 key, const char *out_path, struct diag *d);
/* A hit into memory: 1 with *data (malloc'd), 0 on a miss (counted). */
int memo_fetch(struct cachedir *c, struct key128 key, uint8_t **data, size_t *size);
/* Store the file just written at path under key (a failure only counts). */
void memo_store_file(struct cachedir *c, struct key128 key, const char *path);

#endif
