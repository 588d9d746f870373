/* pool_check: common/pool.c's pool_ordered() under schedules made to be
 * hard: items of uneven length, a full window, the next item to emit
 * failing while the other workers wait for room, failures on one worker
 * only, a failing emit, and two failures where the later one finishes
 * first. Each case states what must hold: emits strictly in order and
 * never at or past a failure, every item worked at most once, worker ids
 * below the thread count and never two items at once on one id, and the
 * lowest failing item's error returned. A case that hangs is a failure: an
 * alarm ends the program (exit by SIGALRM). Prints one line per case and
 * exits 1 on the first that does not hold. */
#include "../../common/pool.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXN 256
#define MAXT 8

struct run {
	unsigned threads;
	size_t n;
	int (*fail)(const struct run *r, unsigned worker, size_t i); /* work's result */
	size_t emit_fail;		/* the emit of this item fails (-EPIPE); MAXN: none */
	atomic_int worked[MAXN];
	atomic_int busy[MAXT];
	atomic_int bad_worker;
	size_t emitted[MAXN], nemitted;
};

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

static int work(void *ctx, unsigned worker, size_t i)
{
	struct run *r = ctx;
	if (worker >= r->threads || worker >= MAXT || atomic_fetch_add(&r->busy[worker], 1) != 0) {
		atomic_store(&r->bad_worker, 1);
		return -EINVAL;
	}
	atomic_fetch_add(&r->worked[i], 1);
	/* Uneven: every seventh item is slow, so later ones finish first. */
	pause_us(i % 7 == 0 ? 3000 : 100 + (long)(i * 37 % 11) * 50);
	int err = r->fail ? r->fail(r, worker, i) : 0;
	atomic_fetch_sub(&r->busy[worker], 1);
	return err;
}

static int emit(void *ctx, size_t i)
{
	struct run *r = ctx;
	r->emitted[r->nemitted++] = i;
	return i == r->emit_fail ? -EPIPE : 0;
}

/* The next item to emit (4) is slow and fails; the others are quick and
 * fill the window behind it. */
static int fail_next_slow(const struct run *r, unsigned w, size_t i)
{
	(void)r, (void)w;
	if (i == 4) {
		pause_us(30000);
		return -EIO;
	}
	return 0;
}

/* Every item from 2 on fails, but only on worker 0 (the caller). */
static int fail_on_worker0(const struct run *r, unsigned w, size_t i)
{
	(void)r;
	return w == 0 && i >= 2 ? -EIO : 0;
}

/* Items 5 (slow) and 9 (quick) fail with different errors: 5's must win. */
static int fail_two(const struct run *r, unsigned w, size_t i)
{
	(void)r, (void)w;
	if (i == 5) {
		pause_us(30000);
		return -EIO;
	}
	return i == 9 ? -EBADMSG : 0;
}

static int check(const char *name, unsigned threads, size_t window, size_t n,
		 int (*fail)(const struct run *, unsigned, size_t), size_t emit_fail)
{
	struct run *r = calloc(1, sizeof(*r));
	r->threads = threads;
	r->n = n;
	r->fail = fail;
	r->emit_fail = emit_fail;
	int got = pool_ordered(threads, n, window, work, emit, r);
	/* The lowest failing item, as a serial run would meet it. */
	size_t first = n;
	int want = 0;
	for (size_t i = 0; i < n && !want; i++) {
		int e = fail ? fail(r, 1, i) : 0; /* (worker 1: not the one fail_on_worker0 fails) */
		if (e) {
			first = i;
			want = e;
		} else if (i == emit_fail) {
			first = i;
			want = -EPIPE;
		}
	}
	const char *why = NULL;
	int ok = 1;
	if (atomic_load(&r->bad_worker))
		why = "a worker id out of range or used by two items at once", ok = 0;
	for (size_t i = 0; ok && i < n; i++)
		if (atomic_load(&r->worked[i]) > 1)
			why = "an item worked twice", ok = 0;
	for (size_t k = 0; ok && k < r->nemitted; k++)
		if (r->emitted[k] != k)
			why = "emitted out of order", ok = 0;
	if (ok && fail == fail_on_worker0) {
		/* Which items the caller takes depends on timing: the result must
		 * be the error of the first item that failed, with everything
		 * before it emitted and nothing from it on. */
		size_t k = r->nemitted;
		if (got != -EIO || k >= n || atomic_load(&r->worked[k]) != 1)
			why = "not the failing item's error, or emits past it", ok = 0;
	} else if (ok) {
		size_t want_emits = emit_fail < first ? emit_fail + 1 : first;
		if (first == n)
			want_emits = n;
		if (got != want)
			why = "not the lowest failing item's error", ok = 0;
		else if (r->nemitted != (first == emit_fail ? first + 1 : want_emits))
			why = "emitted past a failure, or not everything before it", ok = 0;
	}
	printf("%s %s: threads %u, window %zu, %zu items: returned %d, %zu emitted%s%s\n", ok ? "ok" : "FAIL",
	       name, threads, window, n, got, r->nemitted, why ? ": " : "", why ? why : "");
	free(r);
	return ok;
}

