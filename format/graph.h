/* graph.h: the `.graph` deduplicated type graph (spec: format/TYPE-GRAPH.md).
 *
 * struct graph is the whole file in memory: dedup-merge fills one and calls
 * graph__write(); btf-emit gets one from graph__read_flags(), which checks
 * every checksum, bound and node id before returning. Node 0 is void; nodes[0] is
 * an unused placeholder so a node id indexes `nodes` directly.
 */
#ifndef BTFPIPE_GRAPH_H
#define BTFPIPE_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/hash.h"

struct diag;

#define GRAPH_MAGIC "BTFPGRF"
#define GRAPH_FORMAT_VERSION 3
#define GRAPH_HEADER_SIZE 64
#define GRAPH_NSECTIONS 7

enum graph_kind {
	G_BASE = 1, G_PTR, G_CONST, G_VOLATILE, G_RESTRICT, G_ATOMIC, G_TYPEDEF,
	G_STRUCT, G_UNION, G_ENUM, G_ARRAY, G_FUNC_PROTO, G_FWD, G_UNSPEC,
	G_UNSUPPORTED, G_KIND_MAX = G_UNSUPPORTED,
};

enum graph_fwd_kind { G_FWD_STRUCT, G_FWD_UNION, G_FWD_ENUM };

/* Flags: the bits of CU-RECORDS.md, by the names the graph uses (the merge's
 * build.c asserts that they are CUS_F_*'s)... */
#define G_F_DECL (1u << 0)
#define G_F_EXTERNAL (1u << 1)
#define G_F_ARTIFICIAL (1u << 2)
#define G_F_ANNOT (1u << 3)
#define G_F_VARARGS (1u << 5)
#define G_F_HAS_PC (1u << 6)
#define G_F_SIGNED (1u << 8)
#define G_F_TOPLEVEL (1u << 9)
/* ...and two for function candidates only. */
#define G_F_UNNAMED_PARAM (1u << 16)
#define G_F_REORDERED (1u << 17) /* a parameter's origin is another position's */

struct graph_annot {
	uint32_t name, value;
};

/* A member, enumerator, array dimension or func_proto parameter. */
struct graph_item {
	uint32_t flags, name, type, bit_size;
	uint64_t value; /* member bit offset, enumerator value, dimension count+1 */
	uint32_t annot_first, annot_count;
};

struct graph_node {
	uint8_t kind;
	uint32_t flags, name, type;
	uint64_t size;
	uint32_t encoding, bit_size, bit_offset; /* base */
	uint32_t fwd_kind;	/* fwd */
	uint32_t tag;		/* unsupported */
	uint32_t item_first, item_count;
	uint32_t annot_first, annot_count;
};

struct graph_input {
	uint32_t name;
	struct key128 dwarf_hash;
	uint16_t e_machine;
	uint8_t ei_class, ei_data;
	uint32_t flags;
	uint8_t build_id[64];
	uint32_t build_id_len;
	uint32_t ncus;
};

struct graph_cu {
	uint32_t input, name, producer, language;
	uint64_t cu_offset;
};

/* A function candidate's parameter: where it lives, and its decl tags. */
struct graph_loc {
	uint32_t loc, loc_reg;
	uint32_t annot_first, annot_count;
};

struct graph_func {
	uint32_t name, linkage, proto, cu, flags, inline_kind, cc, shndx;
	uint64_t pc;
	uint32_t loc_first, loc_count; /* into locs: one per parameter */
	uint32_t annot_first, annot_count;
};

struct graph_var {
	uint32_t name, type, cu, flags, shndx;
	uint64_t addr;
	uint32_t annot_first, annot_count;
};

/* Every array is owned by the graph and freed by graph__free(). The string
 * table `str` is owned too (the merge hands over its strtab's bytes), or,
 * in a graph read from a file, points into the file's read-only mapping,
 * `map`, which the graph then owns: copying it was the read's largest
 * single step. */
struct graph {
	char *str;
	size_t str_size;
	void *map;			/* the .graph file, mapped (map_size bytes), or NULL */
	size_t map_size;
	struct graph_input *inputs;
	size_t ninputs;
	struct graph_cu *cus;
	size_t ncus;
	struct graph_node *nodes;	/* [0] unused: ids are 1..nnodes */
	size_t nnodes;
	struct graph_item *items;
	size_t nitems;
	struct graph_annot *annots;
	size_t nannots;
	uint32_t *prov_off;		/* node i's CUs: prov[prov_off[i] .. prov_off[i+1]);
					 * only the first of them after GRAPH_READ_FIRST_PROV */
	uint32_t *prov;
	size_t nprov;
	struct graph_func *funcs;
	size_t nfuncs;
	struct graph_loc *locs;
	size_t nlocs;
	struct graph_var *vars;
	size_t nvars;
	int prov_cut;			/* read with GRAPH_READ_FIRST_PROV */
};

void graph__free(struct graph *g);

/* Returns: 0, or a negative errno with the detail in d. The sections are
 * encoded on `threads` threads (1: the calling one only); the bytes are the
 * same for any count. */
int graph__write(const struct graph *g, const char *path, unsigned threads, struct diag *d);
int graph__read(struct graph *g, const char *path, struct diag *d);
/* GRAPH_READ_FIRST_PROV: of each node's provenance keep only its first CU
 * (prov_off[] then counts at most one entry for it, none when it has none),
 * all btf-emit needs, for its messages; on the vmlinux that is 0.3 MB where
 * the whole list is 13 MB. The section is still checked in full. Such a
 * graph is not the file any more: graph__write() and graph__dump() refuse
 * it (-EINVAL). */
enum { GRAPH_READ_FIRST_PROV = 1 };
/* The sections after the CUs are decoded and checked on up to `threads`
 * threads (1: the calling one only); the graph, and the error reported for
 * a bad file, are the same for any count. */
int graph__read_flags(struct graph *g, const char *path, unsigned flags, unsigned threads,
		      struct diag *d);

/* Canonical text dump; `full_provenance` lists every CU of every node. */
int graph__dump(const struct graph *g, FILE *out, int full_provenance, struct diag *d);

static inline const char *graph_str(const struct graph *g, uint32_t ref) { return g->str + ref; }
const char *graph_kind_name(unsigned kind);

#endif
