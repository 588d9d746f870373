#!/usr/bin/env bash
# t1220-diff: tools/btfpipe-diff answers "what did my change do to the BTF?"
# at each stage. The sample is built twice, the second time from a copy with
# real changes: struct point's y becomes long, struct newcomer is added (with
# a global g_newcomer), struct zla removed (with g_zla), and ignore_second's
# second parameter becomes long. The .cus, .graph and BTF of the two builds
# must differ by exactly those names, with the changed member spelled out.
. "$(dirname "$0")/lib.sh"

D="$T_TOP/tools/btfpipe-diff"
export BTFPIPE_BIN="$T_BIN"

# The old program from the fixture, the new one from an edited copy laid out
# at the same relative path (build_fixture compiles from $T_TOP), so both have
# the same CU names.
build_fixture gcc -O2 5 "$T_OUT/old" sample || not_ok "build the old sample"
src="$T_OUT/new-src"
mkdir -p "$src/tests/fixtures"
cp -r "$T_TOP/tests/fixtures/sample" "$src/tests/fixtures/"
h="$src/tests/fixtures/sample/types.h" c="$src/tests/fixtures/sample/shapes.c"
u="$src/tests/fixtures/sample/util.c"
sed -i -e '/^struct point {/,/^};/s/^\tint y;/\tlong y;/' \
	-e '/^struct zla {/,/^};/d' -e '/g_zla;/d' \
	-e 's/^typedef point_t pos_t;/&\n\nstruct newcomer {\n\tint id;\n\tconst char *label;\n};\nextern struct newcomer g_newcomer;/' "$h"
sed -i -e '/zla/d' -e 's/^pos_t g_origin = .*/&\nstruct newcomer g_newcomer;/' "$c"
sed -i -e 's/int ignore_second(int a, int unused)/int ignore_second(int a, long unused)/' "$h" "$u"
# The edits took (else the differences below would be someone else's).
edits=$(grep -c -e '^	long y;' -e '^struct newcomer {' -e '^struct zla' -e 'long unused' "$h")
edits=$edits/$(grep -c -e 'zla' -e '^struct newcomer g_newcomer;' "$c")/$(grep -c 'long unused' "$u")
[ "$edits" = "3/1/1" ] && ok "the copy is edited (y long, newcomer in, zla out, long unused)" ||
	not_ok "the copy is edited (y long, newcomer in, zla out, long unused)" \
		"types.h/shapes.c/util.c matches: $edits"
T_TOP="$src" build_fixture gcc -O2 5 "$T_OUT/new" sample || not_ok "build the edited sample"

for v in old new; do
	elf="$T_OUT/$v/sample"
	"$T_BIN/dwarf-extract" -o "$T_OUT/$v.cus" "$elf" &&
		"$T_BIN/dedup-merge" -o "$T_OUT/$v.graph" "$T_OUT/$v.cus" &&
		"$T_BIN/btf-emit" --elf "$elf" --features +global_var -o "$T_OUT/$v.btf" "$T_OUT/$v.graph" ||
		not_ok "stages on the $v sample"
done

# reported FILE: the distinct "SIGN KEY" of the +/-/~ lines of types,
# functions and variables (the CU of a .cus line, counts and details left
# out), sorted. DATASECs are checked apart: where the compiler puts its string
# literals moves .rodata too, which is true but no business of this test.
reported() {
	sed -n -E 's/^ *([-+~]) ((struct|union|enum|typedef|base|func|var) [^: ]+).*/\1 \2/p' "$1" | sort -u
}

types_exp='+ struct newcomer
- struct zla
~ struct matrix
~ struct point'
funcs_vars_exp='+ var g_newcomer
- var g_zla
~ func ignore_second'
# expected STAGE: what reported must print for it (.cus compares types only).
expected() {
	case $1 in
	cus) printf '%s\n' "$types_exp" | sort ;;
	*) printf '%s\n%s\n' "$types_exp" "$funcs_vars_exp" | sort ;;
	esac
}

