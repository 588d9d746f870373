#!/usr/bin/env bash
# t1000-func-selection: btf-emit's function-selection rules
# (stages/btf-emit/funcs.c; tests/README.md says which rows test each of
# its nine rules) case by case, plus the per-CPU variable and the kfunc
# decl tags, on tests/fixtures/funcsel (its main.c says what each file
# constructs).
#
# Four binaries are built here, each file with its own flags:
#   gcc    gcc -O2 executable of the fixture's C files but nocall.c, percpu.c
#   clang  clang-19 -O2 executable of nocall.c
#   obj    gcc -O2 -c object of percpu.c (an executable would lose .data..percpu)
#   kobj   gcc -O2 -c object of kfunc.c: .BTF_ids in a relocatable file, as a .ko
# and each goes through dwarf-extract, dedup-merge and btf-emit --elf
# --skip-report. The table ROWS says, per binary and function, the one
# outcome allowed: `encoded` (a FUNC of that name in the BTF, no skip line)
# or `skip:PREFIX` (no FUNC, and its one skip-report line starts with
# "func NAME: PREFIX"). Every row must hold, and every fs_* FUNC in a BTF
# and every fs_* line in a skip report must have a row: nothing passes
# unexamined. Each case's construction is checked first (nm, readelf,
# llvm-dwarfdump-19), so a compiler that stops producing it fails loudly
# instead of making a row pass for another reason.
# shellcheck disable=SC2317 # the build_* functions are called as "build_$b"
. "$(dirname "$0")/lib.sh"

FIX=tests/fixtures/funcsel
BTFCHECK="$T_BIN/tools/btfcheck"
CFLAGS=(-O2 -gdwarf-5 -fno-omit-frame-pointer "-fdebug-prefix-map=$T_TOP=/btfpipe")
GCC_FILES="main weak strong inl_a inl_b static_a static_b clone stack7 packed unnamed kfunc" # link = CU order

# build, function name, expected outcome.
ROWS='gcc|fs_weak|encoded
gcc|fs_incons|skip:inconsistent prototype across CUs
gcc|fs_incons_inl|skip:inconsistent prototype across CUs
gcc|fs_static|skip:ambiguous address
gcc|fs_clone|skip:optimized parameters: the symbol is a .isra/.constprop clone
gcc|fs_varargs|encoded
gcc|fs_stack7|encoded
gcc|fs_call_stack7|encoded
gcc|fs_packed_7th|skip:uncertain parameter location
gcc|fs_packed_2nd|encoded
gcc|fs_call_packed|encoded
gcc|fs_unnamed|skip:a parameter has no name
gcc|fs_kfunc|encoded
gcc|fs_plain|encoded
clang|fs_nocall|skip:optimized parameters: the calling convention changed (DW_CC_nocall)
obj|fs_percpu_get|encoded
kobj|fs_kfunc|encoded
kobj|fs_plain|encoded'

if ! have bpftool; then
	skip "function selection" "bpftool not found: nothing can read the BTF"
	test_done
fi

# cc_one CC FILE OUT EXTRA...: compile one fixture file (paths relative to
# the checkout, so the prefix map gives stable CU names).
cc_one() {
	local cc=$1 f=$2 out=$3; shift 3
	(cd "$T_TOP" && "$cc" "${CFLAGS[@]}" "$@" -c "$FIX/$f.c" -o "$out")
}

# build_gcc, build_clang, build_obj, build_kobj: make $T_OUT/B (the ELF) or fail with
# the compiler's message on stdout.
build_gcc() {
	local f objs=() extra
	for f in $GCC_FILES; do
		extra=()
		[ "$f" = unnamed ] && extra=(-std=gnu2x) # C2x: unnamed parameters
		cc_one "$GCC" "$f" "$T_OUT/$f.o" "${extra[@]}" 2>&1 || return 1
		objs+=("$T_OUT/$f.o")
	done
	"$GCC" -o "$T_OUT/gcc" "${objs[@]}" 2>&1
}
build_clang() {
	cc_one "$CLANG" nocall "$T_OUT/nocall.o" 2>&1 && "$CLANG" -o "$T_OUT/clang" "$T_OUT/nocall.o" 2>&1
}
build_obj() { cc_one "$GCC" percpu "$T_OUT/obj" 2>&1; }
build_kobj() { cc_one "$GCC" kfunc "$T_OUT/kobj" 2>&1; }

# chain B: the three stages on $T_OUT/B; leaves B.btf, B.skips, B.dump.
chain() {
	local e="$T_OUT/$1"
	"$T_BIN/dwarf-extract" -o "$e.cus" "$e" 2>&1 &&
		"$T_BIN/dedup-merge" -o "$e.graph" "$e.cus" 2>&1 &&
		"$T_BIN/btf-emit" --elf "$e" --skip-report "$e.skips" -o "$e.btf" "$e.graph" 2>&1 &&
		bpftool btf dump file "$e.btf" >"$e.dump" 2>&1
}

