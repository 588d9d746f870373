/* abbrev.c: one unit's abbreviation table, read from .debug_abbrev's bytes.
 *
 * The two readers that do not go through libdw (cu_key.c's key walk and
 * die_reader.c's DIE reader) both start here. A table is indexed by code;
 * codes are dense in what compilers write, so a code past MAX_ABBREV_CODE
 * is -ENOTSUP (the caller falls back to libdw or does not cache), not an
 * error in the input.
 */
#include "abbrev.h"
#include "../../common/vec.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ABBREV_CODE (1u << 20)

void abbrev_table__free(struct abbrev_table *t)
{
	free(t->decls);
	free(t->specs);
	memset(t, 0, sizeof(*t));
}

int abbrev_table__read(struct abbrev_table *t, const struct dwsec *ab, uint64_t off)
{
	if (t->ndecls)
		memset(t->decls, 0, t->ndecls * sizeof(*t->decls));
	t->ndecls = 0;
	t->nspecs = 0;
	t->len = 0;
	if (off >= ab->n)
		return -EBADMSG;
	struct cursor c;
	cursor_init(&c, ab->p + off, ab->n - off);
	for (;;) {
		uint64_t code = cur_uleb(&c);
		if (c.err)
			return -EBADMSG;
		if (!code)
			break;
		if (code >= MAX_ABBREV_CODE)
			return -ENOTSUP;
		uint64_t tag = cur_uleb(&c);
		uint8_t children = cur_u8(&c);
		if (c.err || tag > UINT32_MAX)
			return -EBADMSG;
		if (code >= t->ndecls) {
			size_t old = t->ndecls;
			if (vec_grow(&t->decls, &t->cap_decls, code + 1))
				return -ENOMEM;
			memset(t->decls + old, 0, (code + 1 - old) * sizeof(*t->decls));
			t->ndecls = code + 1;
		}
		struct abbrev_decl *d = &t->decls[code];
		if (d->defined)
			return -EBADMSG;
		d->defined = 1;
		d->tag = (uint32_t)tag;
		d->children = children == DW_CHILDREN_yes;
		d->first = (uint32_t)t->nspecs;
		for (;;) {
			uint64_t at = cur_uleb(&c), form = cur_uleb(&c);
			if (c.err || at > UINT32_MAX || form > UINT32_MAX)
				return -EBADMSG;
			if (!at && !form)
				break;
			if (vec_grow(&t->specs, &t->cap_specs, t->nspecs + 1))
				return -ENOMEM;
			struct abbrev_spec *s = &t->specs[t->nspecs++];
			s->attr = (uint32_t)at;
			s->form = (uint32_t)form;
			s->implicit = form == DW_FORM_implicit_const ? cur_sleb(&c) : 0;
		}
		d->n = (uint32_t)(t->nspecs - d->first);
	}
	t->len = cursor_off(&c);
	return 0;
}
