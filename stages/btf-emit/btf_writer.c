/* btf_writer.c: where types are appended to the BTF we write, in place of
 * libbpf's btf__add_*().
 *
 * Each bw__add_*() makes the same checks as its libbpf namesake (Debian 12's
 * libbpf 1.1; past 2 GiB of strings libbpf says -ENOMEM where strtab.c
 * goes on to 4 GiB) and appends the same bytes, and the strings are laid out as
 * libbpf lays them out: "" at 0, then each string once, where it was first
 * added. So the BTF is the bytes libbpf would have made. What it saves is
 * libbpf's work per call, which was most of the encode phase: it keeps an
 * index of type offsets and grows three buffers as it goes. (Remembering
 * the graph's strings by their place, to hash each once, saved little for
 * much RSS: not kept.)
 *
 * Host byte order, non-split: a caller that needs a split BTF or libbpf's
 * object makes it from bw__raw()'s bytes.
 *
 * A piece (bw__new_piece()) is one part of a BTF written on its own thread:
 * its strings are its own, and it notes where it stored names and ids that
 * encode.c rewrites when it joins the pieces (see there).
 */
#include "btf_writer.h"
#include "../../common/buf.h"
#include "../../common/strtab.h"

#include <bpf/btf.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>

struct bw {
	struct buf types;
	struct strtab *strs;
	uint32_t nr_types;
	size_t last;		/* where the last type added starts in types */
	/* A piece (bw__new_piece()): the ids it gives start after base, or
	 * are BW_LOCAL | n when its place is not known yet, and it records
	 * where it stored each name offset and each such id (u32 positions
	 * in types), for encode.c to rewrite when the pieces are joined. */
	uint32_t base;
	int local, piece;
	struct buf name_at, local_at;
	struct buf str_at, str_hash; /* each of its strings: offset (u32), hash (u64) */
};

struct bw *bw__new(void)
{
	struct bw *w = calloc(1, sizeof(*w));
	if (w && !(w->strs = strtab__new())) {
		free(w);
		return NULL;
	}
	return w;
}

struct bw *bw__new_piece(uint32_t base, int local)
{
	struct bw *w = bw__new();
	if (w) {
		w->base = local ? 0 : base;
		w->local = local;
		w->piece = 1;
	}
	return w;
}

void bw__free(struct bw *w)
{
	if (!w)
		return;
	buf_free(&w->types);
	buf_free(&w->name_at);
	buf_free(&w->local_at);
	buf_free(&w->str_at);
	buf_free(&w->str_hash);
	strtab__free(w->strs);
	free(w);
}

uint32_t bw__type_cnt(const struct bw *w)
{
	return w->base + w->nr_types + 1;
}

void bw__piece_view(const struct bw *w, struct bw_piece *v)
{
	*v = (struct bw_piece){
		.types = w->types.data, .types_len = w->types.len, .nr_types = w->nr_types,
		.strs = strtab__data(w->strs), .strs_len = strtab__size(w->strs),
		.name_at = (const uint32_t *)w->name_at.data, .n_name = w->name_at.len / 4,
		.local_at = (const uint32_t *)w->local_at.data, .n_local = w->local_at.len / 4,
		.str_at = (const uint32_t *)w->str_at.data, .str_hash = (const uint64_t *)w->str_hash.data,
		.n_str = w->str_at.len / 4,
		.err = w->name_at.err ? w->name_at.err : w->local_at.err ? w->local_at.err
		     : w->str_at.err ? w->str_at.err : w->str_hash.err,
	};
}

/* A piece remembers that types[at] holds a name offset (not 0, which stays
 * 0) or a BW_LOCAL id. (Positions fit in 32 bits: a BTF's types do.) */
static void note(struct buf *b, size_t at)
{
	uint32_t v = (uint32_t)at;
	buf_put(b, &v, sizeof(v));
}

static void note_name(struct bw *w, size_t at, int64_t off)
{
	if (w->piece && off)
		note(&w->name_at, at);
}

static void note_ref(struct bw *w, size_t at, uint32_t ref)
{
	if (w->piece && (ref & BW_LOCAL))
		note(&w->local_at, at);
}

/* s's offset in the string section, or -errno: NULL and "" are 0 (no name,
 * as libbpf leaves them), and each other string is where it was first
 * added, as libbpf's btf__add_str() places it. */
static int64_t str_off(struct bw *w, const char *s)
{
	if (!w->piece)
		return strtab__add(w->strs, s);
	/* A piece keeps each new string's offset and hash for the join. */
	size_t len = s ? strlen(s) : 0, before = strtab__size(w->strs);
	if (!len)
		return 0;
	uint64_t h = strtab__hash(s, len);
	int64_t off = strtab__add_hashed(w->strs, s, len, h);
	if (off > 0 && (size_t)off == before) {
		uint32_t at = (uint32_t)off;
		buf_put(&w->str_at, &at, sizeof(at));
		buf_put(&w->str_hash, &h, sizeof(h));
	}
	return off;
}

