/* abbrev.h: one unit's abbreviation table, from .debug_abbrev's bytes (abbrev.c). */
#ifndef BTFPIPE_EXTRACT_ABBREV_H
#define BTFPIPE_EXTRACT_ABBREV_H

#include <stddef.h>
#include <stdint.h>
#include "input.h"

/* The table owns its arrays until abbrev_table__free() (a zeroed one too). */
struct abbrev_spec {
	uint32_t attr, form;
	int64_t implicit;	/* DW_FORM_implicit_const's value */
};
struct abbrev_decl {
	uint32_t tag;
	uint32_t first, n;	/* its specs: specs[first .. first + n) */
	uint8_t children, defined;
};
struct abbrev_table {
	struct abbrev_decl *decls;	/* by code; a code not in the table has defined 0 */
	size_t ndecls, cap_decls;
	struct abbrev_spec *specs;
	size_t nspecs, cap_specs;
	size_t len;			/* the table's length in .debug_abbrev */
};
/* Read the table at off (replacing what t held). Returns: 0, -EBADMSG
 * (malformed), -ENOTSUP (a code too large to index), -ENOMEM. */
int abbrev_table__read(struct abbrev_table *t, const struct dwsec *ab, uint64_t off);
void abbrev_table__free(struct abbrev_table *t);

#endif
