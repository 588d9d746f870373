#!/usr/bin/env bash
# t0400-determinism: dwarf-extract's output is the same bytes whatever the
# thread count, and from one run to the next.
#
# The spec promises it (format/CU-RECORDS.md, "Order is imposed"): blobs are
# committed in .debug_info order, never in the order workers finish. The
# extracted-CU cache and every later comparison depend on it. A race in the
# ordered commit or a pointer value leaking into the bytes would show here as
# a cmp difference.
#
# Inputs: the sample fixture (4 CUs) built by gcc and clang at -O2, and a
# generated program of $MANY_N units (tests/gen/many-cus.sh, default 121 CUs
# of uneven size), so that -j2 and -j8 really run out of order. Each is
# extracted at -j1, -j2, -j8, once more at -j8, and once as a copy in another
# directory (the .cus holds the base name only); all must be identical.
# For the generated program the dump must also list exactly one `cu` line per
# compile unit that readelf sees, so that no unit is dropped or doubled, and
# btf-emit --elf (which reads the ELF on a thread of its own from -j2 on)
# must give the same BTF at -j1, -j2 and -j8, and report the same error.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
MANY_N=${MANY_N:-120}

# same_at_every_j LABEL ELF: extract ELF at -j1, -j2, -j8 (twice) and compare.
# Leaves LABEL's -j1 output in $T_OUT/LABEL-j1.cus for the caller.
same_at_every_j() {
	local label=$1 elf=$2 j failed=0
	for j in 1 2 8 8b; do
		if ! out=$("$EXTRACT" -j "${j%b}" -o "$T_OUT/$label-j$j.cus" "$elf" 2>&1); then
			not_ok "$label: extract at -j${j%b}" "$out"
			failed=1
		fi
	done
	[ "$failed" = 0 ] || return 1
	ok "$label: extract at -j1, -j2, -j8"
	check_same "$label: -j2 output is byte-identical to -j1" "$T_OUT/$label-j1.cus" "$T_OUT/$label-j2.cus"
	check_same "$label: -j8 output is byte-identical to -j1" "$T_OUT/$label-j1.cus" "$T_OUT/$label-j8.cus"
	check_same "$label: a second -j8 run gives the same bytes" "$T_OUT/$label-j8.cus" "$T_OUT/$label-j8b.cus"
	# The identity block holds the input's base name, not its path: the same
	# file extracted from another directory must give the same bytes.
	mkdir -p "$T_OUT/elsewhere/$label"
	cp "$elf" "$T_OUT/elsewhere/$label/"
	if out=$(cd "$T_OUT/elsewhere" && "$EXTRACT" -j 2 -o "$label.cus" "$label/$(basename "$elf")" 2>&1); then
		check_same "$label: the same input from another directory gives the same bytes" \
			"$T_OUT/$label-j1.cus" "$T_OUT/elsewhere/$label.cus"
	else
		not_ok "$label: extract a copy from another directory" "$out"
	fi
}

# --- the sample fixture, gcc and clang at -O2 --------------------------------
for cc in "$GCC" "$CLANG"; do
	label="sample-$(basename "$cc")-O2"
	if ! have "$cc"; then
		skip "$label: determinism" "compiler $cc not found"
		continue
	fi
	if ! out=$(build_fixture "$cc" -O2 5 "$T_OUT/$label" sample 2>&1); then
		not_ok "$label: build sample" "$out"
		continue
	fi
	same_at_every_j "$label" "$T_OUT/$label/sample"
done

# --- the generated many-CU program ---------------------------------------------
ccs=$GCC
if have "$CLANG"; then ccs="$ccs $CLANG"; else
	skip "many-$(basename "$CLANG"): determinism" "compiler $CLANG not found"; fi
# shellcheck disable=SC2086
if ! out=$("$T_TOP/tests/gen/many-cus.sh" "$T_OUT/many" "$MANY_N" $ccs 2>&1); then
	not_ok "generate and build the $MANY_N-unit program" "$out"
	test_done
fi
ok "generate and build the $MANY_N-unit program ($ccs)"

# The generator's sources must be reproducible too, or a failure here could
# not be reproduced: generate again (without building) and compare.
if out=$("$T_TOP/tests/gen/many-cus.sh" "$T_OUT/many2" "$MANY_N" - 2>&1) &&
	d=$(diff -r "$T_OUT/many/src" "$T_OUT/many2/src" 2>&1); then
	ok "the generator writes the same sources twice"
