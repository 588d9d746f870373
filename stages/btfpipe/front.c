/* front.c: the driver's command line, ours or pahole's -> the stages' options.
 *
 * Both dialects are read by one loop, so that one option means one thing
 * wherever it is given; the dialect (front.h) is decided first, by whether
 * any option only pahole has appears, and changes only what the two
 * programs' own parsers disagree on: pahole's -j takes its number attached
 * (its argp: "-j 4" is -j and an input named 4), ours also apart; and
 * pahole's runs write -J or --btf_encode_detached, ours -o or --elf-out.
 *
 * The features are kept as pahole keeps them (its pahole.c,
 * parse_btf_features()): before any --btf_features, its legacy set (var,
 * decl_tag, type_tag, enum64), which the legacy flags change; the first
 * --btf_features clears every feature, and each list, that one and any
 * later, adds to them ("default" and a leading '+' add the default set).
 * Options act in command-line order, as pahole's argp does. An option's
 * value is "--opt=V" or "--opt V"; an empty "--opt=" takes the next word.
 */
#include "front.h"
#include "../../common/cli.h"
#include "../../common/diag.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every feature pahole 1.32 knows, in its order (btf_features[]).
 * force_cu_merging (1.32: merge all CUs before encoding, so that GCC LTO's
 * references between CUs resolve) is accepted and changes nothing: the
 * merge always spans every CU. */
static const char *const known[] = {
	"encode_force", "var", "float", "decl_tag", "type_tag", "enum64", "optimized_func",
	"consistent_func", "decl_tag_kfuncs", "reproducible_build", "distilled_base", "global_var",
	"attributes", "true_signature", "layout", "force_cu_merging", NULL,
};
/* What "default" (and a leading '+') adds. */
static const char *const defaults[] = {
	"encode_force", "var", "float", "decl_tag", "type_tag", "enum64", "optimized_func",
	"consistent_func", "decl_tag_kfuncs", NULL,
};

static int feat_find(const struct front_opts *o, const char *f)
{
	for (int i = 0; i < o->nfeatures; i++)
		if (!strcmp(o->features[i], f))
			return i;
	return -1;
}

static void feat_on(struct front_opts *o, const char *f)
{
	if (feat_find(o, f) < 0 && o->nfeatures < FRONT_MAX_FEATURES)
		o->features[o->nfeatures++] = f;
}

static void feat_off(struct front_opts *o, const char *f)
{
	int i = feat_find(o, f);
	if (i < 0)
		return;
	memmove(&o->features[i], &o->features[i + 1], (size_t)(o->nfeatures - i - 1) * sizeof(o->features[0]));
	o->nfeatures--;
}

/* One --btf_features value, its names split into o->names (a list past
 * its room is cut short: no kernel writes 2 KB of features). */
static void feat_list(struct front_opts *o, const char *list, int *seen)
{
	if (!*seen)
		o->nfeatures = 0;
	*seen = 1;
	if (list[0] == '+') {
		for (const char *const *d = defaults; *d; d++)
			feat_on(o, *d);
		list++;
	}
	size_t room = sizeof(o->names) - o->names_used, n = strlen(list);
	if (n >= room)
		n = room ? room - 1 : 0;
	char *copy = o->names + o->names_used, *save = NULL;
	if (!room)
		return;
	memcpy(copy, list, n);
	copy[n] = 0;
	o->names_used += n + 1;
	for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		if (!strcmp(f, "default")) {
			for (const char *const *d = defaults; *d; d++)
				feat_on(o, *d);
		} else {
			feat_on(o, f);
		}
	}
}

void front_feature_string(const struct front_opts *o, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	/* The known ones in pahole's order, then the unknown in the order given. */
	for (int pass = 0; pass < 2; pass++) {
		const char *const *list = pass ? o->features : known;
		int count = pass ? o->nfeatures : (int)(sizeof(known) / sizeof(known[0]) - 1);
		for (int i = 0; i < count; i++) {
			int is_known = 0;
			for (const char *const *k = known; *k && !is_known; k++)
				is_known = !strcmp(*k, list[i]);
			if (pass ? is_known : feat_find(o, list[i]) < 0)
				continue;
			int w = snprintf(buf + len, n - len, "%s%s", len ? "," : "", list[i]);
			if (w < 0 || (size_t)w >= n - len)
				return;
			len += (size_t)w;
		}
	}
}

