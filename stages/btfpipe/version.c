/* version.c: the one object built with the commit in it (the Makefile
 * passes BTFPIPE_COMMIT, and rebuilds only this file when it changes). */
#include "version.h"
#include "../../common/version.h"

#ifndef BTFPIPE_COMMIT
#define BTFPIPE_COMMIT "unknown"
#endif

void version_print(FILE *out, int as_pahole)
{
	if (as_pahole)
		fputs(PAHOLE_COMPAT_VERSION "\n", out);
	else
		fputs("btfpipe " BTFPIPE_VERSION " (commit " BTFPIPE_COMMIT "), BTF as pahole " PAHOLE_COMPAT_VERSION "\n", out);
}
