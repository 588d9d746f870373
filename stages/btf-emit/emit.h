/* emit.h: btf-emit's internals, shared by its own files only.
 *
 *   elf_info.c  the target ELF's sections and function/object symbols
 *   btf_writer.c  BTF types appended, as libbpf's btf__add_*() would
 *   types.c     where a graph node becomes BTF types
 *   funcs.c     which function candidates become FUNCs (the policy, one place)
 *   vars.c      which variables become VARs, and their DATASECs
 *   base_dedup.c, str_match.c, split_write.c  split BTF over a base
 *   base_view.c  the base read in place; base_index.c  its cached index
 *   main.c      options, then: read graph, types, funcs, vars, write
 */
#ifndef BTFPIPE_EMIT_H
#define BTFPIPE_EMIT_H

#include "../../common/cachedir.h"
#include "../../common/cli.h"
#include <stdint.h>
#include <stdio.h>

#include "../../common/stats.h"
#include "../../format/graph.h"

struct btf;
struct btf_header;
struct buf;
struct extras;
struct diag;

/* btf_writer.c: the BTF being written. Each bw_*() is its libbpf
 * btf__add_*() namesake: the same checks and errors, the same bytes,
 * the same string offsets; ids from 1. */
struct bw;
struct bw *bw_new(void);
void bw_free(struct bw *w);
uint32_t bw_type_cnt(const struct bw *w); /* the next type's id (not a local piece's) */
int bw_int(struct bw *w, const char *name, size_t byte_sz, int encoding);
int bw_float(struct bw *w, const char *name, size_t byte_sz);
int bw_ptr(struct bw *w, int ref);
int bw_const(struct bw *w, int ref);
int bw_volatile(struct bw *w, int ref);
int bw_restrict(struct bw *w, int ref);
int bw_typedef(struct bw *w, const char *name, int ref);
int bw_type_tag(struct bw *w, const char *value, int ref);
int bw_fwd(struct bw *w, const char *name, int fwd_kind);
int bw_array(struct bw *w, int index_type, int elem_type, uint32_t nelems);
int bw_struct(struct bw *w, const char *name, uint32_t byte_sz);
int bw_union(struct bw *w, const char *name, uint32_t byte_sz);
int bw_field(struct bw *w, const char *name, int type, uint32_t bit_offset, uint32_t bit_size);
int bw_enum(struct bw *w, const char *name, uint32_t byte_sz);
int bw_enum_value(struct bw *w, const char *name, int64_t value);
int bw_enum64(struct bw *w, const char *name, uint32_t byte_sz, int is_signed);
int bw_enum64_value(struct bw *w, const char *name, uint64_t value);
int bw_func_proto(struct bw *w, int ret);
int bw_func_param(struct bw *w, const char *name, int type);
int bw_func(struct bw *w, const char *name, int linkage, int proto);
int bw_var(struct bw *w, const char *name, int linkage, int type);
int bw_datasec(struct bw *w, const char *name, uint32_t byte_sz);
int bw_datasec_var_info(struct bw *w, int var, uint32_t offset, uint32_t byte_sz);
int bw_decl_tag(struct bw *w, const char *value, int ref, int component_idx);
/* The raw BTF (header, types, strings; host byte order) into out. */
int bw_raw(const struct bw *w, struct buf *out);

/* A piece of a BTF: its types get ids after base or, local, the ids
 * BW_LOCAL | 1, 2, ... until the pieces before it are counted. Ids passed
 * in are the BTF's, or this piece's own BW_LOCAL ones. */
