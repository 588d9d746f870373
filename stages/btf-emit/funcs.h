/* funcs.h: which function candidates become FUNCs, and writing them (funcs.c). */
#ifndef BTFPIPE_EMIT_FUNCS_H
#define BTFPIPE_EMIT_FUNCS_H

#include <stddef.h>
#include <stdint.h>

struct bw;
struct diag;
struct elf_info;
struct emit_opts;
struct graph;
struct graph_func;
struct skip_log;
struct type_map;

/* Step 2: the chosen function candidates (indices into g->funcs), name order,
 * in *picks (malloc'd, the caller's); PICK_TRUE_SIG marks one to write with
 * its true signature. Each candidate left out goes to skips. */
#define PICK_TRUE_SIG 0x80000000u
#define PICK_INDEX(p) ((p) & ~PICK_TRUE_SIG)
int funcs__select(const struct graph *g, const struct elf_info *ei, const uint8_t *dropped,
		 const struct emit_opts *o, struct skip_log *skips, uint32_t **picks, size_t *npicks);

/* A true signature's parameters (f's prototype's k-th in keep[k], member[k]):
 * keep[k] 1 when still passed; member[k] the index in g->items of the one
 * field an aggregate is reduced to (written `param__field` with the field's
 * type), else UINT32_MAX. The arrays hold the prototype's item_count. */
void funcs__true_sig_params(const struct graph *g, const struct graph_func *f, uint8_t *keep, uint32_t *member);

/* Step 4, after the types: the FUNCs of picks [a, b) and their decl tags. */
int funcs__encode(struct bw *btf, const struct graph *g, const struct elf_info *ei, const uint32_t *picks,
		 size_t a, size_t b, const struct type_map *map, const struct emit_opts *o, struct diag *d);

#endif
