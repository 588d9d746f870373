#!/usr/bin/env bash
# t1105-lto-scale: LTO at a size where the merge once failed, checked against
# oracles we did not write.
#
# tests/gen/lto-prog.py makes a C program of LTO_FILES files on one header
# of LTO_STRUCTS structs (pointer cycles, embedded structs, bitfields, 2-D
# arrays, anonymous members, typedef chains, function pointers, opaque
# structs completed in one file, small functions that other files call, so
# ThinLTO imports them). tests/gen/build-lto.sh builds it five ways, -O2 -g:
# clang-19 thin LTO, clang-19 full LTO, gcc -flto, and without LTO with
# each compiler. At 40 files and 60 structs (the default) the keys of the
# merge before imports.c left 1,269 BTF types where libbpf's dedup keeps 639
# (thin LTO) and 814 where it keeps 518 (full LTO).
#
# For each build, our three stages at -j2 (btf-emit --elf --skip-report), and:
#  (a) libbpf parses the BTF and btf__dedup() removes nothing;
#  (b) the running kernel loads it (btfcheck --load; 77: no bpf() here, skip);
#  (c) -j1 and -j8 write the same bytes at every stage;
#  (d) pahole 1.24 on the same binary: the same number of types of every kind
#      but ARRAY (we nest dimensions, pahole flattens: ours >= pahole's) and
#      the function kinds (below), and the same types (btfcmp
#      --flatten-arrays, FUNCs aside);
# and for each LTO build against the non-LTO build of its compiler:
#  (e) the same types;
#  (f) every FUNC the LTO BTF has is the non-LTO build's, with the same
#      prototype (linkage aside: LTO makes symbols local), and every FUNC it
#      lacks is one the optimizer removed: the skip report says "no function
#      symbol of that name" and nm agrees;
#  (g) where pahole's FUNCs differ from ours, ours are the source's (the
#      non-LTO build's) and pahole's are not: pahole 1.24 gives gcc -flto's
#      abstract instances, which list no parameters, a prototype with none.
# Sizes: LTO_FILES, LTO_STRUCTS, LTO_SEED; make check-lto runs it at 400 files
# (over 2,000 CUs). Builds are shared by the variants and kept between runs
# (tests/gen/build-lto.sh), so only the first run compiles.
. "$(dirname "$0")/lib.sh"
export LC_ALL=C

FILES=${LTO_FILES:-40}
STRUCTS=${LTO_STRUCTS:-60}
SEED=${LTO_SEED:-1}
BTFCMP="$T_TOP/tools/btfcmp.py"
BTFCHECK="$T_BIN/tools/btfcheck"
: "${LLD:=lld-19}"
G="$T_SHARED/lto-$FILES-$STRUCTS-$SEED"

if ! have bpftool || ! have python3; then
	skip "LTO at scale" "bpftool or python3 missing: nothing can read the BTF"
	test_done
fi

# The builds: label|its non-LTO build ('-' for a non-LTO one itself).
BUILDS="nolto-clang|-
nolto-gcc|-
thin|nolto-clang
full|nolto-clang
gcc-lto|nolto-gcc"

want=()
for fl in nolto-clang nolto-gcc thin full gcc-lto; do
	case $fl in
	*clang | thin | full) have "$CLANG" && have "ld.$LLD" || { skip "$fl: build" "$CLANG or ld.$LLD not found"; continue; } ;;
	*) have "$GCC" || { skip "$fl: build" "$GCC not found"; continue; } ;;
	esac
	want+=("$fl")
done
if ! out=$(CLANG=$CLANG GCC=$GCC LLD=$LLD bash "$T_TOP/tests/gen/build-lto.sh" "$G" "$FILES" "$STRUCTS" "$SEED" \
	"${want[@]}" 2>&1); then
	not_ok "generate and build the program ($FILES files, $STRUCTS structs, seed $SEED)" "$out"
	test_done
fi
ok "generated and built ${#want[@]} ways: $FILES files, $STRUCTS structs, seed $SEED"

# ms: the wall clock in milliseconds.
ms() { echo $(($(date +%s%N) / 1000000)); }

