/* fuzz_btf_base: libFuzzer target for reading a base BTF the way btf-emit
 * reads `--btf-base` (stages/btf-emit/main.c read_base()): libbpf's
 * btf__parse() on the file (raw BTF, or an ELF with a .BTF section; btf-emit
 * gives raw BTF to btf__new() from a mapping instead, the parse btf__parse()
 * makes of it after reading it), btf__new_empty_split() over
 * it, types added to the split BTF (an INT, and a STRUCT with a member of base
 * type 1 when the base has one), btf__dedup() against the base, the raw
 * bytes taken, both freed.
 *
 * Then what btf-emit does over a base itself: a standalone copy of the base
 * is matched against the base
 * (stages/btf-emit/base_dedup.c, its strings by str_match.c) and written as
 * split BTF (split_write.c), which libbpf parses again; once without and
 * once with the base's index (base_index.c), as with a cache.
 *
 * This fuzzes libbpf's parser and dedup as btfpipe uses them, and our base
 * matcher and split writer: a crash inside libbpf is libbpf's (upstream),
 * unless the stack says otherwise. libbpf is the
 * distribution's shared library, not instrumented: libFuzzer gets no coverage
 * from inside it and ASan sees only what its interceptors see (bad frees,
 * wild reads that fault, leaks), so this is closer to blind mutation of the
 * seeds than to guided fuzzing.
 *
 * Built by tests/fuzz/run.sh; `./fuzz_btf_base FILE` replays one input.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_tmp.h" /* tmp_write, lowest_free_fd, devnull */
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../stages/btf-emit/base_dedup.h"
#include "../../stages/btf-emit/base_index.h"
#include "../../stages/btf-emit/base_view.h"

/* libbpf's warnings would flood the fuzzer's output (btf-emit silences them too). */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* Our split BTF, which split__check() passed, must be what libbpf parses
 * over the base too: else split__check() lets through what libbpf (and the
 * kernel) would refuse. libbpf 1.1 does not export btf__new_split(), so the
 * bytes go through a memory file. */
static void check_split(const void *data, size_t len, struct btf *base)
{
	int fd = memfd_create("fuzz-split", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		perror("fuzz: memfd");
		abort();
	}
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	struct btf *split = btf__parse_raw_split(p, base);
	if (!split) {
		fprintf(stderr, "fuzz: libbpf refuses the split BTF split__check() passed\n");
		abort();
	}
	btf__free(split);
	close(fd);
}

/* btf-emit's own path over a base: the base read in place (base_view.c,
 * from the file at path), ours the base's own bytes as libbpf lays them
 * out (btf__raw_data()), read in place as btf-emit reads what it wrote (every type is the base's, by the same id, but VARs and
 * DATASECs, which are never matched and so are written); match ours against
 * the base, write split BTF; once without the base's index and once with.
 * Nothing is added to ours: libbpf's editing of a BTF parsed from hostile
 * bytes can ask for gigabytes (its header's sizes), a path btf-emit never
 * takes with the base. */
static void ours_over(const char *path, struct btf *base)
{
	struct base_view v;
	if (base_view__open(&v, path))
		return;
	uint32_t size;
	const void *raw = btf__raw_data(base, &size);
	struct base_index bi;
	int have_bi = !base_index__make(&bi, &v);
	for (int with = 0; raw && with <= have_bi; with++) {
		struct base_view ours;
		if (base_view__open_raw(&ours, raw, size))
			break;
		uint32_t removed;
		struct diag d = { 0 };
		struct buf split = { 0 };
		if (!base_dedup__split(&ours, &v, with ? &bi : NULL, &removed, &split, &d))
			check_split(split.data, split.len, base);
		buf_free(&split);
		base_view__close(&ours);
	}
	if (have_bi)
		base_index__free(&bi);
	base_view__close(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	libbpf_set_print(quiet);
	tmp_write(NULL, 0); /* the file is opened once, before counting */
	int fd0 = lowest_free_fd();
	const char *path = tmp_write(data, size);
	struct btf *base = btf__parse(path, NULL);
	/* Ours first, over the base as btf-emit has it: read, never edited.
	 * (libbpf's split adds below make the base editable, after which
	 * btf__raw_data() rebuilds the bytes from its header, and on some
	 * inputs asks for gigabytes: a libbpf path btf-emit never takes
	 * before reading the base's strings.) */
	if (base)
		ours_over(path, base);
	if (base) {
		struct btf *btf = btf__new_empty_split(base);
		if (btf) {
			int int_id = btf__add_int(btf, "fuzz_int", 4, BTF_INT_SIGNED);
			if (btf__type_cnt(base) > 1 && btf__add_struct(btf, "fuzz_struct", 16) > 0) {
				btf__add_field(btf, "base1", 1, 0, 0);
				if (int_id > 0)
					btf__add_field(btf, "i", int_id, 64, 0);
			}
			if (!btf__dedup(btf, NULL)) {
				uint32_t raw_size;
				btf__raw_data(btf, &raw_size);
			}
			btf__free(btf);
		}
		btf__free(base);
	}
	int fd1 = lowest_free_fd();
	if (fd1 != fd0) {
		fprintf(stderr, "fuzz_btf_base: file descriptor leaked (lowest free fd %d, was %d)\n", fd1, fd0);
		abort();
	}
	return 0;
}
