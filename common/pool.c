/* pool.c: ordered parallel loop (see pool.h).
 *
 * One mutex guards the shared counters. The calling thread is worker 0 and
 * the emitter: it emits the next item in order when that is done, else
 * takes an item to work on, else sleeps on `done_cv`. The other workers
 * sleep on `more` when the window is full. The work itself runs without the
 * lock.
 *
 * Why the caller works too: with a separate emitter thread, every finished
 * item woke it (a futex wake and a context switch), and on a two-CPU guest
 * those cost 8% of the vmlinux's merge. Now a worker wakes the caller only
 * when the caller sleeps and the item it finished is the one to emit next.
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t more, done_cv;
	size_t n, window;
	size_t next;		/* next item to hand out */
	size_t emitted;		/* items [0, emitted) are emitted */
	size_t fail_item;	/* lowest failing item, n when none */
	int fail_err;
	int caller_waits;	/* the caller sleeps on done_cv */
	unsigned char *done;	/* done[i]: work(i) finished */
	int *result;		/* result[i]: work(i)'s return */
	uint64_t longest;	/* the longest work(i) so far, wall ns */
	pool_work_fn work;
	void *ctx;
};

struct worker_arg {
	struct pool *p;
	unsigned id;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Under the lock. Wakes the workers waiting for room in the window: they
 * stop at a failure, and the emitter, which would have made the room,
 * does not emit past one (without this, a failure of the next item to emit
 * while the window was full left them asleep and pthread_join() waiting). */
static void pool_record_fail(struct pool *p, size_t i, int err)
{
	if (i < p->fail_item) {
		p->fail_item = i;
		p->fail_err = err;
	}
	pthread_cond_broadcast(&p->more);
}

/* Under the lock: item i's work returned err. The caller is woken only
 * when it sleeps and this is what it waits for (the next item to emit, or
 * a failure); when the caller itself finished i, it is not asleep. */
static void pool_item_done(struct pool *p, size_t i, int err)
{
	p->result[i] = err;
	p->done[i] = 1;
	if (err)
		pool_record_fail(p, i, err);
	if (p->caller_waits && (err || i == p->emitted))
		pthread_cond_signal(&p->done_cv);
}

static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct pool *p = wa->p;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->next < p->n && p->next < p->fail_item &&
		       p->next >= p->emitted + p->window)
			pthread_cond_wait(&p->more, &p->lock);
		if (p->next >= p->n || p->next >= p->fail_item)
			break;
		size_t i = p->next++;
		pthread_mutex_unlock(&p->lock);
		uint64_t t = now_ns();
		int err = p->work(p->ctx, wa->id, i);
		t = now_ns() - t;
		pthread_mutex_lock(&p->lock);
		if (t > p->longest)
			p->longest = t;
		pool_item_done(p, i, err);
	}
	pthread_cond_broadcast(&p->done_cv);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Process-wide, as the limit that causes it is. */
static unsigned threads_missing;

/* A pool's clock, for one call: the wall time its emits took, and its
 * longest work item. No thread count makes the call shorter than either:
 * the emits run one after the other, and an item on one thread. */
struct pool_span {
	uint64_t emits, longest;
};

/* Runs emit(ctx, i), adding its wall time to sp->emits. */
static int timed_emit(pool_emit_fn emit, void *ctx, size_t i, struct pool_span *sp)
{
	if (!emit)
		return 0;
	uint64_t t = now_ns();
	int err = emit(ctx, i);
	sp->emits += now_ns() - t;
	return err;
}

static int pool_serial(size_t n, pool_work_fn work, pool_emit_fn emit, void *ctx, struct pool_span *sp)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t t = now_ns();
		int err = work(ctx, 0, i);
		t = now_ns() - t;
		if (t > sp->longest)
			sp->longest = t;
		if (!err)
			err = timed_emit(emit, ctx, i, sp);
		if (err)
			return err;
	}
	return 0;
}

static int pool_run(unsigned threads, size_t n, size_t window, pool_work_fn work, pool_emit_fn emit,
		    void *ctx, struct pool_span *sp);

/* Process-wide, as a stage's phases are (pool_clock()). */
static uint64_t ns_inside, ns_crit;
#define CUT_PER_THREAD 4

