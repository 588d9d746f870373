#!/usr/bin/env bash
# t0700-vs-pahole: our BTF says what pahole's says, type for type, except for
# the differences listed (and explained) in EXPECTED below.
#
# For gcc and clang-19, -O0 and -O2, DWARF 4 and 5, the sample fixture is
# encoded twice: by our three stages and by pahole 1.24
# (pahole -J --btf_gen_floats --btf_encode_detached). tools/btfcmp.py
# then compares the two by content (bpftool parses both; no code of ours reads
# pahole's output): named types, anonymous roots, VARs and DATASECs, with
# --flatten-arrays because pahole flattens int m[3][4][5] into one [60] ARRAY
# where we nest three (types.c, a deliberate mapping).
#
# Every difference line btfcmp prints must match a row of EXPECTED for that
# variant, and every row must match at least one line: a row that matches
# nothing fails, so the list cannot go stale silently. A difference that is
# our bug is never listed here; it fails until fixed.
#
# _Atomic. gcc and clang emit DW_TAG_atomic_type (struct counters, two
# globals) only for DWARF 5; at DWARF 4 they drop the qualifier. pahole 1.24
# does not know the tag. When it aborts, that is the check ("pahole aborts on
# _Atomic, we encode it"). The pahole 1.24 installed here does not abort: it
# warns "tag not supported 0x47" and writes the affected members with type 0
# (void) or with a stale id that lands on an unrelated FUNC, BTF the kernel
# rejects ("Invalid type_id", "Invalid member"). Those members are the listed
# differences of the DWARF 5 variants.
#
# The object of shapes.c (gcc and clang-19, -O2, DWARF 4) is compared the same
# way, for its VAR and DATASEC (.data..percpu), which executables do not have.
#
# Functions are compared too (--funcs), for information only: our function
# rules (stages/btf-emit/funcs.c) are pahole 1.27's and Debian's pahole is
# 1.24, so the sets differ by design; t1000 asserts each rule on fixtures
# made for it. The counts and differences are printed as "info:" lines.
. "$(dirname "$0")/lib.sh"

BTFCMP="$T_TOP/tools/btfcmp.py"
BTFCHECK="$T_TOP/bin/tools/btfcheck"

# EXPECTED: one row per expected difference line, "GLOB<TAB>ERE<TAB>WHY".
# GLOB selects the variants (labels like gcc-O2-dwarf5); ERE must match a
# whole btfcmp difference line (without its indent); WHY says whose choice or
# whose bug it is.
TAB=$'\t'
EXPECTED="\
*-dwarf5${TAB}^only-in-A struct counters size=16 \\{hits: int 'int' @0; head: \\*\\(int 'int'\\) @64\\}\$${TAB}ours, deliberate: _Atomic T is written as T (same size and layout; BTF has no atomic kind); pahole cannot encode these members
gcc-*-dwarf5${TAB}^only-in-B struct counters size=16 \\{hits: void @0; head: void @64\\}\$${TAB}pahole wrong: DW_TAG_atomic_type unknown to 1.24, the members get type 0 (void), which the kernel rejects
*-dwarf5${TAB}^only-in-B struct counters size=16 \\{hits: func [A-Za-z_0-9]+ .* @0; head: func [A-Za-z_0-9]+ .* @64\\}\$${TAB}pahole wrong: the unresolved atomic type leaves a stale id that lands on an unrelated FUNC (kernel: Invalid member)
gcc-*-dwarf5${TAB}^count STRUCT A=17 B=18\$${TAB}pahole wrong: its two broken copies of struct counters (void members in one CU, FUNC members in another) differ, so its dedup keeps both"

# Our chain: ELF -> .cus -> .graph -> .btf, in DIR. Prints errors on failure.
our_chain() {
	local dir=$1 elf=$2
	"$T_BIN/dwarf-extract" -o "$dir/ours.cus" "$elf" &&
		"$T_BIN/dedup-merge" -o "$dir/ours.graph" "$dir/ours.cus" &&
		"$T_BIN/btf-emit" --elf "$elf" -o "$dir/ours.btf" "$dir/ours.graph"
}

# compare_types LABEL DIR: btfcmp DIR/ours.btf against DIR/pahole.btf (types,
# VARs, DATASECs; arrays flattened): every difference line must be a row of
# EXPECTED for LABEL, and every row seen (lib.sh). Returns 1 when btfcmp
# itself failed.
compare_types() {
	local label=$1 dir=$2
	"$BTFCMP" --flatten-arrays --width 0 "$dir/ours.btf" "$dir/pahole.btf" >"$dir/types.cmp" 2>&1
	if [ $? -eq 2 ]; then
		not_ok "$label: btfcmp compares our BTF with pahole's" "$(cat "$dir/types.cmp")"
		return 1
	fi
	check_differences "$label" "$dir/types.cmp" "every difference from pahole is a listed one" \
		"ours = A, pahole = B"
}

