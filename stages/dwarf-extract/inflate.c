/* inflate.c: compressed debug sections (SHF_COMPRESSED, ELFCOMPRESS_ZLIB or
 * ELFCOMPRESS_ZSTD) stored plainly in an in-memory copy of the file.
 *
 * Why a copy, and not libdw's own decompression: Debian 12's libdw (0.188)
 * knows zlib only and calls a zstd section "unknown compression type", yet
 * kernels built with CONFIG_DEBUG_INFO_COMPRESSED_ZSTD have them. And libdw
 * decompresses into its own buffers, which the fast DIE reader (it reads
 * .debug_info from the file's mapping) and the relocator (it maps the file)
 * cannot see, so a zlib input lost both. With the copy, every reader sees
 * an ordinary file, and a compressed input gives the uncompressed input's
 * bytes. The copy is a memfd: an fd like the file's, mapped and read with
 * pread() like it, gone when closed.
 *
 * The copy's layout: the file's bytes unchanged, then each compressed
 * section's data, uncompressed, at its ch_addralign; only those sections'
 * headers change (sh_offset, sh_size, sh_addralign, SHF_COMPRESSED off),
 * written in the file's class and byte order. Checks: a section must lie
 * inside the file and hold its compression header, and must uncompress to
 * exactly ch_size bytes; anything else is EBADMSG naming the section. */
#include "inflate.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

struct plan {
	size_t index;		/* section index */
	const char *name;
	uint64_t src, src_len;	/* the compressed payload, past its Chdr, in the file */
	uint64_t at, len;	/* where it goes in the copy, and its uncompressed size */
	uint64_t align;
	uint32_t type;		/* ELFCOMPRESS_* */
};

static int cmp_src(const void *a, const void *b)
{
	const struct plan *x = a, *y = b;
	return x->src < y->src ? -1 : x->src > y->src;
}

