/* strtab.h: an interning string table, laid out as NUL-terminated strings.
 *
 * Offset 0 always holds the empty string, so 0 means "no name". Adding a
 * string that is already present returns its first offset. The table's bytes
 * (strtab_data) move when a string is added; offsets never do.
 */
#ifndef BTFPIPE_STRTAB_H
#define BTFPIPE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab;

struct strtab *strtab__new(void);
void strtab__free(struct strtab *t); /* NULL is a no-op */
void strtab__reset(struct strtab *t); /* back to just "" */

/* Returns: the string's offset (>= 0), or -ENOMEM. NULL and "" give 0. */
int64_t strtab__add(struct strtab *t, const char *s);
int64_t strtab__addn(struct strtab *t, const char *s, size_t len);
/* strtab__addn() with the string's strtab__hash() made beforehand, maybe on
 * another thread: strings hashed in parallel and added in order. */
uint64_t strtab__hash(const char *s, size_t len);
int64_t strtab__add_hashed(struct strtab *t, const char *s, size_t len, uint64_t hash);
/* The offset of s (len bytes, hashed as strtab__hash() does), or -ENOENT
 * when the table lacks it; "" gives 0. It only reads, so any number of threads may
 * look up at once while none adds. */
int64_t strtab__find_hashed(const struct strtab *t, const char *s, size_t len, uint64_t hash);

/* Append s (len bytes, no NUL among them) without looking it up or
 * remembering it: for a caller that dedups by something cheaper than the
 * bytes (their place in a section). An equal string added later is stored
 * again. Returns the offset, or -E2BIG / -ENOMEM. */
int64_t strtab__append(struct strtab *t, const char *s, size_t len);

const char *strtab__data(const struct strtab *t);
size_t strtab__size(const struct strtab *t);

#endif
