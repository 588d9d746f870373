/* btf_writer.h: the BTF writer, in place of libbpf's btf__add_*() (btf_writer.c). */
#ifndef BTFPIPE_EMIT_BTF_WRITER_H
#define BTFPIPE_EMIT_BTF_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct buf;

/* The BTF being written. Each bw__add_*() is its libbpf btf__add_*()
 * namesake: the same checks and errors, the same bytes, the same string
 * offsets; ids from 1. Returns the new type's id, or a negative errno. The
 * writer owns its buffers; bw__new()'s result is the caller's, freed with
 * bw__free() (NULL is a no-op). */
struct bw;
struct bw *bw__new(void);
void bw__free(struct bw *w);
uint32_t bw__type_cnt(const struct bw *w); /* the next type's id (not a local piece's) */
int bw__add_int(struct bw *w, const char *name, size_t byte_sz, int encoding);
int bw__add_float(struct bw *w, const char *name, size_t byte_sz);
int bw__add_ptr(struct bw *w, int ref);
int bw__add_const(struct bw *w, int ref);
int bw__add_volatile(struct bw *w, int ref);
int bw__add_restrict(struct bw *w, int ref);
int bw__add_typedef(struct bw *w, const char *name, int ref);
int bw__add_type_tag(struct bw *w, const char *value, int ref);
int bw__add_type_attr(struct bw *w, const char *value, int ref); /* libbpf 1.6's, kind_flag 1 */
int bw__add_fwd(struct bw *w, const char *name, int fwd_kind);
int bw__add_array(struct bw *w, int index_type, int elem_type, uint32_t nelems);
int bw__add_struct(struct bw *w, const char *name, uint32_t byte_sz);
int bw__add_union(struct bw *w, const char *name, uint32_t byte_sz);
int bw__add_field(struct bw *w, const char *name, int type, uint32_t bit_offset, uint32_t bit_size);
int bw__add_enum(struct bw *w, const char *name, uint32_t byte_sz);
int bw__add_enum_value(struct bw *w, const char *name, int64_t value);
int bw__add_enum64(struct bw *w, const char *name, uint32_t byte_sz, int is_signed);
int bw__add_enum64_value(struct bw *w, const char *name, uint64_t value);
int bw__add_func_proto(struct bw *w, int ret);
int bw__add_func_param(struct bw *w, const char *name, int type);
int bw__add_func(struct bw *w, const char *name, int linkage, int proto);
int bw__add_var(struct bw *w, const char *name, int linkage, int type);
int bw__add_datasec(struct bw *w, const char *name, uint32_t byte_sz);
int bw__add_datasec_var_info(struct bw *w, int var, uint32_t offset, uint32_t byte_sz);
int bw__add_decl_tag(struct bw *w, const char *value, int ref, int component_idx);
/* The raw BTF (header, types, strings; host byte order) appended to out
 * (the caller's). */
int bw__raw(const struct bw *w, struct buf *out);
/* What a writer's error means, for messages. -E2BIG: a limit of BTF's
 * (2^31-2 types, libbpf's count; 4 GiB of types or of strings), not the machine's;
 * where libbpf says -ENOMEM at its type limit, the writer says -E2BIG. */
const char *bw__strerror(int err);
/* The bytes of types and of strings written so far. */
size_t bw__types_len(const struct bw *w);
size_t bw__strs_len(const struct bw *w);

/* A piece of a BTF: its types get ids after base or, local, the ids
 * BW_LOCAL | 1, 2, ... until the pieces before it are counted. Ids passed
 * in are the BTF's, or this piece's own BW_LOCAL ones. */
#define BW_LOCAL 0x40000000u
struct bw *bw__new_piece(uint32_t base, int local);
/* What a piece wrote, for the join (encode.c): pointers into the piece's
 * own buffers, valid until its next add or its bw__free(). */
struct bw_piece {
	const uint8_t *types;
	size_t types_len;
	uint32_t nr_types;
	const char *strs;	/* its own: "" at 0, each string once, first use first */
	size_t strs_len;
	const uint32_t *name_at; /* where in types a name offset (not 0) is */
	size_t n_name;
	const uint32_t *local_at; /* where in types a BW_LOCAL id is */
	size_t n_local;
	const uint32_t *str_at;	/* each string of strs, in order: its offset */
	const uint64_t *str_hash; /* and its strtab__hash() */
	size_t n_str;
	int err;		/* -ENOMEM when a position could not be noted */
};
void bw__piece_view(const struct bw *w, struct bw_piece *v);

#endif
