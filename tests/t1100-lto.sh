#!/usr/bin/env bash
# t1100-lto: link-time optimisation. tests/fixtures/lto (four C files on one
# header, lto.h says what each piece is for) is built three ways with LTO,
# all -O2 -g:
#   clang-thin  clang-19 -flto=thin -fuse-ld=lld-19
#   clang-full  clang-19 -flto -fuse-ld=lld-19
#   gcc-lto     gcc -flto
# and once per compiler without LTO (same compiler, -O2 -g). Every build goes
# through our three stages (btf-emit --elf --skip-report). Per LTO build:
#  (a) its .cus has cross-CU references (`@0x` in the dump): required for
#      gcc -flto and clang full LTO, reported for ThinLTO; for gcc, the
#      out-of-line stats_report is a nameless DIE of the link-time CU whose
#      DW_AT_abstract_origin is in stats.c's CU (the construction (c) needs);
#  (b) its BTF's types (everything but FUNCs) equal the non-LTO build's
#      (btfcmp --flatten-arrays); a difference the compiler legitimately
#      makes must be a row of EXPECTED below, with its reason;
#  (c) every FUNC of the non-LTO BTF is in the LTO BTF with the same
#      prototype, or is explained: the optimizer removed it (the skip report
#      says "no function symbol of that name" and nm agrees) or merged or
#      rewrote it (another skip-report reason, a funcs.c rule). The
#      explanations are printed as info lines;
#  (d) libbpf parses it and btf__dedup removes nothing; the kernel loads it
#      (btfcheck: 77 means no bpf() here, a skip);
#  (e) pahole 1.24 on the same binary: its exit code and counts are info
#      lines; its type set must be a subset of ours (or pahole failed), and
#      where it lacks types we have, the count is reported as an ok check.
# Then (f): a large LTO program (tests/gen/many-cus.sh, N units, gcc -flto)
# gives byte-identical .cus with dwarf-extract -j1 and -j2; the wall times are
# info lines only (tests must not depend on timing).
. "$(dirname "$0")/lib.sh"
export LC_ALL=C # sort and comm must agree on the order

FIX=tests/fixtures/lto
BTFCMP="$T_TOP/tools/btfcmp.py"
BTFCHECK="$T_BIN/tools/btfcheck"
: "${LLD:=ld.lld-19}"
MANY_N=200

# LTO builds: label|compiler|flags. The non-LTO build of the same compiler is
# nolto-<compiler basename>, built with the same linker.
LTO_BUILDS="clang-thin|$CLANG|-flto=thin -fuse-ld=lld-19
clang-full|$CLANG|-flto -fuse-ld=lld-19
gcc-lto|$GCC|-flto"
# Cross-CU references are required of these (ThinLTO imports whole functions
# with a copy of their CU, so it may have none: reported, not required).
XREF_REQUIRED="clang-full gcc-lto"

# EXPECTED: type differences (b) the compiler legitimately makes, one row
# "GLOB<TAB>ERE<TAB>WHY": GLOB selects the LTO labels, ERE must match a whole
# btfcmp difference line (without its indent). A row that matches no line
# fails, so the list cannot go stale. A difference that is our bug is never
# listed: it fails until fixed. With the fixture as it is, none of the three
# compilers changes a type (every type is reached from a global or from a
# function that stays), so the table is empty.
TAB=$'\t'
EXPECTED=""

if ! have bpftool || ! have python3; then
	skip "LTO" "bpftool or python3 missing: nothing can read the BTF"
	test_done
fi

