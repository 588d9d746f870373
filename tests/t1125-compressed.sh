#!/usr/bin/env bash
# t1125-compressed: debug sections compressed in the file (SHF_COMPRESSED,
# zlib and zstd) give the BTF the uncompressed file gives, byte for byte.
#
# Kernels built with CONFIG_DEBUG_INFO_COMPRESSED_ZLIB or _ZSTD, and
# distributions that compress their debug files, have them. Debian 12's
# libdw (0.188) reads only zlib; dwarf-extract stores every compressed
# section plainly in an in-memory copy first (stages/dwarf-extract/
# inflate.c), so libdw, the fast DIE reader and the relocator all read it.
#
# Inputs: the sample executable, tree.o (relocated by reloc.c) and shapes.o
# (a TLS relocation: relocated by libdwfl), each compressed by objcopy with
# zlib-gabi and zstd. Each must give the uncompressed file's BTF, and at
# -j1 and -j2 the same .cus; the fast DIE reader must read every unit of
# the compressed executable. Broken inputs (a corrupt zstd frame, a size
# that lies, an unknown compression type, a header cut short) must be
# refused with exit 1 and a message naming the section, never a crash.
. "$(dirname "$0")/lib.sh"

d=$T_OUT
FIX=$T_TOP/tests/fixtures
if ! objcopy --help 2>&1 | grep -q 'compress-debug-sections.*zstd'; then
	skip "compressed debug sections" "this objcopy cannot write zstd sections"
	test_done
fi
(cd "$T_TOP" && "$GCC" -O2 -g -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$d/sample" tests/fixtures/sample/*.c &&
	"$GCC" -O0 -g -fdebug-prefix-map="$T_TOP"=/btfpipe -c -o "$d/tree.o" tests/fixtures/lto/tree.c &&
	"$GCC" -O0 -g -fdebug-prefix-map="$T_TOP"=/btfpipe -c -o "$d/shapes.o" tests/fixtures/sample/shapes.c) \
	>"$d/build.log" 2>&1 || { not_ok "build the inputs" "$(cat "$d/build.log")"; test_done; }
[ -d "$FIX/sample" ] || { not_ok "tests/fixtures/sample is there"; test_done; }

# chain IN OUT [J]: the three stages; OUT.cus, OUT.graph, OUT.btf.
chain() {
	"$T_BIN/dwarf-extract" -j "${3:-2}" --stats -o "$2.cus" "$1" 2>"$2.stats" &&
		"$T_BIN/dedup-merge" -o "$2.graph" "$2.cus" &&
		"$T_BIN/btf-emit" --elf "$1" -o "$2.btf" "$2.graph"
}

for f in sample tree.o shapes.o; do
	if ! out=$(chain "$d/$f" "$d/$f.plain" 2>&1); then
		not_ok "$f: uncompressed: the three stages run" "$out"
		continue
	fi
	for z in zlib-gabi zstd; do
		c=$d/$f.$z
		objcopy --compress-debug-sections=$z "$d/$f" "$c" 2>"$c.err" || { not_ok "$f: objcopy $z" "$(cat "$c.err")"; continue; }
		want=${z%-gabi}
		if readelf -t "$c" | grep -A4 '\] \.debug_info$' | grep -qi "^ *$want,"; then
			ok "$f.$z: construction: .debug_info is SHF_COMPRESSED, ${want^^}"
		else
			not_ok "$f.$z: construction: .debug_info is SHF_COMPRESSED, ${want^^}" "$(readelf -t "$c" | grep -A4 debug_info)"
			continue
		fi
		if ! out=$(chain "$c" "$c" 2>&1); then
			not_ok "$f.$z: the three stages run" "$out"
			continue
		fi
		check_same "$f.$z: the same BTF bytes as uncompressed" "$d/$f.plain.btf" "$c.btf"
		if out=$(chain "$c" "$c.j1" 1 2>&1); then
			check_same "$f.$z: the same .cus at -j1 and -j2" "$c.cus" "$c.j1.cus"
		else
			not_ok "$f.$z: -j1 runs" "$out"
		fi
	done
