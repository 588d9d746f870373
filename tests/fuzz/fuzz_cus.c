/* fuzz_cus: libFuzzer target for the .cus reader (format/cus_file.c,
 * format/cus_codec.c, format/cus_dump.c).
 *
 * Each input is written to a temporary file and read the way dedup-merge and
 * `dwarf-extract --dump` read one: cus_file__open(), cus_file__decode() of
 * every CU, cus_file__dump() to /dev/null, then everything is closed.
 *
 * Every input is read twice:
 *  1. as given, which exercises the header, bounds and checksum checks;
 *  2. with its framing repaired (magic, version, file size, index offset,
 *     blob offsets, blob keys and the header checksum recomputed), so that
 *     mutations reach the blob decoder and the dump instead of stopping at a
 *     checksum mismatch. The repair never reads outside the input.
 *
 * Built by tests/fuzz/run.sh; `./fuzz_cus FILE` replays one input.
 */
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../format/cus.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h" /* tmp_write, lowest_free_fd, devnull */

/* ---- the reader, as its users call it ---- */

static void read_cus(const char *path)
{
	struct diag d = { 0 };
	struct cus_file f;
	if (cus_file__open(&f, path, &d))
		return;
	struct cus_cu cu = { 0 };
	for (size_t i = 0; i < f.count; i++) {
		d.set = 0;
		cus_file__decode(&f, i, &cu, &d);
	}
	cus_cu__free(&cu);
	d.set = 0;
	cus_file__dump(&f, devnull(), &d);
	cus_file__close(&f);
}

/* ---- pass 2: repair the framing (see format/CU-RECORDS.md) ---- */

static void repair(uint8_t *m, size_t size)
{
	if (size < CUS_HEADER_SIZE)
		return;
	memcpy(m, CUS_MAGIC, 8);
	le32_put(m + 8, CUS_FORMAT_VERSION);
	le64_put(m + 24, size);
	uint32_t count = le32_get(m + 20);
	uint64_t ident_off = le64_get(m + 32), ident_size = le32_get(m + 40);
	uint64_t isize = (uint64_t)count * CUS_INDEX_ENTRY_SIZE;
	if (isize > size - CUS_HEADER_SIZE)
		return;
	uint64_t index_off = size - isize;
	le64_put(m + 48, index_off);
	if (ident_off > index_off || ident_size > index_off - ident_off)
		return;
	uint64_t expect = ident_off + ident_size;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *p = m + index_off + (size_t)i * CUS_INDEX_ENTRY_SIZE;
		uint32_t blob_size = le32_get(p + 8);
		if (blob_size > index_off - expect)
			break;
		le64_put(p, expect);
		struct key128 k = key128_of(m + expect, blob_size);
		le64_put(p + 24, k.lo);
		le64_put(p + 32, k.hi);
		expect += blob_size;
	}
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, m, 56);
	XXH3_64bits_update(&st, m + ident_off, (size_t)ident_size);
	XXH3_64bits_update(&st, m + index_off, (size_t)isize);
	le64_put(m + 56, XXH3_64bits_digest(&st));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_as_given_and_repaired("fuzz_cus", data, size, read_cus, repair);
	return 0;
}
