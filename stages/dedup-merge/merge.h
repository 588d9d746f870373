/* merge.h: dedup-merge's internals, shared by its own files only.
 *
 * The algorithm (the essay; each step names the file that does it):
 *
 *  Every type record of every CU of every input is a node, numbered by a
 *  global id (gid) in input order: inputs as given, CUs in file order,
 *  records in CU order. Two nodes are the same type when they are bisimilar:
 *  same kind and local data (names, sizes, members, values) and references
 *  to nodes that are the same type. The graph holds one node per class.
 *
 *  1. scan.c, per CU, in parallel: each type record gets a *key*: its own data
 *     and, for each reference, either the referenced record's key inlined
 *     (anonymous types, pointers, qualifiers, arrays, prototypes) or, for a
 *     reference to a named struct/union/enum/base type/typedef, just its
 *     name plus a *stop edge* to that node. In C every cycle passes through
 *     a named struct or union, so keys are finite. A key is a function of
 *     the type alone, never of where its DIEs live: an anonymous type in
 *     another CU (LTO, dwz) is inlined like one at home, from the copy
 *     imports.c makes (the bisimulation below can only split classes, so
 *     two keys for one type would never meet again). The worker also
 *     collects function and variable candidates, and exports the records
 *     other CUs refer to.
 *  2. weak.c: equal keys (confirmed byte for byte, never by hash alone)
 *     form *weak classes*, numbered in CU order by one thread. The scans
 *     look their keys up in the weak table while that thread fills it, so
 *     it only makes the classes no scan found (weak.c says why that is
 *     safe and never changes a result).
 *  3. classes.c: stop edges to other CUs are resolved through the exports.
 *  4. refine.c, refinement: a class splits when its nodes' stop edges lead
 *     to different classes, until nothing splits (each round checks every
 *     node against its class's first node in parallel; only the classes
 *     that disagree split). This is partition refinement, so
 *     the result is the coarsest bisimulation: cycles are handled). A fwd
 *     (declared-only struct/union/enum) stands for the one definition of its
 *     name while there is exactly one; the refinement then cannot tell them
 *     apart, which merges the types that differed only by fwd vs definition.
 *  4b. fwds.c: with several definitions of the name, libbpf's rule instead:
 *     a class that differs from an earlier one only where it has the fwd
 *     and the earlier one a definition joins it, and the fwd stands for
 *     that definition from then on (so libbpf's dedup finds nothing more).
 *  5. build.c: one graph node per class, made from its first node's record,
 *     numbered in order of first appearance; cands.c: the function and
 *     variable candidates and their prototypes, with new strings and
 *     prototypes numbered in order of first use by parallel passes
 *     (intern.c); build.c: provenance.
 */
#ifndef BTFPIPE_MERGE_H
#define BTFPIPE_MERGE_H

#include <stdint.h>

#include "../../common/arena.h"
#include "../../common/buf.h"
#include "../../common/cachedir.h"
#include "../../common/offmap.h"
#include "../../common/cli.h"
#include "../../common/stats.h"
#include "../../format/cus.h"
#include "../../format/graph.h"

struct diag;
struct strtab;
struct weak_table;
struct class_state;

struct merge_opts {
	struct cli_common cli;	/* -j (threads: merge.jobs), -o, --stats, -q, ... */
	const char *const *inputs;
	size_t ninputs;
	const char *dump;	/* --dump FILE.graph */
	int provenance;		/* --provenance: every CU in the dump */
	int dump_json;		/* --json: the dump as JSON lines */
	uint32_t exclude_langs[8]; /* --lang-exclude: DW_LANG_* of CUs to leave out */
	size_t nexclude;
	struct cachedir_cli cache; /* --cache and friends: the .graph memoized (memo.c) */
	int cache_verify;	/* --cache-verify: a hit is merged in full too, and compared */
};

/* In a cu_scan, references are first *lrefs*: 0 void, k + 1 for the CU's
 * record k, or STOP_XREF | e for the CU's extern e. The scan turns them into
 * gids (global ids, 1-based, 0 void): every CU's first gid is known before
 * any scan starts (open_inputs() reads each blob's record count). */
