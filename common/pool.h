/* pool.h: parallel loops on pthreads whose results never depend on scheduling.
 *
 * pool_ordered() runs work(ctx, worker, i) for i in [0, n) on `threads`
 * workers (worker 0 is the calling thread, between emits) and calls
 * emit(ctx, i) on the calling thread strictly in index order, once item i
 * and all before it are done. At most `window`
 * items are in flight beyond the last emitted one, which bounds memory.
 *
 * Errors: the result is the error of the lowest-indexed failing item (work or
 * emit), whatever the thread count, so the message a user sees is the same
 * at -j1 and -j8. Items after a failure may or may not run; none is emitted.
 * threads <= 1 runs everything on the calling thread.
 */
#ifndef BTFPIPE_POOL_H
#define BTFPIPE_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef int (*pool_work_fn)(void *ctx, unsigned worker, size_t item);
typedef int (*pool_emit_fn)(void *ctx, size_t item);

/* Returns: 0, the first (lowest item) negative errno, or -ENOMEM when its
 * bookkeeping cannot be allocated. A thread that cannot be started (a
 * memory limit leaves no room for its stack) is not an error: the items run
 * on the threads there are, the calling thread at least, and
 * pool_threads_missing() counts it. emit may be NULL. */
int pool_ordered(unsigned threads, size_t n, size_t window,
		 pool_work_fn work, pool_emit_fn emit, void *ctx);

/* How many threads pool_ordered() could not start in this process so far,
 * for the stage's warning. */
unsigned pool_threads_missing(void);

/* What the calling threads of this process spent, in wall ns, inside
 * pool_ordered() since the process started, and the part of that no thread
 * count would shorten: for each call, its emits (one at a time, in order),
 * or its longest work item (on one thread) when that is longer and the pool
 * has more than 4 items per thread. A phase's serial time (stats.c) is its
 * wall time outside the pools plus that part inside them: a pool of a few
 * unequal items (the sections of a file, the CUs of a program with one
 * huge CU) counts its largest. A pool of at most 4 items per thread was
 * cut for its thread count and counts its emits only: more threads would
 * cut it finer. (A pass that caps its chunks, at 8 say, stops scaling
 * there, which this cannot see.) */
void pool_clock(uint64_t *inside_ns, uint64_t *crit_ns);

/* The number of online CPUs, at least 1. */
unsigned pool_ncpus(void);

/* Threads for an input of `work` (bytes, say) when each thread should have
 * at least `per_thread` of it: 1 + work / per_thread, at most jobs; jobs
 * itself when per_thread is 0. Starting a thread and its per-thread state
 * costs more than it saves on a small input (a module of a few hundred KB),
 * and a kernel build runs many stages side by side anyway. */
static inline unsigned pool_threads_for(unsigned jobs, unsigned long long work, unsigned long long per_thread)
{
	if (!per_thread || jobs <= 1)
		return jobs ? jobs : 1;
	unsigned long long n = 1 + work / per_thread;
	return n < jobs ? (unsigned)n : jobs;
}

#endif
