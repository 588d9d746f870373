/* front.c: pahole's command line -> the stages' options.
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
#include "../../common/diag.h"

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

/* The CPUs, for a bare -j (asked only then: it reads /sys). */
static unsigned nproc(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static int usage_error(const char *tool, const char *what, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof(msg), what, arg);
	diag_error(tool, "%s", msg);
	return EXIT_USAGE;
}

int front_parse(int argc, char **argv, struct front_opts *o, const char *tool)
{
	memset(o, 0, sizeof(*o));
	int seen = 0, encode = 0;
	static const char *const legacy[] = { "var", "decl_tag", "type_tag", "enum64", NULL };
	for (const char *const *l = legacy; *l; l++)
		feat_on(o, *l);
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *a = argv[i], *v = NULL, *eq = strchr(a, '=');
		if (a[0] == '-' && a[1] == '-' && eq && (size_t)(eq - a) < sizeof(name)) {
			memcpy(name, a, (size_t)(eq - a));
			name[eq - a] = 0;
			a = name;
			v = *(eq + 1) ? eq + 1 : NULL;
		}
		/* The value of an option that takes one. */
#define NEED()                                                                      \
	do {                                                                        \
		if (!v) {                                                           \
			if (i + 1 >= argc)                                          \
				return usage_error(tool, "%s needs a value", a);    \
			v = argv[++i];                                              \
		}                                                                   \
	} while (0)
		if (!strcmp(a, "-J") || !strcmp(a, "--btf_encode")) {
			encode = 1;
		} else if (!strcmp(a, "-j")) {
			o->jobs = nproc();
		} else if (a[0] == '-' && a[1] == 'j' && a[2] >= '0' && a[2] <= '9') {
			char *end;
			unsigned long j = strtoul(a + 2, &end, 10);
			if (*end || j < 1 || j > 999)
				return usage_error(tool, "-j wants a number, not '%s'", a + 2);
			o->jobs = (unsigned)j;
		} else if (!strcmp(a, "--jobs")) {
			o->jobs = nproc();
			if (v) {
				char *end;
				unsigned long j = strtoul(v, &end, 10);
				if (*end || j < 1 || j > 999)
					return usage_error(tool, "-j wants a number, not '%s'", v);
				o->jobs = (unsigned)j;
			}
		} else if (!strcmp(a, "--btf_encode_detached")) {
			NEED();
			o->detached = v;
		} else if (!strcmp(a, "--btf_base")) {
			NEED();
			o->base = v;
		} else if (!strcmp(a, "--btf_features") || !strcmp(a, "--features")) {
			/* --features: pahole 1.32's other name for it. */
			NEED();
			feat_list(o, v, &seen);
		} else if (!strcmp(a, "--btf_features_strict")) {
			NEED();
			feat_list(o, v, &seen);
			o->strict = 1;
		} else if (!strcmp(a, "--supported_btf_features")) {
			o->supported = 1;
			return 0; /* as pahole: answered at once */
		} else if (!strcmp(a, "--version")) {
			o->version = 1;
			return 0;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			o->help = 1;
			return 0;
		} else if (!strcmp(a, "--lang_exclude")) {
			NEED();
			o->langx = v;
		} else if (!strcmp(a, "--btf_gen_floats") || !strcmp(a, "--btf_gen_all")) {
			feat_on(o, "float");
		} else if (!strcmp(a, "--btf_gen_optimized")) {
			feat_on(o, "optimized_func");
		} else if (!strcmp(a, "--reproducible_build")) {
			feat_on(o, "reproducible_build");
		} else if (!strcmp(a, "--skip_encoding_btf_inconsistent_proto")) {
			feat_on(o, "consistent_func");
		} else if (!strcmp(a, "--skip_encoding_btf_vars")) {
			feat_off(o, "var");
		} else if (!strcmp(a, "--skip_encoding_btf_decl_tag")) {
			feat_off(o, "decl_tag");
		} else if (!strcmp(a, "--skip_encoding_btf_type_tag")) {
			feat_off(o, "type_tag");
		} else if (!strcmp(a, "--skip_encoding_btf_enum64")) {
			feat_off(o, "enum64");
		} else if (!strcmp(a, "--btf_encode_force")) {
			feat_on(o, "encode_force");
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-V")) {
			o->verbose = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			/* pahole's quiet: we print nothing on success anyway */
		} else if (a[0] == '-') {
			return usage_error(tool, "pahole option %s is not supported", argv[i]);
		} else {
			o->input = a;
		}
#undef NEED
	}
	if (!o->input)
		return usage_error(tool, "no input file%s", "");
	if (!o->langx)
		o->langx = getenv("PAHOLE_LANG_EXCLUDE");
	if (o->langx && !*o->langx)
		o->langx = NULL;
	if (!o->detached && !encode)
		return usage_error(tool, "pahole mode needs -J or --btf_encode_detached%s", "");
	return 0;
}
