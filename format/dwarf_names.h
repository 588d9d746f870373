/* dwarf_names.h: DWARF constant names for text dumps, from elfutils'
 * known-dwarf.h tables. Returns NULL for a value the table does not know. */
#ifndef BTFPIPE_DWARF_NAMES_H
#define BTFPIPE_DWARF_NAMES_H

const char *dwarf_tag_name(unsigned tag);
const char *dwarf_ate_name(unsigned ate);
const char *dwarf_lang_name(unsigned lang);
const char *dwarf_ut_name(unsigned ut);

#endif
