/* graph_head.c: a `.graph` file's head (spec: format/TYPE-GRAPH.md): the
 * checks of its header and section table that every reader makes
 * (graph_head.h: graph_read.c makes them too), and graph__peek(), which
 * reads what the graph records of its inputs and CUs without decoding the
 * rest (graph.h). */
#include "graph.h"
#include "graph_head.h"
#include "graph_sections.h"
#include "../common/buf.h"
#include "../common/diag.h"
#include "../common/mapfile.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

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

/* A record of section id that does not decode: in graph_read.c's words. */
static int peek_fail(const char *path, int id, const struct cursor *c, const char *why, struct diag *d)
{
	return diag_fail(d, EBADMSG, "%s: section %s at offset %zu: %s", path, graph_section_names[id],
			 cursor_off(c), why);
}

/* Input 0's record (TYPE-GRAPH.md, section `inputs`), after the count. */
static int peek_input0(struct graph_peek *p, struct cursor *c, const struct graph_section *strings,
		       struct diag *d)
{
	struct graph_input_id *in = &p->input0;
	uint64_t name = cur_uleb(c);
	cur_bytes(c, 16); /* the DWARF hash */
	in->e_machine = (uint16_t)cur_uleb(c);
	in->ei_class = cur_u8(c);
	in->ei_data = cur_u8(c);
	cur_uleb(c); /* the .cus header flags */
	in->build_id_len = cur_uleb(c);
	in->build_id = in->build_id_len <= 64 ? cur_bytes(c, in->build_id_len) : NULL;
	if (c->err || !in->build_id)
		return peek_fail(p->path, S_INPUTS, c, c->err ? "truncated" : "build id malformed", d);
	/* A name is a file's basename (CU-RECORDS.md: 255 bytes at most): held
	 * to that, the strings section need not be hashed for it. */
	size_t name_max = name < strings->len ? strings->len - name : 0;
	if (!name_max || !memchr(strings->p + name, 0, name_max < 256 ? name_max : 256))
		return peek_fail(p->path, S_INPUTS, c, "input 0's name out of range", d);
	in->name = (const char *)strings->p + name;
	return 0;
}

int graph__peek(struct graph_peek *p, const char *path, struct diag *d)
{
	const void *map;
	size_t size;
	memset(p, 0, sizeof(*p));
	int err = mapfile_open(path, GRAPH_HEAD_SIZE, ".graph header", &map, &size, d);
	if (err)
		return err;
	const uint8_t *m = map;
	struct graph_section sec[GRAPH_NSECTIONS + 1];
	uint64_t expect = GRAPH_HEAD_SIZE;
	if ((err = graph_check_header(m, size, path, d)))
		goto fail;
	/* Only the sections up to the CUs need to be in place: graph_read.c
	 * reads those before it looks at where the others are. */
	struct diag place_d = { 0 };
	if (graph_place_sections(m, size, path, sec, &expect, &place_d) < S_CUS) {
		err = diag_fail(d, EBADMSG, "%s", place_d.msg);
		goto fail;
	}
	if ((err = graph_check_section(&sec[S_INPUTS], S_INPUTS, path, d)))
		goto fail;
	p->path = path;
	struct cursor c;
	cursor_init(&c, sec[S_INPUTS].p, sec[S_INPUTS].len);
	p->ninputs = cur_uleb(&c);
	if (c.err) {
		err = peek_fail(path, S_INPUTS, &c, "truncated", d);
		goto fail;
	}
	if (p->ninputs && (err = peek_input0(p, &c, &sec[S_STRINGS], d)))
		goto fail;
	p->map = m;
	p->map_size = size;
	p->cus = sec[S_CUS].p;
	p->cus_len = sec[S_CUS].len;
	p->cus_off = sec[S_CUS].off;
	p->cus_check = sec[S_CUS].check;
	return 0;
fail:
	munmap((void *)m, size);
	memset(p, 0, sizeof(*p));
	return err;
}

void graph__peek_end(struct graph_peek *p)
{
	if (p->map)
		munmap((void *)p->map, p->map_size);
	memset(p, 0, sizeof(*p));
}

int graph__peek_cus(const struct graph_peek *p, struct graph_peek_cus *it, struct diag *d)
{
	const struct graph_section cus = { .p = p->cus, .off = p->cus_off, .len = p->cus_len,
					   .check = p->cus_check };
	int err = graph_check_section(&cus, S_CUS, p->path, d);
	if (err)
		return err;
	cursor_init(&it->c, p->cus, p->cus_len);
	it->left = cur_uleb(&it->c);
	return it->c.err ? peek_fail(p->path, S_CUS, &it->c, "truncated", d) : 0;
}

int graph__peek_cu(struct graph_peek_cus *it, uint64_t *input, uint64_t *cu_offset)
{
	if (it->c.err)
		return it->c.err;
	if (!it->left)
		return 0;
	it->left--;
	*input = cur_uleb(&it->c);
	*cu_offset = cur_uleb(&it->c);
	cur_uleb(&it->c); /* name, producer, language */
	cur_uleb(&it->c);
	cur_uleb(&it->c);
	return it->c.err ? it->c.err : 1;
}