/* pahole's flags from before --btf_features, each one feature on or off.
 * Returns 1 when a is one of them (applied), else 0. */
static int legacy_flag(struct front_opts *o, const char *a)
{
	static const struct {
		const char *flag, *feature;
		int on;
	} flags[] = {
		{ "--btf_gen_floats", "float", 1 },
		{ "--btf_gen_all", "float", 1 },
		{ "--btf_gen_optimized", "optimized_func", 1 },
		{ "--reproducible_build", "reproducible_build", 1 },
		{ "--skip_encoding_btf_inconsistent_proto", "consistent_func", 1 },
		{ "--btf_encode_force", "encode_force", 1 },
		{ "--skip_encoding_btf_vars", "var", 0 },
		{ "--skip_encoding_btf_decl_tag", "decl_tag", 0 },
		{ "--skip_encoding_btf_type_tag", "type_tag", 0 },
		{ "--skip_encoding_btf_enum64", "enum64", 0 },
	};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strcmp(a, flags[i].flag))
			continue;
		if (flags[i].on)
			feat_on(o, flags[i].feature);
		else
			feat_off(o, flags[i].feature);
		return 1;
	}
	return 0;
}

/* The CPUs, for a bare -j (asked only then: it reads /sys). */
static unsigned nproc(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n > 1024)
		n = 1024;
	return n > 0 ? (unsigned)n : 1;
}

/* "btfpipe: error: WHAT (see --help)": the command line is the driver's
 * whole input, so no file is named where diag_error() names one. */
static int usage_error(const char *tool, const char *what, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof(msg), what, arg);
	fprintf(stderr, "%s: error: %s (see --help)\n", tool, msg);
	return EXIT_USAGE;
}

/* Options only pahole has: one of them makes the command line pahole's. */
static int pahole_only(const char *a)
{
	static const char *const names[] = {
		"-J", "--btf_encode", "--btf_encode_detached", "--btf_features", "--btf_features_strict",
		"--btf_base", "--lang_exclude", "--supported_btf_features", "--verbose", "-V",
		"--btf_encode_force", "--reproducible_build", NULL,
	};
	for (const char *const *n = names; *n; n++) {
		size_t len = strlen(*n);
		if (!strncmp(a, *n, len) && (!a[len] || (a[len] == '=' && a[1] == '-')))
			return 1;
	}
	return !strncmp(a, "--btf_gen_", 10) || !strncmp(a, "--skip_encoding_btf", 19);
}

/* A thread count: 1..1024, as every stage takes (cli_parse_jobs()). */
static int parse_jobs(const char *tool, const char *v, unsigned *jobs)
{
	char *end;
	errno = 0;
	unsigned long j = strtoul(v, &end, 10);
	if (!*v || *end || errno || j < 1 || j > 1024 || *v == '-' || *v == '+')
		return usage_error(tool, "-j wants a number from 1 to 1024, not '%s'", v);
	*jobs = (unsigned)j;
	return 0;
}

/* The options together: one output, the inputs it allows, the
 * environment's defaults. EXIT_USAGE (said why) or 0. */
