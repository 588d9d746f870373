#!/usr/bin/env bash
# t0800-merge: what dedup-merge promises (format/TYPE-GRAPH.md), checked on
# fixtures built to exercise each promise:
#  - a cycle across CUs (node_a <-> node_b) is one node each, from every CU;
#  - a fwd with one definition becomes it (sample: struct opaque);
#  - with two different definitions of a name (merge fixture: struct amb,
#    a.c's and b.c's), both stay, and a type that has the fwd where an
#    earlier one has a definition is that earlier type, the fwd bound to
#    that definition: libbpf's btf__dedup() rule, so c.c's holder is a.c's,
#    and no fwd amb is left (pahole's BTF has the same); libbpf's dedup
#    then finds nothing more to merge;
#  - the same when the fwd comes first (holder2: a.c only declares amb2, b.c
#    and c.c define it): b.c's holder2 is a.c's, the fwd bound to b.c's
#    amb2, c.c's stays apart (arm64's of_pci_range_parser and of_bus);
#  - a multi-dimensional array whose inner dims are an array of their own
#    (b.c's int[4][2][4], a.c's int[2][4]) has that one as its inner ARRAY,
#    not a second copy of it;
#  - two different definitions of one name both survive (struct conflict);
#  - several inputs merge in command-line order; bad inputs are refused.
. "$(dirname "$0")/lib.sh"

dump_nodes() { "$T_BIN/dedup-merge" --provenance --dump "$1"; }
count() { # PATTERN FILE: lines matching
	grep -Ec -- "$1" "$2"
}
expect_count() { # DESC WANT PATTERN FILE
	local got
	got=$(count "$3" "$4")
	if [ "$got" -eq "$2" ]; then ok "$1 ($got)"; else not_ok "$1" "wanted $2, got $got lines matching /$3/"; fi
}

build_fixture gcc -O1 5 "$T_OUT" merge || not_ok "build merge fixture"
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample fixture"
for f in merge sample; do
	check "$f: extract" "$T_BIN/dwarf-extract" -o "$T_OUT/$f.cus" "$T_OUT/$f"
	check "$f: merge" "$T_BIN/dedup-merge" -j2 -o "$T_OUT/$f.graph" "$T_OUT/$f.cus"
	dump_nodes "$T_OUT/$f.graph" >"$T_OUT/$f.gdump" 2>&1
done
M="$T_OUT/merge.gdump" S="$T_OUT/sample.gdump"

expect_count "cycle: one struct node_a" 1 '^#[0-9]+ struct "node_a" ' "$M"
expect_count "cycle: one struct node_b" 1 '^#[0-9]+ struct "node_b" ' "$M"
expect_count "cycle: one struct ring (self-referencing)" 1 '^#[0-9]+ struct "ring" ' "$M"
check_grep "provenance: node_a came from a.c, b.c and c.c" \
	'from: 3 CUs: merge:"[^"]*a\.c" merge:"[^"]*b\.c" merge:"[^"]*c\.c"' "$M"
expect_count "ambiguous fwd: the fwd amb is bound to a definition, none left" 0 '^#[0-9]+ fwd "amb" of=struct' "$M"
expect_count "ambiguous fwd: both definitions of struct amb stay" 2 '^#[0-9]+ struct "amb" ' "$M"
expect_count "ambiguous fwd: c.c's holder is a.c's, b.c's stays apart" 2 '^#[0-9]+ struct "holder" ' "$M"
check_grep "ambiguous fwd: a.c's holder came from a.c and c.c" \
	'from: 2 CUs: merge:"[^"]*a\.c" merge:"[^"]*c\.c"' "$M"
expect_count "fwd first: b.c's holder2 is a.c's, c.c's stays apart" 2 '^#[0-9]+ struct "holder2" ' "$M"
expect_count "fwd first: no fwd amb2 left" 0 '^#[0-9]+ fwd "amb2"' "$M"
check "merge: btf-emit writes it" "$T_BIN/btf-emit" --elf "$T_OUT/merge" -o "$T_OUT/merge.btf" "$T_OUT/merge.graph"
check "merge: libbpf's btf__dedup removes nothing from it" "$T_BIN/tools/btfcheck" --dedup "$T_OUT/merge.btf"
n2=$(bpftool btf dump file "$T_OUT/merge.btf" | grep -c "^\[[0-9]*\] ARRAY .* nr_elems=2\$")
[ "$n2" = 1 ] && ok "int[4][2][4]'s inner ARRAY is int[2][4]'s: one ARRAY of 2" ||
	not_ok "int[4][2][4]'s inner ARRAY is int[2][4]'s" "$n2 ARRAYs of 2: $(bpftool btf dump file "$T_OUT/merge.btf" | grep ARRAY)"