# chain ELF OUT J: our three stages at -jJ into OUT.{cus,graph,btf,skips}.
chain() {
	"$T_BIN/dwarf-extract" -j"$3" -o "$2.cus" "$1" &&
		"$T_BIN/dedup-merge" -j"$3" -o "$2.graph" "$2.cus" &&
		"$T_BIN/btf-emit" -j"$3" --elf "$1" --skip-report "$2.skips" -o "$2.btf" "$2.graph"
}

# kinds FILE: "KIND COUNT" lines of btfcheck, sorted.
kinds() { "$BTFCHECK" "$1" | sed -n 's/^kind //p' | sort; }

# funcs FILE OUT: one "NAME RENDERING" line per FUNC, linkage left out.
funcs() {
	"$BTFCMP" --list --funcs --no-func-linkage --flatten-arrays --width 0 "$1" |
		sed -n 's/^func func //p' | sort >"$2"
}

while IFS='|' read -r label base; do
	e="$G/$label"
	[ -x "$e" ] || continue
	o="$T_OUT/$label"
	mkdir -p "$o"
	t0=$(ms)
	if ! out=$(chain "$e" "$o/j2" 2 2>&1); then
		not_ok "$label: our three stages encode it" "$out"
		continue
	fi
	t1=$(ms)
	"$T_BIN/dwarf-extract" --dump "$o/j2.cus" >"$o/cus.txt"
	ncu=$(grep -c '^cu ' "$o/cus.txt")
	nx=$(grep -o '@0x' "$o/cus.txt" | wc -l)
	ok "$label: encoded ($ncu CUs, $nx references into other CUs, $((t1 - t0)) ms at -j2)"

	# (a), (b)
	check "$label: libbpf parses the BTF and btf__dedup removes nothing" "$BTFCHECK" --dedup "$o/j2.btf"
	check_loads "$label: the kernel loads the BTF" "$o/j2.btf"

	# (c)
	for j in 1 8; do
		if ! out=$(chain "$e" "$o/j$j" "$j" 2>&1); then
			not_ok "$label: -j$j encodes it" "$out"
			continue
		fi
		same=1
		for s in cus graph btf; do cmp -s "$o/j2.$s" "$o/j$j.$s" || { same=0; bad=$s; break; }; done
		if [ "$same" = 1 ]; then ok "$label: -j$j writes the bytes -j2 does at every stage"
		else not_ok "$label: -j$j writes the bytes -j2 does at every stage" "the .$bad files differ"; fi
	done

	# (d) pahole on the same binary
	if have pahole; then
		t0=$(ms)
		timeout 600 pahole -J -j2 --btf_gen_floats --btf_encode_detached="$o/pahole.btf" "$e" \
			>"$o/pahole.out" 2>&1
		prc=$?
		t1=$(ms)
		if [ "$prc" -ne 0 ] || ! "$BTFCHECK" "$o/pahole.btf" >/dev/null 2>&1; then
			not_ok "$label: pahole $(pahole --version) encodes it, for comparison" "exit $prc: $(tail -3 "$o/pahole.out")"
		else
			echo "info: $label: pahole -j2 $((t1 - t0)) ms"
			kinds "$o/j2.btf" >"$o/ours.kinds"
			kinds "$o/pahole.btf" >"$o/pahole.kinds"
			bad=$(join -a1 -a2 -e 0 -o 0,1.2,2.2 "$o/ours.kinds" "$o/pahole.kinds" | awk '
				$1 == "FUNC" || $1 == "FUNC_PROTO" { next }
				$1 == "ARRAY" { if ($2 < $3) print; next }
				$2 != $3 { print }')
			if [ -z "$bad" ]; then
				ok "$label: as many types of every kind as pahole (ARRAY: ours $(awk '$1 == "ARRAY" { print $2 }' "$o/ours.kinds"), pahole $(awk '$1 == "ARRAY" { print $2 }' "$o/pahole.kinds"))"
			else
				not_ok "$label: as many types of every kind as pahole" "KIND ours pahole:"$'\n'"$bad"
			fi
			if out=$("$BTFCMP" --flatten-arrays --ignore-kind-counts ARRAY,FUNC,FUNC_PROTO --width 0 \
				"$o/j2.btf" "$o/pahole.btf" 2>&1); then
				ok "$label: the types equal pahole's"
			else
				not_ok "$label: the types equal pahole's" "$out"
			fi
		fi
	else
		skip "$label: pahole comparisons" "pahole not found"
	fi

	[ "$base" = - ] && continue
	b="$T_OUT/$base/j2"
	if [ ! -s "$b.btf" ]; then
		not_ok "$label: compared with $base" "$base was not encoded (above)"
		continue
	fi
	# (e) The one difference allowed: clang's DW_ATE_unsigned_N base types,
	# made for DW_OP_convert in location lists, differ with the optimisation.
	"$BTFCMP" --flatten-arrays --ignore-kind-counts FUNC,FUNC_PROTO,INT --width 0 "$b.btf" "$o/j2.btf" >"$o/types.cmp" 2>&1
	rc=$?
	other=$(sed -n 's/^  \(only-in-.*\)$/\1/p' "$o/types.cmp" | grep -Ev "^only-in-[AB] int 'DW_ATE_[a-z]+_[0-9]+' ")
	nconv=$(grep -Ec "^  only-in-[AB] int 'DW_ATE_" "$o/types.cmp")
	if [ "$rc" -le 1 ] && [ -z "$other" ]; then
		ok "$label: the types equal $base's (but $nconv DW_OP_convert base types)"
	else
		not_ok "$label: the types equal $base's" "$(cat "$o/types.cmp")"
	fi
	# (f)
	funcs "$o/j2.btf" "$o/ours.funcs"
	funcs "$b.btf" "$o/base.funcs"
	nm "$e" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$o/nm"
	changed=$(awk 'NR == FNR { a[$1] = $0; next } ($1 in a) && a[$1] != $0 { print $1 }' \
		"$o/base.funcs" "$o/ours.funcs")
	extra=$(comm -23 <(awk '{ print $1 }' "$o/ours.funcs") <(awk '{ print $1 }' "$o/base.funcs"))
	if [ -z "$changed$extra" ]; then
		ok "$label: each of its $(wc -l <"$o/ours.funcs") FUNCs is $base's, with the same prototype"
	else
		not_ok "$label: each of its FUNCs is $base's, with the same prototype" \
			"different prototype: $changed; not in $base: $extra"
	fi
	unexplained=""
	nmissing=0
	for f in $(comm -13 <(awk '{ print $1 }' "$o/ours.funcs") <(awk '{ print $1 }' "$o/base.funcs")); do
		nmissing=$((nmissing + 1))
		grep -qx "$f" "$o/nm" &&
			unexplained+="$f has a symbol; skip report: $(grep "^func $f:" "$o/j2.skips" | head -1)"$'\n'
	done
	if [ -z "$unexplained" ]; then
		ok "$label: the $nmissing FUNCs of $base it lacks were removed by the optimizer (no symbol of theirs in the binary)"
	else
		not_ok "$label: every FUNC of $base it lacks was removed by the optimizer" "$unexplained"
	fi
	# (g)
	if [ -s "$o/pahole.btf" ]; then
		funcs "$o/pahole.btf" "$o/pahole.funcs"
		pdiff=$(comm -3 "$o/ours.funcs" "$o/pahole.funcs" | awk '{ print $1 }' | sort -u)
		wrong=""
		for f in $pdiff; do
			mine=$(grep "^$f " "$o/ours.funcs")
			src=$(grep "^$f " "$o/base.funcs")
			theirs=$(grep "^$f " "$o/pahole.funcs")
			[ -n "$mine" ] && [ "$mine" = "$src" ] && [ "$theirs" != "$src" ] || wrong+="$f: ours '$mine', pahole '$theirs', $base '$src'"$'\n'
		done
		if [ -z "$pdiff" ]; then
			ok "$label: the FUNCs equal pahole's"
		elif [ -z "$wrong" ]; then
			n=$(echo "$pdiff" | wc -l)
			ok "$label: pahole wrong on $n FUNCs (e.g. $(grep "^$(echo "$pdiff" | head -1) " "$o/pahole.funcs")), ours are the source's"
		else
			not_ok "$label: where the FUNCs differ from pahole's, ours are the source's" "$wrong"
		fi
	fi
done <<<"$BUILDS"
test_done
