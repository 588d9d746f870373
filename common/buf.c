/* buf.c: byte buffer writers and the bounds-checked cursor (see buf.h). */
#include "buf.h"
#include "vec.h"

#include <errno.h>
#include <string.h>

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->err = 0;
}

/* Room for N more bytes; 0 when there is none (the buffer's error is then set
 * and stays set, so every later write is a no-op). */
static int reserve(struct buf *b, size_t n)
{
	if (b->err)
		return 0;
	int err = vec_grow(&b->data, &b->cap, b->len + n);
	if (err)
		b->err = err;
	return !err;
}

void buf_put_slow(struct buf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

int buf_reserve(struct buf *b, size_t n)
{
	return reserve(b, n) ? 0 : b->err;
}

void buf_put_self_slow(struct buf *b, size_t off, size_t n)
{
	if (!reserve(b, n))
		return;
	if (n)
		memmove(b->data + b->len, b->data + off, n);
	b->len += n;
}

void buf_le16(struct buf *b, uint16_t v) { uint8_t t[2]; le16_put(t, v); buf_put(b, t, 2); }
void buf_le32(struct buf *b, uint32_t v) { uint8_t t[4]; le32_put(t, v); buf_put(b, t, 4); }
void buf_le64(struct buf *b, uint64_t v) { uint8_t t[8]; le64_put(t, v); buf_put(b, t, 8); }

void buf_uleb_slow(struct buf *b, uint64_t v)
{
	/* Room for the longest encoding, then written in place. */
	if (b->err || (b->cap - b->len < 10 && !reserve(b, 10)))
		return;
	uint8_t *p = b->data + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
}

void buf_sleb(struct buf *b, int64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	for (;;) {
		uint8_t byte = v & 0x7f;
		v >>= 7; /* arithmetic shift: gcc and clang define it for signed */
		int done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
		t[n++] = byte | (done ? 0 : 0x80);
		if (done)
			break;
	}
	buf_put(b, t, n);
}

static int cur_need(struct cursor *c, size_t n)
{
	if (c->err || (size_t)(c->end - c->p) < n) {
		c->err = -EBADMSG;
		return 0;
	}
	return 1;
}

uint8_t cur_u8_slow(struct cursor *c)
{
	return cur_need(c, 1) ? *c->p++ : 0;
}

uint16_t cur_le16(struct cursor *c)
{
	if (!cur_need(c, 2)) return 0;
	uint16_t v = le16_get(c->p);
	c->p += 2;
	return v;
}

uint32_t cur_le32(struct cursor *c)
{
	if (!cur_need(c, 4)) return 0;
	uint32_t v = le32_get(c->p);
	c->p += 4;
	return v;
}

uint64_t cur_le64(struct cursor *c)
{
	if (!cur_need(c, 8)) return 0;
	uint64_t v = le64_get(c->p);
	c->p += 8;
	return v;
}

uint64_t cur_uleb_slow(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; ; shift += 7) {
		if (!cur_need(c, 1))
			return 0;
		uint8_t byte = *c->p++;
		if (shift >= 64 || (shift == 63 && (byte & 0x7e))) {
			c->err = -EBADMSG; /* more than 64 bits */
			return 0;
		}
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
}

int64_t cur_sleb_slow(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t byte;
	do {
		if (!cur_need(c, 1))
			return 0;
		byte = *c->p++;
		if (shift >= 64) {
			c->err = -EBADMSG;
			return 0;
		}
		v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (shift < 64 && (byte & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

const uint8_t *cur_bytes(struct cursor *c, size_t n)
{
	if (!cur_need(c, n))
		return NULL;
	const uint8_t *p = c->p;
	c->p += n;
	return p;
}
