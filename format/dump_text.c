/* dump_text.c: see dump_text.h. */
#include "dump_text.h"
#include "cus.h"

#include <ctype.h>

void dump_quoted(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(o, "\\%c", ch);
		else if (isprint(ch))
			fputc(ch, o);
		else
			fprintf(o, "\\x%02x", ch);
	}
	fputc('"', o);
}

void dump_flags(FILE *o, uint32_t f)
{
	static const char *const names[] = {
		"decl", "external", "artificial", NULL /* annot */, "prototyped", "varargs",
		NULL /* has_pc */, NULL /* has_addr */, "signed", "toplevel", "class", "template",
		"const_value",
	};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((f & (1u << i)) && names[i])
			fprintf(o, " %s", names[i]);
}

void dump_loc(FILE *o, uint32_t loc, uint32_t loc_reg)
{
	static const char *const names[] = { "none", "reg", "const", "expr", "empty", "pieces", "stack" };
	int reg = CUS_PIECE_REG(loc_reg) == CUS_PIECE_NO_REG ? -1 : (int)CUS_PIECE_REG(loc_reg);
	if (loc == CUS_LOC_REG)
		fprintf(o, "reg(%u)", loc_reg);
	else if (loc == CUS_LOC_PIECES && CUS_PIECE_AT(loc_reg))
		fprintf(o, "pieces(%d@%u)", reg, CUS_PIECE_AT(loc_reg) - 1);
	else if (loc == CUS_LOC_PIECES)
		fprintf(o, "pieces(%d)", reg);
	else
		fputs(loc < sizeof(names) / sizeof(names[0]) ? names[loc] : "?", o);
}
