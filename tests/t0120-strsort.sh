#!/usr/bin/env bash
# t0120-strsort: common/strsort.c (btf-emit sorts functions and symbols by
# name with it) gives qsort()'s order with the same comparison: strcmp, then
# tie, then index; and strsort_threads() gives the same on 2, 3 and 8
# threads. The FUNC order of every BTF depends on it.
. "$(dirname "$0")/lib.sh"

CHECK="$T_BIN/tools/strsort-check"
if [ ! -x "$CHECK" ]; then
	not_ok "strsort-check is built" "$CHECK missing"
	exit 0
fi
out=$("$CHECK" 2>&1)
rc=$?
n=$(echo "$out" | grep -c '^same ')
if [ $rc -eq 0 ] && [ "$n" -ge 60 ] && ! echo "$out" | grep -q DIFFERENT; then
	ok "strsort and strsort_threads == qsort on $n inputs (shared prefixes past the depth limit, equal names, empty strings, high bytes)"
else
	not_ok "strsort == qsort" "exit $rc: $out"
fi
