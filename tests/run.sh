#!/usr/bin/env bash
# tests/run.sh [PATTERN...]: run every tests/tNNNN-*.sh (or those whose name
# contains one of the PATTERNs) once per build variant, print each check, and end with the
# tally line "N passed, N failed, N skipped". Exits 1 when anything failed.
#
# Variants (BTFPIPE_VARIANTS, default "bin bin-asan"): the directory of the
# executables under test. bin-asan is the AddressSanitizer + UBSan build, so
# every test also runs sanitized. A variant whose directory is missing fails.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
patterns=("$@")
# wanted NAME: no pattern was given, or NAME contains one of them.
wanted() {
	local p
	[ ${#patterns[@]} -eq 0 ] && return 0
	for p in "${patterns[@]}"; do
		case "$1" in *"$p"*) return 0 ;; esac
	done
	return 1
}
variants=${BTFPIPE_VARIANTS:-bin bin-asan}
export T_OUT_ROOT=${T_OUT_ROOT:-$top/tests/out}
mkdir -p "$T_OUT_ROOT"
# One results file per run, so two runs at once do not count each other.
export T_RESULTS
T_RESULTS=$(mktemp "$T_OUT_ROOT/results.XXXXXX")
trap 'rm -f "$T_RESULTS"' EXIT
# A pattern that names no test is a typo or a renamed test: a failure, not
# a silent pass (make check-robust lists its tests by name).
for p in "${patterns[@]}"; do
	found=0
	for t in "$top"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
		case "$(basename "$t")" in *"$p"*) found=1 ;; esac
	done
	if [ "$found" -eq 0 ]; then
		echo "FAIL: no test matches '$p'"
		echo fail >>"$T_RESULTS"
	fi
done
# ASan: fail on the first error; leaks in libdw's own caches are not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=87}
# check_emitted TEST LOG: libbpf's btf__dedup() over every BTF that the
# test's btf-emit runs wrote (LOG: $BTFPIPE_EMIT_LOG, one "FILE<TAB>BASE"
# line per output) and that is still there must remove nothing: the
# invariant every BTF of ours keeps. One check per test that wrote any.
check_emitted() {
	local t=$1 log=$2 f b n=0 bad=""
	[ -s "$log" ] || return 0
	while IFS=$'\t' read -r f b; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		# libbpf's dedup recurses along type chains: t1320's 100,000-deep
		# one overflows the default 8 MB stack.
		if ! out=$(ulimit -s unlimited 2>/dev/null; "$T_BIN/tools/btfcheck" ${b:+--base "$b"} --dedup "$f" 2>&1); then
			bad+="$f${b:+ (base $b)}: $(printf '%s\n' "$out" | tail -1)"$'\n'
		fi
	done < <(awk -F'\t' '{ base[$1] = $2 } END { for (f in base) print f "\t" base[f] }' "$log" | sort)
	if [ -z "$bad" ]; then
		echo "ok: $t: libbpf's dedup removes nothing from the $n BTF files it wrote"
		echo pass >>"$T_RESULTS"
	else
		echo "FAIL: $t: libbpf's dedup removes nothing from the BTF files it wrote"
		printf '%s' "$bad" | sed -n '1,20p' | sed 's/^/    /'
		echo fail >>"$T_RESULTS"
	fi
}

for v in $variants; do
	if [ ! -x "$top/$v/dwarf-extract" ]; then
		echo "FAIL: variant $v: $top/$v/dwarf-extract is not built"
		echo fail >>"$T_RESULTS"
		continue
	fi
	export T_BIN="$top/$v" T_VARIANT="$v"
	export T_OUT_ROOT_V="$T_OUT_ROOT/$v"
	for t in "$top"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
		wanted "$(basename "$t")" || continue
		echo "== $v: $(basename "$t")"
		mkdir -p "$T_OUT_ROOT_V"
		emitted="$T_OUT_ROOT_V/$(basename "$t" .sh).emitted"
		rm -f "$emitted"
		done_file="$T_OUT_ROOT_V/$(basename "$t" .sh).done"
		rm -f "$done_file"
		# A script reports through ok/not_ok/skip and ends with test_done
		# (lib.sh), which writes done_file and exits 0; anything else means
		# it stopped early, a failure of its own.
		if ! BTFPIPE_EMIT_LOG=$emitted T_DONE=$done_file T_OUT_ROOT="$T_OUT_ROOT_V" bash "$t"; then
			echo "FAIL: $(basename "$t") exited non-zero"
			echo fail >>"$T_RESULTS"
		elif [ ! -s "$done_file" ]; then
			echo "FAIL: $(basename "$t") exited before its end (test_done)"
			echo fail >>"$T_RESULTS"
		fi
		check_emitted "$(basename "$t" .sh)" "$emitted"
	done
done
p=$(grep -c '^pass$' "$T_RESULTS")
f=$(grep -c '^fail$' "$T_RESULTS")
s=$(grep -c '^skip$' "$T_RESULTS")
if [ $((p + f + s)) -eq 0 ]; then
	echo "no test ran"
	f=1
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