for stage in cus graph btf; do
	if [ "$stage" = btf ] && ! have bpftool; then
		skip "btf: the BTF checks" "no bpftool"
		continue
	fi
	a="$T_OUT/old.$stage" b="$T_OUT/new.$stage" out="$T_OUT/$stage.diff"
	check_exit "$stage: old vs new exits 1" 1 "$D" "$a" "$b"
	cp "$T_OUT/last.out" "$out"
	check_grep "$stage: the summary line" '^btfpipe-diff: [0-9]+ added, [0-9]+ removed, [0-9]+ changed$' "$out"
	want=$(expected "$stage")
	got=$(reported "$out")
	[ "$got" = "$want" ] && ok "$stage: exactly the added, removed and changed names" ||
		not_ok "$stage: exactly the added, removed and changed names" \
			"$(printf 'wanted:\n%s\ngot:\n%s\noutput:\n%s' "$want" "$got" "$(cat "$out")")"
	check_grep "$stage: struct point's y, old and new" \
		'~ struct point: .*y: int @32 -> long( int)? @64' "$out"
	check_grep "$stage: struct point's size" '~ struct point: size: 8 -> 16' "$out"
	check_grep "$stage: struct matrix grew with it" '~ struct matrix: size: 288 -> 336$' "$out"
	[ "$stage" = cus ] || check_grep "$stage: ignore_second's prototype, old and new" \
		'^~ func ignore_second: proto: int ignore_second\(int a, int unused\) -> int ignore_second\(int a, long( int)? unused\)$' "$out"
	# Unchanged types are not reported (the summary line shows the output is there).
	if grep -q '^btfpipe-diff: ' "$out" && ! grep -Eq 'struct (wire|opaque|flags)\b|point_t|pos_t' "$out"; then
		ok "$stage: unchanged struct wire, struct opaque, point_t not reported"
	else
		not_ok "$stage: unchanged struct wire, struct opaque, point_t not reported" "$(cat "$out")"
	fi
	if grep -Eq '#[0-9]|<0x|@0x' "$out"; then
		not_ok "$stage: no record ids or DIE offsets in the output" "$(cat "$out")"
	else
		ok "$stage: no record ids or DIE offsets in the output"
	fi
	n=$(grep -c '^ *[-+~] ' "$out")
	check_grep "$stage: the summary counts the lines ($n)" \
		"^btfpipe-diff: $(grep -c '^ *+ ' "$out") added, $(grep -c '^ *- ' "$out") removed, $(grep -c '^ *~ ' "$out") changed$" "$out"

	check_exit "$stage: a file against itself exits 0" 0 "$D" "$a" "$a"
	check_grep "$stage: a file against itself: nothing to report" \
		'^btfpipe-diff: 0 added, 0 removed, 0 changed$' "$T_OUT/last.out"
	[ "$(wc -l <"$T_OUT/last.out")" -eq 1 ] && ok "$stage: a file against itself: only the summary" ||
		not_ok "$stage: a file against itself: only the summary" "$(cat "$T_OUT/last.out")"
done

if have bpftool; then
	out="$T_OUT/btf.diff"
	check_grep "btf: the DATASEC .bss lost g_zla and gained g_newcomer" \
		'^~ datasec \.bss: .*g_zla: removed; g_newcomer: added' "$out"
	check_grep "btf: the DATASEC .data: g_origin (a pos_t) grew" \
		'^~ datasec \.data: g_origin: 8 bytes -> 16 bytes' "$out"
fi

# .cus compares types only: the prototype change is not there.
if grep -q '^btfpipe-diff: ' "$T_OUT/cus.diff" && ! grep -q 'ignore_second' "$T_OUT/cus.diff"; then
	ok "cus: functions are not compared"
else
	not_ok "cus: functions are not compared" "$(cat "$T_OUT/cus.diff")"
fi

# .cus: per CU. The new struct is in shapes.c's CU only (gcc writes a type in
# the CUs that use it); struct point changed in every CU that has it.
out="$T_OUT/cus.diff"
sed -n '/^cu "tests\/fixtures\/sample\/shapes.c":$/,/^cu /p' "$out" >"$T_OUT/cus-shapes.diff"
check_grep "cus: struct newcomer added in shapes.c's CU" '^  \+ struct newcomer$' "$T_OUT/cus-shapes.diff"
check_grep "cus: struct zla removed from shapes.c's CU" '^  - struct zla$' "$T_OUT/cus-shapes.diff"
n=$(grep -c '^  ~ struct point: ' "$out")
[ "$n" -ge 2 ] && [ "$n" = "$(grep -c '^cu "' "$out")" ] && ok "cus: struct point changed under each CU listed ($n)" ||
	not_ok "cus: struct point changed under each CU listed ($n)" "$(cat "$out")"
# A CU only in one file: drop util.c from the new program's .cus by linking
# without it is not possible, so compare the old program with a single object.
(cd "$T_TOP" && gcc -O2 -gdwarf-5 -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$T_OUT/util.o" \
	tests/fixtures/sample/util.c) && "$T_BIN/dwarf-extract" -o "$T_OUT/util.cus" "$T_OUT/util.o" ||
	not_ok "extract util.o"
check_exit "cus: program vs one of its objects exits 1" 1 "$D" "$T_OUT/old.cus" "$T_OUT/util.cus"
check_grep "cus: the CUs only in the program are removed CUs" '^- cu "tests/fixtures/sample/main\.c" \([0-9]+ types\)$' "$T_OUT/last.out"
if grep -q '^btfpipe-diff: ' "$T_OUT/last.out" && ! grep -q 'util\.c' "$T_OUT/last.out"; then
	ok "cus: the CU in both (util.c, same source) is not reported"
else
	not_ok "cus: the CU in both (util.c, same source) is not reported" "$(cat "$T_OUT/last.out")"
fi

# Trouble is exit 2, with a message.
check_exit "a .cus against a .graph exits 2" 2 "$D" "$T_OUT/old.cus" "$T_OUT/old.graph"
check_grep "a .cus against a .graph: says why" 'old\.cus is a \.cus file and .*old\.graph a \.graph file' "$T_OUT/last.err"
check_exit "a missing file exits 2" 2 "$D" "$T_OUT/old.cus" "$T_OUT/no-such.cus"
check_grep "a missing file: named" 'no-such\.cus: error: No such file' "$T_OUT/last.err"
head -c 100 "$T_OUT/old.cus" >"$T_OUT/cut.cus"
check_exit "a truncated .cus exits 2" 2 "$D" "$T_OUT/cut.cus" "$T_OUT/old.cus"
check_exit "one file only is a usage error, exit 2" 2 "$D" "$T_OUT/old.cus"
test_done