/* pool_clock(): the wall time inside a pool, and the part of it no thread
 * count shortens (the longer of the emits and the longest item). Each emit
 * spins EMIT_US and each work item WORK_US, except that check_long_item()'s
 * item 0 spins LONG_US; a spin outside any pool must change neither count. */
#define CLOCK_N 10
#define EMIT_US 2000
#define WORK_US 1000
#define LONG_US 8000

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin_us(long us)
{
	uint64_t end = mono_ns() + (uint64_t)us * 1000;
	while (mono_ns() < end)
		;
}

static int spin_work(void *ctx, unsigned worker, size_t i)
{
	(void)ctx, (void)worker, (void)i;
	spin_us(WORK_US);
	return 0;
}

static int spin_emit(void *ctx, size_t i)
{
	(void)ctx, (void)i;
	spin_us(EMIT_US);
	return 0;
}

static int spin_long_first(void *ctx, unsigned worker, size_t i)
{
	(void)ctx, (void)worker;
	spin_us(i ? WORK_US : LONG_US);
	return 0;
}

/* Emits longer than any item: they are the pool's critical part. */
static int check_clock(unsigned threads)
{
	uint64_t in0, cr0, in1, cr1, in2, cr2;
	pool_clock(&in0, &cr0);
	uint64_t t0 = mono_ns();
	int err = pool_ordered(threads, CLOCK_N, 2 * threads, spin_work, spin_emit, NULL);
	uint64_t wall = mono_ns() - t0;
	pool_clock(&in1, &cr1);
	spin_us(3000); /* outside any pool */
	pool_clock(&in2, &cr2);
	uint64_t crit = cr1 - cr0, inside = in1 - in0;
	/* Lower bounds only from the spins, which a busy machine lengthens and
	 * never shortens: every emit timed, and on one thread every item too. */
	uint64_t least = (uint64_t)CLOCK_N * (EMIT_US + (threads == 1 ? WORK_US : 0)) * 1000;
	int ok = !err && crit >= (uint64_t)CLOCK_N * EMIT_US * 1000 && crit <= inside && inside >= least &&
		 inside <= wall && in2 == in1 && cr2 == cr1;
	printf("%s pool_clock, %u thread%s: %d emits of %d us: %.1f ms critical of %.1f ms inside the pool "
	       "(%.1f ms wall); a spin outside it added %.1f ms inside, %.1f ms critical\n",
	       ok ? "ok  " : "FAIL", threads, threads > 1 ? "s" : "", CLOCK_N, EMIT_US, (double)crit / 1e6,
	       (double)inside / 1e6, (double)wall / 1e6, (double)(in2 - in1) / 1e6, (double)(cr2 - cr1) / 1e6);
	return ok;
}

/* No emits, one item longer than the others: with more than 4 items per
 * thread, the critical part is that item, and never less. */
static int check_long_item(unsigned threads)
{
	uint64_t in0, cr0, in1, cr1;
	pool_clock(&in0, &cr0);
	int err = pool_ordered(threads, CLOCK_N, CLOCK_N, spin_long_first, NULL, NULL);
	pool_clock(&in1, &cr1);
	uint64_t crit = cr1 - cr0, inside = in1 - in0;
	int ok = !err && crit >= (uint64_t)LONG_US * 1000 && crit <= inside;
	printf("%s pool_clock, %u thread%s: one item of %d us among %d of %d us: %.1f ms critical of %.1f ms "
	       "inside the pool\n",
	       ok ? "ok  " : "FAIL", threads, threads > 1 ? "s" : "", LONG_US, CLOCK_N - 1, WORK_US,
	       (double)crit / 1e6, (double)inside / 1e6);
	/* Two items per thread: a pass cut for its thread count, nothing critical. */
	pool_clock(&in0, &cr0);
	err = pool_ordered(threads, 2 * (size_t)threads, 2 * (size_t)threads, spin_long_first, NULL, NULL);
	pool_clock(&in1, &cr1);
	int cut_ok = !err && cr1 == cr0 && in1 - in0 >= (uint64_t)LONG_US * 1000;
	printf("%s pool_clock, %u thread%s: %u items cut for the threads, the longest %d us: %.1f ms critical\n",
	       cut_ok ? "ok  " : "FAIL", threads, threads > 1 ? "s" : "", 2 * threads, LONG_US,
	       (double)(cr1 - cr0) / 1e6);
	return ok && cut_ok;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* a hang shows the last case that ended */
	alarm(60);
	int ok = 1;
	for (unsigned t = 2; t <= 4 && ok; t++) {
		for (size_t w = t; w <= 4 * (size_t)t && ok; w *= 2) {
			ok &= check("all succeed", t, w, 100, NULL, MAXN);
			ok &= check("next to emit fails, window full", t, w, 40, fail_next_slow, MAXN);
			ok &= check("only worker 0 fails", t, w, 40, fail_on_worker0, MAXN);
			ok &= check("two fail, the later first", t, w, 40, fail_two, MAXN);
			ok &= check("an emit fails", t, w, 40, NULL, 6);
		}
	}
	ok &= check("one thread", 1, 1, 30, fail_two, MAXN);
	ok &= check_clock(1);
	ok &= check_clock(2);
	ok &= check_long_item(1);
	ok &= check_long_item(2);
	return ok ? 0 : 1;
}