#define BW_LOCAL 0x40000000u
struct bw *bw_new_piece(uint32_t base, int local);
/* What a piece wrote, for the join (encode.c). Valid until the next add. */
struct bw_piece {
	const uint8_t *types;
	size_t types_len;
	uint32_t nr_types;
	const char *strs;	/* its own: "" at 0, each string once, first use first */
	size_t strs_len;
	const uint32_t *name_at; /* where in types a name offset (not 0) is */
	size_t n_name;
	const uint32_t *local_at; /* where in types a BW_LOCAL id is */
	size_t n_local;
	const uint32_t *str_at;	/* each string of strs, in order: its offset */
	const uint64_t *str_hash; /* and its strtab__hash() */
	size_t n_str;
	int err;		/* -ENOMEM when a position could not be noted */
};
void bw_piece_view(const struct bw *w, struct bw_piece *v);

/* pahole's --btf_features, bit per feature (features.c). */
enum feature_bit {
	FEAT_ENCODE_FORCE, FEAT_VAR, FEAT_FLOAT, FEAT_DECL_TAG, FEAT_TYPE_TAG, FEAT_ENUM64,
	FEAT_OPTIMIZED_FUNC, FEAT_CONSISTENT_FUNC, FEAT_DECL_TAG_KFUNCS, FEAT_REPRODUCIBLE_BUILD,
	FEAT_DISTILLED_BASE, FEAT_GLOBAL_VAR, FEAT_ATTRIBUTES, FEAT_TRUE_SIGNATURE, FEAT_LAYOUT,
	FEAT_COUNT,
};
#define HAS_FEAT(o, f) (((o)->features >> (f)) & 1)

uint32_t features_default(void);
int features_parse(const char *spec, int strict, uint32_t *out, struct diag *d);
void features_print_supported(FILE *o);

struct emit_opts {
	const char *input;	/* the .graph */
	struct cli_common cli;	/* -o (raw BTF), --stats, and -j: at 2 and up, --elf is read while
				 * the graph is, and functions are sorted and judged on up
				 * to that many threads */
	const char *elf;	/* --elf: symbols and sections for funcs and vars */
	uint32_t features;	/* --features (pahole's --btf_features); default: "default" */
	const char *base;	/* --btf-base: raw BTF or an ELF with .BTF; makes split BTF */
	const char *elf_out;	/* --elf-out: a copy of --elf with .BTF in it (may be --elf itself) */
	const char *skip_report; /* --skip-report FILE */
	const char *explain;	/* --explain NAME: print why, write nothing */
	enum { ARRAYS_AUTO, ARRAYS_NESTED, ARRAYS_FLAT } arrays; /* --arrays */
	int libbpf_dedup;	/* --libbpf-dedup: btf__dedup() over a base, not base_dedup() */
	struct cachedir_cli cache; /* --cache and friends: the whole BTF memoized */
};

struct elf_section {
	char *name;
	uint64_t addr, size;
	uint32_t type;
};

struct elf_sym {
	char *name;		/* owned */
	uint64_t value, size;
	uint32_t shndx;
	uint8_t type, bind;
};

struct elf_info {
	uint16_t machine;		/* e_machine */
	struct elf_section *secs;	/* by section index */
	size_t nsecs;
	struct elf_sym *syms;		/* STT_FUNC and STT_OBJECT, sorted by name then value */
	size_t nsyms;
	int is_rel;
	/* kfuncs from .BTF_ids set8 ranges flagged BTF_SET8_KFUNCS: name and
	 * the pair's flags word, sorted by name. */
	struct kfunc { char *name; uint32_t flags; } *kfuncs;
	size_t nkfuncs;
};

#define BTF_SET8_KFUNCS (1u << 0)
#define KF_FASTCALL (1u << 12)

/* Is name a kfunc? Its flags in *flags. */
int elf_info__kfunc(const struct elf_info *ei, const char *name, uint32_t *flags);

/* A copy of in_path with .BTF holding btf, written atomically to out_path. */
int elf_write_btf(const char *in_path, const char *out_path, const void *btf, size_t btf_size,
		  struct diag *d);

int elf_info__read(struct elf_info *ei, const char *path, struct diag *d);
void elf_info__free(struct elf_info *ei);
/* The first symbol named `name` (exactly), or NULL; *count gets how many. */
const struct elf_sym *elf_info__find(const struct elf_info *ei, const char *name, size_t *count);
/* The index of the first symbol whose name sorts at or after name: where the
 * names that start with it begin (they are contiguous). ei may be NULL (0). */
