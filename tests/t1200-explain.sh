#!/usr/bin/env bash
# t1200-explain: `btf-emit --explain NAME` answers "why is X (not) in the
# BTF" with the evidence and the same decision the real output has.
. "$(dirname "$0")/lib.sh"

FIX="$T_TOP/tests/fixtures/funcsel"
d="$T_OUT"
objs=""
# The function-selection fixture's gcc program (t1000 builds it the same way).
for f in main weak strong inl_a inl_b static_a static_b clone stack7 packed unnamed kfunc; do
	extra=()
	[ "$f" = unnamed ] && extra=(-std=gnu2x)
	(cd "$T_TOP" && gcc -O2 -gdwarf-5 "${extra[@]}" -fdebug-prefix-map="$T_TOP"=/btfpipe -c -o "$d/$f.o" "$FIX/$f.c") ||
		not_ok "build $f.c"
	objs="$objs $d/$f.o"
done
# shellcheck disable=SC2086
gcc -o "$d/prog" $objs 2>"$d/ld.err" || not_ok "link" "$(cat "$d/ld.err")"
"$T_BIN/dwarf-extract" -o "$d/p.cus" "$d/prog" && "$T_BIN/dedup-merge" -o "$d/p.graph" "$d/p.cus" ||
	not_ok "extract and merge"
"$T_BIN/btf-emit" --elf "$d/prog" --skip-report "$d/skips" -o "$d/p.btf" "$d/p.graph" || not_ok "emit"

"$T_BIN/btf-emit" --elf "$d/prog" --explain fs_weak "$d/p.graph" >"$d/weak.txt" 2>&1
check_grep "weak/strong: both DWARF descriptions listed" 'weak\.c.*fs_weak\(int a, int b\)' "$d/weak.txt"
check_grep "weak/strong: the strong one too" 'strong\.c.*fs_weak\(int x, int y\) at 0x' "$d/weak.txt"
check_grep "weak/strong: the symbol" 'FUNC fs_weak at 0x' "$d/weak.txt"
check_grep "weak/strong: the decision names the strong definition's CU" 'decision: encoded, from CU .*strong\.c' "$d/weak.txt"
bpftool btf dump file "$d/p.btf" | grep -q "FUNC 'fs_weak'" && ok "weak/strong: and the BTF has it" ||
	not_ok "weak/strong: and the BTF has it"

"$T_BIN/btf-emit" --elf "$d/prog" --explain fs_static "$d/p.graph" >"$d/static.txt" 2>&1
n=$(grep -c 'FUNC fs_static at' "$d/static.txt")
[ "$n" = 2 ] && ok "ambiguous: two symbols shown" || not_ok "ambiguous: two symbols shown" "$(cat "$d/static.txt")"
check_grep "ambiguous: the rule" 'decision: skipped: ambiguous address' "$d/static.txt"
check_grep "ambiguous: the same reason as the skip report" '^func fs_static: ambiguous address' "$d/skips"

"$T_BIN/btf-emit" --elf "$d/prog" --explain no_such_function "$d/p.graph" >"$d/none.txt" 2>&1
check_grep "unknown name: says so" 'no function or variable of that name' "$d/none.txt"
check_grep "unknown name: no symbol either" 'symbol table: no symbol of that name' "$d/none.txt"
test_done