# build DIR NAME CC FLAGS...: the fixture into DIR/NAME, paths relative to the
# checkout so the prefix map gives stable CU names.
build() {
	local dir=$1 name=$2 cc=$3; shift 3
	mkdir -p "$dir"
	(cd "$T_TOP" && "$cc" -O2 -g "$@" -fdebug-prefix-map="$T_TOP"=/btfpipe \
		-o "$dir/$name" "$FIX"/*.c) 2>&1
}

# chain ELF: the three stages; leaves ELF.cus, .cus.txt, .graph, .btf, .skips,
# .funcs (one "func ..." rendering a line) and .nm (the function symbols).
chain() {
	local e=$1
	"$T_BIN/dwarf-extract" -o "$e.cus" "$e" 2>&1 &&
		"$T_BIN/dwarf-extract" --dump "$e.cus" >"$e.cus.txt" 2>&1 &&
		"$T_BIN/dedup-merge" -o "$e.graph" "$e.cus" 2>&1 &&
		"$T_BIN/btf-emit" --elf "$e" --skip-report "$e.skips" -o "$e.btf" "$e.graph" 2>&1 &&
		"$BTFCMP" --list --funcs --flatten-arrays --width 0 "$e.btf" >"$e.list" 2>&1 &&
		sed -n 's/^func func //p' "$e.list" | sort >"$e.funcs" &&
		nm "$e" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$e.nm"
}

# func_names FILE.funcs: the FUNC names, sorted.
func_names() { awk '{ print $1 }' "$1" | sort -u; }

# ---- the non-LTO builds, one per compiler ------------------------------------
declare -A nolto # compiler -> ELF path, or empty when it could not be built
for cc in "$GCC" "$CLANG"; do
	name="nolto-$(basename "$cc")"
	nolto[$cc]=""
	if ! have "$cc"; then
		skip "$name: build" "compiler $cc not found"
		continue
	fi
	extra=()
	if [ "$cc" = "$CLANG" ]; then
		if ! have "$LLD"; then
			skip "$name: build" "$LLD not found"
			continue
		fi
		extra=(-fuse-ld=lld-19)
	fi
	if ! out=$(build "$T_OUT/$name" "$name" "$cc" "${extra[@]}"); then
		not_ok "$name: build the fixture" "$out"
		continue
	fi
	if ! out=$(chain "$T_OUT/$name/$name"); then
		not_ok "$name: our three stages encode it" "$out"
		continue
	fi
	ok "$name: built, and our three stages encode it"
	nolto[$cc]="$T_OUT/$name/$name"
done

# ---- each LTO build ----------------------------------------------------------
while IFS='|' read -r label cc flags; do
	dir="$T_OUT/$label"
	e="$dir/$label"
	if ! have "$cc"; then
		skip "$label: LTO checks" "compiler $cc not found"
		continue
	fi
	case "$flags" in *lld*) if ! have "$LLD"; then
		skip "$label: LTO checks" "$LLD not found"
		continue
	fi ;; esac
	base=${nolto[$cc]}
	if [ -z "$base" ]; then
		not_ok "$label: LTO checks" "the non-LTO build of $cc failed (above), nothing to compare with"
		continue
	fi
	# shellcheck disable=SC2086 # flags is a word list
	if ! out=$(build "$dir" "$label" "$cc" $flags); then
		not_ok "$label: build the fixture" "$out"
		continue
	fi
	if ! out=$(chain "$e"); then
		not_ok "$label: our three stages encode it" "$out"
		continue
	fi
	ok "$label: built, and our three stages encode it"

	# (a) cross-CU references.
	nx=$(grep -c '@0x' "$e.cus.txt")
	case " $XREF_REQUIRED " in
	*" $label "*)
		if [ "$nx" -gt 0 ]; then
			ok "$label: the .cus has cross-CU references ($nx records or members name @0x...)"
		else
			not_ok "$label: the .cus has cross-CU references" \
				"$(basename "$cc") $flags produced none: no '@0x' in the dump; CUs: $(grep '^cu ' "$e.cus.txt" | cut -c1-120)"
		fi ;;
	*) echo "info: $label: $nx records or members with cross-CU references (@0x) in the .cus" ;;
	esac
	if [ "$label" = gcc-lto ]; then
		addr=$(nm "$e" | awk '$3 == "stats_report" { print $1 }' | sed 's/^0*//')
		if [ -n "$addr" ] && awk -v pc="pc=0x$addr" '
			/^cu / { art = ($0 ~ /name="<artificial>"/) }
			art && $3 == "func" && $4 == "\"\"" && / origin=@0x/ && index($0, " " pc " ") { found = 1 }
			END { exit !found }' "$e.cus.txt"; then
			ok "$label: stats_report's code is a nameless DIE of the link-time CU, its prototype only through an origin in another CU"
		else
			not_ok "$label: stats_report's code is a nameless DIE of the link-time CU, its prototype only through an origin in another CU" \
				"stats_report at ${addr:-no symbol}; link-time CU: $(grep -A3 'name="<artificial>"' "$e.cus.txt" | cut -c1-160)"
		fi
	fi

	# (b) non-function types equal the non-LTO build's.
	"$BTFCMP" --flatten-arrays --width 0 "$base.btf" "$e.btf" >"$dir/types.cmp" 2>&1
	rc=$?
	if [ "$rc" -eq 2 ]; then
		not_ok "$label: btfcmp compares the LTO BTF with the non-LTO one" "$(cat "$dir/types.cmp")"
	else
		check_differences "$label" "$dir/types.cmp" "the BTF's types equal the non-LTO build's" \
			"non-LTO = A, LTO = B"
	fi

	# (c) the FUNC sets.
	func_names "$base.funcs" >"$dir/funcs.nolto"
	func_names "$e.funcs" >"$dir/funcs.lto"
	unexplained=""
	nexpl=0
	while IFS= read -r f; do
		why=$(sed -n "s/^func $f: \(.*\) (CU .*)\$/\1/p" "$e.skips" | head -1)
		if [ -z "$why" ]; then
			unexplained+="$f: not in the LTO BTF and not in its skip report"$'\n'
		elif [[ $why == "no function symbol of that name" ]] && grep -Eq "^$f(\.|\$)" "$e.nm"; then
			unexplained+="$f: skipped for having no symbol, but nm lists $(grep -E "^$f(\.|\$)" "$e.nm" | tr '\n' ' ')"$'\n'
		else
			[[ $why == "no function symbol of that name" ]] && why="removed by the optimizer (no symbol in the LTO binary)"
			echo "info: $label: FUNC $f of the non-LTO build is not in the LTO BTF: $why"
			nexpl=$((nexpl + 1))
		fi
	done < <(comm -23 "$dir/funcs.nolto" "$dir/funcs.lto")
	if [ -z "$unexplained" ]; then
		ok "$label: every FUNC of the non-LTO BTF is in the LTO BTF or explained ($nexpl explained)"
	else
		not_ok "$label: every FUNC of the non-LTO BTF is in the LTO BTF or explained" "${unexplained%$'\n'}"
	fi
	comm -13 "$dir/funcs.nolto" "$dir/funcs.lto" | sed "s/^/info: $label: FUNC only in the LTO BTF: /"
	changed=$(comm -12 "$dir/funcs.nolto" "$dir/funcs.lto" | while read -r f; do
		grep "^$f " "$base.funcs" >"$dir/p.nolto"
		grep "^$f " "$e.funcs" >"$dir/p.lto"
		cmp -s "$dir/p.nolto" "$dir/p.lto" || printf 'non-LTO %s\n    LTO %s\n' "$(cat "$dir/p.nolto")" "$(cat "$dir/p.lto")"
	done)
	nboth=$(comm -12 "$dir/funcs.nolto" "$dir/funcs.lto" | wc -l)
	if [ "$nboth" -gt 0 ] && [ -z "$changed" ]; then
		ok "$label: the $nboth FUNCs of both builds have the same prototype"
	else
		not_ok "$label: the FUNCs of both builds have the same prototype" "${changed:-no FUNC in common}"
	fi
	if grep -q '^stats_report ' "$e.funcs"; then
		ok "$label: stats_report (the one user of struct report, its return type) is a FUNC"
	else
		not_ok "$label: stats_report (the one user of struct report, its return type) is a FUNC" \
			"$(grep '^func stats_report' "$e.skips" || echo 'not in the skip report either')"
	fi

	# (d) libbpf and the kernel.
	check "$label: libbpf parses the BTF and btf__dedup removes nothing" "$BTFCHECK" --dedup "$e.btf"
	check_loads "$label: the kernel loads the BTF" "$e.btf"

	# (e) pahole 1.24 on the same binary.
	if ! have pahole; then
		skip "$label: pahole on the LTO binary" "pahole not found"
		continue
	fi
	pv=$(pahole --version 2>&1)
	timeout 120 pahole -J --btf_gen_floats --btf_encode_detached="$dir/pahole.btf" "$e" \
		>"$dir/pahole.out" 2>"$dir/pahole.err"
	prc=$?
	if [ "$prc" -ne 0 ] || [ ! -s "$dir/pahole.btf" ] ||
		! "$BTFCMP" --list --flatten-arrays --width 0 "$dir/pahole.btf" >"$dir/pahole.list" 2>&1; then
		echo "info: $label: pahole $pv: exit $prc, no usable BTF: $(tail -2 "$dir/pahole.err" | tr '\n' ' ')"
		ok "$label: pahole $pv fails on it (exit $prc), we encode it"
		continue
	fi
	"$BTFCMP" --list --flatten-arrays --width 0 "$e.btf" | sort -u >"$dir/ours.set"
	sort -u "$dir/pahole.list" >"$dir/pahole.set"
	"$BTFCMP" --list --funcs --flatten-arrays --width 0 "$dir/pahole.btf" | grep -c '^func func ' >"$dir/pahole.nfuncs"
	named='^(struct|union|enum|enum64|typedef|int|float|fwd) '
	n_ours=$(grep -Ec "$named" "$dir/ours.set")
	n_pahole=$(grep -Ec "$named" "$dir/pahole.set")
	echo "info: $label: pahole $pv: exit $prc, $n_pahole distinct named types" \
		"(ours $n_ours), $(cat "$dir/pahole.nfuncs") FUNCs (ours $(wc -l <"$e.funcs")), $(grep -c . "$dir/pahole.err") stderr lines"
	pahole_only=$(comm -13 "$dir/ours.set" "$dir/pahole.set")
	lost=$(comm -23 "$dir/ours.set" "$dir/pahole.set" | grep -Ec "$named")
	if [ -n "$pahole_only" ]; then
		not_ok "$label: pahole's types are a subset of ours" "only pahole has:"$'\n'"$pahole_only"
	elif [ "$lost" -gt 0 ] && [ "$n_ours" -gt "$n_pahole" ]; then
		ok "$label: pahole loses $lost types on $label, we keep them"
	else
		ok "$label: pahole's types are a subset of ours (it loses none here: $n_pahole named types each)"
	fi
done <<<"$LTO_BUILDS"

# ---- (f) a large LTO program: -j1 and -j2 give the same bytes ----------------
if ! have "$GCC"; then
	skip "many-cus LTO" "compiler $GCC not found"
	test_done
fi
m="$T_OUT/many"
if ! out=$(bash "$T_TOP/tests/gen/many-cus.sh" "$m" "$MANY_N" - 2>&1) ||
	! out=$(cd "$m/src" && "$GCC" -O2 -g -flto -fdebug-prefix-map="$m/src"=/many \
		-o "$m/many-lto" u[0-9]*.c main.c 2>&1); then
	not_ok "many-cus LTO: generate and build $MANY_N units with $GCC -flto" "$out"
	test_done
fi
ok "many-cus LTO: $MANY_N units built with $(basename "$GCC") -flto"
# ms: the wall clock in milliseconds.
ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(ms)
"$T_BIN/dwarf-extract" -j1 -o "$m/j1.cus" "$m/many-lto" >"$m/j1.err" 2>&1
rc1=$?
t1=$(ms)
"$T_BIN/dwarf-extract" -j2 -o "$m/j2.cus" "$m/many-lto" >"$m/j2.err" 2>&1
rc2=$?
t2=$(ms)
if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
	not_ok "many-cus LTO: dwarf-extract -j1 and -j2 run" "exit $rc1 / $rc2: $(cat "$m/j1.err" "$m/j2.err")"
	test_done
fi
check_same "many-cus LTO: dwarf-extract -j1 and -j2 write byte-identical .cus" "$m/j1.cus" "$m/j2.cus"
echo "info: many-cus LTO ($T_VARIANT): dwarf-extract -j1 $((t1 - t0)) ms, -j2 $((t2 - t1)) ms" \
	"($(stat -c %s "$m/j1.cus") bytes of .cus)"
"$T_BIN/dwarf-extract" --dump "$m/j1.cus" >"$m/j1.txt" 2>&1
ncu=$(grep -c '^cu ' "$m/j1.txt")
nart=$(grep -c '^cu .*name="<artificial>"' "$m/j1.txt")
nx=$(grep -c '@0x' "$m/j1.txt")
if [ "$nart" -gt 0 ] && [ "$nx" -gt 0 ]; then
	ok "many-cus LTO: $ncu CUs, $nart link-time, $nx cross-CU references"
else
	not_ok "many-cus LTO: the build has link-time CUs with cross-CU references" \
		"$ncu CUs, $nart named <artificial>, $nx '@0x'"
fi
if out=$("$T_BIN/dedup-merge" -o "$m/many.graph" "$m/j1.cus" 2>&1 &&
	"$T_BIN/btf-emit" --elf "$m/many-lto" -o "$m/many.btf" "$m/many.graph" 2>&1); then
	check "many-cus LTO: libbpf parses its BTF and btf__dedup removes nothing" "$BTFCHECK" --dedup "$m/many.btf"
	if have pahole; then
		timeout 120 pahole -J --btf_gen_floats --btf_encode_detached="$m/pahole.btf" "$m/many-lto" \
			>/dev/null 2>"$m/pahole.err"
		prc=$?
		echo "info: many-cus LTO: pahole $(pahole --version 2>&1): exit $prc;" \
			"types against ours: $("$BTFCMP" -q --flatten-arrays "$m/many.btf" "$m/pahole.btf" 2>&1 | tail -1)"
	fi
else
	not_ok "many-cus LTO: dedup-merge and btf-emit encode it" "$out"
fi
test_done
