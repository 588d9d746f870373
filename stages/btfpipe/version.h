/* version.h: what --version answers (version.c). */
#ifndef BTFPIPE_DRIVER_VERSION_H
#define BTFPIPE_DRIVER_VERSION_H

#include <stdio.h>

/* The highest pahole whose every BTF feature btfpipe implements. The
 * kernel's scripts/pahole-version.sh turns "v1.32" into 132 and passes the
 * flags of that version. */
#define PAHOLE_COMPAT_VERSION "v1.32"

/* as_pahole: exactly PAHOLE_COMPAT_VERSION, one line, as pahole prints
 * it; else btfpipe's own version and the commit it was built from. */
void version_print(FILE *out, int as_pahole);

#endif