#define STOP_XREF 0x80000000u
#define NO_CLASS UINT32_MAX
#define GID_NOT_TYPE UINT32_MAX

/* Annotations of candidates, as string pointers into their scan's strs. */
struct sannot {
	const char *name, *value;
};

/* Function and variable candidates as the scan found them. Type refs are
 * gids, or STOP_XREF | index into the CU's xrefs; names and types that live
 * in another CU (LTO) are left NULL / 0 with the offset to look up, and
 * filled from the exports after the scan. */
struct fcand_param {
	const char *name;
	uint32_t type;
	uint32_t loc, loc_reg;
	uint64_t origin_off;	/* pending cross-CU origin, 0 none */
	uint32_t annot_first, annot_count; /* its decl tags, in the scan's annots */
};

struct fcand {
	const char *name, *linkage;
	uint32_t ret;
	uint32_t flags, inline_kind, cc, shndx;
	uint64_t pc;
	uint32_t addr_ord;	/* HAS_PC: which of the CU's address pairs pc is */
	uint64_t origin_off;	/* pending cross-CU origin or specification, 0 none */
	uint32_t param_first, param_count;
	uint32_t annot_first, annot_count;
};

struct vcand {
	const char *name;
	uint32_t type, flags, shndx;
	uint64_t addr;
	uint32_t addr_ord;	/* which of the CU's address pairs addr is */
	uint64_t spec_off;	/* pending cross-CU specification, 0 none */
	uint32_t annot_first, annot_count;
};

/* A record another CU refers to, as far as its own CU can resolve it. */
struct export {
	uint64_t off;		/* global DIE offset */
	uint32_t gid;
	uint8_t kind;
	uint32_t flags;
	const char *name, *linkage;
	uint32_t type;		/* gid, or 0 */
};

/* What the scan of one CU hands to the serial steps. Pointers to strings
 * point into strs, the scan's own copies (the blob they came from is gone). */
struct cu_scan {
	uint32_t nrecs;
	uint8_t *is_type;		/* per record, scratch: freed when the scan ends */
	struct buf keys;		/* the keys, in the order they were computed */
	uint32_t *key_off, *key_len;	/* per record, into keys */
	uint64_t *key_hash;		/* per record: hash64() of its key, made here in parallel */
	uint32_t *miss;			/* the type records whose weak class the scan did not
					 * find in the table: classes__insert_cu() makes them */
	size_t nmiss;
	uint32_t *stop_off, *stop_len;	/* scratch while scanning: per record, into stops */
	uint32_t *stops;		/* scratch: lrefs, never 0, in the order keys were made */
	size_t nstops, cap_stops;
	/* The stop edges as the refinement reads them, kept until it ends:
	 * record k's are [gstop_off[k], gstop_off[k + 1]) of either
	 *  - gstops16: record indices in this CU, when it has at most 65536
	 *    records and no externs (every CU of a vmlinux: half the memory);
	 *  - or gstops: gids, or STOP_XREF | extern index at the places xpos
	 *    lists until step 3.
	 * gstop_off16 stands for gstop_off (NULL then) when the CU has gstops16
	 * and fewer than 65536 stop edges: 2 bytes a record instead of 4, 8 MB
	 * of a vmlinux merge's peak, which is in the refinement.
	 * All live in merge.arenas. */
	uint32_t *gstops, *gstop_off;
	uint16_t *gstops16, *gstop_off16;
	uint32_t *xpos;
	size_t nxpos;
	uint64_t *xrefs;		/* global DIE offsets of this CU's externs */
	size_t nxrefs;
	struct fcand *funcs;
	size_t nfuncs;
	struct fcand_param *fparams;
	size_t nfparams;
	struct vcand *vars;
	size_t nvars;
	struct sannot *annots;
	size_t nannots;
	struct export *exports;
	size_t nexports;
	uint32_t *rec_ckpt;		/* every CUS_REC_STRIDE-th record's offset in the blob
					 * (build.c decodes only the representatives, from
					 * the checkpoint before each) */
	const char *name, *producer;
	uint32_t language;
	uint64_t cu_offset;
	uint32_t input;
	char *strs;			/* every string above points in here */
	/* Ownership: funcs, fparams, vars, annots, exports, xrefs, rec_ckpt
	 * and strs live in the scanning thread's merge.keep arena once
	 * scan__cu() returns (made there, or copied there at its end, at
	 * their exact size); the rest is malloc's. */
};

