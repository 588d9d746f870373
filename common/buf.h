/* buf.h: a growable byte buffer with little-endian and LEB128 writers, and a
 * bounds-checked cursor to read the same encodings back.
 *
 * Ownership: a struct buf owns `data`; buf_free() releases it. `data` moves on
 * every append, so never keep a pointer into it across an append.
 * A cursor never owns its bytes and never reads past `end`: every read
 * returns -EBADMSG at the end of the data and leaves the cursor in error.
 */
#ifndef BTFPIPE_BUF_H
#define BTFPIPE_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data;
	size_t len, cap;
	int err; /* sticky: the first failed append's -errno */
};

void buf_free(struct buf *b);
void buf_reset(struct buf *b); /* len = 0, keeps the memory */
/* Append n bytes. The out-of-line slow path grows the buffer (or latches
 * the error); the inline fast path is what every record encoder runs. */
void buf_put_slow(struct buf *b, const void *p, size_t n);
static inline void buf_put(struct buf *b, const void *p, size_t n)
{
	if (__builtin_expect(b->cap - b->len >= n && !b->err, 1)) {
		if (n)
			__builtin_memcpy(b->data + b->len, p, n);
		b->len += n;
		return;
	}
	buf_put_slow(b, p, n);
}
/* Append a copy of b's own bytes [off, off + n), which end at or before
 * b->len: safe although data moves. Inline when it fits (keys that inline
 * other keys copy millions of short runs). */
void buf_put_self_slow(struct buf *b, size_t off, size_t n);
static inline void buf_put_self(struct buf *b, size_t off, size_t n)
{
	if (__builtin_expect(b->cap - b->len >= n && !b->err, 1)) {
		if (n) /* the source ends at or before len, where the copy starts */
			__builtin_memcpy(b->data + b->len, b->data + off, n);
		b->len += n;
		return;
	}
	buf_put_self_slow(b, off, n);
}
/* Room for n more bytes without growing; 0, or the sticky -errno. For a
 * caller that knows about how much it will write: growing by doubling
 * copies the bytes written so far again at every step. */
int buf_reserve(struct buf *b, size_t n);
static inline void buf_u8(struct buf *b, uint8_t v)
{
	if (__builtin_expect(b->len < b->cap && !b->err, 1)) {
		b->data[b->len++] = v;
		return;
	}
	buf_put_slow(b, &v, 1);
}
void buf_le16(struct buf *b, uint16_t v);
void buf_le32(struct buf *b, uint32_t v);
void buf_le64(struct buf *b, uint64_t v);
void buf_uleb_slow(struct buf *b, uint64_t v);
/* Most ulebs written are one byte (small counts, flags, string refs), most
 * of the rest two (member offsets, sizes): both inline. */
static inline void buf_uleb(struct buf *b, uint64_t v)
{
	if (v < 0x80) {
		buf_u8(b, (uint8_t)v);
	} else if (v < 0x4000 && b->cap - b->len >= 2 && !b->err) {
		b->data[b->len] = (uint8_t)(v | 0x80);
		b->data[b->len + 1] = (uint8_t)(v >> 7);
		b->len += 2;
	} else {
		buf_uleb_slow(b, v);
	}
}
void buf_sleb(struct buf *b, int64_t v);

struct cursor {
	const uint8_t *p, *start, *end;
	int err; /* sticky -EBADMSG once a read ran past the end or overflowed */
};

static inline void cursor_init(struct cursor *c, const void *p, size_t n)
{
	c->start = c->p = p;
	c->end = n ? c->p + n : c->p; /* an empty blob may be NULL: NULL + 0 is undefined */
	c->err = 0;
}

static inline size_t cursor_off(const struct cursor *c) { return (size_t)(c->p - c->start); }
static inline size_t cursor_left(const struct cursor *c) { return (size_t)(c->end - c->p); }

uint8_t cur_u8_slow(struct cursor *c);
static inline uint8_t cur_u8(struct cursor *c)
{
	if (__builtin_expect(!c->err && c->p < c->end, 1))
		return *c->p++;
	return cur_u8_slow(c);
}
uint16_t cur_le16(struct cursor *c);
uint32_t cur_le32(struct cursor *c);
uint64_t cur_le64(struct cursor *c);
uint64_t cur_uleb_slow(struct cursor *c);
/* The one- to three-byte cases inline (three: string offsets past 16 KB in
 * a big CU's table); longer values, the end of the data and overflow are
 * the out-of-line path's (same result either way). */
static inline uint64_t cur_uleb(struct cursor *c)
{
	if (__builtin_expect(!c->err && c->end - c->p >= 3, 1)) {
		if (!(c->p[0] & 0x80))
			return *c->p++;
		if (!(c->p[1] & 0x80)) {
			uint64_t v = (uint64_t)(c->p[0] & 0x7f) | (uint64_t)c->p[1] << 7;
			c->p += 2;
			return v;
		}
		if (!(c->p[2] & 0x80)) {
			uint64_t v = (uint64_t)(c->p[0] & 0x7f) | (uint64_t)(c->p[1] & 0x7f) << 7 |
				     (uint64_t)c->p[2] << 14;
			c->p += 3;
			return v;
		}
	}
	return cur_uleb_slow(c);
}
int64_t cur_sleb_slow(struct cursor *c);
static inline int64_t cur_sleb(struct cursor *c)
{
	if (__builtin_expect(!c->err && c->p < c->end && !(*c->p & 0x80), 1)) {
		uint8_t byte = *c->p++;
		return (byte & 0x40) ? (int64_t)byte - 0x80 : (int64_t)byte;
	}
	return cur_sleb_slow(c);
}
/* Returns a pointer to the next n bytes and skips them, or NULL (error set). */
const uint8_t *cur_bytes(struct cursor *c, size_t n);

/* Plain little-endian stores/loads for fixed layouts. On a little-endian
 * host each is one unaligned move: GCC does not merge the byte loops, and
 * le32_get() alone was 3% of a module's extraction. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LE_NATIVE 1
#else
#define LE_NATIVE 0
#endif
static inline void le32_put(uint8_t *p, uint32_t v)
{
	if (LE_NATIVE)
		__builtin_memcpy(p, &v, 4);
	else
		for (int i = 0; i < 4; i++)
			p[i] = (uint8_t)(v >> (8 * i));
}
static inline void le64_put(uint8_t *p, uint64_t v)
{
	if (LE_NATIVE)
		__builtin_memcpy(p, &v, 8);
	else
		for (int i = 0; i < 8; i++)
			p[i] = (uint8_t)(v >> (8 * i));
}
static inline void le16_put(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline uint16_t le16_get(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32_get(const uint8_t *p)
{
	uint32_t v = 0;
	if (LE_NATIVE)
		__builtin_memcpy(&v, p, 4);
	else
		for (int i = 3; i >= 0; i--)
			v = v << 8 | p[i];
	return v;
}
static inline uint64_t le64_get(const uint8_t *p)
{
	uint64_t v = 0;
	if (LE_NATIVE)
		__builtin_memcpy(&v, p, 8);
	else
		for (int i = 7; i >= 0; i--)
			v = v << 8 | p[i];
	return v;
}

#endif
