/* cus_dump.c: the canonical text dump of a `.cus` file (spec: "Text dump").
 *
 * Stable by construction: it prints decoded values only, never a pointer or
 * a byte offset inside the file, and every record the same way each time.
 */
#include "cus.h"
#include "dump_text.h"
#include "dwarf_names.h"
#include "../common/diag.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>


static void put_ref(FILE *o, const struct cus_cu *cu, const char *label, cus_ref r)
{
	fprintf(o, " %s=", label);
	if (!r)
		fputs("void", o);
	else if (cus_ref_is_extern(r))
		fprintf(o, "@0x%llx", (unsigned long long)cu->externs[cus_ref_index(r)]);
	else
		fprintf(o, "#%u", cus_ref_index(r));
}

static void put_opt_ref(FILE *o, const struct cus_cu *cu, const char *label, cus_ref r)
{
	if (r)
		put_ref(o, cu, label, r);
}


static void put_name(FILE *o, const struct cus_cu *cu, uint32_t ref)
{
	fputc(' ', o);
	dump_quoted(o, cus_str(cu, ref));
}

static void put_annots(FILE *o, const struct cus_cu *cu, uint32_t first, uint32_t count,
		       const char *indent)
{
	for (uint32_t i = 0; i < count; i++) {
		const struct cus_annot *a = &cu->annots[first + i];
		fprintf(o, "%sannot %s=", indent, cus_str(cu, a->name));
		dump_quoted(o, cus_str(cu, a->value));
		fputc('\n', o);
	}
}

static void put_loc(FILE *o, const struct cus_rec *r)
{
	fputs(" loc=", o);
	dump_loc(o, r->loc, r->loc_reg);
}

static void dump_items(FILE *o, const struct cus_cu *cu, const struct cus_rec *r)
{
	const struct cus_item *it = r->item_count ? cu->items + r->item_first : NULL; /* NULL + 0 is undefined */
	for (uint32_t i = 0; i < r->item_count; i++, it++) {
		if (r->kind == CUS_ENUM) {
			fprintf(o, "    %s=", cus_str(cu, it->name));
			if (r->flags & CUS_F_SIGNED)
				fprintf(o, "%lld\n", (long long)it->value);
			else
				fprintf(o, "%llu\n", (unsigned long long)it->value);
			continue;
		}
		fprintf(o, "    .%s", cus_str(cu, it->name));
		put_ref(o, cu, "type", it->type);
		fprintf(o, " bitoff=%llu", (unsigned long long)it->value);
		if (it->bit_size)
			fprintf(o, " bits=%u", it->bit_size);
		dump_flags(o, it->flags);
		fputc('\n', o);
		put_annots(o, cu, it->annot_first, it->annot_count, "      ");
	}
}