size_t elf_info__lower_bound(const struct elf_info *ei, const char *name);
/* The same answer, searched forward from hint (any value: an earlier answer
 * for a smaller name makes it a few comparisons instead of a binary search
 * over every symbol). */
size_t elf_info__lower_bound_from(const struct elf_info *ei, const char *name, size_t hint);

/* Why a candidate was left out; one line each in --skip-report. */
struct skip_log {
	FILE *f;
	size_t count;
};
void skip_log__add(struct skip_log *s, const char *what, const char *name, const char *why,
		   const struct graph *g, uint32_t cu);

/* types.c: every node as BTF. ids[node] is the node's BTF id (0 = void or
 * left out), dropped[node] says a node was left out and why: 1 it has no
 * BTF form or needs one that has none, 2 a prototype nothing uses, 3 a base
 * type of a size BTF cannot hold that nothing uses. */
struct type_map {
	uint32_t *ids;
	uint8_t *dropped;
	struct extras *extras;	/* types beyond the nodes: inner arrays, type tags */
	int type_tags;		/* feature type_tag: pointers' tags become TYPE_TAGs */
	int flat_arrays;	/* multi-dimensional arrays as one ARRAY (types.c) */
	size_t first_extra;	/* extras before this are the nodes' own arrays */
	int decl_tags;		/* feature decl_tag */
	/* Planned by types_plan(): the array index type's id, and whether it
	 * is one of our own (after the extras); the id after the extras. */
	uint32_t index_type, after_extras;
	int need_index;
	/* Per pick (types_plan()'s picks): a true signature's prototype id, 0
	 * for the others; NULL when no pick has a true signature. */
	uint32_t *pick_proto;
};
void type_map__free(struct type_map *map);
/* A name BTF accepts for a struct, union, enum, typedef or function. */
int btf_name_ok(const char *s);
/* Step 1: decide what cannot be written (fills map->dropped). */
int types_prepare(const struct graph *g, struct type_map *map);
/* Step 3: what the types will be: cycles refused, prototypes no type and no
 * picked function uses left out (a prototype is only written for a FUNC
 * that is), every id planned, the nodes left out reported to skips. */
int types_plan(const struct graph *g, const struct emit_opts *o, const uint32_t *picks, size_t npicks,
	       struct type_map *map, struct skip_log *skips, struct diag *d);
/* Step 4, in this order (encode.c): nodes [a, b) as BTF, into a BTF or a
 * piece whose ids start after types_base(a, b) (planned ids, checked);
 * the extra types and the index type, after types_extras_base(); and the
 * btf_decl_tag annotations of the structs, unions, their members and the
 * typedefs among nodes [a, b) (functions, parameters and variables get
 * theirs where they are added). */
uint32_t types_base(const struct graph *g, const struct type_map *map, size_t a, size_t b);
int types_encode(struct bw *btf, const struct graph *g, const struct type_map *map,
		 const struct emit_opts *o, size_t a, size_t b, struct diag *d);
uint32_t types_extras_base(const struct type_map *map);
int types_encode_extras(struct bw *btf, const struct graph *g, const struct type_map *map,
			struct diag *d);
int types_encode_tags(struct bw *btf, const struct graph *g, const struct type_map *map,
		      size_t a, size_t b, struct diag *d);

/* Step 2: the chosen function candidates (indices into g->funcs), name order;
 * PICK_TRUE_SIG marks one to write with its true signature. */
#define PICK_TRUE_SIG 0x80000000u
#define PICK_INDEX(p) ((p) & ~PICK_TRUE_SIG)
int select_funcs(const struct graph *g, const struct elf_info *ei, const uint8_t *dropped,
		 const struct emit_opts *o, struct skip_log *skips, uint32_t **picks, size_t *npicks);