/* A btf_type's info word, as libbpf makes it (vlen unmasked: callers keep
 * it under 65536). */
static uint32_t info_of(unsigned kind, int kflag, uint32_t vlen)
{
	return (uint32_t)(kflag != 0) << 31 | (uint32_t)kind << 24 | vlen;
}

static int empty(const char *s)
{
	return !s || !s[0];
}

static int bad_id(int id)
{
	return id < 0; /* libbpf: id > BTF_MAX_NR_TYPES (INT_MAX) cannot be an int */
}

/* A new type: its struct btf_type, and extra bytes of zeroes after it.
 * is_ref: size_type is a type id (else a size). */
static int begin(struct bw *w, const char *name, uint32_t info, uint32_t size_type, int is_ref,
		 size_t extra)
{
	int64_t off = str_off(w, name);
	if (off < 0)
		return (int)off;
	if (w->base + w->nr_types >= (uint32_t)INT_MAX - 1 || (w->local && w->nr_types + 1 >= BW_LOCAL))
		return -E2BIG; /* libbpf's BTF_MAX_NR_TYPES (it says -ENOMEM: not a machine's limit) */
	struct btf_type t = { .name_off = (uint32_t)off, .info = info, .size = size_type };
	size_t at = w->types.len;
	buf_put(&w->types, &t, sizeof(t));
	static const uint8_t zero[16];
	buf_put(&w->types, zero, extra);
	if (w->types.err)
		return w->types.err;
	note_name(w, at + offsetof(struct btf_type, name_off), off);
	if (is_ref)
		note_ref(w, at + offsetof(struct btf_type, type), size_type);
	w->last = at; /* only once it is there: last() reads it */
	++w->nr_types;
	return (int)(w->local ? BW_LOCAL | w->nr_types : w->base + w->nr_types);
}

static struct btf_type *last(struct bw *w)
{
	return (struct btf_type *)(w->types.data + w->last);
}

static int last_is(struct bw *w, unsigned kind)
{
	return w->nr_types && btf_kind(last(w)) == kind;
}

/* One more member, value or parameter of the last type, kflag set if asked.
 * Each starts with its name offset (name_off), and ref_at is where in it a
 * type id is, if any (else -1). */
static int member(struct bw *w, const void *m, size_t n, int kflag, int64_t name_off, int ref_at)
{
	size_t at = w->types.len;
	buf_put(&w->types, m, n);
	note_name(w, at, name_off);
	if (ref_at >= 0) {
		uint32_t ref;
		memcpy(&ref, (const uint8_t *)m + ref_at, sizeof(ref));
		note_ref(w, at + (size_t)ref_at, ref);
	}
	if (w->types.err)
		return w->types.err;
	struct btf_type *t = last(w);
	t->info = info_of(btf_kind(t), kflag || btf_kflag(t), btf_vlen(t) + 1);
	return 0;
}

int bw__add_int(struct bw *w, const char *name, size_t byte_sz, int encoding)
{
	if (empty(name) || !byte_sz || (byte_sz & (byte_sz - 1)) || byte_sz > 16 ||
	    (encoding & ~(BTF_INT_SIGNED | BTF_INT_CHAR | BTF_INT_BOOL)))
		return -EINVAL;
	int id = begin(w, name, info_of(BTF_KIND_INT, 0, 0), (uint32_t)byte_sz, 0, 4);
	if (id > 0) {
		uint32_t v = ((uint32_t)encoding << 24) | (uint32_t)(byte_sz * 8);
		memcpy(last(w) + 1, &v, 4);
	}
	return id;
}

int bw__add_float(struct bw *w, const char *name, size_t byte_sz)
{
	if (empty(name) || (byte_sz != 2 && byte_sz != 4 && byte_sz != 8 && byte_sz != 12 && byte_sz != 16))
		return -EINVAL;
	return begin(w, name, info_of(BTF_KIND_FLOAT, 0, 0), (uint32_t)byte_sz, 0, 0);
}

/* PTR, TYPEDEF, CONST, VOLATILE, RESTRICT, TYPE_TAG, FUNC, FWD. */
static int ref_kind(struct bw *w, unsigned kind, const char *name, int ref, int kflag, uint32_t vlen)
{
	if (bad_id(ref))
		return -EINVAL;
	return begin(w, name, info_of(kind, kflag, vlen), (uint32_t)ref, 1, 0);
}

int bw__add_ptr(struct bw *w, int ref)
{
	return ref_kind(w, BTF_KIND_PTR, NULL, ref, 0, 0);
}

int bw__add_const(struct bw *w, int ref)
{
	return ref_kind(w, BTF_KIND_CONST, NULL, ref, 0, 0);
}

