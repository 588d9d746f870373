/* base_view.c: a --btf-base read in place, for matching a module against it.
 *
 * libbpf's btf__new() copies the base into fresh memory and parses it: for
 * a vmlinux base, megabytes of page faults and about 100,000 types, a tenth
 * of a small module's emit. Matching (base_dedup.c) only reads the base, so it reads
 * it where it lies: the raw file, or the one .BTF section of an ELF, mapped
 * from the page cache, with an array of type offsets made by one walk.
 *
 * The walk checks what reading needs: a header inside the data, sections
 * inside the data, a string section that ends in a NUL, every type of a
 * known kind whose bytes lie inside the type section. References between
 * base types and name offsets are not checked here: every reader goes
 * through bv_type() and bv_str(), which answer "none" and "" out of range.
 * What this cannot read (the other byte order, an ELF with no or several
 * .BTF sections, a compressed one) is left to libbpf, as before.
 *
 * The BTF we just wrote is read the same way (base_view__open_raw()), from
 * the buffer it was written into: matching it against the base needs no
 * parse of it by libbpf.
 */
#include "base_view.h"
#include "btf_raw.h"
#include "../../common/btf_file.h"
#include "../../common/mapfile.h"
#include "../../common/vec.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const struct btf_type bv_void; /* what id 0 is, as libbpf answers for it */

static const struct btf_type *view_type(const void *v, uint32_t id)
{
	return bv_type(v, id);
}

/* The offsets of the types, and whether the base flattens arrays, decided
 * on the arrays the walk met (a second pass over 95,000 types cost half a
 * millisecond per module). */
static int walk_types(struct base_view *v, const uint8_t *types, uint32_t len)
{
	size_t cap = 0, narr = 0, arrcap = 0, sz;
	uint32_t *offs = NULL, *arrays = NULL;
	uint32_t n = 1;
	int err = vec_grow(&offs, &cap, 1);
	if (!err)
		offs[0] = 0;
	for (uint32_t at = 0; at < len && !err; at += (uint32_t)sz) {
		const struct btf_type *t = (const void *)(types + at);
		if (!(sz = btf_raw__type_whole(types, len, at)))
			err = -EINVAL;
		else if (!(err = vec_grow(&offs, &cap, (size_t)n + 1)) &&
			 !(btf_is_array(t) && (err = vec_grow(&arrays, &arrcap, narr + 1)))) {
			if (btf_is_array(t))
				arrays[narr++] = n;
			offs[n++] = at;
		}
	}
	if (err) {
		free(offs);
		free(arrays);
		return err;
	}
	v->offs = offs;
	v->n = n;
	v->types = types;
	v->flattens = btf_raw__flattens(arrays, (uint32_t)narr, view_type, v);
	free(arrays);
	return 0;
}

/* The view of raw BTF p (n bytes), which must outlive it. */
static int view_raw(struct base_view *v, const uint8_t *p, size_t n)
{
	struct btf_header h;
	/* Our byte order only (the other is libbpf's to swap), aligned for
	 * reading in place, strings that start with "" (as libbpf checks). */
	if (n > UINT32_MAX || ((uintptr_t)p & 3) || btf_raw__header(p, n, &h) || !h.str_len || p[h.hdr_len + h.str_off])
		return -EINVAL;
	v->strs = (const char *)p + h.hdr_len + h.str_off;
	v->str_len = h.str_len;
	return walk_types(v, p + h.hdr_len + h.type_off, h.type_len);
}

int base_view__open(struct base_view *v, const char *path)
{
	memset(v, 0, sizeof(*v));
	const void *m;
	size_t size;
	const uint8_t *p;
	size_t n;
	int err = mapfile_open(path, 4, "base BTF", &m, &size, NULL);
	if (err)
		return err;
	v->map = m;
	v->map_size = size;
	if ((err = btf_file__of_file(path, m, size, &p, &n)) || (err = view_raw(v, p, n)))
		base_view__close(v);
	return err;
}

int base_view__open_raw(struct base_view *v, const uint8_t *p, size_t n)
{
	memset(v, 0, sizeof(*v));
	int err = view_raw(v, p, n);
	if (err)
		base_view__close(v);
	return err;
}

void base_view__close(struct base_view *v)
{
	if (v->map)
		munmap((void *)v->map, v->map_size);
	free(v->offs);
	memset(v, 0, sizeof(*v));
}
