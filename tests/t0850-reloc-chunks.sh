#!/usr/bin/env bash
# t0850-reloc-chunks: reloc.c relocates a debug section's RELA entries in
# chunks of 65536 on the pool when they are sorted by offset without
# overlap, and in order on one thread otherwise (stages/dwarf-extract/
# reloc.c, apply()). Either way the bytes must be libdwfl's (--libdw-only).
#  - sorted: a relocatable object with over 65536 relocations into
#    .debug_info (11000 structs, functions and variables), extracted with
#    exactly 1, 2 and 4 threads: the same .cus as libdwfl's, relocated on
#    1, 2 and 2 threads (two chunks; --stats reloc_threads);
#  - overlap, boundary: one relocation of the second chunk (one inside
#    it; its first) moved onto the offset of one in the first, so two
#    store to the same bytes and the later must win, as in libdwfl: the
#    same .cus as libdwfl's, relocated on one thread.
. "$(dirname "$0")/lib.sh"

d="$T_OUT/reloc"
N=11000
mkdir -p "$d"
python3 - "$d/big.c" "$N" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(n):
        f.write("struct r%d { int a%d; long b%d; };\n" % (i, i, i))
        f.write("int rf%d(struct r%d *p) { return p->a%d + %d; }\n" % (i, i, i, i))
        f.write("struct r%d rv%d;\n" % (i, i))
PY
if ! $GCC -O0 -g -c -o "$d/big.o" "$d/big.c" 2>"$d/build.err"; then
	not_ok "build the $N-function object" "$(cat "$d/build.err")"
	test_done
fi

# rela_tool MODE OBJ: .rela.debug_info's entries, in Python.
#   count OBJ     how many, and whether they are sorted without overlap
#   overlap OBJ   an entry from 70000 on moved onto the offset of one of
#                 the first chunk's, of its size and another symbol
#   boundary OBJ  the same with entry 65536, the second chunk's first
#   none OBJ      two entries made R_X86_64_NONE, symbol index far out
rela_tool() {
	PYTHONPATH="$T_TOP/tests/tools" python3 - "$@" <<'PY'
import struct, sys
import elfsections
mode, path = sys.argv[1:3]
data = bytearray(open(path, "rb").read())
sh = elfsections.find(elfsections.parse(data), ".rela.debug_info")
n = sh["size"] // 24
ent = lambda k: struct.unpack_from("<QQq", data, sh["offset"] + 24 * k)
size = lambda info: {1: 8, 10: 4, 11: 4}.get(info & 0xffffffff, 0)
if mode == "count":
    prev, ok = 0, True
    for k in range(n):
        off, info, _ = ent(k)
        if size(info):
            ok &= off >= prev
            prev = off + size(info)
    print(n, "sorted" if ok else "unsorted")
elif mode in ("overlap", "boundary"):
    # A pair of the same size and other symbols: the one in the second
    # chunk (for "boundary" its first entry, 65536, which then starts the
    # chunk's range inside the first chunk's) moved onto the other's offset.
    ks = [65536] if mode == "boundary" else range(70000, n)
    pair = next(((j, k) for k in ks if size(ent(k)[1]) for j in range(10, 65536)
                 if size(ent(j)[1]) == size(ent(k)[1]) and ent(j)[1] >> 32 != ent(k)[1] >> 32), None)
    assert pair, "no pair of relocations of one size and two symbols"
    j, k = pair
    struct.pack_into("<Q", data, sh["offset"] + 24 * k, ent(j)[0])
    open(path, "wb").write(data)
elif mode == "none":
    # Entries 20 and 70020 made R_X86_64_NONE with a symbol index past the
    # symbol table: skipped, their symbol never looked at (libdwfl too).
    for k in (20, 70020):
        struct.pack_into("<Q", data, sh["offset"] + 24 * k + 8, 0xfffffff << 32)
    open(path, "wb").write(data)
PY
}

read -r n order < <(rela_tool count "$d/big.o" 2>&1)
if [ "${n:-0}" -gt 70000 ] && [ "$order" = sorted ]; then
	ok "the object has $n relocations into .debug_info, sorted"
else
	not_ok "the object has over 70000 relocations into .debug_info, sorted" "${n:-?} ${order:-?}"
	test_done
fi

# same_as_libdwfl LABEL OBJ WANT_THREADS...: extract OBJ with exactly 1, 2
# and 4 threads and with --libdw-only; every .cus the same, reloc.c used,
# on the given thread counts for -j1, -j2, -j4.
same_as_libdwfl() {
	local label=$1 obj=$2 j i=0 t
	shift 2
	local -a want=("$@")
	check "$label: extract --libdw-only" "$T_BIN/dwarf-extract" -j2 --libdw-only -o "$d/$label.libdw.cus" "$obj"
	for j in 1 2 4; do
		if ! "$T_BIN/dwarf-extract" -j$j --stats -o "$d/$label.j$j.cus" "$obj" 2>"$d/$label.j$j.err"; then
			not_ok "$label: extract -j$j" "$(cat "$d/$label.j$j.err")"
			continue
		fi
		check_same "$label: -j$j gives libdwfl's .cus" "$d/$label.libdw.cus" "$d/$label.j$j.cus"
		t=$(sed -n 's/^dwarf-extract: reloc_threads *//p' "$d/$label.j$j.err")
		[ "$t" = "${want[$i]}" ] && ok "$label: -j$j relocated on $t thread(s)" ||
			not_ok "$label: -j$j relocated on ${want[$i]} thread(s)" "reloc_threads '${t}'"
		i=$((i + 1))
	done
}
same_as_libdwfl sorted "$d/big.o" 1 2 2

# Two relocations on the same bytes: inside the second chunk (its order
# check) and at its start (the check between chunks). Whether the .cus
# shows the difference depends on what the bytes are; the thread count
# (one) is what must hold either way. And R_X86_64_NONE entries whose
# symbol is out of range (ASan would see a read past the values): still
# sorted, so two threads.
for kind in overlap boundary none; do
	cp "$d/big.o" "$d/$kind.o"
	if out=$(rela_tool $kind "$d/$kind.o" 2>&1); then
		case $kind in none) same_as_libdwfl $kind "$d/$kind.o" 1 2 2 ;; *) same_as_libdwfl $kind "$d/$kind.o" 1 1 1 ;; esac
	else
		not_ok "$kind: move a relocation onto another's offset" "$out"
	fi
done
test_done