int bw__add_volatile(struct bw *w, int ref)
{
	return ref_kind(w, BTF_KIND_VOLATILE, NULL, ref, 0, 0);
}

int bw__add_restrict(struct bw *w, int ref)
{
	return ref_kind(w, BTF_KIND_RESTRICT, NULL, ref, 0, 0);
}

int bw__add_typedef(struct bw *w, const char *name, int ref)
{
	return empty(name) ? -EINVAL : ref_kind(w, BTF_KIND_TYPEDEF, name, ref, 0, 0);
}

int bw__add_type_tag(struct bw *w, const char *value, int ref)
{
	return empty(value) ? -EINVAL : ref_kind(w, BTF_KIND_TYPE_TAG, value, ref, 0, 0);
}

/* libbpf 1.6's btf__add_type_attr(): a type tag whose value is an
 * attribute (kind_flag 1), not a btf_type_tag string. */
int bw__add_type_attr(struct bw *w, const char *value, int ref)
{
	return empty(value) ? -EINVAL : ref_kind(w, BTF_KIND_TYPE_TAG, value, ref, 1, 0);
}

int bw__add_fwd(struct bw *w, const char *name, int fwd_kind)
{
	if (empty(name))
		return -EINVAL;
	if (fwd_kind == BTF_FWD_ENUM) /* as libbpf: an enum of 4 bytes with no values */
		return bw__add_enum(w, name, 4);
	if (fwd_kind != BTF_FWD_STRUCT && fwd_kind != BTF_FWD_UNION)
		return -EINVAL;
	return ref_kind(w, BTF_KIND_FWD, name, 0, fwd_kind == BTF_FWD_UNION, 0);
}

int bw__add_array(struct bw *w, int index_type, int elem_type, uint32_t nelems)
{
	if (bad_id(index_type) || bad_id(elem_type))
		return -EINVAL;
	int id = begin(w, NULL, info_of(BTF_KIND_ARRAY, 0, 0), 0, 0, sizeof(struct btf_array));
	if (id > 0) {
		struct btf_array a = { .type = (uint32_t)elem_type, .index_type = (uint32_t)index_type,
				       .nelems = nelems };
		memcpy(last(w) + 1, &a, sizeof(a));
		size_t at = w->last + sizeof(struct btf_type);
		note_ref(w, at + offsetof(struct btf_array, type), a.type);
		note_ref(w, at + offsetof(struct btf_array, index_type), a.index_type);
	}
	return id;
}

int bw__add_struct(struct bw *w, const char *name, uint32_t byte_sz)
{
	return begin(w, name, info_of(BTF_KIND_STRUCT, 0, 0), byte_sz, 0, 0);
}

int bw__add_union(struct bw *w, const char *name, uint32_t byte_sz)
{
	return begin(w, name, info_of(BTF_KIND_UNION, 0, 0), byte_sz, 0, 0);
}

int bw__add_field(struct bw *w, const char *name, int type, uint32_t bit_offset, uint32_t bit_size)
{
	if (!last_is(w, BTF_KIND_STRUCT) && !last_is(w, BTF_KIND_UNION))
		return -EINVAL;
	if (bad_id(type))
		return -EINVAL;
	int bitfield = bit_size || bit_offset % 8;
	if (bitfield && (!bit_size || bit_size > 255 || bit_offset > 0xffffff))
		return -EINVAL;
	if (last_is(w, BTF_KIND_UNION) && bit_offset)
		return -EINVAL;
	int64_t off = str_off(w, name);
	if (off < 0)
		return (int)off;
	struct btf_member m = { .name_off = (uint32_t)off, .type = (uint32_t)type,
				.offset = bit_offset | (bit_size << 24) };
	return member(w, &m, sizeof(m), bitfield, off, offsetof(struct btf_member, type));
}

static int enum_common(struct bw *w, unsigned kind, const char *name, uint32_t byte_sz, int is_signed)
{
	if (!byte_sz || (byte_sz & (byte_sz - 1)) || byte_sz > 8)
		return -EINVAL;
	return begin(w, name, info_of(kind, is_signed, 0), byte_sz, 0, 0);
}

int bw__add_enum(struct bw *w, const char *name, uint32_t byte_sz)
{
	return enum_common(w, BTF_KIND_ENUM, name, byte_sz, 0);
}

int bw__add_enum_value(struct bw *w, const char *name, int64_t value)
{
	if (!last_is(w, BTF_KIND_ENUM) || empty(name))
		return -EINVAL;
	if (value < INT_MIN || value > UINT_MAX)
		return -E2BIG;
	int64_t off = str_off(w, name);
	if (off < 0)
		return (int)off;
	struct btf_enum e = { .name_off = (uint32_t)off, .val = (int32_t)value };
	return member(w, &e, sizeof(e), value < 0, off, -1); /* a negative value makes it signed */
}

