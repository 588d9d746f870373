/* die_attrs.h: one pass over a DIE's attributes (die_attrs.c; the list: attr_bits.c). */
#ifndef BTFPIPE_EXTRACT_DIE_ATTRS_H
#define BTFPIPE_EXTRACT_DIE_ATTRS_H

#include <elfutils/libdw.h>
#include <stdint.h>
#include "die_reader.h"

struct diag;

/* Every attribute dwarf-extract reads, from one pass over a DIE. */
int die_attrs__bit(unsigned attr);	/* its ATTR_* bit, or -1: not one of them */
struct die_attrs {
	uint64_t present;	/* bit (1 << ATTR_x) per attribute found */
	const char *name, *linkage_name, *const_str;
	uint64_t type, origin, spec; /* referenced DIEs: global offsets */
	uint64_t byte_size, bit_size, data_bit_offset, bit_offset, member_loc;
	uint64_t encoding, inline_kind, cc, alignment, count, lower, upper;
	int upper_is_signed, upper_unknown, count_unknown, member_loc_unknown;
	Dwarf_Attribute location, const_value;
};

enum {
	ATTR_NAME, ATTR_TYPE, ATTR_BYTE_SIZE, ATTR_BIT_SIZE, ATTR_DATA_BIT_OFFSET,
	ATTR_BIT_OFFSET, ATTR_MEMBER_LOC, ATTR_ENCODING, ATTR_DECLARATION,
	ATTR_EXTERNAL, ATTR_ARTIFICIAL, ATTR_PROTOTYPED, ATTR_INLINE, ATTR_CC,
	ATTR_ORIGIN, ATTR_SPEC, ATTR_LOW_PC, ATTR_ENTRY_PC, ATTR_RANGES,
	ATTR_LOCATION, ATTR_CONST_VALUE, ATTR_LINKAGE_NAME, ATTR_ALIGNMENT,
	ATTR_COUNT, ATTR_LOWER, ATTR_UPPER,
};

#define HAS(a, x) (((a)->present >> ATTR_##x) & 1)

/* Returns: 0, or -EBADMSG with the DIE named in d. References are read as
 * global DIE offsets of main_dw's file, with CUS_ALT_BIT for a DIE of the
 * dwz alternate file. r reads the DIE when it can (NULL: libdw only). */
int die_attrs__read(const struct die_reader *r, Dwarf_Die *die, Dwarf *main_dw, struct die_attrs *a,
		    struct diag *d);
/* A DIE's global offset, CUS_ALT_BIT set when it lives in the alternate file. */
uint64_t die_gid(Dwarf *main_dw, Dwarf_Die *die);

#endif
