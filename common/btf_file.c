/* btf_file.c: where a file's BTF lies, and the digest the cache keys a
 * base on. Shared by btf-emit (its base) and btfpipe-pahole (its whole-run
 * memo), so that both key a base the same way.
 */
#include "btf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int btf_file__elf_section(const char *path, uint64_t *off, uint64_t *size)
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

int btf_file__of_file(const char *path, const uint8_t *m, size_t size, const uint8_t **p, size_t *n)
{
	if (size < SELFMAG || memcmp(m, ELFMAG, SELFMAG)) {
		*p = m;
		*n = size;
		return 0;
	}
	uint64_t off, len;
	int err = btf_file__elf_section(path, &off, &len);
	if (err)
		return err;
	if (off > size || len > size - off)
		return -EINVAL; /* the file changed between the two looks */
	*p = m + off;
	*n = (size_t)len;
	return 0;
}

/* The xxh3-128 digest of n bytes at p, as the cache keys a base. */
static struct key128 digest_of(const void *p, size_t n)
{
	uint64_t len = n;
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	XXH3_128bits_update(&st, "BTF", 3);
	XXH3_128bits_update(&st, &len, sizeof(len));
	XXH3_128bits_update(&st, p, n);
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	return (struct key128){ h.low64, h.high64 };
}

/* Bytes [off, off + n) of path mapped, populated up front: a module's
 * whole run is keyed on its base's digest, and one populating mmap() is
 * cheaper than a page fault per 64 KiB of a vmlinux's 5 MB of BTF. */
static int digest_range(const char *path, uint64_t off, uint64_t n, struct key128 *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = off & ~(page - 1);
	size_t len = (size_t)(off - start + n);
	void *m = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, (off_t)start) : NULL;
	int err = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return err;
	*out = digest_of(m ? (const uint8_t *)m + (off - start) : (const uint8_t *)"", (size_t)n);
	if (m)
		munmap(m, len);
	return 0;
}

int btf_file__digest(const char *path, struct key128 *out)
{
	struct stat st;
	unsigned char magic[SELFMAG];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int is_elf = pread(fd, magic, SELFMAG, 0) == SELFMAG && !memcmp(magic, ELFMAG, SELFMAG);
	int err = fstat(fd, &st) ? -errno : 0;
	close(fd);
	if (err)
		return err;
	/* An ELF's one .BTF, else the whole file: the BTF a view would read,
	 * else what emit leaves to libbpf (and libbpf refuses, or finds more in). */
	uint64_t off = 0, n = (uint64_t)st.st_size;
	if (is_elf && btf_file__elf_section(path, &off, &n)) {
		off = 0;
		n = (uint64_t)st.st_size;
	}
	return digest_range(path, off, n, out);
}
