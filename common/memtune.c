/* memtune.c: see memtune.h. */
#include "memtune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MEMTUNE_TUNABLES "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864"
/* Set in the second start, so that it never starts a third (glibc ignores
 * GLIBC_TUNABLES in a setuid process, so its value cannot tell). */
#define MEMTUNE_MARK "BTFPIPE_MEMTUNE_STARTED"

int memtune__active(void)
{
	const char *m = getenv(MEMTUNE_MARK);
	return m && !strcmp(m, "1");
}

void memtune__reexec(char **argv, const char *const *paths, size_t n)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)argv, (void)paths, (void)n;
	return;
#else
	const char *want = getenv("BTFPIPE_MEMTUNE");
	if (memtune__active() || (want && !strcmp(want, "0")))
		return;
	unsigned long long total = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (paths[i] && !stat(paths[i], &st) && S_ISREG(st.st_mode))
			total += (unsigned long long)st.st_size;
	}
	if (total < MEMTUNE_MIN_INPUT && !(want && !strcmp(want, "1")))
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
