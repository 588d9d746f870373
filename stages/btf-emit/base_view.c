/* base_view.c: a --btf-base read in place, for matching a module against it.
 *
 * libbpf's btf__new() copies the base into fresh memory and parses it: for
 * a vmlinux base, 4 MB of page faults and 95,000 types, 3.5 ms of a small
 * module's ~35. Matching (base_dedup.c) only reads the base, so it reads
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
 */
#include "emit.h"
#include "../../common/mapfile.h"
#include "../../common/vec.h"

#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const struct btf_type bv_void; /* what id 0 is, as libbpf answers for it */

size_t btf_type_bytes(const struct btf_type *t)
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

int elf_btf_section(const char *path, uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx, fsize, found = 0;
	int err = elf && elf_rawfile(elf, &fsize) && elf_kind(elf) == ELF_K_ELF &&
		  !elf_getshdrstrndx(elf, &shstrndx) ? 0 : -EINVAL;
	for (Elf_Scn *scn = NULL; !err && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(name, ".BTF"))
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_flags & SHF_COMPRESSED || sh.sh_offset > fsize ||
		    sh.sh_size > fsize - sh.sh_offset || found++)
			err = -EINVAL;
		*off = sh.sh_offset;
		*size = sh.sh_size;
	}
	if (!err && !found)
		err = -ENOENT;
	elf_end(elf);
	close(fd);
	return err;
}

int base_btf_bytes(const char *path, const uint8_t *m, size_t size, const uint8_t **p, size_t *n)
{
	if (size < SELFMAG || memcmp(m, ELFMAG, SELFMAG)) {
		*p = m;
		*n = size;
		return 0;
	}
	uint64_t off, len;
	int err = elf_btf_section(path, &off, &len);
	if (err)
		return err;
	if (off > size || len > size - off)
		return -EINVAL; /* the file changed between the two looks */
	*p = m + off;
	*n = (size_t)len;
	return 0;
}

int btf_header_check(const uint8_t *p, size_t n, struct btf_header *h)
{
	if (n < sizeof(*h))
		return -EINVAL;
	memcpy(h, p, sizeof(*h));
	if (h->magic != BTF_MAGIC || h->version != BTF_VERSION || h->hdr_len != sizeof(*h) || h->type_off % 4 ||
	    (uint64_t)h->type_off + h->type_len > h->str_off || (uint64_t)h->str_off + h->str_len > n - sizeof(*h) ||
	    (h->str_len && p[sizeof(*h) + h->str_off + h->str_len - 1]))
		return -EINVAL;
	return 0;
}

size_t btf_type_whole(const uint8_t *types, uint32_t len, uint32_t at)
{
	const struct btf_type *t = (const void *)(types + at);
	if (at > len || len - at < sizeof(*t) || btf_kind(t) > BTF_KIND_ENUM64 || btf_type_bytes(t) > len - at)
		return 0;
	return btf_type_bytes(t);
}

int types_flatten(const uint32_t *ids, uint32_t n, const struct btf_type *(*type)(const void *ctx, uint32_t id),
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
		if (!(sz = btf_type_whole(types, len, at)))
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
	v->flattens = types_flatten(arrays, (uint32_t)narr, view_type, v);
	free(arrays);
	return 0;
}

int base_view_open(struct base_view *v, const char *path)
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
	struct btf_header h;
	if ((err = base_btf_bytes(path, m, size, &p, &n)))
		goto fail;
	/* Our byte order only (the other is libbpf's to swap), aligned for
	 * reading in place, strings that start with "" (as libbpf checks). */
	err = -EINVAL;
	if (n > UINT32_MAX || ((uintptr_t)p & 3) || btf_header_check(p, n, &h) || !h.str_len || p[h.hdr_len + h.str_off])
		goto fail;
	v->strs = (const char *)p + h.hdr_len + h.str_off;
	v->str_len = h.str_len;
	if ((err = walk_types(v, p + h.hdr_len + h.type_off, h.type_len)))
		goto fail;
	return 0;
fail:
	base_view_close(v);
	return err;
}

void base_view_close(struct base_view *v)
{
	if (v->map)
		munmap((void *)v->map, v->map_size);
	free(v->offs);
	memset(v, 0, sizeof(*v));
}
