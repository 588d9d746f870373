#!/usr/bin/env bash
# t0830-merge-cands-order: the merge numbers new strings and new prototypes
# of the function and variable candidates in order of first use, in
# parallel (stages/dedup-merge/intern.c): each use carries its place, equal
# uses keep the smallest. Two things that can go wrong without any other
# test noticing, since the types stay the same:
#  - a prototype equal to one the nodes already have must be that node, not
#    a copy: here u0..u15(int, long) (unnamed parameters, so the same as a
#    subroutine type's) and the typedef cb_t's int (*)(int, long);
#  - which use of a string or prototype a thread meets first must not
#    matter: 16 CUs share names and prototypes, merged with exactly 1, 2,
#    4 and 8 threads, must give the same bytes;
#  - and the order is the serial pass's: every function's strings, CU by
#    CU, before any variable's. name_2 is a variable in c1.c and a function
#    in c2.c, so it sits after f1 and before name_14, and the variables'
#    shared_var_0 (c0.c) after all of them.
. "$(dirname "$0")/lib.sh"

d="$T_OUT/cands-order"
mkdir -p "$d"
python3 - "$d" <<'PY'
import sys
d = sys.argv[1]
for i in range(16):
    with open("%s/c%d.c" % (d, i), "w") as f:
        if i == 0:
            f.write("typedef int (*cb_t)(int, long);\ncb_t the_cb;\n")
        # Names used by a variable in one CU and a function in another,
        # parameters shared by every CU, and one name per CU.
        f.write("static int helper(int shared_param) { return shared_param + %d; }\n" % i)
        f.write("int u%d(int, long) { return %d; }\n" % (i, i))
        f.write("long f%d(int shared_param, long p%d) { return helper(shared_param) + p%d; }\n" % (i, i, i))
        if i % 2:
            f.write("static int name_%d = %d;\nint *var_ptr_%d = &name_%d;\n" % (i + 1, i, i, i + 1))
        else:
            f.write("int name_%d(void) { return %d; }\n" % (i, i))
            f.write("int shared_var_%d;\n" % i)
PY
if ! (cd "$d" && for i in $(seq 0 15); do $GCC -std=c2x -O0 -g -c c$i.c || exit 1; done &&
	ld -r -o all.o $(seq -f 'c%g.o' 0 15)) >"$d/build.err" 2>&1; then
	not_ok "build the 16 CUs" "$(cat "$d/build.err")"
	test_done
fi

check "extract" "$T_BIN/dwarf-extract" -o "$d/all.cus" "$d/all.o"
for j in 1 2 4 8; do
	# lib.sh exports BTFPIPE_JOBS_EXACT=1: exactly j threads.
	check "merge with exactly $j threads" "$T_BIN/dedup-merge" -j$j -o "$d/all.j$j.graph" "$d/all.cus"
done
for j in 2 4 8; do
	check_same "the graph with 1 and $j threads" "$d/all.j1.graph" "$d/all.j$j.graph"
done

check "dump the graph" sh -c '"$1" --dump "$2" >"$3"' sh "$T_BIN/dedup-merge" "$d/all.j4.graph" "$d/all.gdump"
dups=$(sed -n 's/^#[0-9]* \(func_proto .*\)/\1/p' "$d/all.gdump" | sort | uniq -d)
nprotos=$(grep -c '^#[0-9]* func_proto ' "$d/all.gdump" || true)
if [ -z "$dups" ] && [ "$nprotos" -ge 3 ]; then
	ok "no two func_proto nodes are equal ($nprotos of them)"
else
	not_ok "no two func_proto nodes are equal" "$nprotos func_protos; twice: $dups"
fi
# cb_t -> ptr -> the nodes' own int (*)(int, long): every u<i> must use it.
ptr=$(sed -n 's/^#[0-9]* typedef "cb_t" type=#\([0-9]*\)$/\1/p' "$d/all.gdump")
proto=$(sed -n "s/^#$ptr ptr \"\" type=#\([0-9]*\)\$/\1/p" "$d/all.gdump")
nu=$(grep -Ec "^func \"u[0-9]+\" proto=#$proto " "$d/all.gdump" || true)
if [ -n "$proto" ] && [ "$nu" -eq 16 ]; then
	ok "u0..u15 use cb_t's prototype node #$proto"
else
	not_ok "u0..u15 use cb_t's prototype node" "cb_t's proto: #${proto:-none}; $nu of 16 use it: $(grep '^func "u' "$d/all.gdump" | head -4)"
fi
nf=$(grep -c '^func ' "$d/all.gdump" || true)
nv=$(grep -c '^var ' "$d/all.gdump" || true)
if [ "$nf" -ge 56 ] && [ "$nv" -ge 17 ]; then
	ok "every candidate is in the graph ($nf funcs, $nv vars)"
else
	not_ok "every candidate is in the graph" "$nf funcs (want >= 56), $nv vars (want >= 17)"
fi

# Where each name first sits in the file: the string section is the only
# place a name is stored, NUL-terminated after the previous one.
order=$(python3 - "$d/all.j4.graph" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
names = ["f1", "name_2", "name_14", "shared_var_0", "var_ptr_1"]
pos = [data.find(b"\0" + n.encode() + b"\0") for n in names]
print(" ".join("%s@%d" % (n, p) for n, p in zip(names, pos)))
print("ordered" if all(p >= 0 for p in pos) and pos == sorted(pos) else "unordered")
PY
)
if [ "${order##*$'\n'}" = ordered ]; then
	ok "strings in the serial pass's order: functions CU by CU, then variables"
else
	not_ok "strings in the serial pass's order: functions CU by CU, then variables" "$order"
fi
test_done
