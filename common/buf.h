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
void buf_put(struct buf *b, const void *p, size_t n);
/* Append a copy of b's own bytes [off, off + n): safe although data moves. */
void buf_put_self(struct buf *b, size_t off, size_t n);
void buf_u8(struct buf *b, uint8_t v);
void buf_le16(struct buf *b, uint16_t v);
void buf_le32(struct buf *b, uint32_t v);
void buf_le64(struct buf *b, uint64_t v);
void buf_uleb(struct buf *b, uint64_t v);
void buf_sleb(struct buf *b, int64_t v);

struct cursor {
	const uint8_t *p, *start, *end;
	int err; /* sticky -EBADMSG once a read ran past the end or overflowed */
};

static inline void cursor_init(struct cursor *c, const void *p, size_t n)
{
	c->start = c->p = p;
	c->end = c->p + n;
	c->err = 0;
}

static inline size_t cursor_off(const struct cursor *c) { return (size_t)(c->p - c->start); }
static inline size_t cursor_left(const struct cursor *c) { return (size_t)(c->end - c->p); }

uint8_t cur_u8(struct cursor *c);
uint16_t cur_le16(struct cursor *c);
uint32_t cur_le32(struct cursor *c);
uint64_t cur_le64(struct cursor *c);
uint64_t cur_uleb(struct cursor *c);
int64_t cur_sleb(struct cursor *c);
/* Returns a pointer to the next n bytes and skips them, or NULL (error set). */
const uint8_t *cur_bytes(struct cursor *c, size_t n);

/* Plain little-endian stores/loads for fixed layouts. */
static inline void le32_put(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void le64_put(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void le16_put(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline uint16_t le16_get(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32_get(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static inline uint64_t le64_get(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

#endif