static int front_check(struct front_opts *o, const char *tool)
{
	int outs = !!o->encode + !!o->detached + !!o->out + !!o->elfout;
	if (o->detached && o->encode)
		outs--; /* pahole: --btf_encode_detached is -J written elsewhere */
	if (!o->ninputs)
		return usage_error(tool, "no input file%s", "");
	if (!outs)
		return usage_error(tool, o->dialect == DIALECT_PAHOLE ? "pahole's command line needs -J or --btf_encode_detached FILE%s"
								   : "need -o OUT.btf or --elf-out FILE%s", "");
	if (outs > 1)
		return usage_error(tool, "give one output: -J, --btf_encode_detached, -o or --elf-out%s", "");
	/* Several inputs: pahole -J encodes each in its own file, and so do
	 * we. Into one output, pahole merges them; we encode one ELF (its
	 * symbol table decides what exists) per output. */
	if (o->ninputs > 1 && !(o->encode && !o->detached)) {
		if (o->bare_j)
			return usage_error(tool, "one input file only with this output, and '%s' is a second: "
						 "pahole's -j takes its number attached (-j4), so a word after a bare -j is an input",
					   o->inputs[1]);
		return usage_error(tool, "one input file only, and '%s' is a second (only -J encodes several, each in place)",
				   o->inputs[1]);
	}
	if (o->from && !o->keep)
		return usage_error(tool, "--from needs --keep DIR (where the checkpoints are)%s", "");
	if (!o->stats && cli_env_flag("BTFPIPE_STATS"))
		o->stats = 1;
	if (!o->langx)
		o->langx = getenv("PAHOLE_LANG_EXCLUDE");
	if (o->langx && !*o->langx)
		o->langx = NULL;
	return cachedir_cli_finish(&o->cache, tool);
}

/* The command line as parse_option() walks it: argv[i] is the option. */
struct arg_cursor {
	int argc, i;
	char **argv;
};

/* The value of an option that takes one: --opt=V (already in *v), else the
 * next word (--opt V, -o V). 0, or EXIT_USAGE when there is none. */
static int take_value(struct arg_cursor *c, const char *a, const char **v, const char *tool)
{
	if (*v)
		return 0;
	if (c->i + 1 >= c->argc)
		return usage_error(tool, "%s needs a value", a);
	*v = c->argv[++c->i];
	return 0;
}

enum { OPT_NEXT = 0, OPT_ANSWERED = -1 };

/* -j N, -jN, --jobs=N, and pahole's bare -j (the CPUs; in its command line
 * the word after -j is an input) and -j0 (its default, the CPUs). 0 or
 * EXIT_USAGE. */
static int parse_j(struct front_opts *o, struct arg_cursor *c, const char *a, const char *v, const char *tool)
{
	if (a[1] == 'j' && a[2]) /* -jN */
		return o->dialect == DIALECT_PAHOLE && !strcmp(a + 2, "0") ? (o->jobs = nproc(), 0)
									 : parse_jobs(tool, a + 2, &o->jobs);
	if (v) /* --jobs=N */
		return parse_jobs(tool, v, &o->jobs);
	if (o->dialect == DIALECT_NATIVE && c->i + 1 < c->argc)
		return parse_jobs(tool, c->argv[++c->i], &o->jobs);
	if (o->dialect == DIALECT_NATIVE)
		return usage_error(tool, "%s needs a number", a);
	o->jobs = nproc();
	o->bare_j = 1;
	return 0;
}

/* One option a (its name; v its =value or NULL) into o. OPT_NEXT, or
 * OPT_ANSWERED when the run is answered at once (--version, --help,
 * --supported_btf_features), or EXIT_USAGE with the message printed. */