/* --explain NAME: the evidence and the decision for a function or variable. */
int explain(FILE *o, const struct graph *g, const struct elf_info *ei, const struct emit_opts *opts,
	    const uint8_t *dropped, const char *name);

/* encode.c: steps 4 and 5 (types, funcs, vars) into out as raw BTF, on
 * up to o->jobs threads (*threads_used), the same bytes on any. */
struct encode_in {
	const struct graph *g;
	const struct elf_info *ei;	/* or NULL */
	const struct emit_opts *o;
	const uint32_t *picks;
	size_t npicks;
	const struct type_map *map;	/* planned by types_plan() */
	struct skip_log *skips;		/* or NULL */
};
int encode_btf(const struct encode_in *in, unsigned *threads_used, struct buf *out,
	       uint32_t *nr_types, struct diag *d);

/* Step 4, after the types: the FUNCs of picks [a, b) and their decl tags. */
int funcs_encode(struct bw *btf, const struct graph *g, const struct elf_info *ei, const uint32_t *picks,
		 size_t a, size_t b, const struct type_map *map, const struct emit_opts *o, struct diag *d);
/* base_view.c: a base BTF read in place (see there). Types are 1 .. n - 1;
 * bv_type() is NULL past them (id 0 is void, as libbpf has it), bv_str()
 * "" outside the strings. */
struct base_view {
	const uint8_t *map;	/* owned: the file, mapped */
	size_t map_size;
	const uint8_t *types;	/* the type section */
	uint32_t *offs;		/* owned: per id, its type's offset in types */
	uint32_t n;		/* type count, void included (btf__type_cnt) */
	const char *strs;	/* the string section, ending in a NUL */
	uint32_t str_len;
	int flattens;		/* types_flatten() of it */
};
extern const struct btf_type bv_void;
static inline const struct btf_type *bv_type(const struct base_view *v, uint32_t id)
{
	return !id ? &bv_void : id < v->n ? (const struct btf_type *)(v->types + v->offs[id]) : NULL;
}
static inline const char *bv_str(const struct base_view *v, uint32_t off)
{
	return off < v->str_len ? v->strs + off : "";
}
/* 0, or -errno: not a base this can read in place (then libbpf reads it). */
int base_view_open(struct base_view *v, const char *path);
void base_view_close(struct base_view *v);
/* The raw BTF bytes [*p, *p + *n) of file path, mapped at m (size bytes):
 * all of it, or an ELF's one .BTF section. 0, or -errno (elf_btf_section). */
int base_btf_bytes(const char *path, const uint8_t *m, size_t size, const uint8_t **p, size_t *n);
/* The header of raw BTF p (n bytes) into *h, when libbpf would read it in
 * our byte order: the header every encoder writes, the type section
 * 4-aligned and before the strings, both inside p, the strings (if any)
 * ending in a NUL. 0 or -EINVAL. */
int btf_header_check(const uint8_t *p, size_t n, struct btf_header *h);
/* The bytes a BTF type takes, header included (known kinds). */
size_t btf_type_bytes(const struct btf_type *t);
/* The bytes of the type at offset at of a type section of len bytes, when
 * it is of a known kind and lies whole inside; 0 when not. */
size_t btf_type_whole(const uint8_t *types, uint32_t len, uint32_t at);
/* Was the BTF written by an encoder that flattens multi-dimensional arrays
 * (pahole does)? Then it has arrays but none whose element is an array, and
 * a module's types only match its types when written the same way. Asked
 * of types ids[0..n), or of all of 1 .. n - 1 when ids is NULL, read through
 * type(ctx, id) (NULL past the last). */
int types_flatten(const uint32_t *ids, uint32_t n, const struct btf_type *(*type)(const void *ctx, uint32_t id),
		  const void *ctx);
/* The one .BTF section of ELF path: 0, -ENOENT (none), -EINVAL (several,
 * compressed, outside the file, not an ELF) or -errno. */
int elf_btf_section(const char *path, uint64_t *off, uint64_t *size);

