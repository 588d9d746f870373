/* run.h: btf-emit's design, one run as named passes over one state.
 *
 * main.c parses and checks the options and answers from the cache when it
 * can; otherwise emit__run() makes the BTF by these passes over one struct
 * emit_run (run.c). Each pass relies on what the ones before it guarantee:
 *
 *  1. read: the graph, validated as format/graph_read.c reads it, and the
 *     --elf file's sections, symbols and kfunc sets (elf_info.c); from -j2
 *     on, the two are read at once. Nothing after this reads an input file
 *     but the base.
 *  2. base, with --btf-base: the base read in place (base_view.c), or by
 *     libbpf where that cannot be done (another byte order) or with
 *     --libbpf-dedup (libbpf_base.c); the base's index from the cache
 *     (base_index.c); and whether multi-dimensional arrays are written
 *     flat, as the base's were (a module's types only match a base's when
 *     written alike).
 *  3. select: the nodes BTF cannot hold are marked left out (types.c), and
 *     the functions that become FUNCs chosen by funcs.c's numbered rules,
 *     each one left out in the skip log with its reason. --explain stops
 *     after this pass, printing the decision for its name.
 *  4. plan: every type's BTF id, fixed before anything is written
 *     (types.c), so a type may refer to one written after it; and whether
 *     our own matching against the base can be used (not when types were
 *     left out: pointers to them all became void *, and alike).
 *  5. encode: the BTF, standalone (ids from 1, strings of its own), in our
 *     own writer (btf_writer.c), in pieces on the pool (encode.c: the
 *     types by type_encode.c, the FUNCs by funcs.c, the variables by
 *     vars.c): the same bytes at any -j.
 *  6. split, with a base (phase "base"): our BTF, read in place where it
 *     was written (base_view.c), matched against the base (base_dedup.c):
 *     split BTF holding only what the base lacks, references renumbered,
 *     checked before it is used (split_write.c); or, where our matching
 *     cannot be used, libbpf's dedup over the base. Then the target's byte
 *     order, and with the feature layout and no base, the kind layout
 *     (layout.c).
 *  7. write: the skip report, then -o and --elf-out, each atomically
 *     (output.c), and the BTF into the cache.
 *
 * A pass that fails returns a negative errno with the detail in the run's
 * diag, whose file (diag_file()) names the file it is about; the driver
 * stops there.
 * Nothing is written before pass 7, so a failed run leaves every output as
 * it was.
 */
#ifndef BTFPIPE_EMIT_RUN_H
#define BTFPIPE_EMIT_RUN_H

#include "../../common/cachedir.h"

struct diag;
struct emit_opts;

/* memo: the key of this run (its graph, ELF and base bytes, and the options
 * that change the BTF), and where a miss stores its BTF. */
struct emit_memo {
	struct cachedir *cache;
	struct key128 key;
};

/* With a cache and a base: the base's digest, and the cache's base indexes. */
struct emit_base_cache {
	struct key128 digest;
	struct cachedir *cache;	/* kind base-v1, or NULL */
};

/* One run of the passes above for options o (checked by main.c). memo: where
 * to store the BTF, or NULL; bc: the base's digest and index cache (cache
 * NULL: none). 0, or a negative errno with the detail in d and the file it
 * is about as d's file. */
int emit__run(const struct emit_opts *o, const struct emit_memo *memo, const struct emit_base_cache *bc,
	      struct diag *d);

#endif
