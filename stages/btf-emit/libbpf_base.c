/* libbpf_base.c: what btf-emit still asks of libbpf: a base BTF that
 * base_view.c cannot read in place (the other byte order, an ELF with a
 * compressed .BTF), and btf__dedup() over it where our own matching cannot
 * be used (--libbpf-dedup; types left out, which made pointers alike).
 */
#include "libbpf_base.h"
#include "btf_raw.h"
#include "../../common/diag.h"
#include "../../common/mapfile.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The base BTF as libbpf's object, for what libbpf does over it (split BTF
 * it deduplicates, --libbpf-dedup, the other byte order) and for what
 * base_view.c cannot read. A raw BTF file is mapped and given to btf__new(), which
 * copies it once; btf__parse() would read it into a buffer and copy that
 * (for a vmlinux base, 8 MB of fresh pages per module, a tenth of a small
 * module's encoding). Anything else (an ELF with .BTF, a file that is too
 * short or cannot be mapped) goes to btf__parse(), whose errors stand.
 * Returns NULL with errno set, as libbpf does. */
static struct btf *read_base(const char *path)
{
	const void *m;
	size_t size;
	if (mapfile_open(path, 4, "base BTF", &m, &size, NULL))
		return btf__parse(path, NULL);
	const uint8_t *b = m;
	/* BTF_MAGIC 0xeB9F in either byte order, as btf__parse_raw() accepts. */
	int raw = size <= UINT32_MAX && ((b[0] == 0x9f && b[1] == 0xeb) || (b[0] == 0xeb && b[1] == 0x9f));
	struct btf *btf = raw ? btf__new(m, (uint32_t)size) : NULL;
	int err = errno;
	munmap((void *)m, size);
	if (!raw)
		return btf__parse(path, NULL);
	errno = err;
	return btf;
}

/* Why read_base() failed, in words: libbpf answers "no .BTF in this ELF"
 * with ENOENT (strerror: "No such file or directory", of a file that is
 * there) and "neither raw BTF nor ELF" with its own code 4001, which
 * strerror() does not know. */
static const char *base_error(const char *path, int e, char *buf, size_t size)
{
	struct stat st;
	if (e == ENOENT && stat(path, &st) == 0)
		return "an ELF file without a .BTF section";
	if (e == LIBBPF_ERRNO__FORMAT)
		return "neither raw BTF (magic 0xeB9F) nor an ELF file";
	if (e >= __LIBBPF_ERRNO__START && !libbpf_strerror(e, buf, size))
		return buf;
	return strerror(e);
}

int libbpf_base__read(const char *path, struct btf **base, struct diag *d)
{
	if (!(*base = read_base(path))) {
		int e = errno;
		if (e == ENOMEM) /* libbpf out of memory: no verdict on the file */
			return diag_fail(d, ENOMEM, "%s: reading the base BTF", path);
		char why[128];
		return diag_fail(d, EINVAL, "%s: cannot read base BTF (raw BTF or an ELF with .BTF): %s",
				 path, base_error(path, e, why, sizeof(why)));
	}
	return 0;
}

static const struct btf_type *btf_type_of(const void *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

int libbpf_base__flattens(const struct btf *base)
{
	return btf_raw__flattens(NULL, btf__type_cnt(base), btf_type_of, base);
}

/* libbpf's btf__dedup() until nothing changes (a fwd the base defines is
 * resolved only after the structs are compared: two passes in practice, at
 * most four). It recurses once per type along a chain of references
 * (typedef to pointer to typedef...): 100,000 levels overflowed the main
 * thread's 8 MiB stack, in libbpf, at about 80 bytes a type. So it runs on
 * a thread of its own whose stack has room for a chain through every type.
 * (libbpf_base__dedup() says what it returns.) */
struct dedup_job {
	struct btf *btf;
	int err;
};

static void *dedup_thread(void *arg)
{
	struct dedup_job *j = arg;
	for (int pass = 0; pass < 4; pass++) {
		uint32_t before = btf__type_cnt(j->btf);
		if ((j->err = btf__dedup(j->btf, NULL)) || btf__type_cnt(j->btf) == before)
			break;
	}
	return NULL;
}

int libbpf_base__dedup(struct btf *btf, int *started)
{
	struct dedup_job j = { .btf = btf };
	uint64_t want = (uint64_t)btf__type_cnt(btf) * 256 + (8u << 20);
	size_t stack = want < SIZE_MAX / 2 ? ((size_t)want + 4095) & ~(size_t)4095 : SIZE_MAX / 2;
	pthread_attr_t attr;
	pthread_t t;
	*started = 0;
	if (pthread_attr_init(&attr))
		return 0;
	int e = pthread_attr_setstacksize(&attr, stack);
	if (!e)
		e = pthread_create(&t, &attr, dedup_thread, &j);
	pthread_attr_destroy(&attr);
	if (e)
		return 0;
	*started = 1;
	pthread_join(t, NULL);
	return j.err;
}