void cu_scan__free(struct cu_scan *s);
/* The keys and what only the weak classes' insert reads, freed. */
void cu_scan__drop_keys(struct cu_scan *s);
/* Forget what lives in the keep arenas (above), which the caller frees. */
void cu_scan__drop_kept(struct cu_scan *s);

/* The set of global DIE offsets that some CU of an input refers to. */
struct offset_set {
	struct offmap map;	/* a set: val_size 0 */
};
/* exports.c: the set (offset_set__*), and per input the record at each
 * offset another CU refers to (exports__*: made in CU order by step 2, read
 * from then on by any thread; exports__new() of ninputs maps, freed with
 * exports__free()). */
int offset_set__add(struct offset_set *s, uint64_t off);
int offset_set__has(const struct offset_set *s, uint64_t off);
void offset_set__free(struct offset_set *s);
struct export_map;
struct export;
struct export_map *exports__new(size_t ninputs);
int exports__add(struct export_map *maps, uint32_t input, const struct export *e);
const struct export *exports__find(const struct export_map *maps, uint32_t input, uint64_t off);
void exports__free(struct export_map *maps, size_t ninputs);

/* imports.c: what a CU needs of the DIEs in other CUs it refers to (LTO,
 * dwz), to key a reference to one exactly as a reference to the same type
 * at home would be keyed (imports.c says why). Per input, filled by
 * xtargets__collect() before any scan, read-only afterwards. */
struct xtarget {
	uint64_t off;		/* global DIE offset */
	uint8_t kind;		/* 0: referred to, but no record is there */
	uint32_t name_at;	/* the name's offset in strs (xtarget_name()), 0 none */
	uint32_t gid;
	uint32_t body;		/* an anonymous type's copy: 1 + index in recs; 0 none */
	uint32_t param_first, nparams; /* a function's parameters, in params */
};
/* A parameter of a function another CU refers to (gcc -flto's abstract
 * instances name a function in another CU and list no parameters). */
struct xparam {
	uint32_t name_at;	/* in strs, 0 none */
	cus_ref type;		/* cus_ref_local(index in vals), 0 void */
	uint32_t annot_first, annot_count; /* in annots */
};
struct xtargets {
	struct offmap index;	/* global DIE offset -> index in vals (u32) */
	struct xtarget *vals;	/* every record another CU refers to, and every
				 * record an anonymous one's key inlines */
	size_t n, cap_vals;
	/* The bodies: type refs are cus_ref_local(index in vals), string refs
	 * offsets in strs, items and annots in the arrays below. */
	struct cus_rec *recs;
	size_t nrecs, cap_recs;
	struct cus_item *items;
	size_t nitems, cap_items;
	struct cus_annot *annots;
	size_t nannots, cap_annots;
	struct xparam *params;
	size_t nparams, cap_params;
	struct buf strs;
};
/* cu_base: the gid of each of f's CUs' record 0. */
int xtargets__collect(const struct cus_file *f, const struct offset_set *wanted, const uint64_t *cu_base,
		     struct xtargets *xt, struct diag *d);
const struct xtarget *xtargets__get(const struct xtargets *xt, uint64_t off);
static inline const char *xtarget_name(const struct xtargets *xt, const struct xtarget *t)
{
	return (const char *)xt->strs.data + t->name_at;
}
void xtargets__free(struct xtargets *xt);
/* Whether a type of this kind is keyed by its name (a stop) or its body. */
int xtargets__is_stop_kind(unsigned kind, int named);

/* A worker's scratch for imports__apply(), kept from CU to CU. */
struct import_scratch {
	uint32_t *stamp, *local;	/* per xtarget: imported in the CU of this epoch, as local */
	size_t cap;
	uint32_t epoch;
	uint32_t *queue;		/* xtargets in import order */
	size_t nqueue, cap_queue;
};
void import_scratch__free(struct import_scratch *s);

