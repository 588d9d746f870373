/* fuzz_graph: libFuzzer target for the .graph reader (format/graph_read.c,
 * format/graph_dump.c).
 *
 * Each input is written to a temporary file and read the way btf-emit and
 * `dedup-merge --dump` read one: graph__read_flags() on one thread and on
 * three, which must agree (error, message, dump), then graph__dump() with
 * and without full provenance, then graph__free().
 *
 * Every input is read twice:
 *  1. as given, which exercises the header, section table and checksum checks;
 *  2. with its framing repaired (magic, version, file size, section ids and
 *     offsets chained from the sizes, every section's checksum and the header
 *     checksum recomputed), so that mutations reach the section decoders and
 *     the id checks instead of stopping at a checksum mismatch. The repair
 *     never reads outside the input.
 *
 * Built by tests/fuzz/run.sh; `./fuzz_graph FILE` replays one input.
 */
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/hash.h"
#include "../../format/graph.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h" /* tmp_write, lowest_free_fd, devnull */

/* ---- the reader, as its users call it ---- */

static void read_graph(const char *path)
{
	/* On one thread and on three (the sections side by side): the same
	 * answer, the same message and, when it reads, the same graph. */
	struct diag d = { 0 }, d3 = { 0 };
	struct graph g, g3;
	int e1 = graph__read_flags(&g, path, 0, 1, &d);
	int e3 = graph__read_flags(&g3, path, 0, 3, &d3);
	if (e1 != e3 || d.set != d3.set || strcmp(d.msg, d3.msg)) {
		fprintf(stderr, "fuzz_graph: 1 thread: %d %s\n3 threads: %d %s\n", e1, d.msg, e3, d3.msg);
		abort();
	}
	if (e1)
		return; /* graph__read_flags frees what it built on failure */
	char *t1 = NULL, *t3 = NULL;
	size_t n1 = 0, n3 = 0;
	FILE *f1 = open_memstream(&t1, &n1), *f3 = open_memstream(&t3, &n3);
	if (f1 && f3) {
		int r1 = graph__dump(&g, f1, 1, &d), r3 = graph__dump(&g3, f3, 1, &d3);
		fclose(f1);
		fclose(f3);
		f1 = f3 = NULL;
		if (r1 != r3 || n1 != n3 || memcmp(t1, t3, n1)) {
			fprintf(stderr, "fuzz_graph: the graph read on 3 threads dumps otherwise\n");
			abort();
		}
	}
	if (f1)
		fclose(f1);
	if (f3)
		fclose(f3);
	free(t1);
	free(t3);
	d.set = 0;
	graph__dump(&g, devnull(), 0, &d);
	graph__free(&g);
	graph__free(&g3);
}

/* ---- pass 2: repair the framing (see format/TYPE-GRAPH.md) ---- */

#define HEAD_SIZE (GRAPH_HEADER_SIZE + GRAPH_NSECTIONS * 32)

static void repair(uint8_t *m, size_t size)
{
	if (size < HEAD_SIZE)
		return;
	memcpy(m, GRAPH_MAGIC, 8);
	le32_put(m + 8, GRAPH_FORMAT_VERSION);
	le32_put(m + 16, 0);
	le32_put(m + 20, GRAPH_NSECTIONS);
	le64_put(m + 24, size);
	memset(m + 40, 0, GRAPH_HEADER_SIZE - 40);
	uint64_t expect = HEAD_SIZE;
	for (uint32_t id = 1; id <= GRAPH_NSECTIONS; id++) {
		uint8_t *e = m + GRAPH_HEADER_SIZE + (id - 1) * 32;
		uint64_t len = le64_get(e + 16);
		le32_put(e, id);
		le64_put(e + 8, expect);
		if (len > size - expect)
			break;
		le64_put(e + 24, XXH3_64bits(m + expect, (size_t)len));
		expect += len;
	}
	XXH3_state_t hs;
	XXH3_64bits_reset(&hs);
	XXH3_64bits_update(&hs, m, 32);
	XXH3_64bits_update(&hs, m + GRAPH_HEADER_SIZE, GRAPH_NSECTIONS * 32);
	le64_put(m + 32, XXH3_64bits_digest(&hs));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_as_given_and_repaired("fuzz_graph", data, size, read_graph, repair);
	return 0;
}
