/* skips.h: pahole --verbose's lines for the functions it skips, made from
 * btf-emit's --skip-report (skips.c). */
#ifndef BTFPIPE_SKIPS_H
#define BTFPIPE_SKIPS_H

#include <stdio.h>

/* One line "NAME : skipping BTF encoding of function due to WHY" on out
 * for each function line of the report at path whose reason pahole words;
 * other lines are left out, as pahole has none for them. 0 or -errno. */
int skips_print(const char *path, FILE *out);

#endif
