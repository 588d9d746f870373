#!/usr/bin/env bash
# t0915-pahole-driver: bin/btfpipe-pahole, the C front that pipeline.sh's
# pahole mode hands over to. What t0910 does not cover: its whole-run memo
# (a hit only when every input and option is the one stored: each one
# changed must miss), its side outputs that turn the memo off, and its
# temp directory under SIGTERM. Outcomes are checked with cmp and the
# cache's own counters, not with the driver's word.
. "$(dirname "$0")/lib.sh"

D="$T_BIN/btfpipe-pahole"
export BTFPIPE_BIN="$T_BIN"
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
elf="$T_OUT/sample"
(cd "$T_TOP" && gcc -O2 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$T_OUT/mod.o" tests/fixtures/sample/shapes.c) ||
	not_ok "build the module-like object"
FEAT=--btf_features=encode_force,var,float,enum64,decl_tag,type_tag
C="$T_OUT/cache"
hits() { sed -n 's/^hits //p' "$C/out-v1/stats" 2>/dev/null || echo 0; }
misses() { sed -n 's/^misses //p' "$C/out-v1/stats" 2>/dev/null || echo 0; }
# run NAME ARGS...: the driver with the cache; prints "HITS MISSES" it added.
run() {
	local h=$(hits) m=$(misses) name=$1
	shift
	if ! BTFPIPE_CACHE_DIR="$C" "$D" "$@" >"$T_OUT/$name.out" 2>"$T_OUT/$name.err"; then
		echo "failed: $(cat "$T_OUT/$name.err")"
		return
	fi
	echo "$(($(hits) - h)) $(($(misses) - m))"
}
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', wanted '$3'"; fi; }

check "base BTF, no cache" "$D" "$FEAT" --btf_encode_detached="$T_OUT/base.btf" "$elf"
check "module, no cache (the reference)" "$D" "$FEAT" --btf_base "$T_OUT/base.btf" \
	--btf_encode_detached="$T_OUT/ref.btf" "$T_OUT/mod.o"

# First run: the whole run misses (and so does each stage's memo).
r=$(run m1 "$FEAT" --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/m1.btf" "$T_OUT/mod.o")
case "$r" in "0 "*) ok "first run: no hit ($r)" ;; *) not_ok "first run: no hit" "$r" ;; esac
check_same "first run: the reference BTF" "$T_OUT/ref.btf" "$T_OUT/m1.btf"
same "second run: one hit, the whole run's, no miss" \
	"$(run m2 "$FEAT" --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/m2.btf" "$T_OUT/mod.o")" "1 0"
check_same "second run: the reference BTF" "$T_OUT/ref.btf" "$T_OUT/m2.btf"
# -j is not in the key: every stage writes the same bytes at any -j.
same "-j4: still the whole run's hit" \
	"$(run m3 -j4 "$FEAT" --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/m3.btf" "$T_OUT/mod.o")" "1 0"

# Each input and option in the key: changed, the whole run misses.
miss_on() { # WHAT ARGS...: the run must not be answered by the whole-run memo
	local what=$1 r
	shift
	r=$(run "x" "$@")
	case "$r" in "1 0") not_ok "$what: the whole run misses" "a hit, no miss" ;;
	failed*) not_ok "$what: the whole run misses" "$r" ;;
	*) ok "$what: the whole run misses ($r)" ;; esac
}
cp "$T_OUT/mod.o" "$T_OUT/mod2.o"
printf 'x' | dd of="$T_OUT/mod2.o" bs=1 seek=$(($(stat -c %s "$T_OUT/mod2.o") - 1)) conv=notrunc 2>/dev/null
miss_on "the input's last byte changed" "$FEAT" --btf_base "$T_OUT/base.btf" \
	--btf_encode_detached="$T_OUT/x.btf" "$T_OUT/mod2.o"
miss_on "other features" "$FEAT,optimized_func" --btf_base "$T_OUT/base.btf" \
	--btf_encode_detached="$T_OUT/x.btf" "$T_OUT/mod.o"
check "a base with other BTF" "$D" --btf_features=encode_force,var,enum64,decl_tag,type_tag \
	--btf_encode_detached="$T_OUT/base2.btf" "$elf"
miss_on "another base" "$FEAT" --btf_base "$T_OUT/base2.btf" --btf_encode_detached="$T_OUT/x.btf" "$T_OUT/mod.o"
miss_on "no base" "$FEAT" --btf_encode_detached="$T_OUT/x.btf" "$T_OUT/mod.o"
miss_on "--lang_exclude" "$FEAT" --lang_exclude=rust --btf_base "$T_OUT/base.btf" \
	--btf_encode_detached="$T_OUT/x.btf" "$T_OUT/mod.o"
