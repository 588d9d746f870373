/* graph_head.c: a `.graph` file's head (spec: format/TYPE-GRAPH.md): the
 * checks of its header and section table that every reader makes
 * (graph_head.h). */
#include "graph.h"
#include "graph_head.h"
#include "graph_sections.h"
#include "../common/buf.h"
#include "../common/diag.h"

#include <errno.h>
#include <string.h>

int graph_check_header(const uint8_t *m, size_t size, const char *path, struct diag *d)
{
	if (memcmp(m, GRAPH_MAGIC, 8))
		return diag_fail(d, EBADMSG, "%s: not a .graph file (bad magic at offset 0)", path);
	uint32_t version = le32_get(m + 8);
	if (version != GRAPH_FORMAT_VERSION)
		return diag_fail(d, EPROTO, "%s: .graph format version %u, this btfpipe reads version %u: "
				 "merge again with this btfpipe", path, version, GRAPH_FORMAT_VERSION);
	if (le64_get(m + 24) != size)
		return diag_fail(d, EBADMSG, "%s: file is %zu bytes but its header says %llu (truncated or appended to)",
				 path, size, (unsigned long long)le64_get(m + 24));
	XXH3_state_t hs;
	XXH3_64bits_reset(&hs);
	XXH3_64bits_update(&hs, m, 32);
	XXH3_64bits_update(&hs, m + GRAPH_HEADER_SIZE, GRAPH_NSECTIONS * 32);
	int reserved_zero = 1;
	for (int i = 40; i < GRAPH_HEADER_SIZE; i++)
		reserved_zero &= m[i] == 0;
	if (le32_get(m + 20) != GRAPH_NSECTIONS || le32_get(m + 16) != 0 || !reserved_zero ||
	    XXH3_64bits_digest(&hs) != le64_get(m + 32))
		return diag_fail(d, EBADMSG, "%s: header or section table corrupted (checksum mismatch at offset 32)",
				 path);
	return 0;
}

int graph_place_sections(const uint8_t *m, size_t size, const char *path, struct graph_section *sec,
			 uint64_t *expect, struct diag *place_d)
{
	int placed = 0;
	for (int id = 1; id <= GRAPH_NSECTIONS; id++) {
		const uint8_t *e = m + GRAPH_HEADER_SIZE + (id - 1) * 32;
		uint64_t off = le64_get(e + 8), len = le64_get(e + 16);
		if (le32_get(e) != (uint32_t)id || off != *expect || len > size - off) {
			diag_fail(place_d, EBADMSG, "%s: section %s out of place (offset %llu)", path,
				  graph_section_names[id], (unsigned long long)off);
			break;
		}
		sec[id] = (struct graph_section){ .p = m + off, .off = off, .len = (size_t)len,
						  .check = le64_get(e + 24) };
		*expect = off + len;
		placed = id;
	}
	return placed;
}

int graph_check_section(const struct graph_section *s, int id, const char *path, struct diag *d)
{
	if (XXH3_64bits(s->p, s->len) != s->check)
		return diag_fail(d, EBADMSG, "%s: section %s (offset %llu, %llu bytes): checksum mismatch: "
				 "the file is corrupted", path, graph_section_names[id],
				 (unsigned long long)s->off, (unsigned long long)s->len);
	return 0;
}
