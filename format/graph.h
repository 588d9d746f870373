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

#include "../common/buf.h"
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

/* Each node kind, described once: the nodes section's writer
 * (graph_write.c) and reader (graph_read.c) and the JSON-lines dump
 * (graph_json.c) are made from these tables. After a node's kind, flags
 * and name (TYPE-GRAPH.md, "nodes") come its fixed fields, F(field, enc)
 * of struct graph_node, each a ULEB128: u32, u64, ref (a node id, checked
 * against the node count after the read), or a u32 that names something:
 * ate (DW_ATE_*), tag (DW_TAG_*), fwd (enum graph_fwd_kind). Then, for a
 * kind with an items table, the item count and each item's fields: mflags
 * (a member's flags; with G_F_ANNOT its annotations follow its fields),
 * str (a string offset), eval (an enumerator's value: an SLEB128 when the
 * enum is G_F_SIGNED). Then a node with G_F_ANNOT's annotations. */
#define G_FIELDS_BASE(F) F(encoding, ate) F(size, u64) F(bit_size, u32) F(bit_offset, u32)
#define G_FIELDS_TYPE(F) F(type, ref)
#define G_FIELDS_SIZED(F) F(size, u64)
#define G_FIELDS_FWD(F) F(fwd_kind, fwd)
#define G_FIELDS_NONE(F)
#define G_FIELDS_UNSUPPORTED(F) F(tag, tag) F(type, ref)
#define G_ITEMS_NONE(F)
#define G_ITEMS_MEMBER(F) F(flags, mflags) F(name, str) F(type, ref) F(value, u64) F(bit_size, u32)
#define G_ITEMS_ENUMERATOR(F) F(name, str) F(value, eval)
#define G_ITEMS_DIM(F) F(value, u64)
#define G_ITEMS_PARAM(F) F(name, str) F(type, ref)
/* The funcs and vars sections' records: their fixed fields, as above (cu:
 * an index into the CUs section, checked after the read). A func's are
 * followed by its parameters' count and, per parameter, GRAPH_LOC_FIELDS
 * and its annotations (always counted); then, with G_F_ANNOT, its own. A
 * var's by its annotations, with G_F_ANNOT. loc: enum cus_loc. */
#define GRAPH_FUNC_FIELDS(F) \
	F(name, str) F(linkage, str) F(proto, ref) F(cu, u32) F(flags, u32) F(inline_kind, u32) F(cc, u32) \
	F(pc, u64) F(shndx, u32)
#define GRAPH_LOC_FIELDS(F) F(loc, loc) F(loc_reg, u32)
#define GRAPH_VAR_FIELDS(F) F(name, str) F(type, ref) F(cu, u32) F(flags, u32) F(addr, u64) F(shndx, u32)
/* K(kind, its fields, its items), for every kind. */
#define GRAPH_NODE_KINDS(K) \
	K(G_BASE, G_FIELDS_BASE, G_ITEMS_NONE) K(G_PTR, G_FIELDS_TYPE, G_ITEMS_NONE) \
	K(G_CONST, G_FIELDS_TYPE, G_ITEMS_NONE) K(G_VOLATILE, G_FIELDS_TYPE, G_ITEMS_NONE) \
	K(G_RESTRICT, G_FIELDS_TYPE, G_ITEMS_NONE) K(G_ATOMIC, G_FIELDS_TYPE, G_ITEMS_NONE) \
	K(G_TYPEDEF, G_FIELDS_TYPE, G_ITEMS_NONE) K(G_STRUCT, G_FIELDS_SIZED, G_ITEMS_MEMBER) \
	K(G_UNION, G_FIELDS_SIZED, G_ITEMS_MEMBER) K(G_ENUM, G_FIELDS_SIZED, G_ITEMS_ENUMERATOR) \
	K(G_ARRAY, G_FIELDS_TYPE, G_ITEMS_DIM) K(G_FUNC_PROTO, G_FIELDS_TYPE, G_ITEMS_PARAM) \
	K(G_FWD, G_FIELDS_FWD, G_ITEMS_NONE) K(G_UNSPEC, G_FIELDS_NONE, G_ITEMS_NONE) \
	K(G_UNSUPPORTED, G_FIELDS_UNSUPPORTED, G_ITEMS_NONE)

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
/* The same bytes into an open file the caller owns (a memfd), at offset 0,
 * not atomically: `what` names it in messages. */
int graph__write_fd(const struct graph *g, int fd, const char *what, unsigned threads, struct diag *d);
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

