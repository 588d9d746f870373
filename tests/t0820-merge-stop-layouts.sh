#!/usr/bin/env bash
# t0820-merge-stop-layouts: the refinement reads each CU's stop edges in one
# of two layouts (stages/dedup-merge/merge.h): 16-bit record indices for a CU
# of at most 65536 records without externs, 32-bit gids otherwise. A class
# must split, or hold, the same whichever layout its nodes' edges are in.
#
# Three CUs each define struct S { T *p; }, so all three S have one key and
# one weak class; only the typedef T behind the stop edge tells them apart:
#  - big.c:   T is int, padded past 65536 records (32-bit layout);
#  - small.c: T is int (16-bit layout): its S must join big.c's;
#  - other.c: T is long (16-bit layout): its S must stay apart.
# So: two struct S, two typedef T. A wrong gid from either layout makes S
# split three ways, or merges other.c's S with the rest.
. "$(dirname "$0")/lib.sh"

d="$T_OUT/stop-layouts"
mkdir -p "$d"
python3 - "$d" <<'PY'
import sys
d = sys.argv[1]
s = "struct S { T *p; int x; };\nstruct S the_%s;\n"
with open(d + "/big.c", "w") as f:
    # Variables first, one record each (typedefs would do, but gcc takes a
    # minute over 70000 of them), so this CU has more than 65536 records
    # and T's record index, the stop edge's target, does not fit in 16 bits.
    for i in range(70000):
        f.write("int pad%d;\n" % i)
    f.write("typedef int T;\n" + s % "big")
with open(d + "/small.c", "w") as f:
    f.write("typedef int T;\n" + s % "small")
with open(d + "/other.c", "w") as f:
    f.write("typedef long T;\n" + s % "other")
PY
if ! (cd "$d" && gcc -O0 -g -c big.c small.c other.c &&
	ld -r -o all.o big.o small.o other.o) >"$d/build.err" 2>&1; then
	not_ok "build the three CUs" "$(cat "$d/build.err")"
	test_done
fi

check "extract" "$T_BIN/dwarf-extract" -o "$d/all.cus" "$d/all.o"
recs=$("$T_BIN/dwarf-extract" --dump "$d/all.cus" 2>/dev/null |
	sed -n 's/^cu 0 .* name="big\.c" .* records=\([0-9]*\) .*/\1/p')
if [ "${recs:-0}" -gt 65536 ]; then
	ok "big.c's CU is past 65536 records ($recs)"
else
	not_ok "big.c's CU is past 65536 records" "${recs:-no} records: the test would not reach the 32-bit layout"
fi
for j in 1 2; do
	check "merge -j$j" "$T_BIN/dedup-merge" -j$j -o "$d/all.j$j.graph" "$d/all.cus"
done
check_same "the graph at -j1 and -j2" "$d/all.j1.graph" "$d/all.j2.graph"
"$T_BIN/dedup-merge" --dump "$d/all.j1.graph" >"$d/all.gdump" 2>&1
for what in 'struct "S"' 'typedef "T"'; do
	n=$(grep -Ec "^#[0-9]+ $what " "$d/all.gdump" || true)
	if [ "$n" -eq 2 ]; then
		ok "two $what: big.c's and small.c's are one, other.c's is apart"
	else
		not_ok "two $what: big.c's and small.c's are one, other.c's is apart" \
			"$n nodes: $(grep -E "^#[0-9]+ $what " "$d/all.gdump" | head -5)"
	fi
done
test_done
