/* cachedir.h: btfpipe's cache directory (spec: format/CU-CACHE.md).
 *
 * A directory of entries, each a checksummed payload under a 128-bit key,
 * in one subdirectory per kind of entry: DIR/KIND/XX/KEYHEX. Written to a
 * temp file in the same directory and renamed into place, so any number of
 * processes share a directory without a lock held across work; the last
 * rename of a key wins and every writer wrote the same bytes. A reader
 * checks an entry's magic, kind, key, size and checksum: a bad one is a
 * miss, and the miss's store replaces it.
 *
 * The store knows nothing of what a payload means: dwarf-extract stores CU
 * blobs with their patch lists (kind "cu-v1"), the stages store whole
 * outputs (kind "out-v1", memo.h).
 * Threading: get/put/count from any thread (the counters are atomic);
 * open/finish/print/close on one.
 */
#ifndef BTFPIPE_CACHEDIR_H
#define BTFPIPE_CACHEDIR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hash.h"

struct diag;

struct cachedir_opts {
	const char *dir;
	uint64_t max_size;	/* bytes, for the whole directory; 0: no limit */
	int readonly;		/* look up, never store, touch or evict */
};

/* The cache options every stage takes, and their environment variables. */
struct cachedir_cli {
	const char *dir;	/* --cache DIR, else $BTFPIPE_CACHE_DIR */
	const char *size;	/* --cache-max-size, else $BTFPIPE_CACHE_MAX_SIZE */
	int no_cache;		/* --no-cache */
	int readonly;		/* --cache-readonly or $BTFPIPE_CACHE_READONLY */
	int stats;		/* --cache-stats */
	struct cachedir_opts opts; /* the result, when dir is set */
};
/* The stages' getopt_long entries for those options, their codes, and the
 * lines of --help that describe them. */
enum { CACHEDIR_OPT_DIR = 0x1000, CACHEDIR_OPT_NONE, CACHEDIR_OPT_SIZE, CACHEDIR_OPT_RO, CACHEDIR_OPT_STATS };
#define CACHEDIR_LONG_OPTIONS \
	{ "cache", required_argument, NULL, CACHEDIR_OPT_DIR }, \
	{ "no-cache", no_argument, NULL, CACHEDIR_OPT_NONE }, \
	{ "cache-max-size", required_argument, NULL, CACHEDIR_OPT_SIZE }, \
	{ "cache-readonly", no_argument, NULL, CACHEDIR_OPT_RO }, \
	{ "cache-stats", no_argument, NULL, CACHEDIR_OPT_STATS }
#define CACHEDIR_HELP \
	"      --cache DIR     the cache directory (default: $BTFPIPE_CACHE_DIR;\n" \
	"                      what it keeps: man btfpipe)\n" \
	"      --no-cache      ignore $BTFPIPE_CACHE_DIR\n" \
	"      --cache-max-size SIZE  evict the least recently used entries past SIZE\n" \
	"                      (500M, 2G; 0 no limit; default $BTFPIPE_CACHE_MAX_SIZE or 2G)\n" \
	"      --cache-readonly  look up only: never store, touch or evict\n" \
	"                      (or $BTFPIPE_CACHE_READONLY=1)\n" \
	"      --cache-stats   print the cache's counters on stderr at the end\n"
/* The directory's KIND for a stage, or NULL without --cache. A directory
 * that cannot be used is a warning (tool's), and NULL: a cache is an
 * optimization, never a reason to fail. */
struct cachedir *cachedir_cli_open(const struct cachedir_cli *cli, const char *kind, const char *tool);
/* End of a stage's run: its first store failure as a warning, and with
 * --cache-stats (and ok) its counters as WHAT. c may be NULL. */
void cachedir_cli_report(struct cachedir *c, const struct cachedir_cli *cli, const char *tool, int ok,
			 const char *what);
/* getopt_long's c for one of those: applied, returns 1; any other c: 0. */
int cachedir_cli_opt(struct cachedir_cli *cli, int c, const char *arg);

/* Apply the environment and check the values. Returns 0 or EXIT_USAGE
 * (after printing why). After it, cli->dir is NULL when there is no cache. */
int cachedir_cli_finish(struct cachedir_cli *cli, const char *tool);

enum cachedir_counter {
	CD_HITS, CD_MISSES, CD_CORRUPT, CD_UNCACHEABLE, CD_STORED, CD_STORE_FAILED,
	CD_BYTES_READ, CD_BYTES_WRITTEN, CD_EVICTED, CD_N,
};

struct cachedir;

/* Creates DIR/KIND if needed (not in readonly mode). Returns 0 or -errno (d). */
int cachedir__open(struct cachedir **out, const struct cachedir_opts *o, const char *kind,
		   struct diag *d);
/* Returns 1 with *payload (malloc'd, the caller's) on a hit; 0 on a miss:
 * absent, or refused (counted CD_CORRUPT; the miss's store replaces it).
 * Hits and misses are the caller's to count: only it knows what a hit is. */
int cachedir__get(struct cachedir *c, struct key128 key, uint8_t **payload, size_t *size);
/* The same, the payload mapped read-only instead of read (for a large one
 * read in place: no copy into fresh pages); released by cachedir__unmap().
 * Safe against other processes: entries are replaced by rename, never
 * rewritten in place. */
int cachedir__map(struct cachedir *c, struct key128 key, const uint8_t **payload, size_t *size);
void cachedir__unmap(const uint8_t *payload, size_t size);
/* Store a payload made of two pieces (b may be empty). A failure (full
 * disk, permissions) is counted, kept for cachedir__warning() and returned;
 * it must never change a stage's output. */
int cachedir__put(struct cachedir *c, struct key128 key, const void *a, size_t na,
		  const void *b, size_t nb);
void cachedir__count(struct cachedir *c, enum cachedir_counter what, uint64_t n);
/* The first store failure, as text, or NULL. */
const char *cachedir__warning(const struct cachedir *c);
/* End of a run: evict past the size limit (only when this run stored
 * something) and add this run's counters to DIR/KIND/stats. */
void cachedir__finish(struct cachedir *c);
/* This run's counters (if this_run), all runs' totals, and the whole
 * directory's size, as lines "cache DIR (WHAT): ...". */
void cachedir__print_stats(struct cachedir *c, FILE *f, int this_run, const char *what);
void cachedir__close(struct cachedir *c);

/* "2G", "500M", "64k", "0" -> bytes. Returns 0 or -EINVAL. */
int cachedir_parse_size(const char *s, uint64_t *out);

#endif