# The base is keyed on its BTF only: the same BTF in an ELF's .BTF hits.
# (-J on a copy of the program writes that BTF into its .BTF: t0910.)
cp "$elf" "$T_OUT/base.elf"
check "the base as an ELF with .BTF" "$D" "$FEAT" -J "$T_OUT/base.elf"
same "the base's BTF in an ELF's .BTF: the same key, a hit" \
	"$(run m4 "$FEAT" --btf_base "$T_OUT/base.elf" --btf_encode_detached="$T_OUT/m4.btf" "$T_OUT/mod.o")" "1 0"
check_same "... and the reference BTF" "$T_OUT/ref.btf" "$T_OUT/m4.btf"

# A corrupt entry is a miss, and that run's store repairs it.
for f in "$C"/out-v1/??/*; do printf 'garbage' | dd of="$f" bs=1 seek=40 conv=notrunc 2>/dev/null; done
r=$(run m5 "$FEAT" --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/m5.btf" "$T_OUT/mod.o")
case "$r" in "0 "*) ok "corrupt entries: a miss ($r)" ;; *) not_ok "corrupt entries: a miss" "$r" ;; esac
check_same "corrupt entries: the reference BTF" "$T_OUT/ref.btf" "$T_OUT/m5.btf"
same "after the repair: a hit" \
	"$(run m6 "$FEAT" --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/m6.btf" "$T_OUT/mod.o")" "1 0"

# Side outputs turn the memo off: the stages run (and hit their own memos).
r=$(run v "$FEAT" --verbose --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/v.btf" "$T_OUT/mod.o")
same "--verbose: the stages run, each hits its own memo" "$r" "2 0"
r=$(BTFPIPE_STATS=1 run s "$FEAT" --btf_base "$T_OUT/base.btf" --btf_encode_detached="$T_OUT/s.btf" "$T_OUT/mod.o")
same "BTFPIPE_STATS: the stages run, each hits its own memo" "$r" "3 0"
check_same "BTFPIPE_STATS: the reference BTF" "$T_OUT/ref.btf" "$T_OUT/s.btf"

# A stage that fails: its exit code, its message, and the stage named.
printf 'text\n' >"$T_OUT/notelf"
check_exit "a non-ELF input: exit 1, the extract's" 1 env BTFPIPE_CACHE_DIR="$C" "$D" -J "$T_OUT/notelf"
check_grep "a non-ELF input: the stage is named" "stage dwarf-extract failed \(exit 1\)" "$T_OUT/last.err"

# SIGTERM while a stage runs: passed on, the temp directory removed, no
# output, and the driver ends by the signal.
export TMPDIR="$T_OUT/tmp"
mkdir -p "$TMPDIR"
rm -f "$T_OUT/t.btf"
mkdir -p "$T_OUT/slow"
for s in dedup-merge btf-emit; do ln -sf "$T_BIN/$s" "$T_OUT/slow/$s"; done
cat >"$T_OUT/slow/dwarf-extract" <<EOF
#!/bin/sh
touch "$T_OUT/slow.started"
exec sleep 31.915
EOF
chmod +x "$T_OUT/slow/dwarf-extract"
rm -f "$T_OUT/slow.started"
BTFPIPE_BIN="$T_OUT/slow" "$D" "$FEAT" --btf_encode_detached="$T_OUT/t.btf" "$elf" 2>"$T_OUT/t.err" &
pid=$!
for _ in $(seq 100); do [ -e "$T_OUT/slow.started" ] && break; sleep 0.05; done
t0=$(date +%s%N)
kill -TERM $pid
wait $pid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
# (Not passed on, the stage would sleep on and the driver wait for it.)
[ "$ms" -lt 10000 ] && ok "SIGTERM: the driver ends at once, not when the stage would ($ms ms)" ||
	not_ok "SIGTERM: the driver ends at once, not when the stage would" "$ms ms"
same "SIGTERM: the driver ends by it (128 + 15)" "$rc" 143
same "SIGTERM: no temp directory left" "$(find "$TMPDIR" -mindepth 1 | wc -l)" 0
[ -e "$T_OUT/t.btf" ] && not_ok "SIGTERM: no output" || ok "SIGTERM: no output"
if pgrep -f "^sleep 31.915$" >/dev/null; then
	not_ok "SIGTERM: passed on to the stage (no sleep left running)"
	pkill -f "^sleep 31.915$"
else ok "SIGTERM: passed on to the stage (no sleep left running)"; fi
test_done
