#!/usr/bin/env bash
# t0060-structure: the shape the code keeps, checked on every run
# (tests/tools/structure.py): no file cycle in any stage, common/ or format/
# (a file's header included, or a symbol of its object used, is a use; the
# files a header names as its module count as one), and no function over
# 100 lines but per-kind switches; every hash table on common/offmap or
# common/idmap but the two structure.py names with their reasons, and
# every realloc() in vec.h. Each check is shown failing on a mutant:
# made-up files, and the real btf-emit with the include that made its
# funcs <-> types cycle put back.
. "$(dirname "$0")/lib.sh"

S="$T_TOP/tests/tools/structure.py"
# The objects of this variant's build (bin -> build, bin-asan -> build-asan).
B="$T_TOP/build${T_VARIANT#bin}"
[ -d "$B/stages" ] || B="$T_TOP/build"

pairs=()
for d in "$T_TOP"/stages/*/; do
	n=$(basename "$d")
	pairs+=("$B/stages/$n:$T_TOP/stages/$n")
done
pairs+=("$B/common:$T_TOP/common" "$B/format:$T_TOP/format")
out=$(python3 "$S" cycles "${pairs[@]}" 2>&1)
rc=$?
[ $rc = 0 ] && ok "no file cycle in any stage, common/ or format/ ($(echo "$out" | grep -c 'no cycle') directories)" ||
	not_ok "no file cycle in any stage, common/ or format/" "$out"
out=$(python3 "$S" lengths "$T_TOP"/stages/* "$T_TOP/common" "$T_TOP/format" 2>&1)
rc=$?
[ $rc = 0 ] && ok "no function over 100 lines but per-kind switches" ||
	not_ok "no function over 100 lines but per-kind switches" "$out"

out=$(python3 "$S" tables "$T_TOP" 2>&1)
rc=$?
[ $rc = 0 ] && ok "every hash table on common/offmap or idmap but the named ones; every growth through vec.h" ||
	not_ok "every hash table on common/offmap or idmap but the named ones; every growth through vec.h" "$out"

# ---- mutants: each check must fail, naming the files ----
M="$T_OUT/mutant"
rm -rf "$M" && mkdir -p "$M/cyc" "$M/mod" "$M/len"
# a.c includes b.h, and b.o calls a_fn(): a cycle through a header and a call.
printf '#include "b.h"\nint a_fn(void) { return B_ONE; }\n' >"$M/cyc/a.c"
printf 'int a_fn(void);\n' >"$M/cyc/a.h"
printf '#define B_ONE 1\nint b_fn(void);\n' >"$M/cyc/b.h"
printf '#include "a.h"\nint b_fn(void) { return a_fn(); }\n' >"$M/cyc/b.c"
# The same two files named one module by their header: no cycle.
printf '/* m.h: one module (m.c, n.c). */\nint m_fn(void);\nint n_fn(void);\n' >"$M/mod/m.h"
printf '#include "m.h"\nint m_fn(void) { return n_fn(); }\n' >"$M/mod/m.c"
printf '#include "m.h"\nint n_fn(void) { return m_fn(); }\n' >"$M/mod/n.c"
for d in cyc mod; do
	for c in "$M/$d"/*.c; do cc -c -o "${c%.c}.o" "$c" || not_ok "compile $c"; done
done
python3 "$S" cycles "$M/cyc:$M/cyc" >"$M/cyc.out" 2>&1
rc=$?
[ $rc = 1 ] && ok "mutant: a cycle is found (exit 1)" || not_ok "mutant: a cycle is found (exit 1)" "exit $rc: $(cat "$M/cyc.out")"
check_grep "mutant: ... and named" 'file cycle a -> b -> a' "$M/cyc.out"
check_grep "mutant: ... with a's use of b: a.c includes b.h" 'a\.c includes b\.h' "$M/cyc.out"
check_grep "mutant: ... and b's use of a" 'b\.(c includes a\.h|o uses a_fn \(a\.o\))' "$M/cyc.out"
out=$(python3 "$S" cycles "$M/mod:$M/mod" 2>&1)
[ $? = 0 ] && ok "the files a header names as its module are one file" ||
	not_ok "the files a header names as its module are one file" "$out"

# The real btf-emit with types.c including funcs.h again (the cycle issue
# 53 found): funcs.o uses types__name_ok, so that is a cycle.
cp -r "$T_TOP/stages/btf-emit" "$M/emit"
sed -i '0,/#include "types.h"/s//#include "types.h"\n#include "funcs.h"/' "$M/emit/types.c"
grep -q '#include "funcs.h"' "$M/emit/types.c" || not_ok "mutant: the include was put back into types.c"
out=$(python3 "$S" cycles "$B/stages/btf-emit:$M/emit" 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q 'types.c includes funcs.h' &&
	ok "mutant: btf-emit's types.c including funcs.h again is a cycle, named" ||
	not_ok "mutant: btf-emit's types.c including funcs.h again is a cycle, named" "exit $rc: $out"

# A function of 120 lines is refused; a per-kind switch of that length is not.
{
	echo 'int long_fn(int x)'
	echo '{'
	for i in $(seq 1 118); do echo "	x += $i;"; done
	echo '	return x;'
	echo '}'
	echo 'int kinds(int k)'
	echo '{'
	echo '	switch (k) {'
	for i in $(seq 1 7); do
		echo "	case $i:"
		for j in $(seq 1 15); do echo "		k += $j;"; done
		echo '		break;'
	done
	echo '	}'
	echo '	return k;'
	echo '}'
} >"$M/len/long.c"
python3 "$S" lengths "$M/len" >"$M/len.out" 2>&1
rc=$?
[ $rc = 1 ] && ok "mutant: a long function is found (exit 1)" || not_ok "mutant: a long function is found (exit 1)" "exit $rc: $(cat "$M/len.out")"
check_grep "mutant: ... named with its file and line" 'long\.c:1: long_fn\(\) is 122 lines' "$M/len.out"
grep -q 'kinds' "$M/len.out" && not_ok "a per-kind switch of 130 lines is not refused" "$(cat "$M/len.out")" ||
	ok "a per-kind switch of 130 lines is not refused"

# A probe loop and a realloc of their own, in a copy of the tree's layout.
mkdir -p "$M/tab/stages/x" "$M/tab/common"
printf 'static int f(unsigned *s, unsigned j, unsigned m)\n{\n\twhile (s[j])\n\t\tj = (j + 1) & (m - 1);\n\treturn (int)j;\n}\n' >"$M/tab/stages/x/t.c"
printf 'void *g(void *p) { return realloc(p, 8); }\n' >"$M/tab/common/r.c"
python3 "$S" tables "$M/tab" >"$M/tab.out" 2>&1
rc=$?
[ $rc = 1 ] && ok "mutant: a table and a growth of their own are found (exit 1)" ||
	not_ok "mutant: a table and a growth of their own are found (exit 1)" "exit $rc: $(cat "$M/tab.out")"
check_grep "mutant: ... the probe loop named by file and line" '^stages/x/t\.c:4: a probe loop' "$M/tab.out"
check_grep "mutant: ... the realloc named by file and line" '^common/r\.c:1: realloc\(\) outside vec\.h' "$M/tab.out"
test_done