int bw__add_enum64(struct bw *w, const char *name, uint32_t byte_sz, int is_signed)
{
	return enum_common(w, BTF_KIND_ENUM64, name, byte_sz, is_signed);
}

int bw__add_enum64_value(struct bw *w, const char *name, uint64_t value)
{
	if (!last_is(w, BTF_KIND_ENUM64) || empty(name))
		return -EINVAL;
	int64_t off = str_off(w, name);
	if (off < 0)
		return (int)off;
	struct btf_enum64 e = { .name_off = (uint32_t)off, .val_lo32 = (uint32_t)value,
				.val_hi32 = (uint32_t)(value >> 32) };
	return member(w, &e, sizeof(e), 0, off, -1);
}

int bw__add_func_proto(struct bw *w, int ret)
{
	return ref_kind(w, BTF_KIND_FUNC_PROTO, NULL, ret, 0, 0);
}

int bw__add_func_param(struct bw *w, const char *name, int type)
{
	if (bad_id(type) || !last_is(w, BTF_KIND_FUNC_PROTO))
		return -EINVAL;
	int64_t off = str_off(w, name);
	if (off < 0)
		return (int)off;
	struct btf_param p = { .name_off = (uint32_t)off, .type = (uint32_t)type };
	return member(w, &p, sizeof(p), 0, off, offsetof(struct btf_param, type));
}

int bw__add_func(struct bw *w, const char *name, int linkage, int proto)
{
	if (empty(name) ||
	    (linkage != BTF_FUNC_STATIC && linkage != BTF_FUNC_GLOBAL && linkage != BTF_FUNC_EXTERN))
		return -EINVAL;
	return ref_kind(w, BTF_KIND_FUNC, name, proto, 0, (uint32_t)linkage);
}

int bw__add_var(struct bw *w, const char *name, int linkage, int type)
{
	if (empty(name) || bad_id(type) ||
	    (linkage != BTF_VAR_STATIC && linkage != BTF_VAR_GLOBAL_ALLOCATED &&
	     linkage != BTF_VAR_GLOBAL_EXTERN))
		return -EINVAL;
	int id = begin(w, name, info_of(BTF_KIND_VAR, 0, 0), (uint32_t)type, 1, sizeof(struct btf_var));
	if (id > 0) {
		struct btf_var v = { .linkage = (uint32_t)linkage };
		memcpy(last(w) + 1, &v, sizeof(v));
	}
	return id;
}

int bw__add_datasec(struct bw *w, const char *name, uint32_t byte_sz)
{
	return empty(name) ? -EINVAL : begin(w, name, info_of(BTF_KIND_DATASEC, 0, 0), byte_sz, 0, 0);
}

int bw__add_datasec_var_info(struct bw *w, int var, uint32_t offset, uint32_t byte_sz)
{
	if (!last_is(w, BTF_KIND_DATASEC) || bad_id(var))
		return -EINVAL;
	struct btf_var_secinfo v = { .type = (uint32_t)var, .offset = offset, .size = byte_sz };
	return member(w, &v, sizeof(v), 0, 0, offsetof(struct btf_var_secinfo, type));
}

int bw__add_decl_tag(struct bw *w, const char *value, int ref, int component_idx)
{
	if (empty(value) || component_idx < -1 || bad_id(ref))
		return -EINVAL;
	int id = begin(w, value, info_of(BTF_KIND_DECL_TAG, 0, 0), (uint32_t)ref, 1,
		       sizeof(struct btf_decl_tag));
	if (id > 0) {
		struct btf_decl_tag d = { .component_idx = component_idx };
		memcpy(last(w) + 1, &d, sizeof(d));
	}
	return id;
}

const char *bw__strerror(int err)
{
	return err == -E2BIG ? "past a limit of BTF's (2,147,483,646 types, 4 GiB of types or of strings)"
			     : strerror(-err);
}

size_t bw__types_len(const struct bw *w)
{
	return w->types.len;
}

size_t bw__strs_len(const struct bw *w)
{
	return strtab__size(w->strs);
}

int bw__raw(const struct bw *w, struct buf *out)
{
	size_t slen = strtab__size(w->strs);
	if (w->types.len > UINT32_MAX - sizeof(struct btf_header) ||
	    slen > UINT32_MAX - sizeof(struct btf_header) - w->types.len)
		return -E2BIG;
	struct btf_header h = {
		.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h),
		.type_off = 0, .type_len = (uint32_t)w->types.len,
		.str_off = (uint32_t)w->types.len, .str_len = (uint32_t)slen,
	};
	buf_reset(out);
	buf_put(out, &h, sizeof(h));
	buf_put(out, w->types.data, w->types.len);
	buf_put(out, strtab__data(w->strs), slen);
	return out->err;
}
