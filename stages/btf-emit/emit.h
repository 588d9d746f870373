/* emit.h: btf-emit's options; the stage's design is in run.h.
 * Each module has a header of its own, named after its file. */
#ifndef BTFPIPE_EMIT_H
#define BTFPIPE_EMIT_H

#include <stdint.h>

#include "features.h"
#include "../../common/cachedir.h"
#include "../../common/cli.h"

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
	int libbpf_dedup;	/* --libbpf-dedup: btf__dedup() over a base, not base_dedup__split() */
	struct cachedir_cli cache; /* --cache and friends: the whole BTF memoized */
};

#endif
