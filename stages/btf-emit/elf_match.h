/* elf_match.h: is the --elf file the one the graph was made from? (elf_match.c) */
#ifndef BTFPIPE_EMIT_ELF_MATCH_H
#define BTFPIPE_EMIT_ELF_MATCH_H

struct diag;

/* Compare what the graph at graph_path records of its input (when it has
 * exactly one) with the ELF at elf_path: their GNU build ids when both
 * have one, else the ELF's e_machine, class and byte order and the offsets
 * of its .debug_info units. Reads a few hundred bytes of each file (and
 * the unit headers only when there is no build id pair), so that main.c
 * can run it before the cache answers.
 * Returns: 0 when the ELF may be the graph's: the same build id, the same
 * units, or nothing to compare (several inputs, an ELF without DWARF, a
 * compressed .debug_info, a file that cannot be read here: the read that
 * follows reports that); -EINVAL when it is another file, the difference
 * in d, naming both files. */
int elf_match__check(const char *graph_path, const char *elf_path, struct diag *d);

#endif
