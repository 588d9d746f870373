#!/usr/bin/env bash
# bench/lto.sh (make bench-lto): btfpipe against pahole on LTO inputs, in one
# run, and a markdown table: per input its CUs, references into other CUs,
# BTF types (ours, pahole's, ours after libbpf's btf__dedup()), and per
# thread count the wall time, CPU time and peak RSS of each tool (medians of
# BENCH_RUNS runs, btfpipe and pahole back to back in each round).
#
# Inputs: the program of tests/gen/lto-prog.py at BENCH_LTO_FILES files and
# BENCH_LTO_STRUCTS structs (default 400 and 400: over 2,000 CUs under thin
# LTO), built with clang-19 thin LTO, clang-19 full LTO and gcc -flto
# (tests/gen/build-lto.sh, kept in tests/out/shared), and any ELF files in
# BENCH_LTO_EXTRA (say the clang thin-LTO kernel's vmlinux that make
# check-kbuild builds). btfpipe is ./pipeline.sh (its three stages);
# pahole is Debian's 1.24 as kernels ran it (-J -jN --btf_gen_floats), and
# pahole master when BENCH_PAHOLE_MASTER names one (-J -jN
# --btf_features=default; tests/kbuild builds it from ../shared/anchors).
#
# Knobs: BENCH_RUNS (3), BENCH_JOBS ("1 2"), BENCH_LTO_FLAVOURS ("thin full
# gcc-lto"), BENCH_BIN (bin/). Report on stdout and in bench/results/lto.md.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_BIN:-$top/bin}
export BTFPIPE_BIN=$bin
runs=${BENCH_RUNS:-3}
jobs=${BENCH_JOBS:-1 2}
files=${BENCH_LTO_FILES:-400}
structs=${BENCH_LTO_STRUCTS:-400}
flavours=${BENCH_LTO_FLAVOURS:-thin full gcc-lto}
master=${BENCH_PAHOLE_MASTER:-}
measure=$bin/tools/measure
die() { echo "bench-lto: error: $*" >&2; exit 2; }
[ -x "$measure" ] || die "$measure missing (make builds it)"
command -v pahole >/dev/null || die "pahole missing (make deps installs dwarves)"
[ -z "$master" ] || [ -x "$master" ] || die "BENCH_PAHOLE_MASTER=$master is not an executable"

W=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe-bench-lto.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

G="$top/tests/out/shared/lto-$files-$structs-1"
# shellcheck disable=SC2086 # flavours is a word list
bash "$top/tests/gen/build-lto.sh" "$G" "$files" "$structs" 1 $flavours >&2 || die "building the program failed"
inputs=()
for fl in $flavours; do inputs+=("$G/$fl"); done
for e in ${BENCH_LTO_EXTRA:-}; do [ -f "$e" ] && inputs+=("$e") || echo "bench-lto: $e: no such file, left out" >&2; done

# run NAME CMD...: measure CMD; prints "WALL CPU RSS_MIB", returns its exit code.
run() {
	local name=$1 rc u s wall rss; shift
	"$measure" "$W/$name.time" "$@" >"$W/$name.out" 2>"$W/$name.err"
	rc=$?
	read -r wall u s rss < <(tail -1 "$W/$name.time")
	awk -v w="$wall" -v u="$u" -v s="$s" -v r="$rss" 'BEGIN { printf "%.3f %.3f %.1f\n", w, u + s, r / 1024 }'
	return $rc
}

# median: the middle line of stdin's numbers.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

types() { "$bin/tools/btfcheck" "$1" 2>/dev/null | sed -n 's/^types //p'; }

tools="btfpipe pahole"
[ -n "$master" ] && tools="$tools master"
{
	echo "| input | CUs | refs into other CUs | types ours | pahole 1.24 | ours after libbpf dedup |$(
		for j in $jobs; do for t in $tools; do printf ' %s -j%s wall s / CPU s / MiB |' "$t" "$j"; done; done)"
	printf '|---|---:|---:|---:|---:|---:|'
	for j in $jobs; do for t in $tools; do printf -- '---:|'; done; done
	echo
} >"$W/table"
failed=0
for e in "${inputs[@]}"; do
	label=$(basename "$(dirname "$e")")/$(basename "$e")
	echo "bench-lto: $label" >&2
	k="$W/keep"
	rm -rf "$k" && mkdir -p "$k"
	if ! "$top/pipeline.sh" --features default --keep "$k" -o "$W/ours.btf" "$e" 2>"$W/first.err"; then
		echo "bench-lto: FAIL: pipeline.sh on $e: $(tail -2 "$W/first.err")" >&2
		failed=1
		continue
	fi
	name=$(basename "$e")
	"$bin/dwarf-extract" --dump "$k/$name.cus" >"$W/dump"
	ncu=$(grep -c '^cu ' "$W/dump")
	nx=$(grep -o '@0x' "$W/dump" | wc -l)
	ours=$(types "$W/ours.btf")
	after=$("$bin/tools/btfcheck" --dedup "$W/ours.btf" 2>/dev/null | sed -n 's/^dedup [0-9]* -> //p')
	pahole -J --btf_gen_floats --btf_encode_detached="$W/pahole.btf" "$e" >/dev/null 2>&1
	theirs=$(types "$W/pahole.btf")
	row="| $label | $ncu | $nx | $ours | ${theirs:-failed} | ${after:-?} |"
	for j in $jobs; do
		: >"$W/s.btfpipe"; : >"$W/s.pahole"; : >"$W/s.master"
		for ((r = 0; r < runs; r++)); do
			run "b$j$r" "$top/pipeline.sh" --features default -j "$j" -o "$W/b.btf" "$e" >>"$W/s.btfpipe" ||
				{ echo "bench-lto: FAIL: pipeline.sh -j$j on $e" >&2; failed=1; }
			cmp -s "$W/b.btf" "$W/ours.btf" ||
				{ echo "bench-lto: FAIL: pipeline.sh -j$j on $e wrote other bytes" >&2; failed=1; }
			run "p$j$r" pahole -J -j"$j" --btf_gen_floats --btf_encode_detached="$W/p.btf" "$e" >>"$W/s.pahole"
			[ -n "$master" ] &&
				run "m$j$r" "$master" -J -j"$j" --btf_features=default --btf_encode_detached="$W/m.btf" "$e" >>"$W/s.master"
		done
		for t in $tools; do
			row+=" $(for c in 1 2 3; do awk -v c=$c '{ print $c }' "$W/s.$t" | median; done | paste -sd/ | sed 's|/| / |g') |"
		done
	done
	echo "$row" >>"$W/table"
done
mkdir -p "$top/bench/results"
{
	echo "## LTO inputs, $(date -u +%Y-%m-%d), $(nproc) CPUs, medians of $runs runs"
	echo
	cat "$W/table"
} | tee "$top/bench/results/lto.md"
exit $failed