if ! have pahole || ! have bpftool || ! have python3; then
	skip "compare with pahole" "pahole, bpftool or python3 missing"
	test_done
fi
pahole_version=$(pahole --version 2>&1)
if [ "$pahole_version" != "v1.24" ]; then
	# The expected differences are those of 1.24; another version needs its
	# own review, not a silent pass or a wall of failures.
	skip "compare with pahole" "pahole is $pahole_version, the expected differences are for v1.24"
	test_done
fi

# The _Atomic struct as we must encode it, in every variant (btfcmp --list).
OUR_COUNTERS="struct struct counters size=16 {hits: int 'int' @0; head: *(int 'int') @64}"

selftest_done=0
for cc in "$GCC" "$CLANG"; do
	for opt in -O0 -O2; do
		for dw in 4 5; do
			label="$(basename "$cc")$opt-dwarf$dw"
			dir="$T_OUT/$label"
			build_sample "$cc" "$opt" "$dw" "$dir" "$label" "compare with pahole" || continue
			elf="$dir/sample"
			if ! out=$(our_chain "$dir" "$elf" 2>&1); then
				not_ok "$label: our chain encodes the sample" "$out"
				continue
			fi
			ok "$label: our chain encodes the sample"
			if "$BTFCMP" --list "$dir/ours.btf" >"$dir/ours.list" 2>&1 &&
				grep -Fxq "$OUR_COUNTERS" "$dir/ours.list"; then
				ok "$label: struct counters keeps its _Atomic members as int and int *"
			else
				not_ok "$label: struct counters keeps its _Atomic members as int and int *" \
					"$(grep -F 'counters' "$dir/ours.list" || head -5 "$dir/ours.list")"
			fi

			natomic=$(readelf --debug-dump=info "$elf" 2>/dev/null | grep -c DW_TAG_atomic_type)
			pahole -J --btf_gen_floats --btf_encode_detached="$dir/pahole.btf" "$elf" \
				>"$dir/pahole.out" 2>"$dir/pahole.err"
			prc=$?
			if [ "$prc" -ne 0 ]; then
				if [ "$natomic" -gt 0 ]; then
					ok "$label: pahole aborts on _Atomic (exit $prc), we encode it"
				else
					not_ok "$label: pahole encodes a build without _Atomic" \
						"exit $prc: $(tail -5 "$dir/pahole.err")"
				fi
				continue
			fi
			if [ "$natomic" -gt 0 ]; then
				# Record how this pahole copes, so a newer one that handles
				# _Atomic shows up here rather than as a puzzle below.
				check_grep "$label: pahole 1.24 exits 0 on $natomic DW_TAG_atomic_type but does not know the tag" \
					'tag not supported 0x47' "$dir/pahole.err"
				if [ -x "$BTFCHECK" ]; then
					echo "info: $label: the kernel on pahole's BTF: $("$BTFCHECK" --load "$dir/pahole.btf" 2>/dev/null | grep '^load')"
				fi
			fi

			# btfcmp's own sanity, once: it sees nothing between a file and
			# itself, and it does see the nested arrays without
			# --flatten-arrays (a comparator that sees nothing passes
			# everything).
			if [ "$selftest_done" = 0 ] && [ "$dw" = 4 ]; then
				selftest_done=1
				check_exit "btfcmp: a BTF equals itself" 0 "$BTFCMP" "$dir/ours.btf" "$dir/ours.btf"
				"$BTFCMP" --width 0 "$dir/ours.btf" "$dir/pahole.btf" >"$dir/nested.cmp" 2>&1
				rc=$?
				if [ "$rc" -eq 1 ] && grep -q "^  only-in-A struct matrix size=288 {m: \[3\](\[4\](\[5\](int 'int'))) @0; grid: \[2\](\[3\](struct point)) @1920}$" "$dir/nested.cmp" &&
					grep -q "^  only-in-B struct matrix size=288 {m: \[60\](int 'int') @0; grid: \[6\](struct point) @1920}$" "$dir/nested.cmp"; then
					ok "btfcmp: without --flatten-arrays it reports our nested arrays against pahole's flat ones"
				else
					not_ok "btfcmp: without --flatten-arrays it reports our nested arrays against pahole's flat ones" \
						"exit $rc: $(cat "$dir/nested.cmp")"
				fi
				check_exit "btfcmp: a missing file is exit 2" 2 "$BTFCMP" "$dir/ours.btf" "$dir/no-such.btf"
			fi

			compare_types "$label" "$dir" || continue

			# Functions: with the same selection as pahole 1.24 (btf-emit's
			# funcs.c), the FUNC set and linkage must be equal where pahole
			# can encode the file at all (DWARF 4: no _Atomic).
			"$BTFCMP" -q --flatten-arrays --funcs "$dir/ours.btf" "$dir/pahole.btf" >"$dir/funcs.cmp" 2>&1
			fcmp_rc=$?
			# Every FUNC pahole 1.24 has and we do not must be one our
			# (current pahole's) rules skip, with that rule in the skip report
			# (pahole 1.24 predates them: e.g. it encodes clang DW_CC_nocall
			# functions with their source signature, which the code no longer
			# has); we must have no FUNC pahole lacks.
			case "$label" in
			*dwarf4*)
				"$T_BIN/btf-emit" --elf "$dir/sample" --skip-report "$dir/skips" -o "$dir/again.btf" \
					"$dir/ours.graph" >/dev/null 2>&1
				"$BTFCMP" --flatten-arrays --funcs --width 0 "$dir/ours.btf" "$dir/pahole.btf" >"$dir/funcs.full" 2>&1
				unexplained=$(grep -E '^  only-in-[AB] func ' "$dir/funcs.full" | while read -r side _ fname _; do
					if [ "$side" = only-in-B ] &&
						grep -Eq "^func $fname: (optimized parameters|ambiguous address|inconsistent prototype|a parameter is in an unexpected register)" "$dir/skips"; then
						continue
					fi
					echo "$side $fname"
				done)
				if [ -z "$unexplained" ]; then ok "$label: every function difference from pahole 1.24 is a documented rule"
				else not_ok "$label: every function difference from pahole 1.24 is a documented rule" "$unexplained"; fi ;;
			esac
			"$BTFCMP" -q --flatten-arrays --funcs --no-func-linkage "$dir/ours.btf" "$dir/pahole.btf" \
				>"$dir/funcs-nolink.cmp" 2>&1
			nf_ours=$(bpftool btf dump file "$dir/ours.btf" | grep -c '^\[[0-9]*\] FUNC ')
			nf_pahole=$(bpftool btf dump file "$dir/pahole.btf" | grep -c '^\[[0-9]*\] FUNC ')
			echo "info: $label: FUNCs ours $nf_ours, pahole $nf_pahole;" \
				"with linkage: $(sed 's/^btfcmp: //' "$dir/funcs.cmp");" \
				"without: $(sed 's/^btfcmp: //' "$dir/funcs-nolink.cmp")"
		done
	done
