/* str_join.h: the string tables of BTF pieces joined into one, as one
 * writer adding the pieces' strings in order would lay it out (str_join.c).
 */
#ifndef BTFPIPE_STR_JOIN_H
#define BTFPIPE_STR_JOIN_H

#include <stddef.h>
#include <stdint.h>

/* A piece's own table: "" at 0, then each string once, NUL-terminated;
 * the n strings' offsets (in order) and strtab__hash() values. */
struct sj_in {
	const char *strs;
	size_t len;
	const uint32_t *off;
	const uint64_t *hash;
	size_t n;
};

struct str_join;

/* Plan the join of in[0 .. n) on up to `threads` threads: *joined_len is
 * the joined table's size. The tables must stay in place until
 * str_join__free(). *out is set even on failure, for str_join__free().
 * Returns 0, -ENOMEM, or -E2BIG past 4 GiB. */
int str_join__plan(const struct sj_in *in, size_t n, unsigned threads, struct str_join **out,
		  size_t *joined_len);
/* Write the joined table to dst (joined_len bytes). */
int str_join__write(struct str_join *j, char *dst);
/* After str_join__write(): map[own offset of a string] = its joined offset,
 * for a map of str_join__map_len() entries (0 for 0; the other offsets than
 * a string's start are left as they are, so one map serves piece after
 * piece without being cleared). */
size_t str_join__map_len(const struct str_join *j, size_t piece);
void str_join__map(const struct str_join *j, size_t piece, uint32_t *map);
void str_join__free(struct str_join *j); /* NULL is a no-op */

#endif