# func_id DUMP NAME: the BTF id of FUNC NAME (empty when none).
func_id() { sed -n "s/^\[\([0-9]*\)\] FUNC '$2' .*/\1/p" "$1"; }

# proto_params DUMP NAME: the parameter lines of FUNC NAME's FUNC_PROTO,
# "'name' type_id=N" each.
proto_params() {
	local t
	t=$(sed -n "s/^\[[0-9]*\] FUNC '$2' type_id=\([0-9]*\) .*/\1/p" "$1")
	[ -n "$t" ] && awk -v id="[$t]" '$1 == id { on = 1; next } /^\[/ { on = 0 } on { sub(/^[ \t]+/, ""); print }' "$1"
}

# ---- build and run the chain; state[B] = ready | skip:WHY | fail ----
declare -A state
for b in gcc clang obj kobj; do
	cc=$GCC
	[ "$b" = clang ] && cc=$CLANG
	if ! have "$cc"; then
		state[$b]="skip:compiler $cc not found"
		skip "$b: build" "compiler $cc not found"
		continue
	fi
	if ! out=$("build_$b"); then
		state[$b]=fail
		not_ok "$b: build the fixture" "$out"
		continue
	fi
	if ! out=$(chain "$b"); then
		state[$b]=fail
		not_ok "$b: dwarf-extract, dedup-merge, btf-emit run" "$out"
		continue
	fi
	state[$b]=ready
	ok "$b: built, and the three stages run"
done

# Functions are judged on up to -j threads, name ranges apart (funcs.c,
# funcs__select()); the picks and the skip report's lines, in their order,
# must be the same at -j1 and -j8 (BTFPIPE_JOBS_EXACT: 8 threads, 32 chunks
# even here). gcc's 19 candidates under 14 names put a cut inside every
# name once, so this guards the cuts (a name split across chunks gives a
# skip line or a FUNC twice); verdicts taken in the order chunks finish
# would show only by chance, tiny chunks finishing in order. obj and kobj
# have no skip lines.
for b in gcc clang; do
	[ "${state[$b]}" = ready ] || continue
	e="$T_OUT/$b"
	if [ ! -s "$e.skips" ]; then
		not_ok "$b: the skip report has lines to compare across -j" "$e.skips is empty"
		continue
	fi
	for j in 1 8; do
		check "$b: btf-emit -j$j" "$T_BIN/btf-emit" -j "$j" --elf "$e" --skip-report "$e.j$j.skips" \
			-o "$e.j$j.btf" "$e.graph"
		check_same "$b: btf-emit -j$j: the same BTF" "$e.btf" "$e.j$j.btf"
		check_same "$b: btf-emit -j$j: the same skip report, line for line" "$e.skips" "$e.j$j.skips"
	done
done

# ---- each case's construction, before any row is believed ----
if [ "${state[gcc]}" = ready ]; then
	e="$T_OUT/gcc"
	nm "$e" >"$e.nm"
	clones=$(awk '$3 ~ /^fs_clone($|\.)/ { print $3 }' "$e.nm")
	if [[ $(wc -l <<<"$clones") -eq 1 && $clones =~ ^fs_clone\.(isra|constprop)\.[0-9]+$ ]]; then
		ok "construction: gcc -O2 left only the clone $clones"
	else
		not_ok "construction: gcc -O2 left only a clone fs_clone.isra.N / .constprop.N" \
			"gcc did not clone fs_clone ($FIX/clone.c) as this test needs; nm says: ${clones:-no fs_clone symbol at all}"
	fi
	# fs_stack7: only the .isra clone, its seventh parameter at its stack slot.
	s7=$(awk '$3 ~ /^fs_stack7($|\.)/ { print $3 }' "$e.nm")
	if [ "$s7" = fs_stack7.isra.0 ] && { ! have llvm-dwarfdump-19 ||
		llvm-dwarfdump-19 --name=fs_stack7 --show-children "$e" | grep -A1 'abstract_origin.*"g"' | grep -q 'DW_OP_fbreg +0'; }; then
		ok "construction: gcc -O2 left only fs_stack7.isra.0, its seventh parameter at DW_OP_fbreg +0"
	else
		not_ok "construction: gcc -O2 left only fs_stack7.isra.0, its seventh parameter on the stack" "nm: ${s7:-none}"
	fi
	statics=$(awk '$3 == "fs_static" && $2 == "t" { print $1 }' "$e.nm" | sort -u)
	if [ "$(wc -l <<<"$statics")" -eq 2 ]; then
		ok "construction: two local fs_static symbols at different addresses"
	else
		not_ok "construction: two local fs_static symbols at different addresses" "$(grep fs_static "$e.nm")"
	fi
	for n in fs_weak fs_incons fs_incons_inl; do
		if [ "$(awk -v n="$n" '$3 == n && $2 == "T"' "$e.nm" | wc -l)" -eq 1 ] &&
			! grep -Eq " $n\." "$e.nm"; then
			ok "construction: $n is one global symbol"
		else
			not_ok "construction: $n is one global symbol" "$(grep " $n" "$e.nm")"
		fi
	done
	# Rule 5 is only tested when "first in CU order" would pick the other one.
	"$T_BIN/dedup-merge" --dump "$e.graph" >"$e.graph.txt" 2>&1
	if grep '^func "fs_weak"' "$e.graph.txt" | head -1 | grep -q 'weak\.c"'; then
		ok "construction: the weak fs_weak's CU comes first"
	else
		not_ok "construction: the weak fs_weak's CU comes first" "$(grep '^func "fs_weak"' "$e.graph.txt")"
	fi