static void put(uint8_t *p, unsigned size, uint64_t v, int big)
{
	for (unsigned i = 0; i < size; i++)
		p[big ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* The section header at index i in the copy, fields rewritten. */
static void rewrite_shdr(uint8_t *map, const GElf_Ehdr *eh, const struct plan *p, uint64_t flags)
{
	int big = eh->e_ident[EI_DATA] == ELFDATA2MSB, is64 = eh->e_ident[EI_CLASS] == ELFCLASS64;
	uint8_t *sh = map + eh->e_shoff + p->index * eh->e_shentsize;
	if (is64) {
		put(sh + 8, 8, flags, big);
		put(sh + 24, 8, p->at, big);
		put(sh + 32, 8, p->len, big);
		put(sh + 48, 8, p->align, big);
	} else {
		put(sh + 8, 4, flags, big);
		put(sh + 16, 4, p->at, big);
		put(sh + 20, 4, p->len, big);
		put(sh + 32, 4, p->align, big);
	}
}

static int uncompress_one(const uint8_t *raw, uint8_t *dst, const struct plan *p, const char *path,
			  struct diag *d)
{
	const uint8_t *src = raw + p->src;
	if (p->type == ELFCOMPRESS_ZLIB) {
		uLongf got = (uLongf)p->len;
		int z = uncompress(dst, &got, src, (uLong)p->src_len);
		if (z == Z_MEM_ERROR)
			return -ENOMEM;
		if (z != Z_OK || got != p->len)
			return diag_fail(d, EBADMSG, "%s: section %s (index %zu): corrupt zlib data: %s "
					 "(%llu of %llu bytes uncompressed)", path, p->name, p->index,
					 z == Z_OK ? "shorter than its header says" : zError(z),
					 (unsigned long long)got, (unsigned long long)p->len);
		return 0;
	}
	size_t got = ZSTD_decompress(dst, p->len, src, p->src_len);
	if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
		return -ENOMEM;
	if (ZSTD_isError(got) || got != p->len)
		return diag_fail(d, EBADMSG, "%s: section %s (index %zu): corrupt zstd data: %s "
				 "(%llu bytes uncompressed, its header says %llu)", path, p->name, p->index,
				 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "shorter than its header says",
				 ZSTD_isError(got) ? 0ULL : (unsigned long long)got, (unsigned long long)p->len);
	return 0;
}

/* Section i's entry of the plan, when it is compressed: appended to *plan,
 * its copy placed at *end, which moves past it. 0, also for a section left
 * as it is; 1 when the file is truncated there (then nothing is copied:
 * identify() names the section that runs past its end); or -errno with the
 * detail in d. */
static int plan_section(Elf *elf, const GElf_Ehdr *eh, size_t i, size_t shstrndx, const char *path, size_t size,
			struct plan **plan, size_t *n, size_t *cap, uint64_t *end, struct diag *d)
{
	int is64 = eh->e_ident[EI_CLASS] == ELFCLASS64;
	uint64_t chdr_size = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	uint64_t shdr_size = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	Elf_Scn *scn = elf_getscn(elf, i);
	GElf_Shdr sh;
	GElf_Chdr ch;
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return 0;
	/* A truncated file is not copied: identify() names the section
	 * that runs past its end. */
	if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
		return 1;
	if (!(sh.sh_flags & SHF_COMPRESSED))
		return 0;
	const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
	name = name ? name : "?";
	if (sh.sh_size < chdr_size)
		return diag_fail(d, EBADMSG, "%s: section %s (index %zu): compressed, but shorter than its "
				 "compression header (%llu bytes)", path, name, i, (unsigned long long)sh.sh_size);
	if (!gelf_getchdr(scn, &ch))
		return diag_fail(d, EBADMSG, "%s: section %s (index %zu): unreadable compression header: %s",
				 path, name, i, elf_errmsg(-1));
	if (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != ELFCOMPRESS_ZSTD)
		return diag_fail(d, ENOTSUP, "%s: section %s (index %zu): unknown compression type %u "
				 "(zlib is 1, zstd 2)", path, name, i, (unsigned)ch.ch_type);
	uint64_t align = ch.ch_addralign ? ch.ch_addralign : 1;
	if (align & (align - 1) || align > 4096 || ch.ch_size > (UINT64_C(1) << 40) ||
	    eh->e_shoff > size || i * (uint64_t)eh->e_shentsize + shdr_size > size - eh->e_shoff)
		return diag_fail(d, EBADMSG, "%s: section %s (index %zu): implausible compression header "
				 "(size %llu, alignment %llu)", path, name, i,
				 (unsigned long long)ch.ch_size, (unsigned long long)ch.ch_addralign);
	if (vec_grow(plan, cap, *n + 1))
		return -ENOMEM;
	uint64_t at = (*end + align - 1) & ~(align - 1);
	(*plan)[(*n)++] = (struct plan){ i, name, sh.sh_offset + chdr_size, sh.sh_size - chdr_size, at,
				   ch.ch_size, align, ch.ch_type };
	*end = at + ch.ch_size;
	if (!is64 && *end > UINT32_MAX)
		return diag_fail(d, EFBIG, "%s: section %s (index %zu): uncompressed, a 32-bit ELF would "
				 "pass 4 GiB", path, name, i);
	return 0;
}

int inflate_open(Elf *elf, const char *path, size_t size, int *out, struct diag *d)
{
	GElf_Ehdr eh;
	size_t shnum, shstrndx, fsize;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &fsize);
	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx) || !raw)
		return 0; /* identify() says what is wrong with such a file */
	int is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	uint64_t chdr_size = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr), end = size;
	struct plan *plan = NULL;
	size_t n = 0, cap = 0;
	int err = 0, fd = -1;
	uint8_t *map = MAP_FAILED;
	for (size_t i = 1; i < shnum && !err; i++)
		err = plan_section(elf, &eh, i, shstrndx, path, size, &plan, &n, &cap, &end, d);
	if (err == 1)
		n = 0, err = 0; /* truncated: nothing to copy */
	if (err)
		goto out;
	if (!n)
		goto out;
	fd = memfd_create("btfpipe-inflated", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)end)) {
		err = -errno;
		goto out;
	}
	map = mmap(NULL, end, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	/* The file's bytes but the compressed payloads, which no header points
	 * to any more: their pages in the copy stay holes, never allocated. */
	qsort(plan, n, sizeof(*plan), cmp_src);
	uint64_t from = 0;
	for (size_t k = 0; k <= n; k++) {
		uint64_t to = k < n ? plan[k].src - chdr_size : size;
		if (to > from)
			memcpy(map + from, raw + from, to - from);
		if (k < n && plan[k].src + plan[k].src_len > from)
			from = plan[k].src + plan[k].src_len; /* (overlapping sections: the furthest end) */
	}
	for (size_t k = 0; k < n && !err; k++) {
		GElf_Shdr sh;
		gelf_getshdr(elf_getscn(elf, plan[k].index), &sh);
		if (!(err = uncompress_one(raw, map + plan[k].at, &plan[k], path, d)))
			rewrite_shdr(map, &eh, &plan[k], sh.sh_flags & ~(uint64_t)SHF_COMPRESSED);
	}
out:
	if (map != MAP_FAILED)
		munmap(map, end);
	free(plan);
	if (err || !n) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	*out = fd;
	return 1;
}
