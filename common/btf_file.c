/* btf_file.c: where a file's BTF lies, and the digest the cache keys a
 * base on. Shared by btf-emit (its base) and btfpipe-pahole (its whole-run
 * memo), so that both key a base the same way.
 */
#include "btf_file.h"
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>
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

int btf_file__digest(const char *path, struct key128 *out)
{
	const void *m;
	const uint8_t *p;
	size_t size, n;
	int err = mapfile_open(path, 1, "base BTF", &m, &size, NULL);
	if (err)
		return err;
	/* The BTF a view would read, else the whole file: what emit leaves to
	 * libbpf (and libbpf refuses, or finds more in). */
	if (btf_file__of_file(path, m, size, &p, &n)) {
		p = m;
		n = size;
	}
	uint64_t len = n;
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	XXH3_128bits_update(&st, "BTF", 3);
	XXH3_128bits_update(&st, &len, sizeof(len));
	XXH3_128bits_update(&st, p, n);
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	*out = (struct key128){ h.low64, h.high64 };
	munmap((void *)m, size);
	return 0;
}