void pool_clock(uint64_t *inside_ns, uint64_t *crit_ns)
{
	*inside_ns = __atomic_load_n(&ns_inside, __ATOMIC_RELAXED);
	*crit_ns = __atomic_load_n(&ns_crit, __ATOMIC_RELAXED);
}

int pool_ordered(unsigned threads, size_t n, size_t window,
		 pool_work_fn work, pool_emit_fn emit, void *ctx)
{
	struct pool_span sp = { 0 };
	uint64_t t = now_ns();
	int err = threads <= 1 || n <= 1 ? pool_serial(n, work, emit, ctx, &sp)
					 : pool_run(threads, n, window, work, emit, ctx, &sp);
	__atomic_add_fetch(&ns_inside, now_ns() - t, __ATOMIC_RELAXED);
	/* A pool of at most CUT_PER_THREAD items per thread was cut for its
	 * thread count (the stages cut a pass into one to four chunks per
	 * thread): more threads would cut it finer, so its longest item says
	 * nothing about them. More items than that come from the input (CUs,
	 * sections, shards, chunks of a fixed size), and no thread count
	 * shortens the longest. */
	uint64_t crit = sp.emits;
	if (n > CUT_PER_THREAD * (size_t)(threads ? threads : 1) && sp.longest > crit)
		crit = sp.longest;
	__atomic_add_fetch(&ns_crit, crit, __ATOMIC_RELAXED);
	return err;
}

unsigned pool_threads_missing(void)
{
	return __atomic_load_n(&threads_missing, __ATOMIC_RELAXED);
}

static int pool_run(unsigned threads, size_t n, size_t window, pool_work_fn work, pool_emit_fn emit,
		    void *ctx, struct pool_span *sp)
{
	if (threads > n)
		threads = (unsigned)n;
	if (window < threads)
		window = threads;

	struct pool p = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.more = PTHREAD_COND_INITIALIZER,
		.done_cv = PTHREAD_COND_INITIALIZER,
		.n = n, .window = window, .fail_item = n,
		.work = work, .ctx = ctx,
	};
	p.done = calloc(n, 1);
	p.result = calloc(n, sizeof(*p.result));
	pthread_t *tids = calloc(threads, sizeof(*tids));
	struct worker_arg *args = calloc(threads, sizeof(*args));
	unsigned started = 0;
	int err = 0;
	if (!p.done || !p.result || !tids || !args) {
		err = -ENOMEM;
		goto out;
	}
	/* Worker 0 is this thread. */
	for (; started < threads - 1; started++) {
		args[started] = (struct worker_arg){ &p, started + 1 };
		if (pthread_create(&tids[started], NULL, worker_main, &args[started])) {
			/* Under a memory or thread limit (a thread's stack is address
			 * space): run on the threads there are. The result cannot
			 * depend on how many; the count lets the stage warn. */
			__atomic_add_fetch(&threads_missing, threads - 1 - started, __ATOMIC_RELAXED);
			break;
		}
	}

	/* The emitter, item by item in order, and worker 0 in between. */
	pthread_mutex_lock(&p.lock);
	while (p.emitted < n && p.emitted < p.fail_item) {
		size_t i = p.emitted;
		if (p.done[i]) {
			if (p.result[i])
				break; /* already recorded as a failure */
			pthread_mutex_unlock(&p.lock);
			int e = timed_emit(emit, ctx, i, sp);
			pthread_mutex_lock(&p.lock);
			if (e) {
				pool_record_fail(&p, i, e);
				break;
			}
			p.emitted++;
			pthread_cond_broadcast(&p.more);
		} else if (p.next < n && p.next < p.fail_item && p.next < p.emitted + p.window) {
			size_t w = p.next++;
			pthread_mutex_unlock(&p.lock);
			uint64_t t = now_ns();
			int e = work(ctx, 0, w);
			t = now_ns() - t;
			pthread_mutex_lock(&p.lock);
			if (t > p.longest)
				p.longest = t;
			pool_item_done(&p, w, e);
		} else {
			p.caller_waits = 1;
			pthread_cond_wait(&p.done_cv, &p.lock);
			p.caller_waits = 0;
		}
	}
	pthread_mutex_unlock(&p.lock);

	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	sp->longest = p.longest; /* the workers are joined: no lock needed */
	if (p.fail_item < n || p.fail_err)
		err = p.fail_err;
out:
	free(p.done);
	free(p.result);
	free(tids);
	free(args);
	return err;
}

unsigned pool_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}
