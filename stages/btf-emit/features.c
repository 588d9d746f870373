/* features.c: pahole's --btf_features names, defaults and parsing, so a
 * kernel Makefile's strings mean the same here.
 *
 * "a,b" switches on exactly a and b; "default" the default set; a leading
 * '+' means the default set plus the list. Unknown names are ignored unless
 * strict. Every feature of pahole 1.32 is here: none needs a newer libbpf,
 * as btf-emit writes the BTF itself.
 */
#include "features.h"
#include "../../common/diag.h"

#include <errno.h>
#include <string.h>

static const struct feature {
	const char *name;
	int in_default;
} features[FEAT_COUNT] = {
	[FEAT_ENCODE_FORCE] = { "encode_force", 1 },
	[FEAT_VAR] = { "var", 1 },
	[FEAT_FLOAT] = { "float", 1 },
	[FEAT_DECL_TAG] = { "decl_tag", 1 },
	[FEAT_TYPE_TAG] = { "type_tag", 1 },
	[FEAT_ENUM64] = { "enum64", 1 },
	[FEAT_OPTIMIZED_FUNC] = { "optimized_func", 1 },
	[FEAT_CONSISTENT_FUNC] = { "consistent_func", 1 },
	[FEAT_DECL_TAG_KFUNCS] = { "decl_tag_kfuncs", 1 },
	[FEAT_REPRODUCIBLE_BUILD] = { "reproducible_build", 0 },
	[FEAT_DISTILLED_BASE] = { "distilled_base", 0 },
	[FEAT_GLOBAL_VAR] = { "global_var", 0 },
	[FEAT_ATTRIBUTES] = { "attributes", 0 },
	[FEAT_TRUE_SIGNATURE] = { "true_signature", 0 },
	[FEAT_LAYOUT] = { "layout", 0 },
	[FEAT_FORCE_CU_MERGING] = { "force_cu_merging", 0 },
};

uint32_t features__default(void)
{
	uint32_t m = 0;
	for (int i = 0; i < FEAT_COUNT; i++)
		if (features[i].in_default)
			m |= 1u << i;
	return m;
}

int features__parse(const char *spec, int strict, uint32_t *out, struct diag *d)
{
	uint32_t m = 0;
	const char *p = spec;
	if (*p == '+') {
		m = features__default();
		p++;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		int found = 0;
		if (n == 7 && !strncmp(p, "default", 7)) {
			m |= features__default();
			found = 1;
		}
		for (int i = 0; i < FEAT_COUNT && !found; i++) {
			if (strlen(features[i].name) != n || strncmp(p, features[i].name, n))
				continue;
			found = 1;
			m |= 1u << i;
		}
		if (!found && n && strict)
			return diag_fail(d, EINVAL, "unknown BTF feature '%.*s' (see --supported-features)", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	*out = m;
	return 0;
}

void features__print_supported(FILE *o)
{
	int first = 1;
	for (int i = 0; i < FEAT_COUNT; i++) {
		fprintf(o, "%s%s", first ? "" : ",", features[i].name);
		first = 0;
	}
	fputc('\n', o);
}
