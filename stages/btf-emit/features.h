/* features.h: pahole's --btf_features, a bit per feature (features.c). */
#ifndef BTFPIPE_EMIT_FEATURES_H
#define BTFPIPE_EMIT_FEATURES_H

#include <stdint.h>
#include <stdio.h>

struct diag;

enum feature_bit {
	FEAT_ENCODE_FORCE, FEAT_VAR, FEAT_FLOAT, FEAT_DECL_TAG, FEAT_TYPE_TAG, FEAT_ENUM64,
	FEAT_OPTIMIZED_FUNC, FEAT_CONSISTENT_FUNC, FEAT_DECL_TAG_KFUNCS, FEAT_REPRODUCIBLE_BUILD,
	FEAT_DISTILLED_BASE, FEAT_GLOBAL_VAR, FEAT_ATTRIBUTES, FEAT_TRUE_SIGNATURE, FEAT_LAYOUT,
	FEAT_FORCE_CU_MERGING, /* accepted, as pahole 1.32 has it; the merge always spans every CU */
	FEAT_COUNT,
};
#define HAS_FEAT(o, f) (((o)->features >> (f)) & 1)

uint32_t features__default(void);
int features__parse(const char *spec, int strict, uint32_t *out, struct diag *d);
void features__print_supported(FILE *o);

#endif