/* A peek at a graph: what it records of its inputs, without reading the
 * rest (graph_head.c). graph__read_flags() decodes and checks the whole
 * file, most of a cached btf-emit run's time on a vmlinux, where btf-emit's
 * --elf check needs only the identity of the file the graph was made from
 * and, when no pair of build ids decides, where its CUs started.
 *
 * graph__peek() checks the header and the section table with the checks
 * graph__read_flags() makes (graph_head.h), wants the strings, inputs and
 * CUs sections where the table puts them and the inputs section to match
 * its checksum, and decodes the inputs' count and input 0's record. The
 * strings section is not hashed (on a vmlinux it is megabytes): input 0's
 * name is only held to be a string of at most 255 bytes inside it. The CUs
 * section is checked and walked only on request: graph__peek_cus(),
 * graph__peek_cu(). Nothing is allocated. What a peek refuses, the reader
 * refuses too (but for a name longer than the format's 255 bytes, which
 * the reader takes); what it takes, the reader may still refuse for what
 * lies past the head. */

/* An input's identity, as dwarf-extract recorded it (TYPE-GRAPH.md,
 * section `inputs`). The pointers point into the peek's mapping. */
struct graph_input_id {
	const char *name;		/* the input's file name, NUL-terminated */
	uint16_t e_machine;
	uint8_t ei_class, ei_data;	/* ELFCLASS*, ELFDATA2* */
	const uint8_t *build_id;	/* its GNU build id: build_id_len bytes */
	size_t build_id_len;		/* 0: the input had none; at most 64 */
};

/* The peek owns the file's read-only mapping, and every pointer it hands
 * out (input0's, an iterator's) points into it, until graph__peek_end(). */
struct graph_peek {
	size_t ninputs;			/* the inputs section's count */
	struct graph_input_id input0;	/* when ninputs >= 1; zeroed else */
	/* Private to graph_head.c: */
	const char *path;		/* the caller's string, for messages */
	const uint8_t *map;
	size_t map_size;
	const uint8_t *cus;		/* the CUs section, not yet checked */
	size_t cus_len;
	uint64_t cus_off, cus_check;
};

/* Peek at the graph at path (which must outlive *p, for messages).
 * Returns: 0 with *p filled: graph__peek_end() it; or a negative errno
 * with the detail, naming path, in d (which may be NULL): mapfile_open()'s
 * for a file that cannot be opened or is shorter than a header, -EPROTO
 * for another format version, -EBADMSG for a head graph__read_flags()
 * refuses or input 0's record malformed. On an error *p holds nothing
 * (zeroed: graph__peek_end() on it does nothing). */
int graph__peek(struct graph_peek *p, const char *path, struct diag *d);
/* Unmap the file: every pointer from p is invalid after. A no-op on a
 * zeroed p. */
void graph__peek_end(struct graph_peek *p);

/* A walk over the CUs section's records, in file order. Its cursor points
 * into the peek's mapping: valid until graph__peek_end(). */
struct graph_peek_cus {
	struct cursor c;
	uint64_t left;			/* records not yet read */
};

/* Start a walk of p's CUs section, checked against its checksum (a few
 * bytes per CU; the vmlinux: 2,400 CUs).
 * Returns: 0 with *it at the first record; -EBADMSG for a section that
 * fails its checksum or whose count is malformed, the detail in d (which
 * may be NULL). */
int graph__peek_cus(const struct graph_peek *p, struct graph_peek_cus *it, struct diag *d);
/* The next CU record: its input's index into *input, its cu_offset as
 * recorded (CUS_ALT_BIT included: a dwz alternate file's unit) into
 * *cu_offset. Its name, producer and language are passed over, unchecked.
 * Returns: 1 with both set; 0 after the last record; -EBADMSG for a
 * record cut short or with a value past 64 bits, and from then on. */
int graph__peek_cu(struct graph_peek_cus *it, uint64_t *input, uint64_t *cu_offset);

/* Canonical text dump; `full_provenance` lists every CU of every node. */
int graph__dump(const struct graph *g, FILE *out, int full_provenance, struct diag *d);
/* The JSON-lines dump (TYPE-GRAPH.md, "JSON-lines dump"), made from the
 * tables above: every field of every node, by its name here. */
int graph__dump_json(const struct graph *g, FILE *out, int full_provenance, struct diag *d);

static inline const char *graph_str(const struct graph *g, uint32_t ref) { return g->str + ref; }
const char *graph_kind_name(unsigned kind);

#endif
