#!/usr/bin/env bash
# t0220-dwarf-hash: the DWARF hash in a .cus identity block is the value
# format/CU-RECORDS.md defines, computed here anew in Python from the ELF's
# section headers and libxxhash, and it does not depend on -j.
#
# dwarf-extract reads the bytes with pread() 256 KB at a time
# (stages/dwarf-extract/input.c, identify()). The sample fixture's .debug_*
# sections are a few KB, so a copy gets an extra 9 MiB .debug_btfpipe_pad
# section (many reads, the last one short), and a copy of that one its
# debug sections compressed (hashed as stored in the file). Each is
# extracted at -j1, -j2 and -j8; every identity must hold the Python value.
# A byte changed 4 MiB into the pad must change the hash, to the Python
# value of the changed file.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"

# spec_hash ELF: the DWARF hash per format/CU-RECORDS.md, as the dump prints
# it (high 64 bits, then low, in hex).
spec_hash() {
	PYTHONPATH="$T_TOP/tests/tools" python3 - "$1" <<'PY'
import struct, sys
import cusfile  # tests/tools/cusfile.py: libxxhash through ctypes
xx = cusfile.xxhash()
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "a 64-bit little-endian ELF"
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
shdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
stroff = shdrs[shstrndx][4]
def name_of(off):
    return data[stroff + off:data.index(b"\0", stroff + off)]
stream = bytearray()
for sh in shdrs:
    name, typ, off, size = name_of(sh[0]), sh[1], sh[4], sh[5]
    if not name.startswith(b".debug_") or typ == 8:  # SHT_NOBITS
        continue
    stream += name + b"\0" + data[off:off + size]
h = xx.XXH3_128bits(bytes(stream), len(stream))
print("%016x%016x" % (h.hi, h.lo))
PY
}

# check_hash LABEL ELF: extract ELF at -j1, -j2, -j8; each identity must hold
# spec_hash's value.
check_hash() {
	local label=$1 elf=$2 want j got
	if ! want=$(spec_hash "$elf" 2>&1); then
		not_ok "$label: the DWARF hash computed from the spec" "$want"
		return
	fi
	for j in 1 2 8; do
		if ! out=$("$EXTRACT" -j "$j" -o "$T_OUT/$label-j$j.cus" "$elf" 2>&1) ||
			! got=$("$EXTRACT" --dump "$T_OUT/$label-j$j.cus" 2>&1 | sed -n '1s/.* dwarf=\([0-9a-f]*\) .*/\1/p'); then
			not_ok "$label: extract and dump at -j$j" "$out"
			continue
		fi
		if [ "$got" = "$want" ]; then ok "$label -j$j: the identity's DWARF hash is the spec's"; else
			not_ok "$label -j$j: the identity's DWARF hash is the spec's" "got '$got', the spec gives $want"; fi
	done
}

if ! have "$GCC" || ! have objcopy; then
	skip "DWARF hash" "$GCC or objcopy not found"
	exit 0
fi
if ! python3 -c 'import ctypes; ctypes.CDLL("libxxhash.so.0")' 2>/dev/null; then
	skip "DWARF hash" "libxxhash.so.0 not loadable from Python"
	exit 0
fi
if ! out=$(build_fixture "$GCC" -O2 5 "$T_OUT" sample 2>&1); then
	not_ok "build the sample fixture" "$out"
	exit 0
fi
check_hash sample "$T_OUT/sample"

# 9 MiB + 123 bytes of deterministic filler: 37 reads, the last one short.
python3 -c '
import random, sys
random.seed(220)
sys.stdout.buffer.write(random.randbytes(9 * 1024 * 1024 + 123))' >"$T_OUT/pad.bin"
if out=$(objcopy --add-section .debug_btfpipe_pad="$T_OUT/pad.bin" "$T_OUT/sample" "$T_OUT/padded" 2>&1); then
	check_hash padded "$T_OUT/padded"
else
	not_ok "objcopy: add a 9 MiB .debug_btfpipe_pad" "$out"
fi
if [ -e "$T_OUT/padded" ] &&
	out=$(objcopy --compress-debug-sections=zlib "$T_OUT/padded" "$T_OUT/compressed" 2>&1); then
	check_hash compressed "$T_OUT/compressed"
else
	not_ok "objcopy: compress the padded copy's debug sections" "${out:-no padded copy}"
fi

# One byte 4 MiB into the pad changed: a different hash, the spec's.
if [ -e "$T_OUT/padded-j1.cus" ]; then
	cp "$T_OUT/padded" "$T_OUT/changed"
	if out=$(python3 - "$T_OUT/changed" <<'PY' 2>&1
import subprocess, sys
path = sys.argv[1]
hdrs = subprocess.run(["readelf", "-W", "-S", path], capture_output=True, text=True, check=True).stdout
line = next(l for l in hdrs.splitlines() if ".debug_btfpipe_pad" in l)
fields = line.split("]", 1)[1].split()
off = int(fields[3], 16) + (4 << 20) + 4096
with open(path, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x40]))
PY
	); then
		check_hash changed "$T_OUT/changed"
		a=$("$EXTRACT" --dump "$T_OUT/padded-j1.cus" | sed -n '1s/.* dwarf=\([0-9a-f]*\) .*/\1/p')
		b=$("$EXTRACT" --dump "$T_OUT/changed-j1.cus" 2>/dev/null | sed -n '1s/.* dwarf=\([0-9a-f]*\) .*/\1/p')
		if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
			ok "a byte changed 4 MiB into the pad changes the hash"
		else
			not_ok "a byte changed 4 MiB into the pad changes the hash" "before '$a', after '$b'"
		fi
	else
		not_ok "change a byte 4 MiB into the pad" "$out"
	fi
fi
