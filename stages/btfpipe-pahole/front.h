/* front.h: pahole's command line, as kernel Makefiles write it, read into
 * what the three stages are asked (front.c). */
#ifndef BTFPIPE_PAHOLE_FRONT_H
#define BTFPIPE_PAHOLE_FRONT_H

#include <stddef.h>

enum { FRONT_MAX_FEATURES = 64 };

struct front_opts {
	const char *input;	/* the ELF (also the output with -J) */
	const char *detached;	/* --btf_encode_detached FILE, or NULL: -J writes .BTF into input */
	const char *base;	/* --btf_base FILE */
	const char *langx;	/* --lang_exclude LIST, else $PAHOLE_LANG_EXCLUDE */
	unsigned jobs;		/* -j N; 0: each stage's own default */
	int strict;		/* --btf_features_strict */
	int verbose;		/* --verbose: pahole's lines for the functions it skips */
	int version;		/* --version */
	int supported;		/* --supported_btf_features */
	int help;		/* --help */
	/* The features on: pahole's known names, or unknown ones (kept for
	 * --features-strict to refuse) in the order given. Each points at a
	 * static name or into names[]: a front_opts is never copied. */
	const char *features[FRONT_MAX_FEATURES];
	int nfeatures;
	char names[2048];	/* the --btf_features lists, split */
	size_t names_used;
};

/* argv (pahole's options) into *o. Returns 0, or EXIT_USAGE after printing
 * why as tool. */
int front_parse(int argc, char **argv, struct front_opts *o, const char *tool);

/* The feature list as one comma-separated string into buf (size n). */
void front_feature_string(const struct front_opts *o, char *buf, size_t n);

#endif
