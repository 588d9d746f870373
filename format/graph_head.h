/* graph_head.h: the `.graph` file's header and section table, checked as
 * every reader of the format checks them (graph_head.c; spec:
 * format/TYPE-GRAPH.md). Shared by the whole-file reader (graph_read.c)
 * and the head-only one (graph__peek(), graph.h); not for the stages. */
#ifndef BTFPIPE_GRAPH_HEAD_H
#define BTFPIPE_GRAPH_HEAD_H

#include "graph.h"

#include <stddef.h>
#include <stdint.h>

struct diag;

/* The header and the section table: the least a file can hold. */
#define GRAPH_HEAD_SIZE (GRAPH_HEADER_SIZE + GRAPH_NSECTIONS * 32)

/* A section, as the section table places it in the mapped file. */
struct graph_section {
	const uint8_t *p;	/* its bytes, in the mapping */
	uint64_t off;		/* in the file */
	size_t len;
	uint64_t check;		/* the table's xxh3-64 of its bytes */
};

/* The header of the mapped file m (size >= GRAPH_HEAD_SIZE bytes): magic,
 * version, size, flags, section count, reserved bytes, and the checksum
 * over the header and the section table.
 * Returns: 0; -EPROTO for another format version; -EBADMSG for anything
 * else; the detail, naming path, in d (which may be NULL). */
int graph_check_header(const uint8_t *m, size_t size, const char *path, struct diag *d);

/* Where each section is, from the section table of m into sec[1 ..]
 * (GRAPH_NSECTIONS + 1 entries, by section id): sections 1 .. (the result)
 * lie where the table says, each right after the one before, starting at
 * *expect (GRAPH_HEAD_SIZE); the first one that does not is described in
 * place_d (which may be NULL) and its entry left as it was. *expect: where
 * the last placed one ends.
 * Returns: the id of the last section placed, 0 .. GRAPH_NSECTIONS. */
int graph_place_sections(const uint8_t *m, size_t size, const char *path, struct graph_section *sec,
			 uint64_t *expect, struct diag *place_d);

/* Section id's bytes against the table's checksum.
 * Returns: 0, or -EBADMSG with the detail, naming path, in d (may be NULL). */
int graph_check_section(const struct graph_section *s, int id, const char *path, struct diag *d);

#endif
