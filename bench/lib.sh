# bench/lib.sh: what every bench script does the same way, sourced after it
# has set W (its work directory) and, for measure(), measure (the path of
# bin/tools/measure, bench/measure.c). Each script keeps its own report.

# note TEXT: a line for the report's notes ($W/notes) and for stderr.
note() { echo "$*" | tee -a "$W/notes" >&2; }
# fail TEXT: a FAIL note; the script exits 1 at its end (failed=1).
fail() { failed=1; note "FAIL: $*"; }

# median: the median of the numbers on stdin, one a line ("-" for none; the
# mean of the middle two for an even count).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure NAME CMD...: run CMD under bench/measure.c (time(1)'s wall, user,
# sys and peak RSS, to the microsecond) with stdout in $W/NAME.out and
# stderr in $W/NAME.err. Sets M_WALL M_CPU (seconds) and M_RSS (KiB).
# Returns CMD's exit code.
measure() {
	local name=$1 rc u s; shift
	"$measure" "$W/$name.time" "$@" >"$W/$name.out" 2>"$W/$name.err"
	rc=$?
	read -r M_WALL u s M_RSS < <(tail -1 "$W/$name.time")
	M_CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.6f", u + s }')
	return $rc
}
