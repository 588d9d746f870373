#!/usr/bin/env bash
# t1407-merge-memo: dedup-merge's memo is keyed on what each CU's records
# are (its content, format/CU-RECORDS.md "Content and addresses"), not on
# its addresses (format/CU-CACHE.md, "The merge's memo"). A relink that only
# moved code (an edit in a function body) hits, and the graph is the bytes a
# full merge writes, with the new addresses; any change to a type misses.
# The index's content and address table are what the blobs say.
. "$(dirname "$0")/lib.sh"

export BTFPIPE_BIN="$T_BIN"
X="$T_BIN/dwarf-extract" M="$T_BIN/dedup-merge"
unset BTFPIPE_CACHE_DIR BTFPIPE_CACHE_READONLY BTFPIPE_CACHE_MAX_SIZE BTFPIPE_CACHE_VERIFY
C="$T_OUT/cache"
rm -rf "$C"

# tests/fixtures/relink: K is a constant in a.c's code, EXTRA adds a
# member to b.c's struct.
SRC="$T_TOP/tests/fixtures/relink"
# build NAME CC FLAGS...: the program, as NAME/prog (each build of the same
# name, as a kernel's .tmp_vmlinux1), its .cus (no cache) and its graph.
build() {
	local n=$1 cc=$2
	shift 2
	mkdir -p "$T_OUT/$n"
	(cd "$SRC" && "$cc" -g -O2 "$@" -o "$T_OUT/$n/prog" a.c b.c main.c) &&
		"$X" -q -o "$T_OUT/$n.cus" "$T_OUT/$n/prog" && "$M" -q -o "$T_OUT/$n.cold.graph" "$T_OUT/$n.cus" ||
		not_ok "build $n"
}
# K: code that grows by tens of bytes, so that count() in b.c moves.
build p1 "$GCC" -DK=3
build p2 "$GCC" '-DK=(p->a > 7 ? p->b / 13 + 99 : p->a * 77 - 5) * (p->b % 1000003)'
build p3 "$GCC" -DK=3 -DEXTRA

# memo_hit ERRFILE: the merge's memo_hit count (--stats).
memo_hit() { sed -n 's/^dedup-merge: memo_hit *\([0-9]*\)$/\1/p' "$1"; }
expect_memo() { # DESC WANT ERRFILE
	local h
	h=$(memo_hit "$3")
	[ "$h" = "$2" ] && ok "$1" || not_ok "$1 (memo_hit '$h', wanted $2)" "$(cat "$3")"
}
merge_cached() { # NAME ID [OPTS...]: NAME.cus merged with the cache into ID.graph
	local n=$1 id=$2
	shift 2
	"$M" -q --stats --cache "$C" "$@" -o "$T_OUT/$id.graph" "$T_OUT/$n.cus" 2>"$T_OUT/$id.err"
}

# What the test stands on: p1 and p2 differ in addresses only, p3 in a type.
"$X" --dump "$T_OUT/p1.cus" >"$T_OUT/p1.dump" && "$X" --dump "$T_OUT/p2.cus" >"$T_OUT/p2.dump" &&
	"$X" --dump "$T_OUT/p3.cus" >"$T_OUT/p3.dump" || not_ok "dump the .cus files"
contents() { sed -n 's/^cu .* content=\([0-9a-f]*\) addrs=.*/\1/p' "$1"; }
[ "$(contents "$T_OUT/p1.dump")" = "$(contents "$T_OUT/p2.dump")" ] &&
	ok "a code-only change leaves every CU's content as it was" ||
	not_ok "a code-only change leaves every CU's content as it was" "$(diff <(contents "$T_OUT/p1.dump") <(contents "$T_OUT/p2.dump"))"
pcs() { grep -o 'func "count".* pc=0x[0-9a-f]*' "$1" | sed 's/.*pc=//'; }
[ -n "$(pcs "$T_OUT/p1.dump")" ] && [ "$(pcs "$T_OUT/p1.dump")" != "$(pcs "$T_OUT/p2.dump")" ] &&
	ok "... while the code after it moved (count's pc $(pcs "$T_OUT/p1.dump") -> $(pcs "$T_OUT/p2.dump"))" ||
	not_ok "... while the code after it moved (else a hit proves nothing)" "$(pcs "$T_OUT/p1.dump"); $(pcs "$T_OUT/p2.dump")"
[ "$(contents "$T_OUT/p1.dump" | sed -n 2p)" != "$(contents "$T_OUT/p3.dump" | sed -n 2p)" ] &&
	ok "a struct member added changes that CU's content" || not_ok "a struct member added changes that CU's content"
cmp -s "$T_OUT/p1.cold.graph" "$T_OUT/p2.cold.graph" &&
	not_ok "p1's and p2's graphs differ (in their addresses)" || ok "p1's and p2's graphs differ (in their addresses)"

