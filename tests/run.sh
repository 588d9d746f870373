#!/usr/bin/env bash
# tests/run.sh [PATTERN]: run every tests/tNNNN-*.sh (or those matching
# PATTERN), print each check, and end with the tally line
# "N passed, N failed, N skipped". Exits 1 when anything failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
pattern=${1:-}
export T_OUT_ROOT=${T_OUT_ROOT:-$top/tests/out}
mkdir -p "$T_OUT_ROOT"
export T_RESULTS="$T_OUT_ROOT/results"
: >"$T_RESULTS"
crashed=0
for t in "$top"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
	case "$(basename "$t")" in *"$pattern"*) ;; *) continue ;; esac
	echo "== $(basename "$t")"
	if ! bash "$t"; then
		# A script must report through ok/not_ok/skip and exit 0; anything
		# else means it stopped early, which is a failure of its own.
		echo "FAIL: $(basename "$t") exited non-zero"
		echo fail >>"$T_RESULTS"
		crashed=1
	fi
done
p=$(grep -c '^pass$' "$T_RESULTS")
f=$(grep -c '^fail$' "$T_RESULTS")
s=$(grep -c '^skip$' "$T_RESULTS")
if [ $((p + f + s)) -eq 0 ]; then
	echo "no test ran"
	f=1
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$crashed" -eq 0 ]
