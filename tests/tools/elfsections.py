"""elfsections.py: the section headers of a 64-bit little-endian ELF, for
tests that read or patch a section's bytes in place (t0220, t1320).

    import elfsections
    secs = elfsections.parse(data)      # one dict a section, in header order:
                                        # name (bytes), type, flags, offset,
                                        # size, hdr (its header's file offset)
    info = elfsections.find(secs, ".debug_info")   # KeyError when absent
"""
import struct

SHT_NOBITS = 8
SHF_COMPRESSED = 0x800


def parse(data):
    """The section headers of data (bytes or bytearray of the whole file)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    raw = [(shoff + i * shentsize, struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
           for i in range(shnum)]
    names = raw[shstrndx][1][4]

    def name_of(off):
        return bytes(data[names + off:data.index(b"\0", names + off)])
    return [dict(name=name_of(h[0]), type=h[1], flags=h[2], offset=h[4], size=h[5], hdr=at)
            for at, h in raw]


def find(secs, name):
    """The section called name (str or bytes)."""
    want = name.encode() if isinstance(name, str) else name
    for s in secs:
        if s["name"] == want:
            return s
    raise KeyError(name)
