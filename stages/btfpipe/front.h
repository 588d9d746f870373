/* front.h: the driver's command line, in either dialect, read into what
 * the three stages are asked (front.c). */
#ifndef BTFPIPE_FRONT_H
#define BTFPIPE_FRONT_H

#include "../../common/cachedir.h"

#include <stddef.h>

enum { FRONT_MAX_FEATURES = 64 };

/* Which command line was given. Pahole's when any option only pahole has
 * appears (-J, --btf_encode_detached, --btf_features, ...); ours otherwise.
 * Both take the options the other lacks where they do not clash (--keep,
 * --from, --stats, the cache's); the dialect decides what clashes: what
 * follows a bare -j, and where the output goes. */
enum front_dialect { DIALECT_NATIVE, DIALECT_PAHOLE };

enum front_from { FROM_START, FROM_CUS, FROM_GRAPH };

struct front_opts {
	enum front_dialect dialect;
	int as_pahole;		/* run as btfpipe-pahole or pipeline.sh: --version answers as pahole */
	char **inputs;		/* the ELF files: argv[1..], reordered; several only with -J */
	int ninputs;
	/* Where the BTF goes; exactly one is set after front_parse(). */
	int encode;		/* -J: into each input's .BTF */
	const char *detached;	/* --btf_encode_detached FILE */
	const char *out;	/* -o FILE ("-": stdout) */
	const char *elfout;	/* --elf-out FILE: a copy of the input with .BTF */
	const char *base;	/* --btf_base / --btf-base FILE */
	const char *langx;	/* --lang_exclude LIST, else $PAHOLE_LANG_EXCLUDE */
	unsigned jobs;		/* -j: 1..1024 threads per stage; 0: each stage's own default */
	int bare_j;		/* pahole's -j was given with no number (the next word is an input) */
	const char *keep;	/* --keep DIR: the checkpoints stay there */
	enum front_from from;	/* --from cus|graph: start from a kept checkpoint */
	int strict;		/* --btf_features_strict or --features-strict */
	int verbose;		/* pahole's -V/--verbose: a line per function skipped */
	int echo;		/* -v: each stage's command line on stderr */
	int quiet;		/* -q */
	int stats;		/* --stats[=text|json], or $BTFPIPE_STATS: 0, 1 text, 2 json */
	int version, supported, help;
	struct cachedir_cli cache; /* --cache DIR and the others, for the memo and each stage */
	/* The features on: pahole's known names, or unknown ones (kept for
	 * --features-strict to refuse) in the order given. Each points at a
	 * static name or into names[]: a front_opts is never copied. */
	const char *features[FRONT_MAX_FEATURES];
	int nfeatures;
	char names[2048];	/* the feature lists, split */
	size_t names_used;
};

/* argv into *o. as_pahole: the program was run under a name pahole's users
 * call (btfpipe-pahole, pipeline.sh). Returns 0, or EXIT_USAGE after
 * printing why as tool. */
int front_parse(int argc, char **argv, int as_pahole, struct front_opts *o, const char *tool);

/* The feature list as one comma-separated string into buf (size n). */
void front_feature_string(const struct front_opts *o, char *buf, size_t n);

#endif
