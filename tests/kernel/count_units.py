#!/usr/bin/env python3
"""count_units.py ELF: the number of units in .debug_info, read straight from
the unit headers (an oracle that shares no code with dwarf-extract)."""
import struct
import sys


def main(path):
    with open(path, 'rb') as f:
        data = f.read(64)
        if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
            sys.exit('count_units: only 64-bit little-endian ELF')
        shoff, = struct.unpack_from('<Q', data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
        f.seek(shoff)
        shdrs = [struct.unpack('<IIQQQQIIQQ', f.read(shentsize)) for _ in range(shnum)]
        stroff, strsize = shdrs[shstrndx][4], shdrs[shstrndx][5]
        f.seek(stroff)
        names = f.read(strsize)
        for sh in shdrs:
            name = names[sh[0]:names.index(b'\0', sh[0])]
            if name == b'.debug_info':
                f.seek(sh[4])
                info = f.read(sh[5])
                break
        else:
            sys.exit('count_units: no .debug_info')
    off = units = 0
    while off < len(info):
        length, = struct.unpack_from('<I', info, off)
        if length == 0xffffffff:
            length, = struct.unpack_from('<Q', info, off + 4)
            off += 12 + length
        else:
            off += 4 + length
        units += 1
    print(units)


if __name__ == '__main__':
    main(sys.argv[1])
