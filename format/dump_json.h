/* dump_json.h: the pieces both JSON-lines dumps (.cus and .graph) print
 * the same way (grammar: CU-RECORDS.md and TYPE-GRAPH.md, "JSON-lines
 * dump"). One JSON object per line, keys in a fixed order, so the dumps
 * are as stable as the text ones and diff line by line. */
#ifndef BTFPIPE_DUMP_JSON_H
#define BTFPIPE_DUMP_JSON_H

#include <stdint.h>
#include <stdio.h>

/* s as a JSON string. DWARF names are bytes, not always UTF-8: '"', '\'
 * and every byte outside printable ASCII are written as \uXXXX of the
 * byte's value (00-ff), so a reader gets the bytes back by encoding the
 * decoded string as Latin-1. */
void json_str(FILE *o, const char *s);
/* ,"key": then json_str(s). */
void json_kstr(FILE *o, const char *key, const char *s);
/* ,"key":["decl","external",...]: every flag bit set, by its name
 * (CU-RECORDS.md and TYPE-GRAPH.md), an unknown bit as "bitN". */
void json_flags(FILE *o, const char *key, uint32_t flags);
/* ,"key":"<name>" when name is not NULL, else ,"key":null. */
void json_name(FILE *o, const char *key, const char *name);
/* ,"key":N,"key_name":"<name>" (null when name is NULL): a number that
 * names something (a DW_ATE, a DW_TAG, a fwd kind). */
void json_named(FILE *o, const char *key, uint32_t v, const char *name);
/* ,"key":N: an enumerator's value, signed when its enum is. */
void json_eval(FILE *o, const char *key, uint64_t v, int is_signed);
/* ,"key":"<32 hex digits>": a key128 as the text dumps print it. */
void json_hex128(FILE *o, const char *key, uint64_t hi, uint64_t lo);
/* One annotation of an "annots" list: [name,value], after a comma unless
 * it is the list's first. */
void json_annot(FILE *o, int first, const char *name, const char *value);
/* ,"loc_name":"reg(5)": a parameter location as the text dumps print it. */
void json_loc(FILE *o, uint32_t loc, uint32_t loc_reg);

#endif
