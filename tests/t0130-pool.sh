#!/usr/bin/env bash
# t0130-pool: common/pool.c's ordered loop, on the schedules tools/pool-check
# makes hard (tests/tools/pool_check.c): in-order emits, the lowest failing
# item's error, no emit past a failure, worker ids, and no hang when the
# next item to emit fails while the other workers wait for room in the
# window (that hung before 2026-12-01: pthread_join() waited forever).
. "$(dirname "$0")/lib.sh"

check_tool pool-check 30 'ok ' FAIL 'pool_ordered: $n cases hold (failures, full windows, 2-4 threads; pool_clock())' \
	' (142: hung, ended by the alarm)'
test_done
