/* base_view.h: a BTF read in place: a --btf-base, or the BTF we wrote (base_view.c). */
#ifndef BTFPIPE_EMIT_BASE_VIEW_H
#define BTFPIPE_EMIT_BASE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <bpf/btf.h>

/* A BTF read in place (see base_view.c). Types are 1 .. n - 1;
 * bv_type() is NULL past them (id 0 is void, as libbpf has it), bv_str()
 * "" outside the strings. */
struct base_view {
	const uint8_t *map;	/* owned: the file, mapped (NULL: open_raw's memory) */
	size_t map_size;
	const uint8_t *types;	/* the type section */
	uint32_t *offs;		/* owned: per id, its type's offset in types */
	uint32_t n;		/* type count, void included (btf__type_cnt) */
	const char *strs;	/* the string section, ending in a NUL */
	uint32_t str_len;
	int flattens;		/* btf_raw__flattens() of it */
};
extern const struct btf_type bv_void;
static inline const struct btf_type *bv_type(const struct base_view *v, uint32_t id)
{
	return !id ? &bv_void : id < v->n ? (const struct btf_type *)(v->types + v->offs[id]) : NULL;
}
static inline const char *bv_str(const struct base_view *v, uint32_t off)
{
	return off < v->str_len ? v->strs + off : "";
}
/* 0, or -errno: not a base this can read in place (then libbpf reads it). */
int base_view__open(struct base_view *v, const char *path);
/* The same over raw BTF in memory (p, n bytes: the caller's, which outlives
 * the view and stays unchanged meanwhile), such as the BTF we just wrote. */
int base_view__open_raw(struct base_view *v, const uint8_t *p, size_t n);
/* Unmaps the file and frees the offsets; a zeroed view too. */
void base_view__close(struct base_view *v);

#endif