/* base_index.c: what matching against a base needs of the base alone,
 * made once per base and kept in the cache directory (kind base-v1, spec
 * format/CU-CACHE.md "The base index"): on a small module, making it was
 * two thirds of the emit.
 *
 * Two tables, each bucketed by the top bits of a 64-bit hash, entries in
 * ascending id (or offset) order within a bucket, with 32 more bits of the
 * hash as a check: base types by shallow hash (base_dedup.c), and the
 * base's string starts by signature (str_match.c). An entry that only
 * shares the check is a false candidate, which the exact comparison after
 * the lookup rejects: the tables choose what is compared, never what
 * matches. */
struct bi_ent {
	uint32_t check;		/* BI_CHECK(hash) */
	uint32_t id;		/* a base type id, or a string's offset */
};
#define BI_BUCKET(h, bits) ((size_t)((h) >> (64 - (bits))))
#define BI_CHECK(h) ((uint32_t)((h) >> 16))
/* A table from (hash, id) pairs in ascending id order: *bucket (2^bits + 1
 * bounds) and *ents (malloc'd, the caller's), by a counting sort (two
 * sequential passes, where inserting 95,000 entries into an open-addressing
 * table missed the cache on each). 0 or -ENOMEM. */
struct bi_pair {
	uint64_t h;
	uint32_t id;
};
int bi_table_make(const struct bi_pair *in, size_t n, uint32_t bits, uint32_t **bucket, struct bi_ent **ents);
/* Entries of the bucket of hash h: [*lo, *hi). */
static inline void bi_range(const uint32_t *bucket, uint32_t bits, uint64_t h, uint32_t *lo, uint32_t *hi)
{
	size_t b = BI_BUCKET(h, bits);
	*lo = bucket[b];
	*hi = bucket[b + 1];
}
struct base_index {
	uint32_t ntypes;	/* btf__type_cnt() of the base it was made of */
	uint32_t str_len;	/* the length of that base's string section */
	int flattens;		/* types_flatten() of it */
	uint32_t tbits, ntents, sbits, nsents;
	const uint32_t *tbucket;	/* 2^tbits + 1 bounds into tents */
	const struct bi_ent *tents;
	const uint32_t *sbucket;	/* 2^sbits + 1 bounds into sents (NULL: none) */
	const struct bi_ent *sents;
	void *mem;		/* owned: the payload the tables point into, made here */
	size_t mem_size;
	const uint8_t *map;	/* or read from the cache, mapped (cachedir__map) */
	size_t map_size;
};
/* What the cache keys a base file on: the xxh3-128 of its bytes, or of an
 * ELF's .BTF sections only (a vmlinux base is 600 MB of DWARF around 5 MB
 * of BTF, and hashing it all took 80 ms of every module's emit). 0 or
 * -errno (unreadable). */
int base_digest(const char *path, struct key128 *out);
/* The index of base (whose file has digest): from cache c, else made and
 * stored there. 0, or -errno when it cannot be had (then matching runs
 * without it). */
int base_index_get(struct base_index *bi, const struct base_view *base, struct key128 digest,
		   struct cachedir *c);
/* The index of base, made (no cache). 0 or -errno. */
int base_index_make(struct base_index *bi, const struct base_view *base);
void base_index_free(struct base_index *bi);

/* str_match.c: the strings of ours (standalone BTF) and which of them the
 * base has (bdata, blen: its string section, ending in a NUL), by id (see
 * there). str_match_build() returns -EPROTO when ours is unreadable (a bug),
 * else 0 or -ENOMEM. The match points into both string sections, so they
 * outlive it and ours is not changed meanwhile. */
