#!/usr/bin/env bash
# t1330-tsan: the threaded paths under ThreadSanitizer (bin-tsan/, built by
# make test with SANITIZE=thread): dwarf-extract and dedup-merge at -j4 on
# the fixtures, an LTO program (cross-CU references) and a 120-CU program,
# and btf-emit -j4 --elf (the ELF's symbols read in chunks on the pool); and
# tools/pool-check, the thread pool's hard schedules; tools/strsort-check,
# whose larger inputs sort on 2, 3 and 8 threads (btf-emit's function sort).
# A data race makes the run exit 66 and fails the check. The output must be
# the same bytes as the normal build's.
. "$(dirname "$0")/lib.sh"

TS="$T_TOP/bin-tsan"
if [ ! -x "$TS/dwarf-extract" ]; then
	not_ok "bin-tsan is built" "run: make SANITIZE=thread all (make test does)"
	test_done
fi
export TSAN_OPTIONS="exitcode=66 halt_on_error=1 second_deadlock_stack=1"
d="$T_OUT"
build_fixture gcc -O2 5 "$d" sample || not_ok "build sample"
(cd "$T_TOP" && gcc -O2 -g -flto -o "$d/lto" tests/fixtures/lto/*.c) || not_ok "build the LTO fixture"
inputs="$d/sample $d/lto"
if out=$("$T_TOP/tests/gen/many-cus.sh" "$d/gen" 120 gcc 2>&1); then
	inputs="$inputs $d/gen/many-gcc"
else
	not_ok "generate the 120-unit program" "$out"
fi
if [ -x "$TS/tools/pool-check" ]; then
	check "pool-check (the ordered loop's hard schedules) under TSan" "$TS/tools/pool-check"
else
	not_ok "bin-tsan/tools/pool-check is built" "run: make SANITIZE=thread all"
fi
if [ -x "$TS/tools/strsort-check" ]; then
	check "strsort-check (strsort_threads() on 2, 3, 8 threads) under TSan" "$TS/tools/strsort-check"
else
	not_ok "bin-tsan/tools/strsort-check is built" "run: make SANITIZE=thread all"
fi
for elf in $inputs; do
	n=$(basename "$elf")
	check "$n: extract -j4 under TSan" "$TS/dwarf-extract" -j4 -o "$d/$n.t.cus" "$elf"
	check "$n: merge -j4 under TSan" "$TS/dedup-merge" -j4 -o "$d/$n.t.graph" "$d/$n.t.cus"
	"$T_BIN/dwarf-extract" -j1 -o "$d/$n.cus" "$elf"
	"$T_BIN/dedup-merge" -j1 -o "$d/$n.graph" "$d/$n.cus"
	check_same "$n: TSan -j4 .cus equals -j1" "$d/$n.cus" "$d/$n.t.cus"
	check_same "$n: TSan -j4 .graph equals -j1" "$d/$n.graph" "$d/$n.t.graph"
	check "$n: emit -j4 --elf under TSan" "$TS/btf-emit" -j4 --elf "$elf" -o "$d/$n.t.btf" "$d/$n.graph"
	"$T_BIN/btf-emit" -j1 --elf "$elf" -o "$d/$n.btf" "$d/$n.graph"
	check_same "$n: TSan -j4 BTF equals -j1" "$d/$n.btf" "$d/$n.t.btf"
done
test_done
