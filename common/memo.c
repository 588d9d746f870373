/* memo.c: a stage's whole output, reused when nothing it reads changed (memo.h). */
#include "memo.h"
#include "cachedir.h"
#include "mapfile.h"
#include "outfile.h"
#include "pool.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct key128 self_key;
static int self_err;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* An object's NT_GNU_BUILD_ID among its loaded notes, or NULL. */
static const uint8_t *build_id_of(const struct dl_phdr_info *info, size_t *len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*n), *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    n->n_descsz) {
				*len = n->n_descsz;
				return desc;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return NULL;
}

struct self_walk {
	XXH3_state_t st;
	int first, program_has_id;
};

/* Every loaded object's build id, folded into one hash: the program and the
 * libraries it runs with (libdw, libelf, libbpf decide bytes too). An
 * object without one is named by its path instead. Not the vDSO. */
static int hash_build_ids(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_walk *w = arg;
	size_t len = 0;
	const uint8_t *id = build_id_of(info, &len);
	(void)size;
	if (w->first)
		w->program_has_id = id != NULL; /* the first object is the program */
	w->first = 0;
	/* The kernel's vDSO changes with the running kernel, not with our output. */
	if (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso"))
		return 0;
	if (id)
		XXH3_128bits_update(&w->st, id, len);
	else if (info->dlpi_name)
		XXH3_128bits_update(&w->st, info->dlpi_name, strlen(info->dlpi_name) + 1);
	return 0;
}

/* The running code's identity: the build ids of the program and its
 * libraries (the linker's hash of each one's contents). The program itself
 * without a build id is hashed from its file. */
static void hash_self(void)
{
	struct self_walk w = { .first = 1 };
	XXH3_128bits_reset(&w.st);
	dl_iterate_phdr(hash_build_ids, &w);
	if (!w.program_has_id) {
		const void *p;
		size_t size;
		if ((self_err = mapfile_open("/proc/self/exe", 1, "program", &p, &size, NULL)))
			return;
		XXH3_128bits_update(&w.st, p, size);
		munmap((void *)p, size);
	}
	XXH128_hash_t h = XXH3_128bits_digest(&w.st);
	self_key = (struct key128){ h.low64, h.high64 };
}

int memo_self_hash(struct key128 *out)
{
	pthread_once(&self_once, hash_self);
	*out = self_key;
	return self_err;
}

void memo_key_begin(struct memo_key *k, const char *what)
{
	struct key128 self;
	XXH3_128bits_reset(&k->st);
	k->err = memo_self_hash(&self);
	k->jobs = 1;
	memo_key_str(k, what);
	memo_key_u64(k, self.lo);
	memo_key_u64(k, self.hi);
}

void memo_key_u64(struct memo_key *k, uint64_t v)
{
	XXH3_128bits_update(&k->st, &v, sizeof(v));
}

void memo_key_str(struct memo_key *k, const char *s)
{
	/* Length first: ("ab", "c") and ("a", "bc") are different keys. */
	memo_key_u64(k, s ? strlen(s) : UINT64_MAX);
	if (s)
		XXH3_128bits_update(&k->st, s, strlen(s));
}

/* A big file's windows, hashed on threads (memo_key_file()). */
struct windows {
	const uint8_t *p;
	size_t size;
	XXH128_hash_t *digest;	/* one per window */
};

enum { WINDOW = 32 << 20 };

static int hash_window(void *ctx, unsigned worker, size_t i)
{
	struct windows *w = ctx;
	size_t off = i * (size_t)WINDOW, n = w->size - off < WINDOW ? w->size - off : WINDOW;
	(void)worker;
	w->digest[i] = XXH3_128bits(w->p + off, n);
	/* Let the window's pages go once hashed: a 600 MB vmlinux would
	 * otherwise all count in the peak RSS. */
	madvise((uint8_t *)w->p + off, n, MADV_DONTNEED);
	return 0;
}

void memo_key_file(struct memo_key *k, const char *path)
{
	const void *p;
	size_t size;
	int err = mapfile_open(path, 1, "file", &p, &size, NULL);
	if (err) {
		if (!k->err)
			k->err = err;
		return;
	}
	memo_key_u64(k, (uint64_t)size);
	size_t nwin = size / WINDOW + (size % WINDOW != 0);
	struct windows w = { .p = p, .size = size };
	if (nwin > 2) {
		/* The size, then each window's digest, in order. */
		if (!(w.digest = calloc(nwin, sizeof(*w.digest)))) {
			if (!k->err)
				k->err = -ENOMEM;
			munmap((void *)p, size);
			return;
		}
		err = pool_ordered(k->jobs > 1 ? k->jobs : 1, nwin, nwin, hash_window, NULL, &w);
		if (err && !k->err)
			k->err = err;
		memo_key_str(k, "windows");
		XXH3_128bits_update(&k->st, w.digest, nwin * sizeof(*w.digest));
		free(w.digest);
	} else {
		/* memo_key_bytes()'s key (the size, then the bytes), a window
		 * at a time, each window's pages let go once hashed. */
		for (size_t off = 0; off < size; off += WINDOW) {
			size_t n = size - off < WINDOW ? size - off : WINDOW;
			XXH3_128bits_update(&k->st, (const uint8_t *)p + off, n);
			madvise((uint8_t *)p + off, n, MADV_DONTNEED);
		}
	}
	munmap((void *)p, size);
}

/* The build id among ELF fd's note segments: 1 and hashed into k, or 0. */
static int key_build_id(struct memo_key *k, int fd)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nph = 0;
	int found = 0;
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph && !found; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;
			while (data && !found && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz &&
				    !memcmp((const char *)data->d_buf + name_off, "GNU", 4)) {
					memo_key_bytes(k, (const char *)data->d_buf + desc_off, nh.n_descsz);
					found = 1;
				}
			}
		}
	}
	elf_end(elf);
	return found;
}

void memo_key_program(struct memo_key *k, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (!k->err)
			k->err = -errno;
		return;
	}
	int found = key_build_id(k, fd);
	close(fd);
	memo_key_str(k, found ? "build id" : "bytes");
	if (!found)
		memo_key_file(k, path);
}

void memo_key_bytes(struct memo_key *k, const void *p, size_t n)
{
	memo_key_u64(k, (uint64_t)n);
	XXH3_128bits_update(&k->st, p, n);
}

int memo_key_end(struct memo_key *k, struct key128 *out)
{
	XXH128_hash_t h = XXH3_128bits_digest(&k->st);
	*out = (struct key128){ h.low64, h.high64 };
	return k->err;
}

int memo_fetch(struct cachedir *c, struct key128 key, uint8_t **data, size_t *size)
{
	if (cachedir__get(c, key, data, size)) {
		cachedir__count(c, CD_HITS, 1);
		return 1;
	}
	cachedir__count(c, CD_MISSES, 1);
	return 0;
}

int memo_fetch_to_file(struct cachedir *c, struct key128 key, const char *out_path, struct diag *d)
{
	uint8_t *data;
	size_t size;
	if (!memo_fetch(c, key, &data, &size))
		return 0;
	int err = outfile__write_all(out_path, data, size, d);
	free(data);
	return err ? err : 1;
}

void memo_store_file(struct cachedir *c, struct key128 key, const char *path)
{
	const void *p;
	size_t size;
	if (mapfile_open(path, 1, "file", &p, &size, NULL))
		return;
	cachedir__put(c, key, p, size, NULL, 0);
	munmap((void *)p, size);
}
