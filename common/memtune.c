/* memtune.c: see memtune.h. */
#include "memtune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set for the second start, so that it never starts a third (glibc ignores
 * GLIBC_TUNABLES in a setuid process, so that cannot tell). */
#define MEMTUNE_MARK "BTFPIPE_MEMTUNE_STARTED"

int memtune__active(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 0;
#endif
	const char *t = getenv("GLIBC_TUNABLES");
	return t && strstr(t, MEMTUNE_TUNABLES) != NULL;
}

void memtune__reexec(char **argv)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)argv;
	return;
#else
	const char *off = getenv("BTFPIPE_MEMTUNE");
	if (memtune__active() || getenv(MEMTUNE_MARK) || (off && !strcmp(off, "0")))
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
