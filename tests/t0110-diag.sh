#!/usr/bin/env bash
# t0110-diag: a broken invariant (VERIFY/DIAG_BUG in common/diag.h) is
# reported with its source file and line and exits 4, apart from bad input
# (1) and I/O errors (3); the first detail recorded is the one shown.
. "$(dirname "$0")/lib.sh"

check_tool diag-check 9 'ok ' FAIL 'diag: $n checks of bug reports and exit codes hold'
test_done