static void dump_rec(FILE *o, const struct cus_cu *cu, size_t k)
{
	const struct cus_rec *r = &cu->recs[k];
	fprintf(o, "  #%zu <0x%llx> %s", k, (unsigned long long)r->die, cus_kind_name(r->kind));
	switch (r->kind) {
	case CUS_BASE: {
		const char *enc = dwarf_ate_name(r->encoding);
		put_name(o, cu, r->name);
		if (enc)
			fprintf(o, " enc=%s", enc);
		else
			fprintf(o, " enc=0x%x", r->encoding);
		fprintf(o, " size=%llu", (unsigned long long)r->size);
		if (r->bit_size)
			fprintf(o, " bits=%u", r->bit_size);
		if (r->bit_offset)
			fprintf(o, " bitoff=%u", r->bit_offset);
		break;
	}
	case CUS_PTR:
		put_ref(o, cu, "type", r->type);
		fprintf(o, " size=%llu", (unsigned long long)r->size);
		break;
	case CUS_CONST: case CUS_VOLATILE: case CUS_RESTRICT: case CUS_ATOMIC:
		put_ref(o, cu, "type", r->type);
		break;
	case CUS_TYPEDEF:
		put_name(o, cu, r->name);
		put_ref(o, cu, "type", r->type);
		break;
	case CUS_STRUCT: case CUS_UNION:
		put_name(o, cu, r->name);
		fprintf(o, " size=%llu", (unsigned long long)r->size);
		if (r->alignment)
			fprintf(o, " align=%u", r->alignment);
		fprintf(o, " members=%u", r->item_count);
		break;
	case CUS_ENUM:
		put_name(o, cu, r->name);
		fprintf(o, " size=%llu", (unsigned long long)r->size);
		put_ref(o, cu, "type", r->type);
		fprintf(o, " values=%u", r->item_count);
		break;
	case CUS_ARRAY:
		put_ref(o, cu, "type", r->type);
		fputs(" dims=", o);
		for (uint32_t i = 0; i < r->item_count; i++) {
			uint64_t v = cu->items[r->item_first + i].value;
			if (v)
				fprintf(o, "[%llu]", (unsigned long long)(v - 1));
			else
				fputs("[]", o);
		}
		break;
	case CUS_SUBROUTINE:
		if (r->name)
			put_name(o, cu, r->name);
		put_ref(o, cu, "type", r->type);
		fputs(" params=(", o);
		for (uint32_t i = 0; i < r->item_count; i++) {
			cus_ref p = cu->items[r->item_first + i].type;
			if (i)
				fputs(", ", o);
			if (!p)
				fputs("void", o);
			else if (cus_ref_is_extern(p))
				fprintf(o, "@0x%llx", (unsigned long long)cu->externs[cus_ref_index(p)]);
			else
				fprintf(o, "#%u", cus_ref_index(p));
		}
		fputc(')', o);
		break;
	case CUS_FUNC:
		put_name(o, cu, r->name);
		if (r->linkage) {
			fputs(" linkage=", o);
			dump_quoted(o, cus_str(cu, r->linkage));
		}
		put_ref(o, cu, "type", r->type);
		if (r->inline_kind)
			fprintf(o, " inline=%u", r->inline_kind);
		if (r->cc)
			fprintf(o, " cc=%u", r->cc);
		put_opt_ref(o, cu, "origin", r->origin);
		put_opt_ref(o, cu, "spec", r->spec);
		if (r->flags & CUS_F_HAS_PC)
			fprintf(o, " pc=0x%llx shndx=%u", (unsigned long long)r->addr, r->shndx);
		fprintf(o, " params=%u", r->item_count);
		break;
	case CUS_PARAM:
		put_name(o, cu, r->name);
		put_ref(o, cu, "type", r->type);
		put_opt_ref(o, cu, "origin", r->origin);
		put_loc(o, r);
		break;
	case CUS_VAR:
		put_name(o, cu, r->name);
		if (r->linkage) {
			fputs(" linkage=", o);
			dump_quoted(o, cus_str(cu, r->linkage));
		}
		put_ref(o, cu, "type", r->type);
		put_opt_ref(o, cu, "spec", r->spec);
		if (r->flags & CUS_F_HAS_ADDR)
			fprintf(o, " addr=0x%llx shndx=%u", (unsigned long long)r->addr, r->shndx);
		break;
	case CUS_UNSPECIFIED:
		put_name(o, cu, r->name);
		break;
	case CUS_UNSUPPORTED: {
		const char *t = dwarf_tag_name(r->tag);
		if (t)
			fprintf(o, " tag=%s", t);
		else
			fprintf(o, " tag=0x%x", r->tag);
		put_name(o, cu, r->name);
		put_opt_ref(o, cu, "type", r->type);
		break;
	}
	}
	dump_flags(o, r->flags);
	fputc('\n', o);
	put_annots(o, cu, r->annot_first, r->annot_count, "    ");
	if (r->kind == CUS_STRUCT || r->kind == CUS_UNION || r->kind == CUS_ENUM)
		dump_items(o, cu, r);
}

static void put_hex(FILE *o, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%02x", p[i]);
}

int cus_file__dump(const struct cus_file *f, FILE *o, struct diag *d)
{
	const struct cus_ident *id = &f->ident;
	fprintf(o, "btfpipe-cus v%u input=", f->format_version);
	dump_quoted(o, id->name);
	fprintf(o, " size=%llu dwarf=%016llx%016llx build-id=", (unsigned long long)id->size,
		(unsigned long long)id->dwarf_hash.hi, (unsigned long long)id->dwarf_hash.lo);
	put_hex(o, id->build_id, id->build_id_len);
	fprintf(o, " machine=%u class=%u data=%s flags=%u cus=%zu\n", id->e_machine,
		id->ei_class == 2 ? 64 : 32, id->ei_data == 2 ? "be" : "le", id->flags, f->count);

	struct cus_cu cu = { 0 };
	int err = 0;
	for (size_t i = 0; i < f->count && !err; i++) {
		const struct cus_index_entry *e = &f->index[i];
		err = cus_file__decode(f, i, &cu, d);
		if (err)
			break;
		const char *lang = dwarf_lang_name(cu.language), *ut = dwarf_ut_name(cu.unit_type);
		fprintf(o, "cu %zu off=0x%llx lang=%s ut=%s v%u addr=%u name=", i,
			(unsigned long long)cu.cu_offset, lang ? lang : "unknown", ut ? ut : "unknown",
			cu.dwarf_version, cu.addr_size);
		dump_quoted(o, cus_str(&cu, cu.name));
		fputs(" comp_dir=", o);
		dump_quoted(o, cus_str(&cu, cu.comp_dir));
		fputs(" producer=", o);
		dump_quoted(o, cus_str(&cu, cu.producer));
		fprintf(o, " records=%zu externs=%zu key=%016llx%016llx content=%016llx%016llx addrs=%u\n",
			cu.nrecs, cu.nexterns, (unsigned long long)e->key.hi, (unsigned long long)e->key.lo,
			(unsigned long long)e->content.hi, (unsigned long long)e->content.lo, e->addr_count);
		for (size_t k = 0; k < cu.nrecs; k++)
			dump_rec(o, &cu, k);
	}
	cus_cu__free(&cu);
	if (!err && (ferror(o) || fflush(o)))
		err = diag_fail(d, EIO, "write error on the dump output");
	return err;
}
