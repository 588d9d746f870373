#!/usr/bin/env python3
"""kfunc_sets.py ELF: the kfuncs of an ELF's .BTF_ids, read with binutils,
not with btf-emit's reader, so that a test can count btf-emit's bpf_kfunc
tags against an independent list.

A kfunc set is a struct btf_id_set8 { u32 cnt; u32 flags; { u32 id; u32
flags; } pairs[]; } at a symbol __BTF_ID__set8__NAME whose flags have
BTF_SET8_KFUNCS (bit 0). Each pair's id word carries a symbol
__BTF_ID__func__FUNC__N (FUNC may hold "__" itself: the cut is before the
last "__" and its digits). A set's extent is its symbol's size where it has
one (btf_ids.h's BTF_SET8_END, the only extent before resolve_btfids fills
cnt in), else cnt pairs. Prints one line per kfunc, "FUNC FLAGS" (flags in
hex, the pair's second word), sorted by name, each once; a kfunc in several
sets gets the flags of the first. Exit 1 when the ELF has no .BTF_ids.
"""
import re
import struct
import subprocess
import sys
import tempfile

BTF_SET8_KFUNCS = 1


def main():
    elf = sys.argv[1]
    hdr = open(elf, "rb").read(6)
    order = ">" if hdr[5] == 2 else "<"
    sec = subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\]\s+\.BTF_ids\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sec)
    if not m:
        print(f"kfunc_sets.py: {elf}: no .BTF_ids section", file=sys.stderr)
        return 1
    base, size = int(m.group(1), 16), int(m.group(2), 16)
    with tempfile.NamedTemporaryFile() as t:
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.BTF_ids", elf, t.name], check=True)
        data = open(t.name, "rb").read()
    if len(data) < size:
        data = data + bytes(size - len(data))
    syms = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True, check=True).stdout
    sets, funcs = [], {}
    for line in syms.splitlines():
        f = line.split()
        if len(f) < 8 or not f[7].startswith("__BTF_ID__"):
            continue
        addr = int(f[1], 16)
        if not base <= addr < base + size:
            continue
        name = f[7]
        if name.startswith("__BTF_ID__set8__"):
            sets.append((addr - base, int(f[2], 0)))
        elif name.startswith("__BTF_ID__func__"):
            funcs.setdefault(addr - base, re.sub(r"__\d+$", "", name[len("__BTF_ID__func__"):]))
    out = {}
    for at, symsize in sorted(sets):
        cnt, flags = struct.unpack_from(order + "II", data, at)
        if not flags & BTF_SET8_KFUNCS:
            continue
        if symsize:
            cnt = (symsize - 8) // 8
        for i in range(cnt):
            pair = at + 8 + 8 * i
            fn = funcs.get(pair)
            if fn is None:
                continue
            out.setdefault(fn, struct.unpack_from(order + "I", data, pair + 4)[0])
    for fn in sorted(out):
        print(f"{fn} {out[fn]:#x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