/* What imports__apply() added to a CU: records [first, first + count) are
 * copies of other CUs' types; each stands for the gid in gid[]. */
struct cu_imports {
	uint32_t first, count;
	uint32_t *ext_local;	/* per extern: its copy's record index, or NO_CLASS */
	uint32_t *gid;
	struct buf str;		/* the CU's strings, then the copies': cu->str points here */
};
/* Append to the decoded cu the types its externs name that are keyed by
 * their body, with the records those keys inline (named ones as stubs).
 * Returns 0 or a negative errno (a message in d). The cu's arrays may move;
 * its str points into im until cu_imports__free(). */
int imports__apply(struct cus_cu *cu, const struct xtargets *xt, struct import_scratch *s,
		  struct cu_imports *im, const char *what, struct diag *d);
void cu_imports__free(struct cu_imports *im);

/* What scan__cu() needs of the merge for one CU. */
struct scan_env {
	const struct offset_set *wanted; /* offsets other CUs of the same input refer to */
	const struct xtargets *xt;	/* what they are */
	struct import_scratch *imp;	/* the scanning thread's */
	const struct weak_table *wt;	/* looked up, never changed here */
	uint64_t base;			/* the gid of the CU's record 0 */
	uint32_t nrecs;			/* the record count open_inputs() read */
	uint32_t *weak;			/* the CU's nrecs entries of merge.weak: the scan
					 * writes each class it finds and NO_CLASS for
					 * records that are not types; the insert writes
					 * the misses' (unset until then) */
	struct arena *arena;		/* the scanning thread's: the stop edges */
	struct arena *keep;		/* the scanning thread's: what the graph is made from */
};

/* scan.c: decode CU `cu_index` of `f` and fill `out`.
 * cu_buf is the caller's, decoded into and kept (with its arrays' room) for
 * the next CU the same thread scans; cus_cu__free() it at the end. out
 * does not point into it. */
int scan__cu(const struct cus_file *f, size_t cu_index, uint32_t input, const struct scan_env *env,
	    struct cus_cu *cu_buf, struct cu_scan *out, struct diag *d);
/* A CU left out by --lang-exclude: its name for provenance, no records. */
int scan__cu_excluded(const struct cus_file *f, size_t cu_index, uint32_t input,
		      struct arena *keep, struct cu_scan *out, struct diag *d);

struct export_map;

/* The whole merge's state. Arrays indexed by gid have nnodes + 2 entries
 * ([0] and [nnodes + 1] unused). */
struct merge {
	const struct merge_opts *o;
	/* Per graph func and var: its addr_ord (cands.c), for the memo's
	 * template (memo.c); owned. */
	uint32_t *func_ord, *var_ord;
	unsigned jobs;			/* threads: o->jobs, fewer for a small input (open_inputs()) */
	struct cus_file *files;		/* per input */
	struct offset_set *wanted;	/* per input: offsets some CU refers to */
	struct xtargets *xt;		/* per input: what those offsets are */
	size_t ncus;
	uint32_t *cu_input;		/* per CU: its input */
	uint32_t *cu_index;		/* per CU: its index in that input */
	uint64_t *cu_base;		/* per CU: the gid of its record 0, known before the scan */
	uint32_t *cu_nrecs;		/* per CU: its record count (0 when left out) */
	struct cu_scan *scans;		/* per CU; keys are freed once inserted */
	uint64_t nnodes;		/* gids are 1..nnodes */
	/* weak.c, refine.c (classes.h) */
	uint32_t *weak, *cls;		/* per gid: weak and refined class, NO_CLASS for non-types */
	struct arena *arenas;		/* per scan thread: the CUs' gstops, until refined */
	/* Per scan thread: the CUs' candidates, the strings they name,
	 * externs and checkpoints, until the graph's nodes and candidates are
	 * made (cu_scan). Out of malloc's heap, at their exact size: freed
	 * there, a few thousand blocks would leave holes the build's big
	 * arrays cannot use, and the peak RSS would not come down. */
	struct arena *keep;
	unsigned narenas;
	struct weak_table *wt;
	struct class_state *cs;		/* the class steps' own state (classes.h) */
	uint32_t nweak, ncls;
	struct export_map *exports;	/* per input */
	/* build.c */
	struct graph g;
	struct strtab *strs;		/* the header's and the nodes' strings; cands.c
					 * puts the candidates' after them in g.str */
	uint32_t *node_of_class;	/* per class, its node id, while the graph is built */
	/* From the end of build__graph() on, per gid: the node its type
	 * became (0, void, for an unspecified type), or GID_NOT_TYPE for a
	 * function, parameter or variable record. It takes the place of weak
	 * and cls, which are freed then: the candidates, the provenance and
	 * the externs' check ask nothing else of them, and the two were
	 * 32 MB of a vmlinux merge's peak. */
	uint32_t *gid_node;
	uint64_t ntypes;		/* type records, counted then */
	struct diag *d;
	struct stats *st;
	struct progress pr;
};

