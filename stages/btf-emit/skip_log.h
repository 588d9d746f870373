/* skip_log.h: the --skip-report: what was left out, and why (skip_log.c). */
#ifndef BTFPIPE_EMIT_SKIP_LOG_H
#define BTFPIPE_EMIT_SKIP_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct diag;
struct graph;

/* One line per function, variable or type left out, "KIND NAME: WHY (CU
 * NAME)", in the order they are added, and their count. A zeroed skip_log
 * only counts; after skip_log__open() it also keeps the lines, in memory it
 * owns until skip_log__free(). */
struct skip_log {
	FILE *f;		/* the lines, or NULL: count only */
	char *text;		/* open_memstream()'s buffer */
	size_t len;
	size_t count;
};
/* Keep the lines from now on. 0 or -ENOMEM. */
int skip_log__open(struct skip_log *s);
void skip_log__add(struct skip_log *s, const char *what, const char *name, const char *why,
		   const struct graph *g, uint32_t cu);
/* The lines written to path, atomically. 0, or a negative errno with the
 * detail in d. */
int skip_log__write(struct skip_log *s, const char *path, struct diag *d);
void skip_log__free(struct skip_log *s);

#endif