static int parse_option(struct front_opts *o, struct arg_cursor *c, const char *a, const char *v, int *seen,
			const char *tool)
{
#define NEED()                                          \
	do {                                            \
		if (take_value(c, a, &v, tool))         \
			return EXIT_USAGE;              \
	} while (0)
	if (!strcmp(a, "-J") || !strcmp(a, "--btf_encode")) {
		o->encode = 1;
	} else if (a[0] == '-' && (a[1] == 'j' || !strcmp(a, "--jobs"))) {
		if (parse_j(o, c, a, v, tool))
			return EXIT_USAGE;
	} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
		NEED();
		o->out = v;
	} else if (!strcmp(a, "--elf-out")) {
		NEED();
		o->elfout = v;
	} else if (!strcmp(a, "--btf_encode_detached")) {
		NEED();
		o->detached = v;
	} else if (!strcmp(a, "--btf_base") || !strcmp(a, "--btf-base")) {
		NEED();
		o->base = v;
	} else if (!strcmp(a, "--btf_features") || !strcmp(a, "--features")) {
		/* --features: ours, and pahole 1.32's other name for it. */
		NEED();
		feat_list(o, v, seen);
	} else if (!strcmp(a, "--btf_features_strict")) {
		NEED();
		feat_list(o, v, seen);
		o->strict = 1;
	} else if (!strcmp(a, "--features-strict")) {
		o->strict = 1;
	} else if (!strcmp(a, "--lang_exclude") || !strcmp(a, "--lang-exclude")) {
		NEED();
		o->langx = v;
	} else if (!strcmp(a, "--keep")) {
		NEED();
		o->keep = v;
	} else if (!strcmp(a, "--from")) {
		NEED();
		if (!strcmp(v, "cus"))
			o->from = FROM_CUS;
		else if (!strcmp(v, "graph"))
			o->from = FROM_GRAPH;
		else
			return usage_error(tool, "--from takes cus or graph, not '%s'", v);
	} else if (!strcmp(a, "--stats")) {
		if (cli_parse_stats(tool, v, &o->stats))
			return EXIT_USAGE;
	} else if (!strcmp(a, "--cache") || !strcmp(a, "--cache-max-size")) {
		NEED();
		cachedir_cli_opt(&o->cache, a[7] ? CACHEDIR_OPT_SIZE : CACHEDIR_OPT_DIR, v);
	} else if (!strcmp(a, "--no-cache")) {
		cachedir_cli_opt(&o->cache, CACHEDIR_OPT_NONE, NULL);
	} else if (!strcmp(a, "--cache-readonly")) {
		cachedir_cli_opt(&o->cache, CACHEDIR_OPT_RO, NULL);
	} else if (!strcmp(a, "--cache-stats")) {
		cachedir_cli_opt(&o->cache, CACHEDIR_OPT_STATS, NULL);
	} else if (!strcmp(a, "--supported_btf_features") || !strcmp(a, "--supported-features")) {
		o->supported = 1;
		return OPT_ANSWERED; /* as pahole: answered at once */
	} else if (!strcmp(a, "--version")) {
		o->version = 1;
		return OPT_ANSWERED;
	} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		o->help = 1;
		return OPT_ANSWERED;
	} else if (legacy_flag(o, a)) {
		/* applied */
	} else if (!strcmp(a, "--verbose") || !strcmp(a, "-V")) {
		o->verbose = 1;
	} else if (!strcmp(a, "-v")) {
		o->echo = 1;
	} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
		o->quiet = 1;
	} else if (o->dialect == DIALECT_PAHOLE) {
		return usage_error(tool, "pahole option %s is not supported", c->argv[c->i]);
	} else {
		return usage_error(tool, "unknown option %s", c->argv[c->i]);
	}
#undef NEED
	return OPT_NEXT;
}

int front_parse(int argc, char **argv, int as_pahole, struct front_opts *o, const char *tool)
{
	memset(o, 0, sizeof(*o));
	int seen = 0, args_only = 0;
	static const char *const legacy[] = { "var", "decl_tag", "type_tag", "enum64", NULL };
	for (const char *const *l = legacy; *l; l++)
		feat_on(o, *l);
	o->dialect = DIALECT_NATIVE;
	o->as_pahole = as_pahole;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (pahole_only(argv[i]))
			o->dialect = DIALECT_PAHOLE;
	}
	/* The inputs, in order, moved to argv[1...]: the slot written is never
	 * after the one being read, so nothing is overwritten before it is read. */
	o->inputs = argv + 1;
	struct arg_cursor c = { .argc = argc, .argv = argv };
	for (c.i = 1; c.i < argc; c.i++) {
		char name[64];
		const char *a = argv[c.i], *v = NULL, *eq = strchr(a, '=');
		if (args_only || a[0] != '-' || !a[1]) {
			o->inputs[o->ninputs++] = argv[c.i];
			continue;
		}
		if (!strcmp(a, "--")) {
			args_only = 1;
			continue;
		}
		if (a[0] == '-' && a[1] == '-' && eq && (size_t)(eq - a) < sizeof(name)) {
			memcpy(name, a, (size_t)(eq - a));
			name[eq - a] = 0;
			a = name;
			v = *(eq + 1) ? eq + 1 : NULL;
		}
		int rc = parse_option(o, &c, a, v, &seen, tool);
		if (rc)
			return rc == OPT_ANSWERED ? 0 : rc;
	}
	return front_check(o, tool);
}