struct str_match {
	const char *odata, *bdata;	/* our and the base's string sections */
	uint32_t olen, blen;
	struct sm_slot {
		uint64_t sig;		/* the string's signature, never 0; 0: an empty slot */
		uint32_t off1;		/* our first offset of the string + 1 */
		uint32_t base1;		/* the base's first offset of it + 1, or 0 (not with bi) */
	} *slots;			/* our distinct strings, open addressing */
	size_t nslots;
	uint64_t *sfilt;		/* 4 * nslots bits: the slots' signatures */
	uint32_t *id_at;		/* per our offset: the id of the string starting there, or 0 */
	struct { uint32_t boff1, id; } *bmap;	/* base offsets (+ 1) holding a string of ours */
	size_t nbmap;
	uint64_t *bfilt;		/* 4 * nbmap bits: bmap's offsets */
	uint64_t *bstart;		/* bit per base offset: a string starts there */
	uint32_t empty_id;		/* the id of "" */
	const struct base_index *bi;	/* built from it: no scan, no bmap, no base1 */
};
int str_match_build(struct str_match *sm, const struct btf *ours, const char *bdata, uint32_t blen);
uint32_t str_match_ours(const struct str_match *sm, uint32_t off);	/* id of our string at off */
uint32_t str_match_base(const struct str_match *sm, uint32_t boff);	/* its id, 0: not ours */
int64_t str_match_base_off(const struct str_match *sm, uint32_t id);	/* base offset, or -1 */
/* The same match from a base_index of that base (no scan of its strings). */
int str_match_build_indexed(struct str_match *sm, const struct btf *ours, const char *bdata, uint32_t blen,
			    const struct base_index *bi);
/* A string's key: its signature (never 0); equal strings have equal keys,
 * unequal ones rarely. Of our string at off; of the base's at boff, 0 when
 * ours has no such string; of the string at off of any section. */
uint64_t str_match_ours_key(const struct str_match *sm, uint32_t off);
uint64_t str_match_base_key(const struct str_match *sm, uint32_t boff);
uint64_t str_sig_at(const char *data, uint32_t len, uint32_t off);
/* The string table of a base_index: every string start of data[0..len) by
 * signature, in 2^bits buckets (malloc'd, the caller's). 0 or -ENOMEM. */
int str_index_build(const char *data, uint32_t len, uint32_t bits, uint32_t **bucket, struct bi_ent **ents,
		    uint32_t *n);
void str_match_free(struct str_match *sm);

/* base_dedup.c: ours is standalone BTF (ids from 1); append to *split the
 * raw bytes of split BTF over base with only the types the base lacks,
 * references renumbered. bi: the base's index, or NULL (made here, for this
 * module only). *removed: how many the base had. */
struct buf;
int base_dedup(const struct btf *ours, const struct base_view *base, const struct base_index *bi,
	       uint32_t *removed, struct buf *split, struct diag *d);
/* The type table of a base_index: every base type that can be matched, by
 * shallow hash, in 2^bits buckets (malloc'd, the caller's). 0 or -errno. */
int base_dedup_index(const struct base_view *base, uint32_t bits, uint32_t **bucket, struct bi_ent **ents,
		     uint32_t *n);
/* split_write.c: split BTF over base of the types of ours with keep[id] set,
 * in order, references through newid[] (per our id; 0 stays void), as raw
 * bytes appended to *out, checked (split_check) before they are returned. */
int split_write(const struct btf *ours, const struct base_view *base, const struct str_match *sm,
		const uint32_t *newid, const uint8_t *keep, struct buf *out, struct diag *d);
/* Is raw (n bytes) split BTF over base that libbpf would read: a header of
 * our byte order, sections in order inside it, strings that end in a NUL,
 * every type of a known kind inside its section, every type reference below
 * the type count and every name offset inside the strings (the base's and
 * its own)? 0, or -EPROTO. */
int split_check(const uint8_t *raw, size_t n, const struct base_view *base);
/* Split BTF raw, as split_check() passed it, into the other byte order. */
void split_bswap(uint8_t *raw);

int emit_vars(struct bw *btf, const struct graph *g, const struct elf_info *ei,
	      const struct type_map *map, const struct emit_opts *o, struct skip_log *skips,
	      struct diag *d);

#endif
