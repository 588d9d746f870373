/* die_attrs.h: one pass over a DIE's attributes (die_attrs.c; the list: attr_bits.h). */
#ifndef BTFPIPE_EXTRACT_DIE_ATTRS_H
#define BTFPIPE_EXTRACT_DIE_ATTRS_H

#include <elfutils/libdw.h>
#include <stdint.h>
#include "attr_bits.h"
#include "die_reader.h"

struct diag;

/* Every attribute dwarf-extract reads (attr_bits.h), from one pass over a DIE. */
struct die_attrs {
	uint64_t present;	/* bit (1 << ATTR_x) per attribute found */
	const char *name, *linkage_name, *const_str;
	uint64_t type, origin, spec; /* referenced DIEs: global offsets */
	uint64_t byte_size, bit_size, data_bit_offset, bit_offset, member_loc;
	uint64_t encoding, inline_kind, cc, alignment, count, lower, upper;
	int upper_is_signed, upper_unknown, count_unknown, member_loc_unknown;
	Dwarf_Attribute location, const_value;
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
