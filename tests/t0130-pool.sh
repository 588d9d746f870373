#!/usr/bin/env bash
# t0130-pool: common/pool.c's ordered loop, on the schedules tools/pool-check
# makes hard (tests/tools/pool_check.c): in-order emits, the lowest failing
# item's error, no emit past a failure, worker ids, and no hang when the
# next item to emit fails while the other workers wait for room in the
# window (that hung before 2026-12-01: pthread_join() waited forever).
. "$(dirname "$0")/lib.sh"

CHECK="$T_BIN/tools/pool-check"
if [ ! -x "$CHECK" ]; then
	not_ok "pool-check is built" "$CHECK missing"
	exit 0
fi
"$CHECK" >"$T_OUT/pool.out" 2>&1
rc=$?
n=$(grep -c '^ok ' "$T_OUT/pool.out")
if [ $rc -eq 0 ] && [ "$n" -ge 30 ] && ! grep -q '^FAIL' "$T_OUT/pool.out"; then
	ok "pool_ordered: $n schedules hold (failures, full windows, 2-4 threads)"
else
	not_ok "pool_ordered: every schedule holds" "exit $rc (142: hung, ended by the alarm): $(cat "$T_OUT/pool.out")"
fi
