/* layout.c: see layout.h.
 *
 * The kind layout lets a reader skip the records of a kind it does not know:
 * for each kind, the bytes after struct btf_type (info_sz) and the bytes of
 * each of its vlen elements (elem_sz). Kernels before it refuse a header
 * longer than theirs whose extra bytes are not zero, so it is written only
 * when asked, and only into base BTF: split BTF reads its base's (libbpf's
 * btf_type_size_unknown()), as pahole writes it. The records are libbpf
 * 1.8's table (btf.c, layouts[]) for the kinds 0..19 this writer knows, in
 * kind order, flags 0. Each record is two bytes and a zero u16, so the
 * table's bytes are the same in either byte order.
 */
#include "layout.h"
#include "../../common/buf.h"

#include <errno.h>
#include <string.h>

#define NR_KINDS 20
#define BTF_MAGIC_ 0xeB9F

static const uint8_t layouts[NR_KINDS][4] = {
	[1] = { 4, 0 },	  /* INT: its encoding word */
	[3] = { 12, 0 },  /* ARRAY: struct btf_array */
	[4] = { 0, 12 },  /* STRUCT: members */
	[5] = { 0, 12 },  /* UNION */
	[6] = { 0, 8 },	  /* ENUM: values */
	[13] = { 0, 8 },  /* FUNC_PROTO: params */
	[14] = { 4, 0 },  /* VAR: linkage */
	[15] = { 0, 12 }, /* DATASEC: var infos */
	[17] = { 4, 0 },  /* DECL_TAG: component_idx */
	[19] = { 0, 12 }, /* ENUM64: values */
};

static uint32_t sw32(uint32_t v, int swap)
{
	return swap ? __builtin_bswap32(v) : v;
}

int layout__add(const void *raw, uint32_t size, struct buf *out)
{
	struct btf_header_layout h;
	if (size < 24)
		return -EINVAL;
	memcpy(&h, raw, 24);
	int swap = h.magic == __builtin_bswap16(BTF_MAGIC_);
	if ((!swap && h.magic != BTF_MAGIC_) || sw32(h.hdr_len, swap) != 24)
		return -EINVAL;
	uint32_t type_off = sw32(h.type_off, swap), type_len = sw32(h.type_len, swap);
	uint32_t str_off = sw32(h.str_off, swap), str_len = sw32(h.str_len, swap);
	if (type_off || type_len % 4 || str_off != type_len || (uint64_t)str_len + str_off > size - 24)
		return -EINVAL; /* not laid out as every writer here lays it out */
	const uint8_t *body = (const uint8_t *)raw + 24;
	h.hdr_len = sw32(32, swap);
	h.layout_off = sw32(type_len, swap);
	h.layout_len = sw32(sizeof(layouts), swap);
	h.str_off = sw32(type_len + (uint32_t)sizeof(layouts), swap);
	buf_put(out, &h, sizeof(h));
	buf_put(out, body, type_len);
	buf_put(out, layouts, sizeof(layouts));
	buf_put(out, body + str_off, str_len);
	return out->err;
}
