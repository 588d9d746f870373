#!/usr/bin/env python3
"""big-names.py OUT.o CUS STRUCTS NAME_BYTES: an x86-64 relocatable ELF whose
DWARF 5 has CUS compile units, each with STRUCTS empty structs (size 0) named
by NAME_BYTES-byte names, all different, held inline (DW_FORM_string): so
CUS * STRUCTS * NAME_BYTES bytes of distinct names, as a test of BTF's 4 GiB
string limit needs, without a compiler (no C compiler takes a 16 MiB
identifier in reasonable time) and without relocations.

The file is written section by section and never held in memory whole: a
4.4 GB one takes about 10 s. Each unit must stay under 4 GiB (32-bit DWARF).
"""
import struct
import sys

DW_TAG_compile_unit, DW_TAG_structure_type = 0x11, 0x13
DW_AT_name, DW_AT_byte_size, DW_AT_language = 0x03, 0x0b, 0x13
DW_FORM_string, DW_FORM_data1 = 0x08, 0x0b
DW_LANG_C99 = 0x0c


def abbrevs():
    a = bytes([1, DW_TAG_compile_unit, 1, DW_AT_language, DW_FORM_data1, DW_AT_name, DW_FORM_string, 0, 0])
    a += bytes([2, DW_TAG_structure_type, 0, DW_AT_name, DW_FORM_string, DW_AT_byte_size, DW_FORM_data1, 0, 0])
    return a + b"\0"


def name_of(cu, k, size):
    head = b"big_%d_%d_" % (cu, k)
    return head + b"x" * (size - len(head))


def main():
    out, cus, structs, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    cu_name = b"big-names.c\0"
    die = 1 + size + 1 + 1  # abbrev code, name and its NUL, byte size
    body = 1 + 1 + len(cu_name) + structs * die + 1  # CU DIE, structs, end of children
    unit = 4 + 2 + 1 + 1 + 4 + body  # length, version, unit type, address size, abbrev offset
    if unit - 4 >= 0xfffffff0:
        sys.exit("big-names.py: a unit of %d bytes does not fit 32-bit DWARF" % unit)
    abbrev = abbrevs()
    symtab = bytes(24)  # the null symbol: libdwfl wants a symbol table in a .o
    strtab = b"\0"
    shstr = b"\0.debug_abbrev\0.debug_info\0.symtab\0.strtab\0.shstrtab\0"
    secs = []  # name, type, offset, size, link, info, entsize
    at = 64
    # The symbol table first, where its 8-byte alignment is free.
    for name, typ, data, link, info, ent in [(b".symtab", 2, symtab, 2, 1, 24),
                                              (b".strtab", 3, strtab, 0, 0, 0),
                                              (b".debug_abbrev", 1, abbrev, 0, 0, 0),
                                              (b".debug_info", 1, None, 0, 0, 0),
                                              (b".shstrtab", 3, shstr, 0, 0, 0)]:
        n = cus * unit if data is None else len(data)
        secs.append((shstr.index(name + b"\0"), typ, at, n, link, info, ent, data))
        at += n
    off_sh = (at + 7) & ~7
    with open(out, "wb") as f:
        # ELF header: ELFCLASS64, little-endian, ET_REL, EM_X86_64, its sections.
        f.write(b"\x7fELF\x02\x01\x01" + bytes(9))
        f.write(struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, off_sh, 0, 64, 0, 0, 64,
                            len(secs) + 1, len(secs)))
        for _, _, _, _, _, _, _, data in secs:
            if data is not None:
                f.write(data)
                continue
            for cu in range(cus):
                f.write(struct.pack("<IHBBI", unit - 4, 5, 1, 8, 0))
                f.write(bytes([1, DW_LANG_C99]) + cu_name)
                for k in range(structs):
                    f.write(b"\x02" + name_of(cu, k, size) + b"\0\0")
                f.write(b"\0")
        f.write(bytes(off_sh - at))
        f.write(bytes(64))  # section 0
        for name, typ, off, n, link, info, ent, _ in secs:
            f.write(struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, n, link, info, 8 if typ == 2 else 1, ent))

if __name__ == "__main__":
    main()