fi
# The kfunc symbols in .BTF_ids: readelf -sW's Ndx against the section index.
for b in gcc kobj; do
	[ "${state[$b]}" = ready ] || continue
	e="$T_OUT/$b"
	btfids=$(readelf -SW "$e" | sed -n 's/^ *\[ *\([0-9]*\)\] \.BTF_ids .*/\1/p')
	syms=$(readelf -sW "$e" | awk -v s="$btfids" '$7 == s && $8 ~ /^__BTF_ID__/ { print $8 }' | sort | tr '\n' ' ')
	want="__BTF_ID__func__fs_kfunc__1 __BTF_ID__func__fs_plain__2 __BTF_ID__set8__fs_set "
	if [ -n "$btfids" ] && [ "$syms" = "$want" ]; then
		ok "construction: $b: the set8 and func symbols are in .symtab, section .BTF_ids"
	else
		not_ok "construction: $b: the set8 and func symbols are in .symtab, section .BTF_ids" \
			".BTF_ids is section '${btfids}'; symbols there: '$syms', wanted '$want'"
	fi
done
if [ "${state[clang]}" = ready ]; then
	if ! have llvm-dwarfdump-19; then
		skip "construction: fs_nocall has DW_CC_nocall" "llvm-dwarfdump-19 not found"
	elif llvm-dwarfdump-19 --name=fs_nocall "$T_OUT/clang" | grep -q 'DW_AT_calling_convention.*DW_CC_nocall'; then
		ok "construction: clang-19 -O2 gave fs_nocall DW_CC_nocall"
	else
		not_ok "construction: clang-19 -O2 gave fs_nocall DW_CC_nocall" \
			"$(llvm-dwarfdump-19 --name=fs_nocall "$T_OUT/clang" 2>&1)"
	fi
fi
if [ "${state[obj]}" = ready ]; then
	pcpu=$(readelf -SW "$T_OUT/obj" | sed -n 's/^ *\[ *\([0-9]*\)\] \.data\.\.percpu .*/\1/p')
	if readelf -hW "$T_OUT/obj" | grep -q 'Type: *REL' && [ -n "$pcpu" ] &&
		readelf -sW "$T_OUT/obj" | awk -v s="$pcpu" '$7 == s && $8 == "fs_percpu_hits"' | grep -q .; then
		ok "construction: relocatable object with fs_percpu_hits in .data..percpu"
	else
		not_ok "construction: relocatable object with fs_percpu_hits in .data..percpu" \
			"$(readelf -hsSW "$T_OUT/obj" | grep -E 'Type:|percpu')"
	fi
fi

# ---- the table ----
while IFS='|' read -r b name want; do
	st=${state[$b]}
	label="$b: $name: $want"
	case $st in
	skip:*) skip "$label" "${st#skip:}"; continue ;;
	fail) not_ok "$label" "no BTF: the $b build or chain failed above"; continue ;;
	esac
	e="$T_OUT/$b"
	id=$(func_id "$e.dump" "$name")
	lines=$(grep -F "func $name: " "$e.skips")
	case $want in
	encoded)
		if [ -n "$id" ] && [ -z "$lines" ]; then ok "$label"; else
			not_ok "$label" "FUNC id: '${id:-none}'; skip report: ${lines:-none}"; fi ;;
	skip:*)
		prefix="func $name: ${want#skip:}"
		if [ -z "$id" ] && [ "$(wc -l <<<"$lines")" -eq 1 ] && [ "${lines:0:${#prefix}}" = "$prefix" ]; then
			ok "$label"
		else
			not_ok "$label" "FUNC id: '${id:-none}'; skip report: ${lines:-none}"
		fi ;;
	*) not_ok "$label" "bad row: expected 'encoded' or 'skip:REASON'" ;;
	esac