done
# The fast DIE reader, not libdw, read the compressed executable's units.
units=$(awk '$2 == "units" { print $3 }' "$d/sample.zstd.stats")
fast=$(awk '$2 == "reader_units" { print $3 }' "$d/sample.zstd.stats")
if [ -n "$units" ] && [ "$units" -gt 0 ] && [ "$fast" = "$units" ]; then
	ok "sample.zstd: the fast DIE reader read all $units units"
else
	not_ok "sample.zstd: the fast DIE reader read all units" "units '$units', reader_units '$fast'"
fi

# ---- broken inputs ----
# The zstd .debug_info's Elf64_Chdr (ch_type, ch_reserved, ch_size,
# ch_addralign) and payload offsets, from readelf.
c=$d/sample.zstd
read -r off size < <(readelf -SW "$c" | awk '$2 == ".debug_info" { print strtonum("0x" $5), strtonum("0x" $6) }' 2>/dev/null ||
	readelf -SW "$c" | sed -n 's/.*\] \.debug_info *PROGBITS *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2/p' |
	while read -r a b; do echo $((16#$a)) $((16#$b)); done)
if [ -z "${off:-}" ]; then
	not_ok "find the compressed .debug_info in sample.zstd" "$(readelf -SW "$c" | grep debug_info)"
	test_done
fi
# broken NAME OFFSET HEXBYTES: a copy of sample.zstd with bytes overwritten.
broken() {
	cp "$c" "$d/$1"
	printf "$(sed 's/\(..\)/\\x\1/g' <<<"$3")" | dd of="$d/$1" bs=1 seek="$2" conv=notrunc status=none
}
broken corrupt $((off + 24)) 00ff00ff00ff00ff
broken lying-size $((off + 8)) ffffff0000000000
broken unknown-type "$off" 07000000
for b in corrupt lying-size unknown-type; do
	check_exit "$b: refused with exit 1" 1 "$T_BIN/dwarf-extract" -o "$d/$b.cus" "$d/$b"
	check_grep "$b: the message names the file and the section" "$d/$b: .*section \.debug_info \(index [0-9]+\)" "$T_OUT/last.err"
	[ ! -e "$d/$b.cus" ] && ok "$b: no output left" || not_ok "$b: no output left" "$(ls -la "$d/$b.cus")"
done
check_grep "unknown-type: the message says which type" "unknown compression type 7" "$d/last.err"
# Bytes garbled inside the zstd payload: zstd may not notice (objcopy
# writes no checksum); what reads the DWARF then must, with exit 1.
broken garbled $((off + 24 + size / 2)) 00ff00ff00ff00ff00ff00ff00ff00ff
check_exit "garbled: refused with exit 1" 1 "$T_BIN/dwarf-extract" -o "$d/garbled.cus" "$d/garbled"
check_grep "garbled: the message names the file" "$d/garbled: " "$T_OUT/last.err"
# A section too short for its compression header.
cp "$c" "$d/short"
python3 - "$d/short" <<'EOF' || not_ok "make the short-header input"
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
stroff, = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 24)
for i in range(shnum):
    sh = shoff + i * shentsize
    name, = struct.unpack_from("<I", b, sh)
    if b[stroff + name:stroff + name + 12] == b".debug_info\0":
        struct.pack_into("<Q", b, sh + 32, 10)  # sh_size: less than an Elf64_Chdr
open(p, "wb").write(b)
EOF
check_exit "short: a section shorter than its compression header is refused with exit 1" 1 \
	"$T_BIN/dwarf-extract" -o "$d/short.cus" "$d/short"
check_grep "short: the message names the section" "section \.debug_info \(index [0-9]+\): compressed, but shorter" "$T_OUT/last.err"
test_done