/* The weak table and the class state, empty: 0 or -ENOMEM. */
int classes__init(struct merge *m);
int classes__insert_cu(struct merge *m, size_t cu);	/* step 2, in CU order */
/* The weak class of key, or -1 when the table has none (yet). Safe on any
 * thread while classes__insert_cu() runs on another. */
int64_t classes__weak_find(const struct weak_table *t, const uint8_t *key, uint32_t len, uint64_t h);
int classes__resolve_xrefs(struct merge *m);		/* step 3 */
int classes__refine(struct merge *m);			/* step 4 */
/* After step 4b: what each fwd stands for, fixed; the stop edges freed. */
int classes__settle(struct merge *m);
/* The stop edges into other CUs that step 2 found (for --stats). */
size_t classes__cross_refs(const struct merge *m);
/* fwds.c, step 4b: libbpf's rule for fwds of a name with several
 * definitions; rewrites m->cls. */
int fwds__absorb(struct merge *m);
size_t classes__cu_of(const struct merge *m, uint64_t gid);	/* the CU that holds gid */
uint32_t classes__final(const struct merge *m, uint32_t gid); /* a node's class, fwds aliased */
uint8_t classes__rec_kind(const struct merge *m, uint32_t gid); /* the record kind (key's first byte) */
int classes__is_type(const struct merge *m, uint32_t gid);	/* a type record? (weak or gid_node) */
/* The gid of the type record at global DIE offset off, which CU ci refers
 * to across CUs. Reads only tables that no longer change after step 2:
 * safe on any thread. Returns 0, or -EBADMSG (no such record) with the
 * message in d. */
int classes__xref_gid(const struct merge *m, size_t ci, uint64_t off, uint32_t *gid, struct diag *d);
void classes__free(struct merge *m);	/* may be called again */

int build__graph(struct merge *m);			/* step 5: the nodes; then gid_node */
/* Step 5, after cands__build(): the provenance; node_of_class freed. */
int build__finish(struct merge *m);
/* The node of a candidate's type reference (a gid, or STOP_XREF | extern
 * index in CU ci). Reads only: safe on any thread once the nodes exist.
 * Returns 0, or -EBADMSG with the detail in d. */
int build__lref_node(const struct merge *m, size_t ci, uint32_t lref_or_gid, uint32_t *node, struct diag *d);
/* cands.c: the candidates, their prototypes and the graph's string
 * section, after the nodes (m->strs no longer changes). */
int cands__build(struct merge *m);

/* memo.c: the merge's memo, keyed on the CUs' contents (not their
 * addresses); its essay says what the key holds and why. */
struct cachedir;
/* The key, from the inputs' indexes alone (opened, blobs unread). */
int merge_memo__key(const struct merge_opts *o, const struct cus_file *files, struct key128 *out);
/* A hit: the graph written to out, 1; a miss (or a template that does
 * not fit: counted corrupt), 0; -errno with d when out cannot be written. */
int merge_memo__fetch(struct cachedir *c, struct key128 key, const struct cus_file *files, size_t nfiles,
		      const char *out, unsigned jobs, struct diag *d);
/* After m->g was written: m->g made the template (its pass-through
 * fields cut out, in place) and stored under key. A failure only counts. */
void merge_memo__store(struct cachedir *c, struct key128 key, struct merge *m, unsigned jobs);

#endif
