/* strsort.h: sort (string, tie, index) items in strcmp() order of the
 * strings, then by tie, then by index: the order qsort() gives with that
 * comparison, whatever the input order.
 *
 * Why not qsort(): kernel names share long prefixes ("__x64_sys_",
 * "trace_event_raw_"), so each of the ~2.5 million comparisons of sorting
 * 150,000 of them walks the same prefix again, through a pointer each time.
 * A most-significant-byte radix sort reads each string's bytes once per
 * level instead (byte 0, the end of a string, sorts first, as in strcmp()).
 */
#ifndef BTFPIPE_STRSORT_H
#define BTFPIPE_STRSORT_H

#include <stddef.h>
#include <stdint.h>

struct strsort_item {
	const char *s;
	uint64_t tie;
	uint32_t idx;
};

/* Returns: 0, or -ENOMEM (v is then unchanged). */
int strsort(struct strsort_item *v, size_t n);
/* The same order, made on up to `threads` threads (pool.h): the items are
 * put in buckets of their first two bytes on the calling thread, and the
 * buckets are sorted on the pool (one thread included). Below 16,384
 * items: as strsort(). Returns: 0, -ENOMEM, or the pool's error (threads that could
 * not start); v is unusable after a pool error. */
int strsort_threads(struct strsort_item *v, size_t n, unsigned threads);

#endif