if have pahole && pahole -J --btf_gen_floats --btf_encode_detached="$T_OUT/merge.pahole.btf" "$T_OUT/merge" >/dev/null 2>&1; then
	check "merge: the types equal pahole's" python3 "$T_TOP/tools/btfcmp.py" --flatten-arrays \
		"$T_OUT/merge.btf" "$T_OUT/merge.pahole.btf"
else
	skip "merge: the types equal pahole's" "pahole missing or failed"
fi
expect_count "resolved fwd: no fwd opaque left" 0 '^#[0-9]+ fwd "opaque"' "$S"
expect_count "resolved fwd: one struct opaque" 1 '^#[0-9]+ struct "opaque" ' "$S"
expect_count "same name, different types: two struct conflict" 2 '^#[0-9]+ struct "conflict" ' "$S"
# Complete: no two nodes print the same (ids aside) within the sample.
dupes=$(sed -n 's/^#[0-9]* //p' "$S" | grep -v '^\(ptr\|const\|volatile\|restrict\|atomic\|array\|func_proto\) ' | sort | uniq -d | head -5)
if [ -z "$dupes" ]; then ok "no two named nodes alike"; else not_ok "no two named nodes alike" "$dupes"; fi

# Several inputs, in command-line order.
check "two inputs merge" "$T_BIN/dedup-merge" -o "$T_OUT/both.graph" "$T_OUT/merge.cus" "$T_OUT/sample.cus"
dump_nodes "$T_OUT/both.graph" >"$T_OUT/both.gdump"
check_grep "two inputs: header counts both" '^btfpipe-graph v3 inputs=2 ' "$T_OUT/both.gdump"
first=$(sed -n '/^#1 /,/from:/p' "$T_OUT/both.gdump" | grep -o 'from: .*' | head -1)
case "$first" in *'merge:'*) ok "two inputs: node 1 comes from the first input" ;;
*) not_ok "two inputs: node 1 comes from the first input" "$first" ;; esac
check "reversed inputs merge" "$T_BIN/dedup-merge" -o "$T_OUT/rev.graph" "$T_OUT/sample.cus" "$T_OUT/merge.cus"
if cmp -s "$T_OUT/both.graph" "$T_OUT/rev.graph"; then not_ok "input order decides node order" "same bytes"; else
	ok "input order decides node order"; fi
a=$(grep -c '^#' "$T_OUT/both.gdump"); b=$("$T_BIN/dedup-merge" --dump "$T_OUT/rev.graph" | grep -c '^#')
if [ "$a" -eq "$b" ]; then ok "either order gives the same number of nodes ($a)"; else
	not_ok "either order gives the same number of nodes" "$a vs $b"; fi

# Refusals: the message names the file; nothing is written.
rm -f "$T_OUT/bad.graph"
check_exit "missing input: exit 3" 3 "$T_BIN/dedup-merge" -o "$T_OUT/bad.graph" "$T_OUT/nope.cus"
check_grep "missing input: named" 'nope\.cus' "$T_OUT/last.err"
printf 'not a cus file at all, long enough to hold a header......................' >"$T_OUT/junk.cus"
check_exit "junk input: exit 1" 1 "$T_BIN/dedup-merge" -o "$T_OUT/bad.graph" "$T_OUT/sample.cus" "$T_OUT/junk.cus"
check_grep "junk input: named, bad magic" 'junk\.cus.*magic' "$T_OUT/last.err"
if [ -e "$T_OUT/bad.graph" ]; then not_ok "failed merge leaves no output"; else ok "failed merge leaves no output"; fi

# A damaged graph is refused by both readers, never misread.
size=$(stat -c %s "$T_OUT/sample.graph")
for off in 8 40 100 $((size / 2)) $((size - 3)); do
	cp "$T_OUT/sample.graph" "$T_OUT/flip.graph"
	python3 -c "import sys; p=sys.argv[1]; o=int(sys.argv[2]); b=bytearray(open(p,'rb').read()); b[o]^=0x10; open(p,'wb').write(bytes(b))" "$T_OUT/flip.graph" "$off"
	check_exit "graph flipped at $off: --dump refuses (exit 1)" 1 "$T_BIN/dedup-merge" --dump "$T_OUT/flip.graph"
	check_exit "graph flipped at $off: btf-emit refuses (exit 1)" 1 "$T_BIN/btf-emit" -o "$T_OUT/flip.btf" "$T_OUT/flip.graph"
	check_grep "graph flipped at $off: message names the file" 'flip\.graph' "$T_OUT/last.err"
done
head -c $((size - 100)) "$T_OUT/sample.graph" >"$T_OUT/trunc.graph"
check_exit "truncated graph: exit 1" 1 "$T_BIN/btf-emit" -o "$T_OUT/flip.btf" "$T_OUT/trunc.graph"
check_grep "truncated graph: says truncated" 'truncated' "$T_OUT/last.err"
if [ -e "$T_OUT/flip.btf" ]; then not_ok "refused graphs leave no BTF"; else ok "refused graphs leave no BTF"; fi
test_done
