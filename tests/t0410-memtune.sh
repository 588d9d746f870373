#!/usr/bin/env bash
# t0410-memtune: a stage started without glibc's malloc tunables for huge
# pages starts itself again with them (common/memtune.h); pipeline.sh
# exports them so its stages need not. That may change where memory comes
# from and nothing else: the same bytes, messages and exit codes; once at
# most, never when told not to ($BTFPIPE_MEMTUNE=0) or in a sanitizer build.
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

# Unset: every stage restarts itself; started by pipeline.sh, none needs
# to (it exports the tunables), and each is still tuned.
BTFPIPE_MEMTUNE='' "$T_BIN/dwarf-extract" -q --stats -o "$T_OUT/u.cus" "$e" 2>"$T_OUT/u.err"
check_grep "unset: restarted tuned (variant $T_VARIANT: $want_on)" "memtune +$want_on\$" "$T_OUT/u.err"
BTFPIPE_MEMTUNE='' BTFPIPE_BIN="$T_BIN" "$T_TOP/pipeline.sh" -j2 --stats --features default -o "$T_OUT/p.btf" "$e" 2>"$T_OUT/p.err"
check_grep "pipeline.sh: its stages tuned (variant $T_VARIANT: $want_on)" \
	"^$want_on $want_on $want_on \$" <(awk '$2 == "memtune" { printf "%s ", $3 } END { print "" }' "$T_OUT/p.err")
check_same "pipeline.sh: the same BTF" "$T_OUT/p.btf" "$T_OUT/0.btf"
if have strace; then
	# (LeakSanitizer cannot run under ptrace)
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
	BTFPIPE_MEMTUNE='' BTFPIPE_BIN="$T_BIN" strace -f -qq -e trace=execve -e signal=none -o "$T_OUT/p.strace" \
		"$T_TOP/pipeline.sh" -j2 -o "$T_OUT/p2.btf" "$e"
	# (a restart is an execve of /proc/self/exe)
	n=$(grep -Ec 'execve\("([^"]*/(dwarf-extract|dedup-merge|btf-emit)|/proc/self/exe)", .*= 0$' "$T_OUT/p.strace")
	[ "$n" = 3 ] && ok "pipeline.sh: three stages, none started twice" ||
		not_ok "pipeline.sh: three stages, none started twice" "$n execs: $(grep -E 'execve' "$T_OUT/p.strace" | head -20)"
	BTFPIPE_MEMTUNE='' strace -f -qq -e trace=execve -e signal=none -o "$T_OUT/x.strace" \
		"$T_BIN/dwarf-extract" -q -o "$T_OUT/u2.cus" "$e"
	n=$(grep -c 'execve(.*= 0$' "$T_OUT/x.strace")
	[ "$n" = $((1 + want_on)) ] && ok "a stage alone: started $n time(s)" ||
		not_ok "a stage alone: started $((1 + want_on)) time(s)" "$(cat "$T_OUT/x.strace")"
else
	skip "pipeline.sh: three stages, none started twice" "no strace"
	skip "a stage alone: started twice" "no strace"
fi

# The restart keeps argv, so errors read the same and exit the same, and a
# warning from the options is printed once.
for m in 0 1; do
	BTFPIPE_MEMTUNE=$m "$T_BIN/dedup-merge" -o "$T_OUT/no.graph" "$T_OUT/1.cus" "$T_OUT/missing.cus" \
		>"$T_OUT/err$m.out" 2>"$T_OUT/err$m.err"
	echo "exit $?" >>"$T_OUT/err$m.err"
done
check_same "a missing input: the same message and exit code" "$T_OUT/err0.err" "$T_OUT/err1.err"
check_grep "a missing input: exit 1 and the file named" 'missing\.cus' "$T_OUT/err1.err"
[ -e "$T_OUT/no.graph" ] && not_ok "a missing input: no output" || ok "a missing input: no output"

# Inputs before options and a user's own tunables: still the same output.
GLIBC_TUNABLES=glibc.malloc.arena_max=1 BTFPIPE_MEMTUNE=1 "$T_BIN/dedup-merge" "$T_OUT/1.cus" -j2 -q \
	-o "$T_OUT/r.graph"
check_same "inputs first, user tunables kept: the same .graph" "$T_OUT/r.graph" "$T_OUT/0.graph"
if [ "$want_on" = 1 ]; then
	# A cache directory that cannot be made: a warning, and the run goes on.
	: >"$T_OUT/notadir"
	BTFPIPE_MEMTUNE='' "$T_BIN/btf-emit" --cache "$T_OUT/notadir/cache" -o "$T_OUT/w.btf" "$T_OUT/0.graph" \
		>"$T_OUT/w.out" 2>"$T_OUT/w.err"
	n=$(grep -c . "$T_OUT/w.err")
	[ "$n" = 1 ] && ok "a warning from the options: printed once across the restart" ||
		not_ok "a warning from the options: printed once across the restart" "$(cat "$T_OUT/w.err")"
fi
test_done
