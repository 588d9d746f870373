/* btf_raw.c: raw BTF read where it lies, without libbpf: a header checked,
 * a type's size, whether an encoder flattened arrays (finding the bytes in
 * a file: common/btf_file.c). The leaf helpers of base_view.c, split_write.c and the
 * driver; nothing here allocates.
 */
#include "btf_raw.h"
#include "../../common/buf.h"

#include <bpf/btf.h>
#include <errno.h>
#include <string.h>

size_t btf_raw__type_size(const struct btf_type *t)
{
	size_t n = btf_vlen(t);
	switch (btf_kind(t)) {
	case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
		return sizeof(*t) + 4;
	case BTF_KIND_ARRAY:
		return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return sizeof(*t) + n * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return sizeof(*t) + n * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return sizeof(*t) + n * 12;
	case BTF_KIND_FUNC_PROTO:
		return sizeof(*t) + n * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return sizeof(*t) + n * sizeof(struct btf_var_secinfo);
	}
	return sizeof(*t);
}

int btf_raw__header(const uint8_t *p, size_t n, struct btf_header *h)
{
	if (n < sizeof(*h))
		return -EINVAL;
	memcpy(h, p, sizeof(*h));
	if (h->magic != BTF_MAGIC || h->version != BTF_VERSION || (h->hdr_len != sizeof(*h) && h->hdr_len != 32) ||
	    n < h->hdr_len || h->type_off % 4 || (uint64_t)h->type_off + h->type_len > h->str_off ||
	    (uint64_t)h->str_off + h->str_len > n - h->hdr_len ||
	    (h->str_len && p[h->hdr_len + h->str_off + h->str_len - 1]))
		return -EINVAL;
	if (h->hdr_len == 32) {
		/* libbpf 1.8's header: a kind layout, if any, lies between the
		 * types and the strings, as libbpf requires (layout.c). */
		uint32_t lo, ll;
		memcpy(&lo, p + 24, 4);
		memcpy(&ll, p + 28, 4);
		if (ll && (lo % 4 || ll % 4 || lo < h->type_off + h->type_len || (uint64_t)lo + ll > h->str_off))
			return -EINVAL;
	}
	return 0;
}

void btf_raw__put(struct buf *out, const void *types, size_t types_len, const char *strs, size_t str_len)
{
	struct btf_header h = {
		.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h),
		.type_off = 0, .type_len = (uint32_t)types_len,
		.str_off = (uint32_t)types_len, .str_len = (uint32_t)str_len,
	};
	buf_put(out, &h, sizeof(h));
	buf_put(out, types, types_len);
	buf_put(out, strs, str_len);
}

size_t btf_raw__size(const uint8_t *p, size_t n)
{
	uint32_t w[6];
	if (n < sizeof(w))
		return 0;
	memcpy(w, p, sizeof(w));
	int swap = (w[0] & 0xffff) == __builtin_bswap16(BTF_MAGIC);
	if (!swap && (w[0] & 0xffff) != BTF_MAGIC)
		return 0;
	for (int i = 1; swap && i < 6; i++)
		w[i] = __builtin_bswap32(w[i]);
	uint64_t end = (uint64_t)w[1] + w[4] + w[5]; /* hdr_len + str_off + str_len */
	return end <= n ? (size_t)end : 0;
}

size_t btf_raw__type_whole(const uint8_t *types, uint32_t len, uint32_t at)
{
	const struct btf_type *t = (const void *)(types + at);
	if (at > len || len - at < sizeof(*t) || btf_kind(t) > BTF_KIND_ENUM64 || btf_raw__type_size(t) > len - at)
		return 0;
	return btf_raw__type_size(t);
}

int btf_raw__flattens(const uint32_t *ids, uint32_t n, const struct btf_type *(*type)(const void *ctx, uint32_t id),
		  const void *ctx)
{
	int arrays = 0;
	for (uint32_t i = ids ? 0 : 1; i < n; i++) {
		const struct btf_type *t = type(ctx, ids ? ids[i] : i);
		if (!t || !btf_is_array(t))
			continue;
		arrays++;
		const struct btf_type *e = type(ctx, btf_array(t)->type);
		if (e && btf_is_array(e))
			return 0;
	}
	return arrays > 0;
}
