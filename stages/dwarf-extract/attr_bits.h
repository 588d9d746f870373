/* attr_bits.h: the one list of the DWARF attributes dwarf-extract reads
 * (attr_bits.c), each with its bit. A leaf: the DIE reader passes on only
 * these (die_reader.c) and die_attrs.c reads each by its bit. */
#ifndef BTFPIPE_EXTRACT_ATTR_BITS_H
#define BTFPIPE_EXTRACT_ATTR_BITS_H

enum {
	ATTR_NAME, ATTR_TYPE, ATTR_BYTE_SIZE, ATTR_BIT_SIZE, ATTR_DATA_BIT_OFFSET,
	ATTR_BIT_OFFSET, ATTR_MEMBER_LOC, ATTR_ENCODING, ATTR_DECLARATION,
	ATTR_EXTERNAL, ATTR_ARTIFICIAL, ATTR_PROTOTYPED, ATTR_INLINE, ATTR_CC,
	ATTR_ORIGIN, ATTR_SPEC, ATTR_LOW_PC, ATTR_ENTRY_PC, ATTR_RANGES,
	ATTR_LOCATION, ATTR_CONST_VALUE, ATTR_LINKAGE_NAME, ATTR_ALIGNMENT,
	ATTR_COUNT, ATTR_LOWER, ATTR_UPPER,
};

/* attr's ATTR_* bit, or -1: not one dwarf-extract reads. */
int attr_bits__of(unsigned attr);

#endif
