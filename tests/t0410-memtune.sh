#!/usr/bin/env bash
# t0410-memtune: a stage with a big input starts itself again with glibc's
# malloc in huge pages (common/memtune.h). That may change where memory comes
# from and nothing else: the same bytes, messages and exit codes, and it
# happens once, only for a big input or when asked ($BTFPIPE_MEMTUNE=1), never
# when told not to (=0) or in a sanitizer build.
. "$(dirname "$0")/lib.sh"

build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
e="$T_OUT/sample"
case "$T_VARIANT" in bin-asan | bin-tsan) want_on=0 ;; *) want_on=1 ;; esac

# stages MODE: the three stages at -j2 with BTFPIPE_MEMTUNE=MODE, outputs
# in $T_OUT/MODE.*, each stage's "memtune" count in $T_OUT/MODE.tuned.
stages() {
	local m=$1
	BTFPIPE_MEMTUNE=$m "$T_BIN/dwarf-extract" -j2 -q --stats -o "$T_OUT/$m.cus" "$e" 2>"$T_OUT/$m.x.err" &&
		BTFPIPE_MEMTUNE=$m "$T_BIN/dedup-merge" -j2 -q --stats -o "$T_OUT/$m.graph" "$T_OUT/$m.cus" 2>"$T_OUT/$m.m.err" &&
		BTFPIPE_MEMTUNE=$m "$T_BIN/btf-emit" -j2 -q --stats --elf "$e" -o "$T_OUT/$m.btf" "$T_OUT/$m.graph" 2>"$T_OUT/$m.e.err"
	local rc=$?
	cat "$T_OUT/$m".[xme].err | awk '$2 == "memtune" { printf "%s ", $3 }' >"$T_OUT/$m.tuned"
	return $rc
}
check "stages with BTFPIPE_MEMTUNE=1" stages 1
check "stages with BTFPIPE_MEMTUNE=0" stages 0
for f in cus graph btf; do
	check_same "same .$f with and without huge pages" "$T_OUT/1.$f" "$T_OUT/0.$f"
done
check_grep "BTFPIPE_MEMTUNE=1: every stage restarted tuned (variant $T_VARIANT: $want_on)" \
	"^$want_on $want_on $want_on \$" "$T_OUT/1.tuned"
check_grep "BTFPIPE_MEMTUNE=0: no stage restarted" '^0 0 0 $' "$T_OUT/0.tuned"

# Unset: a small input (the sample) is not worth the second start; an ELF
# of 9 MiB (MEMTUNE_MIN_INPUT is 8) is.
BTFPIPE_MEMTUNE='' "$T_BIN/dwarf-extract" -q --stats -o "$T_OUT/u.cus" "$e" 2>"$T_OUT/u.err"
check_grep "a small input: not restarted" 'memtune +0$' "$T_OUT/u.err"
printf 'char big[9 << 20] = { 1 };\nint main(void) { return big[0]; }\n' >"$T_OUT/big.c"
if gcc -g -O0 -o "$T_OUT/big" "$T_OUT/big.c" 2>"$T_OUT/big.cc.err"; then
	BTFPIPE_MEMTUNE='' "$T_BIN/dwarf-extract" -q --stats -o "$T_OUT/big.cus" "$T_OUT/big" 2>"$T_OUT/big.err"
	check_grep "a 9 MiB input: restarted tuned (variant $T_VARIANT: $want_on)" "memtune +$want_on\$" "$T_OUT/big.err"
	BTFPIPE_MEMTUNE=0 "$T_BIN/dwarf-extract" -q -o "$T_OUT/big0.cus" "$T_OUT/big"
	check_same "a 9 MiB input: the same .cus either way" "$T_OUT/big.cus" "$T_OUT/big0.cus"
else
	not_ok "build a 9 MiB program" "$(cat "$T_OUT/big.cc.err")"
fi

# The restart keeps argv (getopt has reordered it: options, then inputs),
# so errors read the same and exit the same.
for m in 0 1; do
	BTFPIPE_MEMTUNE=$m "$T_BIN/dedup-merge" -o "$T_OUT/no.graph" "$T_OUT/1.cus" "$T_OUT/missing.cus" \
		>"$T_OUT/err$m.out" 2>"$T_OUT/err$m.err"
	echo "exit $?" >>"$T_OUT/err$m.err"
done
check_same "a missing input: the same message and exit code" "$T_OUT/err0.err" "$T_OUT/err1.err"
check_grep "a missing input: exit 1 and the file named" 'missing\.cus' "$T_OUT/err1.err"
[ -e "$T_OUT/no.graph" ] && not_ok "a missing input: no output" || ok "a missing input: no output"

# Inputs before options (getopt reorders them) and a user's own tunables:
# still the same output.
GLIBC_TUNABLES=glibc.malloc.arena_max=1 BTFPIPE_MEMTUNE=1 "$T_BIN/dedup-merge" "$T_OUT/1.cus" -j2 -q \
	-o "$T_OUT/r.graph"
check_same "inputs first, user tunables kept: the same .graph" "$T_OUT/r.graph" "$T_OUT/0.graph"
