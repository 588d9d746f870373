/* attr_bits.c: the one list of the DWARF attributes dwarf-extract reads.
 *
 * A leaf of its own: die_reader.c passes on only these attributes of a DIE
 * (it asks once per abbreviation), and die_attrs.c reads each by its bit.
 */
#include "attr_bits.h"

#include <dwarf.h>

/* The attributes dwarf-extract reads, each with its ATTR_* bit: the one
 * list (attr_cb() reads by bit; the DIE reader passes on only these). */
int attr_bits__of(unsigned attr)
{
	switch (attr) {
	case DW_AT_name: return ATTR_NAME;
	case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name: return ATTR_LINKAGE_NAME;
	case DW_AT_type: return ATTR_TYPE;
	case DW_AT_abstract_origin: return ATTR_ORIGIN;
	case DW_AT_specification: return ATTR_SPEC;
	case DW_AT_byte_size: return ATTR_BYTE_SIZE;
	case DW_AT_bit_size: return ATTR_BIT_SIZE;
	case DW_AT_data_bit_offset: return ATTR_DATA_BIT_OFFSET;
	case DW_AT_bit_offset: return ATTR_BIT_OFFSET;
	case DW_AT_data_member_location: return ATTR_MEMBER_LOC;
	case DW_AT_encoding: return ATTR_ENCODING;
	case DW_AT_inline: return ATTR_INLINE;
	case DW_AT_calling_convention: return ATTR_CC;
	case DW_AT_alignment: return ATTR_ALIGNMENT;
	case DW_AT_count: return ATTR_COUNT;
	case DW_AT_lower_bound: return ATTR_LOWER;
	case DW_AT_upper_bound: return ATTR_UPPER;
	case DW_AT_declaration: return ATTR_DECLARATION;
	case DW_AT_external: return ATTR_EXTERNAL;
	case DW_AT_artificial: return ATTR_ARTIFICIAL;
	case DW_AT_prototyped: return ATTR_PROTOTYPED;
	case DW_AT_low_pc: return ATTR_LOW_PC;
	case DW_AT_entry_pc: return ATTR_ENTRY_PC;
	case DW_AT_ranges: return ATTR_RANGES;
	case DW_AT_location: return ATTR_LOCATION;
	case DW_AT_const_value: return ATTR_CONST_VALUE;
	}
	return -1;
}