# The memo: a miss stores, a relink hits with the new addresses.
merge_cached p1 m1
expect_memo "p1: a miss" 0 "$T_OUT/m1.err"
check_same "p1: the graph of a miss = an uncached merge's" "$T_OUT/p1.cold.graph" "$T_OUT/m1.graph"
merge_cached p2 m2
expect_memo "p2 after p1: a hit (the same contents)" 1 "$T_OUT/m2.err"
check_same "p2: the hit's graph = an uncached merge of p2 (its own addresses)" "$T_OUT/p2.cold.graph" "$T_OUT/m2.graph"
"$M" --dump "$T_OUT/m2.graph" >"$T_OUT/m2.gdump" && "$M" --dump "$T_OUT/p2.cold.graph" >"$T_OUT/p2.gdump"
check_same "p2: ... and so is its dump" "$T_OUT/p2.gdump" "$T_OUT/m2.gdump"
merge_cached p2 m2j1 -j1
check_same "p2: a hit at -j1 = at the default -j" "$T_OUT/m2.graph" "$T_OUT/m2j1.graph"
merge_cached p2 m2v --cache-verify &&
	ok "p2: --cache-verify merges a hit in full and agrees" ||
	not_ok "p2: --cache-verify merges a hit in full and agrees" "$(cat "$T_OUT/m2v.err")"
expect_memo "p2: ... on a hit" 1 "$T_OUT/m2v.err"
merge_cached p3 m3
expect_memo "p3: a changed struct is a miss" 0 "$T_OUT/m3.err"
check_same "p3: ... and its graph is p3's" "$T_OUT/p3.cold.graph" "$T_OUT/m3.graph"
merge_cached p1 m1x --lang-exclude rust
expect_memo "p1 with --lang-exclude: another key" 0 "$T_OUT/m1x.err"
"$M" -q --lang-exclude rust -o "$T_OUT/p1x.cold.graph" "$T_OUT/p1.cus"
check_same "p1 with --lang-exclude: its own graph" "$T_OUT/p1x.cold.graph" "$T_OUT/m1x.graph"
# The input's name is in the graph: another name, another key.
cp "$T_OUT/p2.cus" "$T_OUT/other.cus"
"$M" -q --stats --cache "$C" -o "$T_OUT/other.graph" "$T_OUT/other.cus" 2>"$T_OUT/other.err"
expect_memo "a copy of the .cus under another file name hits (the key has the ELF's name, which the .cus holds)" 1 "$T_OUT/other.err"
"$M" -q -o "$T_OUT/other.cold.graph" "$T_OUT/other.cus"
check_same "... and its graph = an uncached merge's" "$T_OUT/other.cold.graph" "$T_OUT/other.graph"
cp "$T_OUT/p2/prog" "$T_OUT/q2" && "$X" -q -o "$T_OUT/q2.cus" "$T_OUT/q2"
merge_cached q2 q2
expect_memo "another ELF name (q2) is another key" 0 "$T_OUT/q2.err"
"$M" -q -o "$T_OUT/q2.cold.graph" "$T_OUT/q2.cus"
check_same "q2: its graph = an uncached merge's" "$T_OUT/q2.cold.graph" "$T_OUT/q2.graph"

# A damaged template (every stage-output entry's bytes flipped under the
# cache's own checksum, or the checksum failing): never a wrong graph.
for f in $(find "$C" -type f -path '*out-v1*' 2>/dev/null); do
	python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
if len(b) > 200:
    b[len(b) // 2] ^= 0x40
open(p, "wb").write(b)
PY
done
merge_cached p2 m2d && ok "p2 with damaged entries: exit 0" ||
	not_ok "p2 with damaged entries: exit 0" "$(cat "$T_OUT/m2d.err")"
check_same "p2 with damaged entries: the uncached graph" "$T_OUT/p2.cold.graph" "$T_OUT/m2d.graph"

# Across inputs that refer across CUs (clang thin LTO): whatever the memo
# does, the graph is the uncached one.
if have "$CLANG" && have ld.lld-19; then
	build t1 "$CLANG" -flto=thin -fuse-ld=lld-19 -DK=3
	build t2 "$CLANG" -flto=thin -fuse-ld=lld-19 -DK=123456
	merge_cached t1 lt1 && merge_cached t2 lt2
	check_same "thin LTO t1 through the memo = uncached" "$T_OUT/t1.cold.graph" "$T_OUT/lt1.graph"
	check_same "thin LTO t2 after t1 = uncached" "$T_OUT/t2.cold.graph" "$T_OUT/lt2.graph"
else
	skip "thin LTO through the memo" "no $CLANG or ld.lld-19"
fi

# The driver: a relinked program's BTF through the cache = uncached.
P="$T_TOP/pipeline.sh"
rm -rf "$T_OUT/dc"
"$P" -q --features default --cache "$T_OUT/dc" -o "$T_OUT/d1.btf" "$T_OUT/p1/prog" &&
	"$P" -q --features default --cache "$T_OUT/dc" --stats=json -o "$T_OUT/d2.btf" "$T_OUT/p2/prog" >"$T_OUT/d2.json" &&
	"$P" -q --features default -o "$T_OUT/d2.cold.btf" "$T_OUT/p2/prog" || not_ok "pipeline.sh on p1, p2"
check_same "pipeline.sh: p2's BTF after p1's through the cache = uncached" "$T_OUT/d2.cold.btf" "$T_OUT/d2.btf"
grep -q '"memo_hit": *1' "$T_OUT/d2.json" && ok "pipeline.sh: ... with the merge's memo hit" ||
	not_ok "pipeline.sh: ... with the merge's memo hit" "$(cat "$T_OUT/d2.json")"

test_done
