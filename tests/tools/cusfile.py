"""cusfile.py: take a .cus file apart and lay it out again per its spec
(format/CU-RECORDS.md, "File layout"), every checksum made anew with xxh3
from libxxhash. For tests that need a damaged or hand-made .cus that still
passes the checksums, so that the decoders' own checks must refuse it.

    import cusfile
    xx = cusfile.xxhash()          # OSError when libxxhash.so.0 is missing
    f = cusfile.parse(data)        # {"head", "ident", "ents": [{lang, ut, dv, co, blob}]}
    data = cusfile.build(f, xx)    # parse() then build() gives the same bytes
"""
import ctypes
import struct


class _H128(ctypes.Structure):
    _fields_ = [("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64)]


def xxhash():
    """libxxhash with XXH3_64bits and XXH3_128bits typed; raises OSError."""
    xx = ctypes.CDLL("libxxhash.so.0")
    xx.XXH3_128bits.restype = _H128
    xx.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    xx.XXH3_64bits.restype = ctypes.c_uint64
    xx.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return xx


def uleb(v):
    """v as unsigned LEB128."""
    out = bytearray()
    while True:
        c = v & 0x7f
        v >>= 7
        if not v:
            out.append(c)
            return bytes(out)
        out.append(c | 0x80)


def parse(b):
    """The header, identity block and each CU's index fields and blob."""
    count, = struct.unpack_from("<I", b, 20)
    ident_off, = struct.unpack_from("<Q", b, 32)
    ident_size, = struct.unpack_from("<I", b, 40)
    index_off, = struct.unpack_from("<Q", b, 48)
    ents = []
    for i in range(count):
        bo, bs, lang, ut, dv, co = struct.unpack_from("<QIHBBQ", b, index_off + 40 * i)
        ents.append(dict(lang=lang, ut=ut, dv=dv, co=co, blob=b[bo:bo + bs]))
    return dict(head=bytearray(b[:64]), ident=b[ident_off:ident_off + ident_size], ents=ents)


def build(f, xx):
    """The file parse() took apart, laid out again with every checksum recomputed."""
    h, ident = bytearray(f["head"]), f["ident"]
    body, idx, pos = bytearray(), bytearray(), 64 + len(ident)
    for e in f["ents"]:
        k = xx.XXH3_128bits(e["blob"], len(e["blob"]))
        idx += struct.pack("<QIHBBQQQ", pos, len(e["blob"]), e["lang"], e["ut"], e["dv"],
                           e["co"], k.lo, k.hi)
        body += e["blob"]
        pos += len(e["blob"])
    struct.pack_into("<I", h, 20, len(f["ents"]))
    struct.pack_into("<Q", h, 24, pos + len(idx))
    struct.pack_into("<Q", h, 32, 64)
    struct.pack_into("<I", h, 40, len(ident))
    struct.pack_into("<Q", h, 48, pos)
    chk = bytes(h[:56]) + ident + bytes(idx)
    struct.pack_into("<Q", h, 56, xx.XXH3_64bits(chk, len(chk)))
    return bytes(h) + ident + bytes(body) + bytes(idx)
