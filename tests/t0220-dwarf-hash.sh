#!/usr/bin/env bash
# t0220-dwarf-hash: the DWARF hash in a .cus identity block is the value
# format/CU-RECORDS.md defines, computed here anew in Python from the ELF's
# section headers and libxxhash: each .debug_* section cut into pieces (an
# uncompressed .debug_info at its units, every other section 1 MiB at a
# time), each piece hashed, then one hash over names, sizes and piece hashes.
#
# dwarf-extract hashes the pieces in several places (stages/dwarf-extract/
# dwarf_hash.c): a worker hashes the unit it has just walked, pool items
# after the units read the other pieces with pread() 256 KB at a time, and
# with --cache all of it is done before the units. The sample fixture's
# .debug_* sections are a few KB, so copies of it get a 9 MiB
# .debug_btfpipe_pad section of text-like filler (ten pieces, the last one
# short; 37 reads):
#   padded      as added;
#   compressed  every debug section compressed by objcopy, the pad too
#               (checked: SHF_COMPRESSED, still over 256 KB), hashed as
#               their uncompressed bytes (inflate.c's copy), so the hash
#               is the padded copy's: .debug_info again at its units;
#   nobits      the pad made SHT_NOBITS: not hashed at all, so the hash is
#               the sample's own;
#   changed     one byte 4 MiB into the pad flipped: a new hash.
# Each is extracted at -j1 and -j8, and with --cache at -j2; every identity
# must hold the Python value. So must the hash of two-unit relocatable
# objects (gcc -c, ld -r) in 32- and 64-bit DWARF, whose units no walker
# hashes (their .debug_info is relocated in memory, the file's bytes are
# read instead), and of the sample in 64-bit DWARF.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"

# elf_tool MODE ELF [ARG]: the ELF's section headers, in Python.
#   hash ELF            the DWARF hash per format/CU-RECORDS.md, as the dump
#                       prints it (high 64 bits, then low, in hex)
#   flags ELF NAME      section NAME's sh_flags and sh_size
#   nobits ELF NAME     make section NAME SHT_NOBITS, in place
#   flip ELF NAME AT    flip a bit of the byte AT bytes into section NAME
elf_tool() {
	PYTHONPATH="$T_TOP/tests/tools" python3 - "$@" <<'PY'
import struct, sys
import elfsections  # tests/tools/elfsections.py: the section headers
mode, path = sys.argv[1:3]
data = bytearray(open(path, "rb").read())
secs = elfsections.parse(data)
if mode == "hash":
    import cusfile  # tests/tools/cusfile.py: libxxhash through ctypes
    xx = cusfile.xxhash()
    def plain(b):
        """A SHF_COMPRESSED section's bytes uncompressed (Elf64_Chdr, LSB)."""
        ch_type, _, ch_size, _ = struct.unpack_from("<IIQQ", b, 0)
        if ch_type == 1:
            import zlib
            out = zlib.decompress(b[24:])
        else:
            import subprocess
            out = subprocess.run(["zstd", "-q", "-d", "-c"], input=b[24:], capture_output=True, check=True).stdout
        assert len(out) == ch_size, "uncompressed size"
        return out
    def pieces(sh, b):
        if sh["name"] != b".debug_info":
            return [b[at:at + (1 << 20)] for at in range(0, len(b), 1 << 20)]
        out, at, n = [], 0, len(b)
        while at < n:  # at each unit's unit_length; what does not fit is the rest
            size = 0
            if n - at >= 4:
                length = int.from_bytes(b[at:at + 4], "little")
                if length == 0xffffffff:
                    if n - at >= 12:
                        l64 = int.from_bytes(b[at + 4:at + 12], "little")
                        size = 12 + l64 if l64 <= n - at - 12 else 0
                elif length < 0xfffffff0:
                    size = 4 + length if 4 + length <= n - at else 0
            size = size or n - at
            out.append(b[at:at + size])
            at += size
        return out
    stream = bytearray()
    for sh in secs:
        if not sh["name"].startswith(b".debug_") or sh["type"] == elfsections.SHT_NOBITS:
            continue
        b = bytes(data[sh["offset"]:sh["offset"] + sh["size"]])
        if sh["flags"] & 0x800:  # SHF_COMPRESSED: hashed as its plain bytes
            b = plain(b)
        stream += sh["name"] + b"\0" + len(b).to_bytes(8, "little")
        for p in pieces(sh, b):
            h = xx.XXH3_128bits(p, len(p))
            stream += h.lo.to_bytes(8, "little") + h.hi.to_bytes(8, "little")
    h = xx.XXH3_128bits(bytes(stream), len(stream))
    print("%016x%016x" % (h.hi, h.lo))
elif mode == "flags":
    sh = elfsections.find(secs, sys.argv[3])
    print(sh["flags"], sh["size"])
elif mode == "nobits":
    struct.pack_into("<I", data, elfsections.find(secs, sys.argv[3])["hdr"] + 4, elfsections.SHT_NOBITS)
    open(path, "wb").write(data)
elif mode == "flip":
    sh = elfsections.find(secs, sys.argv[3])
    at = int(sys.argv[4])
    assert at < sh["size"], "past the section"
    data[sh["offset"] + at] ^= 0x40
    open(path, "wb").write(data)
PY
}

