/* vars.h: which variables become VARs, and their DATASECs (vars.c). */
#ifndef BTFPIPE_EMIT_VARS_H
#define BTFPIPE_EMIT_VARS_H

struct bw;
struct diag;
struct elf_info;
struct emit_opts;
struct graph;
struct skip_log;
struct type_map;

/* The VARs and DATASECs (features var, global_var) added to btf; each
 * variable left out goes to skips. 0, or a negative errno with the detail in d. */
int vars__encode(struct bw *btf, const struct graph *g, const struct elf_info *ei,
	      const struct type_map *map, const struct emit_opts *o, struct skip_log *skips,
	      struct diag *d);

#endif