else
	not_ok "the generator writes the same sources twice" "$out$d"
fi

for cc in $ccs; do
	label="many-$(basename "$cc")"
	elf="$T_OUT/many/$label"
	same_at_every_j "$label" "$elf" || continue

	# One `cu` line per compile unit: readelf counts the units in .debug_info.
	want=$(readelf --debug-dump=info "$elf" 2>/dev/null | grep -c 'Compilation Unit @')
	if [ "$want" -eq $((MANY_N + 1)) ]; then
		ok "$label: readelf sees $want units ($MANY_N + main.c)"
	else
		not_ok "$label: readelf sees $((MANY_N + 1)) units" "it counts $want"
	fi
	if ! "$EXTRACT" --dump "$T_OUT/$label-j8.cus" >"$T_OUT/$label.dump" 2>"$T_OUT/$label.dump.err"; then
		not_ok "$label: dump" "$(cat "$T_OUT/$label.dump.err")"
		continue
	fi
	got=$(grep -c '^cu ' "$T_OUT/$label.dump")
	if [ "$got" -eq "$want" ]; then ok "$label: dump lists $got cu lines, one per unit"; else
		not_ok "$label: dump lists one cu line per unit" "$got cu lines, readelf counts $want units"; fi
	check_grep "$label: header line says cus=$want" "^btfpipe-cus v3 .* cus=$want\$" "$T_OUT/$label.dump"
	# The units in .debug_info order: u000.c ... u119.c, then main.c.
	names=$(sed -n 's/^cu [0-9]* .* name="\([^"]*\)".*/\1/p' "$T_OUT/$label.dump" | tr '\n' ' ')
	expect=$(for ((k = 0; k < MANY_N; k++)); do printf 'u%03d.c ' "$k"; done; echo "main.c ")
	if [ "$names" = "$expect" ]; then ok "$label: cu lines are in unit order"; else
		not_ok "$label: cu lines are in unit order" "got: $names"; fi

	# btf-emit -j: from 2 on it reads --elf on a second thread while it
	# reads the graph. The BTF must not change, nor which error wins.
	if ! out=$("$T_BIN/dedup-merge" -j2 -o "$T_OUT/$label.graph" "$T_OUT/$label-j1.cus" 2>&1); then
		not_ok "$label: merge for btf-emit -j" "$out"
		continue
	fi
	for j in 1 2 8; do
		check "$label: btf-emit -j$j --elf" "$T_BIN/btf-emit" -j "$j" --elf "$elf" \
			-o "$T_OUT/$label-e$j.btf" "$T_OUT/$label.graph"
	done
	check_same "$label: btf-emit -j2 BTF is byte-identical to -j1" "$T_OUT/$label-e1.btf" "$T_OUT/$label-e2.btf"
	check_same "$label: btf-emit -j8 BTF is byte-identical to -j1" "$T_OUT/$label-e1.btf" "$T_OUT/$label-e8.btf"
	# A bad graph and a bad ELF at once: the graph's error, at every -j.
	head -c 100 "$T_OUT/$label.graph" >"$T_OUT/$label-bad.graph"
	printf 'not an ELF' >"$T_OUT/$label-bad.elf"
	for j in 1 2; do
		check_exit "$label: btf-emit -j$j, bad graph and bad ELF: exit 1" 1 "$T_BIN/btf-emit" -j "$j" \
			--elf "$T_OUT/$label-bad.elf" -o "$T_OUT/$label-bad.btf" "$T_OUT/$label-bad.graph"
		check_grep "$label: btf-emit -j$j: the graph's error is the one reported" "$label-bad\.graph" "$T_OUT/last.err"
		check_exit "$label: btf-emit -j$j, bad ELF: exit 1" 1 "$T_BIN/btf-emit" -j "$j" \
			--elf "$T_OUT/$label-bad.elf" -o "$T_OUT/$label-bad.btf" "$T_OUT/$label.graph"
		check_grep "$label: btf-emit -j$j: the ELF's error names it" "$label-bad\.elf" "$T_OUT/last.err"
		cp "$T_OUT/last.err" "$T_OUT/$label-badelf-j$j.err"
	done
	check_same "$label: btf-emit: the bad ELF's message is the same at -j1 and -j2" \
		"$T_OUT/$label-badelf-j1.err" "$T_OUT/$label-badelf-j2.err"
