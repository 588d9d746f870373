#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS]: build the libFuzzer targets of tests/fuzz/ with
# clang-19 (ASan + UBSan), seed each corpus from files made now from
# tests/fixtures (x86-64, and s390x and i386 objects), fuzz each target for SECONDS (default 60), one after
# the other, and print per target the executions, the crashes found and the
# corpus size and coverage (libFuzzer's cov: edges, ft: features).
#
#   fuzz_cus       the .cus reader: open, decode every CU, dump
#   fuzz_graph     the .graph reader: read, dump
#   fuzz_btf_base  a base BTF read as `btf-emit --btf-base` does: libbpf,
#                  then our base matcher and split writer
#   fuzz_extract   dwarf-extract's library code on an ELF
#
# A crash (also a leak, a timeout of 10 s or going over 2 GB) stops libFuzzer;
# its input is saved as tests/fuzz/crashes/TARGET-<sha1> (meant to be
# committed: tests/t1300-fuzz.sh replays every file there), and the target is
# started again for the time left, until the same bug comes back or after 5
# crashes. A bug is its kind and the first stack frame of our code; one that
# an input already in tests/fuzz/crashes/ still shows (they are replayed
# first) is reported as known and its new input is not saved.
# `tests/out/fuzz/TARGET FILE` replays one input.
#
# Exit: 0 no crash, 1 some target crashed, 2 could not build or seed.
#
# Environment:
#   FUZZ_TARGETS  the targets to run (default: all four, by their names above)
#   FUZZ_BIN      where the fuzz binaries go (default tests/out/fuzz); a binary
#                 newer than its sources and built with the same command is kept
#   FUZZ_WORK     seeds, corpora, artifacts and logs (default tests/out/fuzz/work),
#                 emptied at the start of each run
#   FUZZ_CRASHES  where crash inputs are saved (default tests/fuzz/crashes)
#   T_BIN         the stages that make the seeds (default bin/)
#   CLANG         the compiler (default clang-19)
#   FUZZ_JOBS     how many targets fuzz at once (default 1, one after the
#                 other); each gets the full SECONDS on a core of its own
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
case $secs in '' | *[!0-9]*) echo "usage: tests/fuzz/run.sh [SECONDS]" >&2; exit 2 ;; esac
[ "$secs" -ge 1 ] || { echo "usage: tests/fuzz/run.sh [SECONDS] (SECONDS >= 1)" >&2; exit 2; }
# FUZZ_JOBS targets at a time (default 1): each libFuzzer process uses one
# core, so on N cores N targets get their full time side by side.
jobs_max=${FUZZ_JOBS:-1}
case $jobs_max in '' | *[!0-9]*) echo "fuzz: error: FUZZ_JOBS must be a number >= 1" >&2; exit 2 ;; esac
jobs_max=$((10#$jobs_max))
[ "$jobs_max" -ge 1 ] || { echo "fuzz: error: FUZZ_JOBS must be a number >= 1" >&2; exit 2; }

CLANG=${CLANG:-clang-19}
targets=${FUZZ_TARGETS:-fuzz_cus fuzz_graph fuzz_btf_base fuzz_extract}
fbin=${FUZZ_BIN:-$top/tests/out/fuzz}
work=${FUZZ_WORK:-$top/tests/out/fuzz/work}
crashes=${FUZZ_CRASHES:-$top/tests/fuzz/crashes}
stages=${T_BIN:-$top/bin}
max_restarts=5

# Sanitizers: leaks are findings; UBSan stops at the first report (the code
# is also built with -fno-sanitize-recover, so this is belt and braces).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

die() { echo "fuzz: error: $*" >&2; exit 2; }

command -v "$CLANG" >/dev/null 2>&1 ||
	die "$CLANG not found (Debian: apt-get install clang-19 libclang-rt-19-dev)"
pkgs="libdw libelf libbpf libxxhash libzstd zlib"
# shellcheck disable=SC2086 # one word per package
pkg=$(pkg-config --cflags --libs $pkgs) || die "pkg-config $pkgs failed (make deps)"

mkdir -p "$fbin" "$crashes" || die "cannot create $fbin or $crashes"
rm -rf "$work"
mkdir -p "$work/seeds" "$work/logs" || die "cannot create $work"

# ---- build ------------------------------------------------------------------
# -fno-sanitize-recover=all: a UBSan report is a crash libFuzzer saves, not a
# line it prints and goes on after (as in `make SANITIZE=1`).
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=gnu11 -D_GNU_SOURCE -pthread"

sources_of() {
	local t=$1
	echo "tests/fuzz/$t.c"
	ls common/*.c format/*.c
	if [ "$t" = fuzz_extract ]; then
		for f in stages/dwarf-extract/*.c; do [ "$f" = stages/dwarf-extract/main.c ] || echo "$f"; done
	fi
	if [ "$t" = fuzz_btf_base ]; then
		echo stages/btf-emit/base_dedup.c stages/btf-emit/base_index.c stages/btf-emit/base_view.c \
			stages/btf-emit/str_match.c stages/btf-emit/split_write.c stages/btf-emit/bucket.c \
			stages/btf-emit/btf_raw.c
	fi
}

# Everything a target's build reads: its sources and the headers beside them.
inputs_of() {
	sources_of "$1"
	ls common/*.h format/*.h tests/fuzz/*.h
	[ "$1" = fuzz_extract ] && ls stages/dwarf-extract/*.h
	[ "$1" = fuzz_btf_base ] && ls stages/btf-emit/*.h
}

# up_to_date TARGET CMD: the binary exists, was built by CMD, and is newer
# than everything its build reads.
up_to_date() {
	local exe="$fbin/$1" f
	[ -x "$exe" ] && [ "$(cat "$exe.cmd" 2>/dev/null)" = "$2" ] || return 1
	for f in $(cd "$top" && inputs_of "$1"); do
		[ "$top/$f" -nt "$exe" ] && return 1
	done
	return 0
}

build() {
	local t=$1 exe="$fbin/$1" log="$work/logs/$1.build.log" cmd
	cmd="$CLANG $cflags -o $exe.tmp $(sources_of "$t" | tr '\n' ' ')$pkg"
	if up_to_date "$t" "$cmd"; then
		echo "$t: built (up to date)"
		return 0
	fi
	if (cd "$top" && $cmd) >"$log" 2>&1 && mv -f "$exe.tmp" "$exe"; then
		printf '%s\n' "$cmd" >"$exe.cmd"
		echo "$t: built"
	else
		rm -f "$exe.tmp"
		echo "$t: BUILD FAILED (see $log)"
		sed -n '1,30p' "$log" | sed 's/^/    /'
		return 1
	fi
}

# libFuzzer present? (Debian ships it in libclang-rt-19-dev, not in clang-19.)
probe="$work/probe"
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	>"$probe.c"
"$CLANG" -fsanitize=fuzzer,address,undefined -o "$probe" "$probe.c" >"$probe.log" 2>&1 ||
	die "$CLANG cannot link -fsanitize=fuzzer (Debian: apt-get install libclang-rt-19-dev): $(head -c 400 "$probe.log")"

build_failed=0
for t in $targets; do
	case $t in fuzz_cus | fuzz_graph | fuzz_btf_base | fuzz_extract) ;;
	*) die "unknown target $t (fuzz_cus fuzz_graph fuzz_btf_base fuzz_extract)" ;; esac
	build "$t" || build_failed=1
done
[ "$build_failed" -eq 0 ] || die "a target did not build"

# ---- seeds, made now from the sample fixture ----------------------------------
seeds="$work/seeds"
for s in dwarf-extract dedup-merge btf-emit; do
	[ -x "$stages/$s" ] || die "$stages/$s is not built (run make first)"
done
# seed DESC CMD...: run a seed-making command, its output in the seed log.
seed() {
	local desc=$1; shift
	if ! "$@" >>"$work/logs/seeds.log" 2>&1; then
		echo "fuzz: seed: $desc failed (see $work/logs/seeds.log)" >&2
		return 1
	fi
}
fx="$top/tests/fixtures/sample"
seed "gcc sample" gcc -O2 -g -o "$seeds/sample" "$fx"/*.c || exit 2
seed "gcc -c shapes.o" gcc -O0 -g -c -o "$seeds/shapes.o" "$fx/shapes.c" || exit 2
seed "dwarf-extract sample" "$stages/dwarf-extract" -q -j 1 -o "$seeds/sample.cus" "$seeds/sample" || exit 2
seed "dedup-merge sample.cus" "$stages/dedup-merge" -o "$seeds/sample.graph" "$seeds/sample.cus" || exit 2
seed "btf-emit sample.graph" "$stages/btf-emit" --elf "$seeds/sample" -o "$seeds/sample.btf" \
	"$seeds/sample.graph" || exit 2
# More shapes of the same formats, where they can be made (not required):
# clang's DWARF 5 forms, a relocatable object's .cus (ET_REL), an ELF with .BTF.
seed "clang sample" "$CLANG" -O1 -g -o "$seeds/sample-clang" "$fx"/*.c &&
	seed "dwarf-extract sample-clang" "$stages/dwarf-extract" -q -j 1 -o "$seeds/sample-clang.cus" "$seeds/sample-clang"
seed "dwarf-extract shapes.o" "$stages/dwarf-extract" -q -j 1 -o "$seeds/shapes.o.cus" "$seeds/shapes.o" &&
	seed "dedup-merge shapes.o.cus" "$stages/dedup-merge" -o "$seeds/shapes.graph" "$seeds/shapes.o.cus"
seed "btf-emit --elf-out" "$stages/btf-emit" --elf "$seeds/sample" --elf-out "$seeds/sample-btf.elf" \
	"$seeds/sample.graph"
# An object without shapes.c's TLS relocation: dwarf-extract relocates it
# itself (stages/dwarf-extract/reloc.c), where shapes.o goes to libdwfl.
seed "gcc -c tree.o" gcc -O0 -g -c -o "$seeds/tree.o" "$top/tests/fixtures/lto/tree.c"
# Compressed debug sections (SHF_COMPRESSED, zlib and zstd): inflate.c's
# headers and payloads, in an executable and in an object that is relocated.
for z in zlib-gabi zstd; do
	seed "objcopy $z sample" objcopy --compress-debug-sections=$z "$seeds/sample" "$seeds/sample-$z"
	seed "objcopy $z tree.o" objcopy --compress-debug-sections=$z "$seeds/tree.o" "$seeds/tree-$z.o"
done
# Other byte orders and word sizes: big-endian s390x and 32-bit i386 objects
# (clang cross-compiles the fixtures that need no libc headers), and their
# .cus, .graph and BTF (in the object's byte order) for the other readers.
for t in s390x-linux-gnu i386-linux-gnu; do
	a=${t%%-*}
	for f in lto/tree tags/tags merge/a; do
		o="$seeds/${f##*/}-$a.o"
		seed "clang --target=$t ${f##*/}.o" "$CLANG" --target="$t" -O1 -g -c -o "$o" "$top/tests/fixtures/$f.c" &&
			seed "dwarf-extract ${o##*/}" "$stages/dwarf-extract" -q -j 1 -o "$o.cus" "$o" &&
			seed "dedup-merge ${o##*/}.cus" "$stages/dedup-merge" -o "${o%.o}.graph" "$o.cus" &&
			seed "btf-emit ${o##*/}" "$stages/btf-emit" --elf "$o" -o "${o%.o}.btf" "${o%.o}.graph"
	done
done

corpus_seeds() {
	case $1 in
	fuzz_cus) ls "$seeds"/*.cus ;;
	fuzz_graph) ls "$seeds"/*.graph ;;
	fuzz_btf_base) ls "$seeds"/*.btf "$seeds"/sample-btf.elf ;;
	fuzz_extract) ls "$seeds"/sample "$seeds"/sample-clang "$seeds"/shapes.o "$seeds"/tree.o "$seeds"/sample-z* "$seeds"/tree-z*.o \
		"$seeds"/*-s390x.o "$seeds"/*-i386.o ;;
	esac 2>/dev/null
}

# ---- fuzz ---------------------------------------------------------------------
# why LOG: one line on why libFuzzer stopped: the sanitizer's SUMMARY, else
# the harness's own message (fuzz_X: ...), else libFuzzer's (timeout, OOM),
# and the first stack frame outside the sanitizer and libFuzzer runtimes.
first_frame() {
	grep -E '^ +#[0-9]+ 0x[0-9a-f]+ in ' "$1" |
		grep -vE ' in (__|fuzzer::|abort|raise|gsignal|malloc|calloc|realloc|free|LLVMFuzzerTestOneInput .*fuzz_[a-z_]+\.c)|compiler-rt|libc\.so' |
		head -n 1 | sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //; s/ \(BuildId: [0-9a-f]+\)//'
}
why() {
	local w f
	w=$(grep -m1 '^SUMMARY: ' "$1") ||
		w=$(grep -m1 -E '^fuzz_[a-z_]+: |^==[0-9]+== ?ERROR: |ALARM: |out-of-memory' "$1")
	f=$(first_frame "$1")
	printf '%s%s' "${w:-no sanitizer report}" "${f:+; first frame: $f}"
}

# kind_of LOG: crash, leak, timeout or oom. signature LOG: the kind and the
# first frame of our code (or the SUMMARY line): one bug, whatever the input.
kind_of() {
	if grep -q 'ERROR: LeakSanitizer' "$1"; then echo leak
	elif grep -q 'ALARM: working on the last Unit' "$1"; then echo timeout
	elif grep -q 'ERROR: libFuzzer: out-of-memory' "$1"; then echo oom
	else echo crash; fi
}
signature() {
	local f
	f=$(first_frame "$1")
	[ -n "$f" ] || f=$(grep -m1 '^SUMMARY: ' "$1")
	printf '%s %s' "$(kind_of "$1")" "$f"
}

# fuzz_target T: fuzz one target for the time asked; its summary line (and
# one note per bug) goes to $work/T.summary, its count of bugs to $work/T.found.
# Runs in a subshell of its own when FUZZ_JOBS > 1, so it only writes files.
fuzz_target() {
	local t=$1 corpus="$work/corpus/$1" art="$work/artifacts/$1"
	local known seen rlog end execs found run notes left log rc n again new a name sha dest kind sig k
	local files kb line cov f s
	mkdir -p "$corpus" "$art"
	# The bugs the saved inputs still show: found again, they are reported
	# as known and their new input is not saved (one input per bug is enough).
	known="$work/$t.known" seen="$work/$t.seen"
	: >"$known"
	: >"$seen"
	for f in "$crashes/$t"-*; do
		[ -f "$f" ] || continue
		rlog="$work/logs/$t.replay-$(basename "$f").log"
		if ! "$fbin/$t" -timeout=10 -rss_limit_mb=2048 "$f" </dev/null >"$rlog" 2>&1; then
			printf '%s\t%s\n' "$(signature "$rlog")" "${f#"$top"/}" >>"$known"
		fi
	done
	for s in $(corpus_seeds "$t"); do cp "$s" "$corpus/seed-$(basename "$s")"; done
	echo "$t: fuzzing for ${secs}s with $(find "$corpus" -type f | wc -l) seeds" \
		"($(grep -c . "$known") saved input(s) in ${crashes#"$top"/}/ still crash)"
	end=$(($(date +%s) + secs))
	execs=0 found=0 run=0 notes=""
	while :; do
		left=$((end - $(date +%s)))
		[ "$left" -ge 1 ] || break
		run=$((run + 1))
		log="$work/logs/$t.$run.log"
		(cd "$art" && "$fbin/$t" -max_total_time="$left" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix="$art/" "$corpus" </dev/null >"$log" 2>&1)
		rc=$?
		n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		[ -n "$n" ] || n=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
		execs=$((execs + ${n:-0}))
		again=0 new=0
		for a in "$art"/*; do
			[ -f "$a" ] || continue
			name=$(basename "$a") # crash-SHA1, leak-SHA1, timeout-SHA1, oom-SHA1
			sha=${name#*-}
			dest="$crashes/$t-$sha"
			kind=$(kind_of "$log")
			sig=$(signature "$log")
			new=1
			# The same bug again in this run (a crashing seed, or another
			# input reaching the same place): counted once, no use going on.
			if grep -qxF -- "$sig" "$seen"; then
				again=1
				rm -f "$a"
				continue
			fi
			printf '%s\n' "$sig" >>"$seen"
			found=$((found + 1))
			k=$(awk -F '\t' -v s="$sig" '$1 == s { print $2; exit }' "$known")
			if [ -n "$k" ]; then
				notes+="    $kind (known, as $k; this input not saved): $(why "$log") (log ${log#"$top"/})"$'\n'
			else
				[ -e "$dest" ] || cp "$a" "$dest"
				notes+="    $kind: ${dest#"$top"/}: $(why "$log") (log ${log#"$top"/})"$'\n'
			fi
			rm -f "$a"
		done
		[ "$rc" -eq 0 ] && break
		if [ "$new" -eq 0 ]; then
			# Stopped without an input to save: count it, show why.
			found=$((found + 1))
			notes+="    libFuzzer exited $rc without an artifact (log ${log#"$top"/}): $(tail -n 3 "$log" | tr '\n' ' ')"$'\n'
			break
		fi
		[ "$again" -eq 1 ] && break
		[ "$run" -ge "$max_restarts" ] && break
	done
	files=$(find "$corpus" -type f | wc -l)
	kb=$(du -sk "$corpus" | cut -f1)
	# libFuzzer's last status line: cov is the code edges reached, ft the
	# features (edges with hit counts and comparisons) the corpus covers.
	cov=$(grep -hoE 'cov: [0-9]+ ft: [0-9]+' "$work/logs/$t".[0-9]*.log 2>/dev/null | tail -n 1 |
		sed -E 's/cov: ([0-9]+) ft: ([0-9]+)/cov=\1 ft=\2/')
	line=$(printf '%-14s executions=%-9s crashes=%-3s %s corpus=%s files (%s KB)' \
		"$t" "$execs" "$found" "${cov:-cov=?}" "$files" "$kb")
	echo "$line"
	[ -n "$notes" ] && printf '%s' "$notes"
	{ echo "$line"; [ -n "$notes" ] && printf '%s' "$notes"; } >"$work/$t.summary"
	echo "$found" >"$work/$t.found"
}

for t in $targets; do
	if [ "$jobs_max" -eq 1 ]; then
		fuzz_target "$t"
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
	fuzz_target "$t" &
done
wait
total_crashes=0
summary=()
for t in $targets; do
	if [ ! -f "$work/$t.summary" ] || [ ! -f "$work/$t.found" ]; then
		summary+=("$t: no summary (the fuzzing shell died; see $work/logs/)")
		total_crashes=$((total_crashes + 1))
		continue
	fi
	summary+=("$(cat "$work/$t.summary")")
	total_crashes=$((total_crashes + $(cat "$work/$t.found")))
done

echo "== fuzz summary (${secs}s per target)"
printf '%s\n' "${summary[@]}"
if [ "$total_crashes" -gt 0 ]; then
	echo "fuzz: $total_crashes crash(es); inputs in ${crashes#"$top"/}/"
	exit 1
fi
echo "fuzz: no crash"
exit 0
