/* cus_json.c: the JSON-lines dump of a `.cus` file (spec: CU-RECORDS.md,
 * "JSON-lines dump"), for programs (btfpipe-diff) rather than people.
 *
 * Made from cus.h's tables: every fixed field and item field of every
 * record is printed under its name in struct cus_rec / struct cus_item,
 * so a field added to a table is in this dump with no edit here.
 */
#include "cus.h"
#include "dump_json.h"
#include "dwarf_names.h"
#include "../common/diag.h"

#include <errno.h>

/* One field, as its table's encoding says; r is the record it belongs to
 * (an enumerator's sign, a param's location register). */
static void jf_str(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint32_t v)
{
	(void)r;
	json_kstr(o, key, cus_str(cu, v));
}

/* null: void; a number: record k of this CU; {"die":N}: an extern, by its
 * global DIE offset (the unit's offset plus the DIE's). */
static void jf_ref(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, cus_ref v)
{
	(void)r;
	if (!v)
		fprintf(o, ",\"%s\":null", key);
	else if (cus_ref_is_extern(v))
		fprintf(o, ",\"%s\":{\"die\":%llu}", key, (unsigned long long)cu->externs[cus_ref_index(v)]);
	else
		fprintf(o, ",\"%s\":%u", key, cus_ref_index(v));
}

static void jf_u32(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint32_t v)
{
	(void)cu, (void)r;
	fprintf(o, ",\"%s\":%u", key, v);
}

static void jf_u64(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint64_t v)
{
	(void)cu, (void)r;
	fprintf(o, ",\"%s\":%llu", key, (unsigned long long)v);
}

static void jf_ate(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint32_t v)
{
	(void)cu, (void)r;
	json_named(o, key, v, dwarf_ate_name(v));
}

static void jf_tag(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint32_t v)
{
	(void)cu, (void)r;
	json_named(o, key, v, dwarf_tag_name(v));
}

static void jf_loc(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint32_t v)
{
	(void)cu;
	fprintf(o, ",\"%s\":%u", key, v);
	json_loc(o, v, r->loc_reg);
}

static void jf_mflags(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint32_t v)
{
	(void)cu, (void)r;
	json_flags(o, key, v);
}

static void jf_eval(FILE *o, const struct cus_cu *cu, const struct cus_rec *r, const char *key, uint64_t v)
{
	(void)cu;
	json_eval(o, key, v, (r->flags & CUS_F_SIGNED) != 0);
}

static void put_annots(FILE *o, const struct cus_cu *cu, uint32_t first, uint32_t count)
{
	fputs(",\"annots\":[", o);
	for (uint32_t i = 0; i < count; i++)
		json_annot(o, !i, cus_str(cu, cu->annots[first + i].name), cus_str(cu, cu->annots[first + i].value));
	fputc(']', o);
}

static void put_items(FILE *o, const struct cus_cu *cu, const struct cus_rec *r)
{
	fputs(",\"items\":[", o);
	for (uint32_t i = 0; i < r->item_count; i++) {
		const struct cus_item *it = &cu->items[r->item_first + i];
		fputs(i ? ",{\"item\":" : "{\"item\":", o);
		fprintf(o, "%u", i);
#define ITEM_FIELD(field, enc) jf_##enc(o, cu, r, #field, it->field);
		switch (r->kind) {
#define ITEM_KIND(kind, fields, items) \
	case kind:                     \
		items(ITEM_FIELD)      \
		break;
			CUS_RECORD_KINDS(ITEM_KIND)
#undef ITEM_KIND
		}
#undef ITEM_FIELD
		if (it->annot_count)
			put_annots(o, cu, it->annot_first, it->annot_count);
		fputc('}', o);
	}
	fputc(']', o);
}

static void put_rec(FILE *o, const struct cus_cu *cu, size_t k)
{
	const struct cus_rec *r = &cu->recs[k];
	fprintf(o, "{\"rec\":%zu,\"die\":%llu", k, (unsigned long long)r->die);
	json_kstr(o, "kind", cus_kind_name(r->kind));
	json_flags(o, "flags", r->flags);
#define REC_FIELD(field, enc) jf_##enc(o, cu, r, #field, r->field);
	switch (r->kind) {
#define REC_KIND(kind, fields, items) \
	case kind:                    \
		fields(REC_FIELD)     \
		break;
		CUS_RECORD_KINDS(REC_KIND)
#undef REC_KIND
	}
#undef REC_FIELD
	if (cus_kind_has_items(r->kind))
		put_items(o, cu, r);
	if (r->flags & (CUS_F_HAS_PC | CUS_F_HAS_ADDR))
		fprintf(o, ",\"addr\":%llu,\"shndx\":%u", (unsigned long long)r->addr, r->shndx);
	if (r->annot_count)
		put_annots(o, cu, r->annot_first, r->annot_count);
	fputs("}\n", o);
}

static void put_hex(FILE *o, const char *key, const uint8_t *p, size_t n)
{
	fprintf(o, ",\"%s\":\"", key);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%02x", p[i]);
	fputc('"', o);
}

int cus_file__dump_json(const struct cus_file *f, FILE *o, struct diag *d)
{
	const struct cus_ident *id = &f->ident;
	fprintf(o, "{\"format\":\"btfpipe-cus\",\"version\":%u", f->format_version);
	json_kstr(o, "input", id->name);
	fprintf(o, ",\"size\":%llu", (unsigned long long)id->size);
	json_hex128(o, "dwarf", id->dwarf_hash.hi, id->dwarf_hash.lo);
	put_hex(o, "build_id", id->build_id, id->build_id_len);
	fprintf(o, ",\"machine\":%u,\"class\":%u,\"data\":\"%s\",\"flags\":%u,\"cus\":%zu}\n", id->e_machine,
		id->ei_class == 2 ? 64 : 32, id->ei_data == 2 ? "be" : "le", id->flags, f->count);

	struct cus_cu cu = { 0 };
	int err = 0;
	for (size_t i = 0; i < f->count && !err; i++) {
		const struct cus_index_entry *e = &f->index[i];
		if ((err = cus_file__decode(f, i, &cu, d)))
			break;
		fprintf(o, "{\"cu\":%zu,\"off\":%llu,\"language\":%u", i, (unsigned long long)cu.cu_offset,
			cu.language);
		json_name(o, "language_name", dwarf_lang_name(cu.language));
		fprintf(o, ",\"unit_type\":%u", cu.unit_type);
		json_name(o, "unit_type_name", dwarf_ut_name(cu.unit_type));
		fprintf(o, ",\"dwarf_version\":%u,\"addr_size\":%u", cu.dwarf_version, cu.addr_size);
		json_kstr(o, "name", cus_str(&cu, cu.name));
		json_kstr(o, "comp_dir", cus_str(&cu, cu.comp_dir));
		json_kstr(o, "producer", cus_str(&cu, cu.producer));
		fprintf(o, ",\"records\":%zu,\"externs\":%zu", cu.nrecs, cu.nexterns);
		json_hex128(o, "key", e->key.hi, e->key.lo);
		json_hex128(o, "content", e->content.hi, e->content.lo);
		fprintf(o, ",\"addrs\":%u}\n", e->addr_count);
		for (size_t k = 0; k < cu.nrecs; k++)
			put_rec(o, &cu, k);
	}
	cus_cu__free(&cu);
	if (!err && (ferror(o) || fflush(o)))
		err = diag_fail(d, EIO, "write error on the dump output");
	return err;
}
