/* emit.h: btf-emit's internals, shared by its own files only.
 *
 *   elf_info.c  the target ELF's sections and function/object symbols
 *   types.c     where a graph node becomes BTF types
 *   funcs.c     which function candidates become FUNCs (the policy, one place)
 *   vars.c      which variables become VARs, and their DATASECs
 *   main.c      options, then: read graph, types, funcs, vars, write
 */
#ifndef BTFPIPE_EMIT_H
#define BTFPIPE_EMIT_H

#include <stdint.h>
#include <stdio.h>

#include "../../format/graph.h"

struct btf;
struct extras;
struct diag;

struct emit_opts {
	const char *input;	/* the .graph */
	const char *output;	/* raw BTF */
	const char *elf;	/* --elf: symbols and sections for funcs and vars */
	int no_floats;		/* --no-floats: floats as INT, as pahole without --btf_gen_floats */
	const char *skip_report; /* --skip-report FILE */
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
	struct elf_section *secs;	/* by section index */
	size_t nsecs;
	struct elf_sym *syms;		/* STT_FUNC and STT_OBJECT, sorted by name then value */
	size_t nsyms;
	int is_rel;
};

int elf_info__read(struct elf_info *ei, const char *path, struct diag *d);
void elf_info__free(struct elf_info *ei);
/* The first symbol named `name` (exactly), or NULL; *count gets how many. */
const struct elf_sym *elf_info__find(const struct elf_info *ei, const char *name, size_t *count);

/* Why a candidate was left out; one line each in --skip-report. */
struct skip_log {
	FILE *f;
	size_t count;
};
void skip_log__add(struct skip_log *s, const char *what, const char *name, const char *why,
		   const struct graph *g, uint32_t cu);

/* types.c: every node as BTF. ids[node] is the node's BTF id (0 = void or
 * left out), dropped[node] says a node was left out (unsupported DWARF). */
struct type_map {
	uint32_t *ids;
	uint8_t *dropped;
	struct extras *extras;	/* types beyond the nodes: inner arrays, type tags */
	size_t first_extra;	/* extras before this are the nodes' own arrays */
};
void type_map__free(struct type_map *map);
/* Step 1: decide what cannot be written (fills map->dropped). */
int types_prepare(const struct graph *g, struct type_map *map);
/* Step 3: every node as BTF but prototypes no type and no picked function
 * uses (a function prototype is only written for a FUNC that is). */
int emit_types(struct btf *btf, const struct graph *g, const struct emit_opts *o,
	       const uint32_t *picks, size_t npicks, struct type_map *map,
	       struct skip_log *skips, struct diag *d);

/* Step 2: the chosen function candidates (indices into g->funcs), name order. */
int select_funcs(const struct graph *g, const struct elf_info *ei, const uint8_t *dropped,
		 struct skip_log *skips, uint32_t **picks, size_t *npicks);
/* Step 4: their FUNCs and decl tags. */
int emit_funcs(struct btf *btf, const struct graph *g, const uint32_t *picks, size_t npicks,
	       const struct type_map *map, struct diag *d);
int emit_vars(struct btf *btf, const struct graph *g, const struct elf_info *ei,
	      const struct type_map *map, struct skip_log *skips, struct diag *d);

#endif