# hash_of_cus FILE: the DWARF hash the .cus dump prints.
hash_of_cus() { "$EXTRACT" --dump "$1" 2>/dev/null | sed -n '1s/.* dwarf=\([0-9a-f]*\) .*/\1/p'; }

# check_hash LABEL ELF [WANT]: extract ELF at -j1 and -j8; each identity
# must hold the Python value (and WANT, when given).
check_hash() {
	local label=$1 elf=$2 want j got out
	if ! want=$(elf_tool hash "$elf" 2>"$T_OUT/$label.hash.err"); then
		not_ok "$label: the DWARF hash computed from the spec" "$(cat "$T_OUT/$label.hash.err")"
		return
	fi
	if [ $# -gt 2 ]; then
		if [ "$want" = "$3" ]; then ok "$label: the spec's hash is the expected one"; else
			not_ok "$label: the spec's hash is the expected one" "spec $want, expected $3"; fi
	fi
	for j in 1 8 cache; do
		local -a flags=(-j "$j")
		local disp="-j$j"
		# With a cache the hash is made before the units, on one thread.
		[ "$j" = cache ] && flags=(-j 2 --cache "$T_OUT/cache") disp="-j2 --cache"
		if ! out=$("$EXTRACT" "${flags[@]}" -o "$T_OUT/$label-j$j.cus" "$elf" 2>&1); then
			not_ok "$label $disp: extract" "$out"
			continue
		fi
		got=$(hash_of_cus "$T_OUT/$label-j$j.cus")
		if [ "$got" = "$want" ]; then ok "$label $disp: the identity's DWARF hash is the spec's"; else
			not_ok "$label $disp: the identity's DWARF hash is the spec's" "got '$got', the spec gives $want"; fi
	done
}

if ! have "$GCC" || ! have objcopy; then
	skip "DWARF hash" "$GCC or objcopy not found"
	test_done
fi
if ! python3 -c 'import ctypes; ctypes.CDLL("libxxhash.so.0")' 2>/dev/null; then
	skip "DWARF hash" "libxxhash.so.0 not loadable from Python"
	test_done
fi
if ! out=$(build_fixture "$GCC" -O2 5 "$T_OUT" sample 2>&1); then
	not_ok "build the sample fixture" "$out"
	test_done
fi
check_hash sample "$T_OUT/sample"
sample_hash=$(hash_of_cus "$T_OUT/sample-j1.cus")
# Two units of the sample linked into one relocatable object, in 32- and
# 64-bit DWARF: .debug_info is two pieces, each unit_length of the other
# kind (0xffffffff, then 8 bytes). And the whole sample in 64-bit DWARF,
# whose units the walkers hash.
src=$T_TOP/tests/fixtures/sample
for w in 32 64; do
	if (cd "$T_OUT" && $GCC -O2 -g -gdwarf$w -c -o main$w.o "$src/main.c" &&
		$GCC -O2 -g -gdwarf$w -c -o util$w.o "$src/util.c" && ld -r -o object$w.o main$w.o util$w.o) \
		>"$T_OUT/object$w.err" 2>&1; then
		check_hash "object$w" "$T_OUT/object$w.o"
		# A second section named .debug_info (its .debug_line renamed,
		# whose line programs start with the same unit_length field): no
		# unit list is certain to be of it, so both are cut at the
		# headers read from the file (dwarf_hash.c, unit_size()).
		if objcopy --rename-section .debug_line=.debug_info "$T_OUT/object$w.o" "$T_OUT/two$w.o" \
			2>"$T_OUT/two$w.err"; then
			check_hash "two-debug-info$w" "$T_OUT/two$w.o"
		else
			not_ok "make an object with two .debug_info sections, DWARF$w" "$(cat "$T_OUT/two$w.err")"
		fi
	else
		not_ok "build a two-unit relocatable object, DWARF$w" "$(cat "$T_OUT/object$w.err")"
	fi
done
if $GCC -O2 -g -gdwarf64 -o "$T_OUT/sample64" "$src"/*.c >"$T_OUT/sample64.err" 2>&1; then
	check_hash sample64 "$T_OUT/sample64"
else
	not_ok "build the sample in 64-bit DWARF" "$(cat "$T_OUT/sample64.err")"
fi

# 9 MiB + 123 bytes of filler: words from a small vocabulary, so that zlib
# compresses it to a few MB (more than one read) rather than not at all.
PAD_SIZE=$((9 * 1024 * 1024 + 123))
python3 - "$T_OUT/pad.bin" "$PAD_SIZE" <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2])
words = [w.encode() for w in "struct union enum typedef const volatile int long char unsigned "
         "sk_buff net_device inode dentry page folio list_head spinlock_t atomic_t".split()]
out, x = bytearray(), 220
while len(out) < size:
    x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    out += words[(x >> 33) % len(words)] + (b"\n" if (x >> 20) & 7 == 0 else b" ")
open(path, "wb").write(out[:size])
PY
if [ "$(stat -c %s "$T_OUT/pad.bin" 2>/dev/null)" != "$PAD_SIZE" ]; then
	not_ok "make the $PAD_SIZE-byte pad" "$(ls -l "$T_OUT/pad.bin" 2>&1)"
	test_done
fi
if ! out=$(objcopy --add-section .debug_btfpipe_pad="$T_OUT/pad.bin" "$T_OUT/sample" "$T_OUT/padded" 2>&1); then
	not_ok "objcopy: add a 9 MiB .debug_btfpipe_pad" "$out"
	test_done
fi
check_hash padded "$T_OUT/padded"

if ! out=$(objcopy --compress-debug-sections=zlib "$T_OUT/padded" "$T_OUT/compressed" 2>&1); then
	not_ok "objcopy: compress the padded copy's debug sections" "$out"
else
	read -r flags size < <(elf_tool flags "$T_OUT/compressed" .debug_btfpipe_pad 2>&1)
	if [ -n "${size:-}" ] && [ $((flags & 0x800)) -ne 0 ] && [ "$size" -gt $((256 * 1024)) ] &&
		[ "$size" -lt "$PAD_SIZE" ]; then
		ok "compressed: the pad is SHF_COMPRESSED, $size bytes in the file"
		check_hash compressed "$T_OUT/compressed" "$(elf_tool hash "$T_OUT/padded")"
		# And zstd (CONFIG_DEBUG_INFO_COMPRESSED_ZSTD): the same hash again.
		if objcopy --compress-debug-sections=zstd "$T_OUT/padded" "$T_OUT/compressed-zstd" 2>/dev/null; then
			check_hash compressed-zstd "$T_OUT/compressed-zstd" "$(elf_tool hash "$T_OUT/padded")"
		else
			skip "compressed-zstd: the hash of zstd sections" "objcopy cannot write zstd sections"
		fi
	else
		not_ok "compressed: the pad is SHF_COMPRESSED and over 256 KB" "flags ${flags:-?} size ${size:-?}"
	fi
fi

cp "$T_OUT/padded" "$T_OUT/nobits"
if out=$(elf_tool nobits "$T_OUT/nobits" .debug_btfpipe_pad 2>&1); then
	check_hash nobits "$T_OUT/nobits" "$sample_hash"
else
	not_ok "make the pad SHT_NOBITS" "$out"
fi

cp "$T_OUT/padded" "$T_OUT/changed"
if out=$(elf_tool flip "$T_OUT/changed" .debug_btfpipe_pad $((4 * 1024 * 1024 + 4096)) 2>&1); then
	check_hash changed "$T_OUT/changed"
	a=$(hash_of_cus "$T_OUT/padded-j1.cus")
	b=$(hash_of_cus "$T_OUT/changed-j1.cus")
	if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
		ok "a byte changed 4 MiB into the pad changes the hash"
	else
		not_ok "a byte changed 4 MiB into the pad changes the hash" "before '$a', after '$b'"
	fi
else
	not_ok "change a byte 4 MiB into the pad" "$out"
fi
test_done