done
# --- shapes.c as an object: VARs and a DATASEC ---------------------------------
# An executable has no .data..percpu left (ld folds it into .data), so neither
# encoder writes a VAR there. The object of shapes.c keeps g_percpu_hits in
# .data..percpu: both write it as a VAR in a DATASEC, which the comparison
# must then cover (checked: it is in both lists). DWARF 4, so no _Atomic.
for cc in "$GCC" "$CLANG"; do
	label="$(basename "$cc")-O2-dwarf4-shapes.o"
	dir="$T_OUT/$label"
	if ! have "$cc"; then
		skip "$label: compare with pahole" "compiler $cc not found"
		continue
	fi
	mkdir -p "$dir"
	if ! out=$(cd "$T_TOP" && "$cc" -O2 -gdwarf-4 -c -fdebug-prefix-map="$T_TOP"=/btfpipe \
		-o "$dir/shapes.o" tests/fixtures/sample/shapes.c 2>&1); then
		not_ok "$label: build" "$out"
		continue
	fi
	if ! out=$(our_chain "$dir" "$dir/shapes.o" 2>&1); then
		not_ok "$label: our chain encodes it" "$out"
		continue
	fi
	if ! out=$(pahole -J --btf_gen_floats --btf_encode_detached="$dir/pahole.btf" "$dir/shapes.o" 2>&1); then
		not_ok "$label: pahole encodes it" "$out"
		continue
	fi
	for side in ours pahole; do
		"$BTFCMP" --list "$dir/$side.btf" >"$dir/$side.list" 2>&1
		if grep -Fxq "var var g_percpu_hits linkage=global int 'int'" "$dir/$side.list" &&
			grep -Fxq "datasec datasec .data..percpu size=4 {g_percpu_hits@0+4}" "$dir/$side.list"; then
			ok "$label: $side has g_percpu_hits in DATASEC .data..percpu"
		else
			not_ok "$label: $side has g_percpu_hits in DATASEC .data..percpu" \
				"$(grep -E '^(var|datasec) ' "$dir/$side.list")"
		fi
	done
	compare_types "$label" "$dir"
done

if [ "$selftest_done" = 0 ]; then
	not_ok "btfcmp self-checks" "no DWARF 4 variant got as far as a comparison"
fi
test_done
