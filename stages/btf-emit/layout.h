/* layout.h: the BTF kind layout section, pahole's feature "layout" (layout.c). */
#ifndef BTFPIPE_EMIT_LAYOUT_H
#define BTFPIPE_EMIT_LAYOUT_H

#include <stdint.h>

struct buf;

/* The header of libbpf 1.8 and kernels 7.x: Debian's 24-byte struct
 * btf_header followed by where the kind layout lies, both offsets from the
 * header's end like the others. hdr_len is 32 when these are present. */
struct btf_header_layout {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
	uint32_t layout_off, layout_len;
};

/* raw BTF (size bytes, either byte order, 24-byte header) with the kind
 * layout added: a 32-byte header, then the types, the layout (one record
 * per kind 0..19, libbpf's table) and the strings, appended to out (the
 * caller's). 0, -EINVAL (raw is not such BTF) or -ENOMEM. */
int layout__add(const void *raw, uint32_t size, struct buf *out);

#endif
