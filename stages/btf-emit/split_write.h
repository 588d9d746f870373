/* split_write.h: split BTF over a base written, checked, byte-swapped (split_write.c). */
#ifndef BTFPIPE_EMIT_SPLIT_WRITE_H
#define BTFPIPE_EMIT_SPLIT_WRITE_H

#include <stddef.h>
#include <stdint.h>

struct base_view;
struct buf;
struct diag;
struct str_match;

/* Split BTF over base of the types of ours with keep[id] set,
 * in order, references through newid[] (per our id; 0 stays void), as raw
 * bytes appended to *out, checked (split__check()) before they are returned. */
int split__write(const struct base_view *ours, const struct base_view *base, const struct str_match *sm,
		const uint32_t *newid, const uint8_t *keep, struct buf *out, struct diag *d);
/* Is raw (n bytes) split BTF over base that libbpf would read: a header of
 * our byte order, sections in order inside it, strings that end in a NUL,
 * every type of a known kind inside its section, every type reference below
 * the type count and every name offset inside the strings (the base's and
 * its own)? 0, or -EPROTO. */
int split__check(const uint8_t *raw, size_t n, const struct base_view *base);
/* Split BTF raw, as split__check() passed it, into the other byte order. */
void split__bswap(uint8_t *raw);

#endif
