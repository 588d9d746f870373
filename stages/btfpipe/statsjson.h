/* statsjson.h: the stages' --stats=json lines gathered into one object
 * (statsjson.c). */
#ifndef BTFPIPE_STATSJSON_H
#define BTFPIPE_STATSJSON_H

#include <stdio.h>

/* The JSON object being built: {"dwarf-extract": {...}, ...}. */
struct statsjson {
	char *text;	/* malloc'd, NUL-terminated; NULL before the first stage */
	size_t len, cap;
};

/* Take a stage's stderr, saved at path: its {"tool":"NAME",...} line
 * becomes "NAME":{...} in *s, every other line is copied to err, and the
 * file is removed. 0 or -errno. */
int statsjson_take(struct statsjson *s, const char *path, FILE *err);

/* Print the object (one line) on out and empty *s. 0 or -errno (a write
 * error: EPIPE when out was closed). */
int statsjson_print(struct statsjson *s, FILE *out);

#endif
