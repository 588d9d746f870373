#!/usr/bin/env bash
# t0120-strsort: common/strsort.c (btf-emit sorts functions and symbols by
# name with it) gives qsort()'s order with the same comparison: strcmp, then
# tie, then index; and strsort_threads() gives the same on 2, 3 and 8
# threads. The FUNC order of every BTF depends on it.
. "$(dirname "$0")/lib.sh"

check_tool strsort-check 60 'same ' DIFFERENT \
	'strsort and strsort_threads == qsort on $n inputs (shared prefixes past the depth limit, equal names, empty strings, high bytes)'
test_done
