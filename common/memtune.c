/* memtune.c: see memtune.h. */
#include "memtune.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

/* Set for the second start, so that it never starts a third (glibc ignores
 * GLIBC_TUNABLES in a setuid process, so that cannot tell). */
#define MEMTUNE_MARK "BTFPIPE_MEMTUNE_STARTED"

int memtune__active(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 0;
#endif
	/* As a whole: "...:mmap_threshold=671088640" is not ours. */
	const char *t = getenv("GLIBC_TUNABLES"), *at = t;
	size_t n = strlen(MEMTUNE_TUNABLES);
	while (at && (at = strstr(at, MEMTUNE_TUNABLES))) {
		if ((at == t || at[-1] == ':') && (at[n] == '\0' || at[n] == ':'))
			return 1;
		at++;
	}
	return 0;
}

int memtune__limited(void)
{
	struct rlimit as, data;
	if (getrlimit(RLIMIT_AS, &as) || getrlimit(RLIMIT_DATA, &data))
		return 1; /* cannot tell: the safe answer */
	return as.rlim_cur != RLIM_INFINITY || data.rlim_cur != RLIM_INFINITY;
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* dl_iterate_phdr(): the first object's program headers, the program's. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(const void **)arg = info->dlpi_phdr;
	return 1;
}
#endif

void memtune__reexec(char **argv)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)argv;
	return;
#else
	const char *off = getenv("BTFPIPE_MEMTUNE");
	if (memtune__active() || getenv(MEMTUNE_MARK) || (off && !strcmp(off, "0")) || memtune__limited())
		return;
	/* Started as "ld.so ./stage", /proc/self/exe is the loader and could
	 * not run the stage: then the program the kernel started (AT_PHDR)
	 * is not the one running (the first object dl_iterate_phdr() names).
	 * Linked static, or through the program interpreter, they are one. */
	const void *self = NULL;
	dl_iterate_phdr(first_object, &self);
	if (!self || (uintptr_t)self != getauxval(AT_PHDR))
		return;
	const char *env = getenv("GLIBC_TUNABLES");
	char *old = env ? strdup(env) : NULL, *val = NULL;
	if (env && !old)
		return;
	/* The caller's own tunables come last, so they win over ours. */
	if (asprintf(&val, "%s%s%s", MEMTUNE_TUNABLES, old && *old ? ":" : "", old ? old : "") >= 0 &&
	    !setenv("GLIBC_TUNABLES", val, 1) && !setenv(MEMTUNE_MARK, "1", 1))
		execv("/proc/self/exe", argv);
	/* Not started again (no /proc, say): run here, with the environment as
	 * it was. */
	if (old)
		setenv("GLIBC_TUNABLES", old, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(MEMTUNE_MARK);
	free(old);
	free(val);
#endif
}
