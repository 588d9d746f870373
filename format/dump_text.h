/* dump_text.h: the pieces both text dumps (.cus and .graph) print the same
 * way, so a string or a flag reads identically in either dump. */
#ifndef BTFPIPE_DUMP_TEXT_H
#define BTFPIPE_DUMP_TEXT_H

#include <stdint.h>
#include <stdio.h>

/* "s" with '"' and '\' escaped and non-printable bytes as \xNN. */
void dump_quoted(FILE *o, const char *s);
/* " decl external ..." for the CU-RECORDS.md flag bits that are words in a
 * dump (ANNOT, HAS_PC and HAS_ADDR show as lines or fields instead). */
void dump_flags(FILE *o, uint32_t flags);
/* A parameter's location (CU-RECORDS.md `loc`, `loc_reg`): "reg(5)",
 * "pieces(5@0)", "pieces(5)", "stack", "none", ... */
void dump_loc(FILE *o, uint32_t loc, uint32_t loc_reg);

#endif
