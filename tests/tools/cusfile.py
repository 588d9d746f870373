"""cusfile.py: take a .cus file apart and lay it out again per its spec
(format/CU-RECORDS.md, "File layout"), every checksum made anew with xxh3
from libxxhash. For tests that need a damaged or hand-made .cus that still
passes the checksums, so that the decoders' own checks must refuse it.

    import cusfile
    xx = cusfile.xxhash()          # OSError when libxxhash.so.0 is missing
    f = cusfile.parse(data)        # {"head", "ident", "addrs", "ents": [{lang, ut, dv, co, blob, ...}]}
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


ENTRY = 64  # an index entry (format version 3)
ADDR = 16   # an address table entry


def _uleb_at(b, p):
    v = s = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7f) << s
        s += 7
        if not c & 0x80:
            return v, p


# Per record kind (format/CU-RECORDS.md, "Records"): its fixed fields.
_FIELDS = {1: 5, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1, 7: 2, 8: 3, 9: 3, 10: 3, 11: 1, 12: 2,
           13: 8, 14: 5, 15: 4, 16: 1, 17: 3}
_ANNOT, _HAS_PC, _HAS_ADDR = 1 << 3, 1 << 6, 1 << 7


def _skip_annots(b, p):
    n, p = _uleb_at(b, p)
    for _ in range(2 * n):
        _, p = _uleb_at(b, p)
    return p


def normal_form(blob):
    """The blob's normal form (cu_offset and every address pair 0), its
    address pairs [(addr, shndx)] and its extern count: what the index's
    content, addr_count and nexterns are for it. Raises IndexError or
    KeyError on a blob it cannot walk."""
    _, p = _uleb_at(blob, 4)
    out, at = bytearray(blob[:4]) + b"\0", p
    q = p
    for _ in range(7):  # 4 unit fields, 3 string refs
        _, q = _uleb_at(blob, q)
    n, q = _uleb_at(blob, q)
    nx, q = _uleb_at(blob, q + n)
    for _ in range(nx):
        _, q = _uleb_at(blob, q)
    nrec, q = _uleb_at(blob, q)
    pairs = []
    for _ in range(nrec):
        kind = blob[q]
        q += 1
        _, q = _uleb_at(blob, q)  # die delta (a sleb skips as a uleb)
        flags, q = _uleb_at(blob, q)
        for _ in range(_FIELDS[kind]):
            _, q = _uleb_at(blob, q)
        if kind in (8, 9, 10, 11, 12):
            cnt, q = _uleb_at(blob, q)
            for _ in range(cnt):
                if kind in (8, 9):
                    mflags, q = _uleb_at(blob, q)
                    for _ in range(4):
                        _, q = _uleb_at(blob, q)
                    if mflags & _ANNOT:
                        q = _skip_annots(blob, q)
                elif kind == 10:
                    for _ in range(2):
                        _, q = _uleb_at(blob, q)
                else:
                    _, q = _uleb_at(blob, q)
        if (kind == 13 and flags & _HAS_PC) or (kind == 15 and flags & _HAS_ADDR):
            out += blob[at:q] + b"\0\0"
            addr, q = _uleb_at(blob, q)
            shndx, q = _uleb_at(blob, q)
            pairs.append((addr, shndx))
            at = q
        if flags & _ANNOT:
            q = _skip_annots(blob, q)
    out += blob[at:]
    return bytes(out), pairs, nx


def parse(b):
    """The header, identity block, address table and each CU's index fields and blob."""
    count, = struct.unpack_from("<I", b, 20)
    ident_off, = struct.unpack_from("<Q", b, 32)
    ident_size, = struct.unpack_from("<I", b, 40)
    index_off, = struct.unpack_from("<Q", b, 48)
    ents, naddrs = [], 0
    for i in range(count):
        bo, bs, lang, ut, dv, co, _klo, _khi, clo, chi, na, nx = struct.unpack_from(
            "<QIHBBQQQQQII", b, index_off + ENTRY * i)
        ents.append(dict(lang=lang, ut=ut, dv=dv, co=co, blob=b[bo:bo + bs], orig=b[bo:bo + bs],
                         content=(clo, chi), naddr=na, nx=nx))
        naddrs += na
    table_off = index_off - ADDR * naddrs
    return dict(head=bytearray(b[:64]), ident=b[ident_off:ident_off + ident_size],
                addrs=b[table_off:index_off], ents=ents)


def build(f, xx):
    """The file parse() took apart, laid out again with every checksum
    recomputed. An entry whose blob was changed gets the content, extern
    count and address pairs normal_form() finds in it (none, when it cannot
    walk the blob: the reader then refuses it, for that or another reason)."""
    h, ident = bytearray(f["head"]), f["ident"]
    body, idx, pos = bytearray(), bytearray(), 64 + len(ident)
    table, at = bytearray(), 0
    for e in f["ents"]:
        k = xx.XXH3_128bits(e["blob"], len(e["blob"]))
        na = e["naddr"]
        if e["blob"] == e.get("orig"):
            content, nx = e["content"], e["nx"]
            table += f["addrs"][at:at + ADDR * na]
        else:
            try:
                norm, pairs, nx = normal_form(e["blob"])
            except (IndexError, KeyError):
                norm, pairs, nx = bytes(e["blob"]), [], 0
            c = xx.XXH3_128bits(norm, len(norm))
            content, na = (c.lo, c.hi), len(pairs)
            for a, sh in pairs:
                table += struct.pack("<QII", a, sh, 0)
        at += ADDR * e["naddr"]
        idx += struct.pack("<QIHBBQQQQQII", pos, len(e["blob"]), e["lang"], e["ut"], e["dv"],
                           e["co"], k.lo, k.hi, content[0], content[1], na, nx)
        body += e["blob"]
        pos += len(e["blob"])
    struct.pack_into("<I", h, 20, len(f["ents"]))
    struct.pack_into("<Q", h, 24, pos + len(table) + len(idx))
    struct.pack_into("<Q", h, 32, 64)
    struct.pack_into("<I", h, 40, len(ident))
    struct.pack_into("<Q", h, 48, pos + len(table))
    chk = bytes(h[:56]) + ident + bytes(table) + bytes(idx)
    struct.pack_into("<Q", h, 56, xx.XXH3_64bits(chk, len(chk)))
    return bytes(h) + ident + bytes(body) + bytes(table) + bytes(idx)
