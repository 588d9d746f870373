/* dump_json.c: see dump_json.h. */
#include "dump_json.h"
#include "dump_text.h"

void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x7f)
			fprintf(o, "\\u%04x", ch);
		else
			fputc(ch, o);
	}
	fputc('"', o);
}

void json_kstr(FILE *o, const char *key, const char *s)
{
	fprintf(o, ",\"%s\":", key);
	json_str(o, s);
}

void json_flags(FILE *o, const char *key, uint32_t f)
{
	/* The bits of CU-RECORDS.md (0-12) and TYPE-GRAPH.md's two of its own. */
	static const char *const names[32] = {
		"decl", "external", "artificial", "annot", "prototyped", "varargs", "has_pc", "has_addr",
		"signed", "toplevel", "class", "template", "const_value",
		[16] = "unnamed_param", [17] = "reordered",
	};
	fprintf(o, ",\"%s\":[", key);
	int first = 1;
	for (unsigned i = 0; i < 32; i++) {
		if (!(f & (1u << i)))
			continue;
		if (!first)
			fputc(',', o);
		first = 0;
		if (names[i])
			fprintf(o, "\"%s\"", names[i]);
		else
			fprintf(o, "\"bit%u\"", i);
	}
	fputc(']', o);
}

void json_name(FILE *o, const char *key, const char *name)
{
	if (name)
		json_kstr(o, key, name);
	else
		fprintf(o, ",\"%s\":null", key);
}

void json_named(FILE *o, const char *key, uint32_t v, const char *name)
{
	char k[64];
	fprintf(o, ",\"%s\":%u", key, v);
	snprintf(k, sizeof(k), "%s_name", key);
	json_name(o, k, name);
}

void json_eval(FILE *o, const char *key, uint64_t v, int is_signed)
{
	if (is_signed)
		fprintf(o, ",\"%s\":%lld", key, (long long)v);
	else
		fprintf(o, ",\"%s\":%llu", key, (unsigned long long)v);
}

void json_hex128(FILE *o, const char *key, uint64_t hi, uint64_t lo)
{
	fprintf(o, ",\"%s\":\"%016llx%016llx\"", key, (unsigned long long)hi, (unsigned long long)lo);
}

void json_annot(FILE *o, int first, const char *name, const char *value)
{
	fputs(first ? "[" : ",[", o);
	json_str(o, name);
	fputc(',', o);
	json_str(o, value);
	fputc(']', o);
}

void json_loc(FILE *o, uint32_t loc, uint32_t loc_reg)
{
	/* dump_loc() prints only letters, digits and ()@-: nothing to escape. */
	fputs(",\"loc_name\":\"", o);
	dump_loc(o, loc, loc_reg);
	fputc('"', o);
}
