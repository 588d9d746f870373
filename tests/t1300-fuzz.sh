#!/usr/bin/env bash
# t1300-fuzz: the libFuzzer targets of tests/fuzz/ build, run, and find nothing.
#
# A short run (5 seconds a target) through tests/fuzz/run.sh: every target
# (the .cus reader, the .graph reader, libbpf reading a --btf-base, and
# dwarf-extract's library code on an ELF) must build with clang-19 under ASan
# + UBSan, execute at least 100 inputs, and crash on none (a leak, a timeout or
# an out-of-memory counts as a crash). Then every input saved in
# tests/fuzz/crashes/ (TARGET-<sha1>, the regression inputs of earlier fuzzing)
# is replayed through its target and must not crash any more.
#
# The fuzz binaries are shared by both variants (tests/out/fuzz/, rebuilt only
# when a source changed); the seeds come from this variant's stages.
# Skipped when clang-19 or its libFuzzer runtime (libclang-rt-19-dev) is missing.
. "$(dirname "$0")/lib.sh"

targets="fuzz_cus fuzz_graph fuzz_btf_base fuzz_extract"
FUZZ_BIN=${FUZZ_BIN:-$T_TOP/tests/out/fuzz}
crashes="$T_TOP/tests/fuzz/crashes"

if ! have "$CLANG"; then
	skip "fuzz targets" "$CLANG is not installed (Debian package clang-19)"
	test_done
fi
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	>"$T_OUT/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined -o "$T_OUT/probe" "$T_OUT/probe.c" >"$T_OUT/probe.log" 2>&1; then
	skip "fuzz targets" "$CLANG cannot link -fsanitize=fuzzer: libFuzzer's runtime is missing (Debian package libclang-rt-19-dev)"
	test_done
fi

CLANG="$CLANG" FUZZ_BIN="$FUZZ_BIN" FUZZ_WORK="$T_OUT/work" FUZZ_CRASHES="$T_OUT/new-crashes" T_BIN="$T_BIN" \
	bash "$T_TOP/tests/fuzz/run.sh" 5 >"$T_OUT/fuzz.log" 2>&1
rc=$?
echo "   tests/fuzz/run.sh 5: exit $rc (log $T_OUT/fuzz.log)"
[ "$rc" -eq 2 ] && not_ok "tests/fuzz/run.sh could build and seed" "$(tail -n 30 "$T_OUT/fuzz.log")"

for t in $targets; do
	if grep -Eq "^$t: built" "$T_OUT/fuzz.log"; then ok "$t: built"; else
		not_ok "$t: built" "$(grep -A30 "^$t: BUILD FAILED" "$T_OUT/fuzz.log")"
		continue
	fi
	line=$(grep -E "^$t +executions=" "$T_OUT/fuzz.log" | head -n 1)
	if [ -z "$line" ]; then
		not_ok "$t: ran" "no result line in $T_OUT/fuzz.log: $(tail -n 20 "$T_OUT/fuzz.log")"
		continue
	fi
	n=$(sed -E 's/.*executions=([0-9]+).*/\1/' <<<"$line")
	c=$(sed -E 's/.*crashes=([0-9]+).*/\1/' <<<"$line")
	if [ "$n" -ge 100 ]; then ok "$t: ran >= 100 executions ($n)"; else
		not_ok "$t: ran >= 100 executions" "$line"; fi
	if [ "$c" -eq 0 ]; then ok "$t: no crash in 5 s"; else
		not_ok "$t: no crash in 5 s" "$(grep -A$((c + 1)) -E "^$t +executions=" "$T_OUT/fuzz.log" | head -n $((c + 1)))"
	fi
done

# Replay the saved crash inputs: each must now run clean through its target.
nreplay=0
for f in "$crashes"/*; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	t=${name%-*}
	exe="$FUZZ_BIN/$t"
	nreplay=$((nreplay + 1))
	if [ ! -x "$exe" ]; then
		not_ok "replay $name" "no fuzz target $t for it ($exe)"
		continue
	fi
	timeout 120 "$exe" -timeout=10 -rss_limit_mb=2048 "$f" </dev/null >"$T_OUT/replay.log" 2>&1
	r=$?
	if [ "$r" -eq 0 ]; then ok "replay $name: no crash"; else
		why=$(grep -m1 '^SUMMARY: ' "$T_OUT/replay.log" ||
			grep -m1 -E '^fuzz_[a-z_]+: |ERROR:|runtime error' "$T_OUT/replay.log")
		frame=$(grep -m1 -E '^ +#[0-9]+ 0x[0-9a-f]+ in [a-z]' "$T_OUT/replay.log" | sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //')
		not_ok "replay $name: no crash" "exit $r: ${why:-$(tail -n 3 "$T_OUT/replay.log")}${frame:+ (at $frame)}"
	fi
done
echo "   replayed $nreplay saved crash input(s) from tests/fuzz/crashes/"
test_done