done <<<"$ROWS"

# ---- nothing unexamined: every fs_* FUNC and skip line has a row ----
for b in gcc clang obj kobj; do
	[ "${state[$b]}" = ready ] || continue
	e="$T_OUT/$b"
	known=$(awk -F'|' -v b="$b" '$1 == b { print $2 }' <<<"$ROWS")
	stray=$( { sed -n "s/^\[[0-9]*\] FUNC '\(fs_[^']*\)'.*/\1/p" "$e.dump"
		   sed -n 's/^func \(fs_[^:]*\): .*/\1/p' "$e.skips"; } | sort -u | grep -vxF "$known")
	if [ -z "$stray" ]; then ok "$b: every fs_* function in the BTF or the skip report has a row"
	else not_ok "$b: every fs_* function in the BTF or the skip report has a row" "no row for: $stray"; fi
done

# ---- what the encoded ones look like ----
if [ "${state[gcc]}" = ready ]; then
	d="$T_OUT/gcc.dump"
	got=$(proto_params "$d" fs_weak | sed "s/ type_id=.*//" | tr '\n' ' ')
	if [ "$got" = "'x' 'y' " ]; then ok "fs_weak: parameters (x, y), the strong definition's"
	else not_ok "fs_weak: parameters (x, y), the strong definition's" "FUNC_PROTO parameters: ${got:-none}"; fi
	got=$(proto_params "$d" fs_varargs)
	if [ "$(wc -l <<<"$got")" -eq 2 ] && [ "$(tail -1 <<<"$got")" = "'(anon)' type_id=0" ]; then
		ok "fs_varargs: (n, ...), the last parameter '(anon)' type_id=0"
	else
		not_ok "fs_varargs: (n, ...), the last parameter '(anon)' type_id=0" "FUNC_PROTO parameters: ${got:-none}"
	fi
fi
for b in gcc kobj; do
	[ "${state[$b]}" = ready ] || continue
	d="$T_OUT/$b.dump"
	kid=$(func_id "$d" fs_kfunc)
	for tag in bpf_kfunc bpf_fastcall; do
		if [ -n "$kid" ] && grep -qx "\[[0-9]*] DECL_TAG '$tag' type_id=$kid component_idx=-1" "$d"; then
			ok "$b: fs_kfunc: DECL_TAG '$tag', component -1"
		else
			not_ok "$b: fs_kfunc: DECL_TAG '$tag', component -1" "FUNC id '${kid:-none}'; tags: $(grep DECL_TAG "$d")"
		fi
	done
	pid=$(func_id "$d" fs_plain)
	if [ -n "$pid" ] && ! grep -q "DECL_TAG .* type_id=$pid " "$d"; then
		ok "$b: fs_plain: a BTF id outside every set8 makes no kfunc (no DECL_TAG)"
	else
		not_ok "$b: fs_plain: a BTF id outside every set8 makes no kfunc (no DECL_TAG)" \
			"FUNC id '${pid:-none}'; tags: $(grep DECL_TAG "$d")"
	fi
done
if [ "${state[obj]}" = ready ]; then
	d="$T_OUT/obj.dump"
	vid=$(sed -n "s/^\[\([0-9]*\)\] VAR 'fs_percpu_hits' .*/\1/p" "$d")
	entry=$(awk '/^\[[0-9]+\] DATASEC / { on = ($0 ~ /DATASEC '\''\.data\.\.percpu'\''/); next }
		/^\[/ { on = 0 } on' "$d")
	if [ -n "$vid" ] && grep -q "type_id=$vid offset=0 size=4 (VAR 'fs_percpu_hits')" <<<"$entry"; then
		ok "percpu: VAR fs_percpu_hits in DATASEC .data..percpu"
	else
		not_ok "percpu: VAR fs_percpu_hits in DATASEC .data..percpu" \
			"VAR id '${vid:-none}'; .data..percpu entries: ${entry:-none}; skips: $(grep fs_percpu "$T_OUT/obj.skips")"
	fi
fi

# ---- the kernel accepts each BTF ----
for b in gcc clang obj kobj; do
	[ "${state[$b]}" = ready ] || continue
	if [ ! -x "$BTFCHECK" ]; then
		not_ok "$b: the kernel accepts the BTF" "$BTFCHECK is missing: run make"
		continue
	fi
	out=$("$BTFCHECK" --load "$T_OUT/$b.btf" 2>&1)
	case $? in
	0) ok "$b: the kernel accepts the BTF" ;;
	77) skip "$b: the kernel accepts the BTF" "$(grep '^load' <<<"$out")" ;;
	*) not_ok "$b: the kernel accepts the BTF" "$out" ;;
	esac
done
test_done