done

# --- -j N is at most N: a small input gets fewer threads ------------------------
# Outside the tests (lib.sh sets BTFPIPE_JOBS_EXACT) the stages give an input
# one thread per 512 KB of .debug_info (extract) or per MB of .cus (merge):
# the sample runs on one thread whatever -j says, the generated program
# (about 1.4 MB of .debug_info with gcc) on more than one but fewer than 8,
# and the bytes are the ones -j8 exactly gives.
# jobs_of STAGE-STATS-FILE: the "jobs" count of a --stats text.
jobs_of() { sed -n 's/^[a-z-]*: jobs *\([0-9]*\)$/\1/p' "$1"; }
for input in sample many; do
	case $input in
	sample) label=sample-$(basename "$GCC")-O2 elf=$T_OUT/sample-$(basename "$GCC")-O2/sample ;;
	many) label=many-$(basename "$GCC") elf=$T_OUT/many/many-$(basename "$GCC") ;;
	esac
	[ -e "$elf" ] || { skip "default threads: $input" "$elf was not built"; continue; }
	env -u BTFPIPE_JOBS_EXACT "$EXTRACT" -j8 --stats -o "$T_OUT/auto-$input.cus" "$elf" 2>"$T_OUT/auto-$input.err"
	jx=$(jobs_of "$T_OUT/auto-$input.err")
	env -u BTFPIPE_JOBS_EXACT "$T_BIN/dedup-merge" -j8 --stats -o "$T_OUT/auto-$input.graph" \
		"$T_OUT/auto-$input.cus" 2>"$T_OUT/auto-$input-m.err"
	jm=$(jobs_of "$T_OUT/auto-$input-m.err")
	"$T_BIN/dedup-merge" -j8 --stats -o "$T_OUT/exact-$input.graph" "$T_OUT/auto-$input.cus" \
		2>"$T_OUT/exact-$input-m.err"
	check_same "default threads: $input: the .cus of -j8 exactly" "$T_OUT/$label-j8.cus" "$T_OUT/auto-$input.cus"
	check_same "default threads: $input: the .graph of -j8 exactly" "$T_OUT/exact-$input.graph" "$T_OUT/auto-$input.graph"
	[ "$(jobs_of "$T_OUT/exact-$input-m.err")" = 8 ] && ok "BTFPIPE_JOBS_EXACT: $input: merge -j8 runs 8 threads" ||
		not_ok "BTFPIPE_JOBS_EXACT: $input: merge -j8 runs 8 threads" "$(cat "$T_OUT/exact-$input-m.err")"
	if [ $input = sample ]; then
		[ "$jx" = 1 ] && [ "$jm" = 1 ] && ok "default threads: the sample runs on one thread (extract, merge)" ||
			not_ok "default threads: the sample runs on one thread (extract, merge)" "extract jobs '$jx', merge jobs '$jm'"
	else
		[ -n "$jx" ] && [ "$jx" -gt 1 ] && [ "$jx" -lt 8 ] &&
			ok "default threads: $input: extract -j8 runs more than one thread, fewer than 8 ($jx)" ||
			not_ok "default threads: $input: extract -j8 runs more than one thread, fewer than 8" "jobs '$jx'"
	fi
done
# Compressed (SHF_COMPRESSED) .debug_info counts at its uncompressed size.
many=$T_OUT/many/many-$(basename "$GCC")
if [ -e "$many" ] && objcopy --compress-debug-sections=zlib-gabi "$many" "$T_OUT/many-z" 2>"$T_OUT/objcopy.err"; then
	env -u BTFPIPE_JOBS_EXACT "$EXTRACT" -j8 --stats -o "$T_OUT/auto-z.cus" "$T_OUT/many-z" 2>"$T_OUT/auto-z.err"
	jz=$(jobs_of "$T_OUT/auto-z.err")
	jx=$(jobs_of "$T_OUT/auto-many.err")
	[ -n "$jz" ] && [ "$jz" = "$jx" ] && ok "default threads: compressed .debug_info gets the threads of the uncompressed ($jz)" ||
		not_ok "default threads: compressed .debug_info gets the threads of the uncompressed" "compressed '$jz', plain '$jx'"
else
	not_ok "default threads: compress the generated program" "$(cat "$T_OUT/objcopy.err" 2>/dev/null)"
fi
test_done
