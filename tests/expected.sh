# tests/expected.sh: the differences a comparison with an oracle expects
# (sourced by tests/lib.sh and by bench scripts; defines functions only).
#
# $EXPECTED holds rows "GLOB<TAB>ERE<TAB>WHY": a difference line of
# tools/btfcmp.py (ERE, matched against the whole line) that is expected for
# the labels GLOB matches, and WHY it is (whose choice, or whose bug).

# expected_rows LABEL: the rows of $EXPECTED ("GLOB<TAB>ERE<TAB>WHY" lines)
# whose GLOB matches LABEL, as "ERE<TAB>WHY" (tests that list the
# differences from an oracle they expect, with the reason for each).
expected_rows() {
	local glob ere why
	[ -n "${EXPECTED:-}" ] || return 0
	while IFS=$'\t' read -r glob ere why; do
		# shellcheck disable=SC2053
		[[ $1 == $glob ]] && printf '%s\t%s\n' "$ere" "$why"
	done <<<"$EXPECTED"
}

# btfcmp_lines FILE: the difference lines of btfcmp's output FILE
# ("only-in-A ...", "count ..."), without their indent.
btfcmp_lines() { sed -n 's/^  \(only-in-.*\|count .*\)$/\1/p' "$1"; }

# unexplained LABEL FILE: the difference lines of btfcmp's output FILE that
# no row of $EXPECTED for LABEL matches, one a line.
unexplained() {
	local line ere why hit rows
	rows=$(expected_rows "$1")
	btfcmp_lines "$2" | while IFS= read -r line; do
		hit=0
		while IFS=$'\t' read -r ere why; do
			[ -n "$ere" ] && [[ $line =~ $ere ]] && hit=1 && break
		done <<<"$rows"
		[ "$hit" = 1 ] || printf '%s\n' "$line"
	done
}
