/* btf_raw.h: reading raw BTF bytes where they lie: headers, type sizes, an ELF's .BTF (btf_raw.c). */
#ifndef BTFPIPE_EMIT_BTF_RAW_H
#define BTFPIPE_EMIT_BTF_RAW_H

#include <stddef.h>
#include <stdint.h>

struct btf_header;
struct btf_type;
struct buf;

/* The header of raw BTF p (n bytes) into *h, when libbpf would read it in
 * our byte order: the header every encoder writes (24 bytes, or libbpf
 * 1.8's 32 with a kind layout that lies between types and strings; callers
 * find the sections at h->hdr_len), the type section
 * 4-aligned and before the strings, both inside p, the strings (if any)
 * ending in a NUL. 0 or -EINVAL. */
int btf_raw__header(const uint8_t *p, size_t n, struct btf_header *h);
/* The bytes of the raw BTF (either byte order) at the start of p (n
 * bytes), strings last as every writer here lays them out: where a second
 * one may follow. 0 when p does not start with such BTF. */
size_t btf_raw__size(const uint8_t *p, size_t n);
/* Raw BTF as every writer here lays it out appended to out: the 24-byte
 * header, types_len bytes of types, then str_len bytes of strings. */
void btf_raw__put(struct buf *out, const void *types, size_t types_len, const char *strs, size_t str_len);
/* The bytes a BTF type takes, header included (known kinds). */
size_t btf_raw__type_size(const struct btf_type *t);
/* The bytes of the type at offset at of a type section of len bytes, when
 * it is of a known kind and lies whole inside; 0 when not. */
size_t btf_raw__type_whole(const uint8_t *types, uint32_t len, uint32_t at);
/* Was the BTF written by an encoder that flattens multi-dimensional arrays
 * (pahole does)? Then it has arrays but none whose element is an array, and
 * a module's types only match its types when written the same way. Asked
 * of types ids[0..n), or of all of 1 .. n - 1 when ids is NULL, read through
 * type(ctx, id) (NULL past the last). */
int btf_raw__flattens(const uint32_t *ids, uint32_t n,
		      const struct btf_type *(*type)(const void *ctx, uint32_t id), const void *ctx);

#endif
