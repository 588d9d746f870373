/* dwarf_names.c: names of DWARF constants (see dwarf_names.h). */
#include "dwarf_names.h"

#include <dwarf.h>
#include <stddef.h>
#include <elfutils/known-dwarf.h>

const char *dwarf_tag_name(unsigned tag)
{
	switch (tag) {
#define DWARF_ONE_KNOWN_DW_TAG(name, code) case code: return "DW_TAG_" #name;
		DWARF_ALL_KNOWN_DW_TAG
#undef DWARF_ONE_KNOWN_DW_TAG
	case 0x6000: return "DW_TAG_LLVM_annotation";
	}
	return NULL;
}

const char *dwarf_ate_name(unsigned ate)
{
	switch (ate) {
#define DWARF_ONE_KNOWN_DW_ATE(name, code) case code: return #name;
		DWARF_ALL_KNOWN_DW_ATE
#undef DWARF_ONE_KNOWN_DW_ATE
	}
	return NULL;
}

const char *dwarf_lang_name(unsigned lang)
{
	switch (lang) {
#define DWARF_ONE_KNOWN_DW_LANG(name, code) case code: return #name;
		DWARF_ALL_KNOWN_DW_LANG
#undef DWARF_ONE_KNOWN_DW_LANG
	}
	return NULL;
}

const char *dwarf_ut_name(unsigned ut)
{
	switch (ut) {
#define DWARF_ONE_KNOWN_DW_UT(name, code) case code: return #name;
		DWARF_ALL_KNOWN_DW_UT
#undef DWARF_ONE_KNOWN_DW_UT
	}
	return NULL;
}
