/* fuzz_extract: libFuzzer target for dwarf-extract's library code
 * (stages/dwarf-extract/ without main.c): the input is an ELF.
 *
 * Each input is written to a temporary file and extracted the way
 * dwarf-extract's main() does it with -j 1: input__open() with one worker,
 * cu_walk__init() on that worker's Dwarf handle, cu_walk__extract() of every
 * unit (each on its own struct diag, going on after a failed unit: the walk
 * resets all its state per unit), input__done_with_unit() after each written
 * unit, cu_walk__free(), input__close().
 *
 * Each unit's cache key (cu_key.c, a raw reader of the same untrusted
 * bytes) is computed too, twice: the same unit must give the same key.
 *
 * One oracle beyond "no crash, no leak": every blob the walk produces must be
 * accepted by the .cus reader's cus_cu__decode(), since dedup-merge reads
 * exactly those bytes. A refused blob aborts with the reader's message.
 *
 * libdw and libelf are the distribution's shared libraries, not
 * instrumented: coverage comes from btfpipe's own code only.
 *
 * Built by tests/fuzz/run.sh; `./fuzz_extract FILE` replays one input.
 */
#include "../../common/diag.h"
#include "../../format/cus.h"
#include "../../stages/dwarf-extract/cu_key.h"
#include "../../stages/dwarf-extract/cu_walk.h"
#include "../../stages/dwarf-extract/input.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h" /* tmp_write, lowest_free_fd, devnull */

static void extract(const char *path)
{
	struct diag d = { 0 };
	struct input in;
	struct cu_walk w;
	int walking = 0;
	if (input__open(&in, path, 1, 0, 0, &d))
		goto out;
	if (cu_walk__init(&w, &in, in.dw[0], &d))
		goto out;
	walking = 1;
	struct cus_cu cu = { 0 };
	struct cu_key *key = cu_key__new(in.dws, in.ident.ei_data == 2 /* ELFDATA2MSB */);
	for (size_t i = 0; key && in.key_ok && i < in.nunits; i++) {
		struct key128 k1 = { 0 }, k2 = { 0 };
		enum cu_key_kind a = cu_key__compute(key, &in.units[i], &k1);
		enum cu_key_kind b = cu_key__compute(key, &in.units[i], &k2);
		if (a != b || (a != KEY_NONE && !key128_eq(k1, k2))) {
			fprintf(stderr, "fuzz_extract: unit %zu: two keys of the same unit differ\n", i);
			abort();
		}
	}
	cu_key__free(key);
	for (size_t i = 0; i < in.nunits; i++) {
		struct diag ud = { 0 };
		w.d = &ud;
		if (cu_walk__extract(&w, &in.units[i]))
			continue;
		struct diag rd = { 0 };
		if (cus_cu__decode(&cu, w.blob.data, w.blob.len, "blob", &rd)) {
			fprintf(stderr, "fuzz_extract: unit %zu (0x%llx): dwarf-extract wrote a blob the .cus "
				"reader refuses: %s\n", i, (unsigned long long)in.units[i].offset, rd.msg);
			abort();
		}
		input__done_with_unit(&in, &in.units[i]);
	}
	cus_cu__free(&cu);
out:
	if (walking)
		cu_walk__free(&w);
	input__close(&in); /* input__open leaves `in` closable whatever happened */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tmp_write(NULL, 0); /* the file is opened once, before counting */
	int fd0 = lowest_free_fd();
	extract(tmp_write(data, size));
	int fd1 = lowest_free_fd();
	if (fd1 != fd0) {
		fprintf(stderr, "fuzz_extract: file descriptor leaked (lowest free fd %d, was %d)\n", fd1, fd0);
		abort();
	}
	return 0;
}
