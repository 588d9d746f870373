/* failalloc.c: allocation failures on demand, for t1345.
 *
 * Linked into copies of the stages with --wrap=malloc, --wrap=calloc and
 * --wrap=realloc (Makefile, bin/tools/failalloc/). The stages link libdw,
 * libelf and libbpf statically, so the wrap reaches the libraries' own calls
 * too, and the static libc's calls by name (stdio's buffers, strdup(), a
 * new thread's TLS): every malloc, calloc and realloc of the process comes
 * here. Not posix_memalign(), nor mmap() (thread stacks: t1340 has those).
 *
 * BTFPIPE_FAILALLOC=N (N >= 1): the Nth such allocation of the process,
 * counted over all threads, and every one after it fail, as under a memory
 * limit, where an address space once full stays full. A ulimit -v sweep
 * (t1340) reaches a few of the failure points; this reaches any of them
 * that the input leads to.
 *
 * BTFPIPE_FAILALLOC_ONLY=1 beside it: the Nth allocation alone fails, the
 * later ones succeed, as under ulimit -v, where a freed or smaller block
 * can still be had right after a bigger one could not. This is what finds
 * a caller that ignores a failure: the next allocation no longer fails for
 * it and hides the NULL.
 *
 * BTFPIPE_FAILALLOC_COUNT=FILE: at a normal exit, write the number of
 * allocations made to FILE, so that the test knows the range of N.
 *
 * Counted from the first constructor on: in a static program glibc's own
 * start-up calls malloc by name too, and a program that cannot start (below
 * t1340's floor) is not the stage's to report. The environment is read then,
 * before any thread exists.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static int armed;
static unsigned long fail_from; /* 0: never */
static int fail_once;		/* only fail_from itself */
static atomic_ulong calls;

__attribute__((constructor(101))) static void arm(void)
{
	const char *s = getenv("BTFPIPE_FAILALLOC");
	fail_from = s ? strtoul(s, NULL, 10) : 0;
	s = getenv("BTFPIPE_FAILALLOC_ONLY");
	fail_once = s && *s && *s != '0';
	armed = 1;
}

/* 1 if this allocation is to fail. */
static int fails(void)
{
	if (!armed)
		return 0;
	unsigned long n = atomic_fetch_add(&calls, 1) + 1;
	if (fail_from && (fail_once ? n == fail_from : n >= fail_from)) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *__wrap_malloc(size_t n)
{
	return fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return fails() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fails() ? NULL : __real_realloc(p, n);
}

__attribute__((destructor)) static void write_count(void)
{
	const char *path = getenv("BTFPIPE_FAILALLOC_COUNT");
	if (!path)
		return;
	unsigned long n = atomic_load(&calls); /* before fopen()'s own */
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%lu\n", n);
		fclose(f);
	}
}
