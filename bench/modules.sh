#!/usr/bin/env bash
# bench/modules.sh (make bench-modules; also run by make bench): one module
# at a time, the way a kernel build calls pahole for each (6.1's
# scripts/Makefile.modfinal: `pahole -J --btf_base vmlinux M.ko`, a fresh
# process chain per module), over BENCH_MODULES_N (120) of the dbg
# package's modules. Per module, in one round, interleaved and each on a
# fresh copy of the .ko:
#   pahole 1.24       -J --btf_gen_floats --btf_base VMLINUX
#   pahole master     -J --btf_features=default --btf_base VMLINUX (when built)
#   pipeline.sh       the same pahole command line (sh, then btfpipe-pahole)
#   btfpipe-pahole    the same, no shell, no cache ("cold")
#   btfpipe-pahole    with BTFPIPE_CACHE_DIR filled by an earlier pass ("warm":
#                     an unchanged module in a rebuild)
# each under bin/tools/measure (wall, CPU, peak RSS to the microsecond).
# Why per module and medians: a module's run is tens of milliseconds, so
# the ratio of one module says more than the sum over a set whose big
# modules dominate it; the report gives both, the median of the per-module
# ratios and the ratio of the sums.
#
# Where a cold run's time goes, per module (medians): the stages' own wall
# time and phases from their --stats (BTFPIPE_STATS=1, a separate run),
# the start of a process (/bin/true, and a stage's --version) and what is
# left (the driver, exec and the pipes between). Every btfpipe output is
# checked: its .BTF is the cold run's (cmp), and bpftool reads the first.
#
# Knobs: BENCH_MODULES_N (120), BENCH_MODULES_RUNS (3 rounds; each module's
# numbers are the median of its rounds), BENCH_VMLINUX, BENCH_MODDIR,
# BENCH_BIN, BENCH_PAHOLE, BENCH_PAHOLE_MASTER (else tests/out/shared's
# build of ../shared/anchors when there). Report on stdout and in
# bench/results/modules-latest.md.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_BIN:-$top/bin}
export BTFPIPE_BIN=$bin
pahole=${BENCH_PAHOLE:-/usr/bin/pahole}
master=${BENCH_PAHOLE_MASTER:-}
[ -z "$master" ] && [ -x "$top/tests/out/shared/anchors/bin/pahole" ] && master=$top/tests/out/shared/anchors/bin/pahole
n=${BENCH_MODULES_N:-120}
runs=${BENCH_MODULES_RUNS:-3}
measure=$bin/tools/measure
vmlinux=${BENCH_VMLINUX:-$(printf '%s\n' /usr/lib/debug/boot/vmlinux-*-cloud-amd64 | sort -V | tail -1)}
W=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe-bench-modules.XXXXXX") || exit 3
trap 'rm -rf "$W"' EXIT
mkdir -p "$top/bench/results"
out=$top/bench/results/modules-latest.md
failed=0
. "$top/bench/lib.sh"

if [ ! -e "$vmlinux" ]; then
	echo "SKIP modules: no vmlinux (apt-get install linux-image-cloud-amd64-dbg)" | tee "$out"
	exit 0
fi
rel=${vmlinux##*/vmlinux-}
moddir=${BENCH_MODDIR:-/usr/lib/debug/lib/modules/$rel/kernel}
[ -d "$moddir" ] || { echo "SKIP modules: no $moddir" | tee "$out"; exit 0; }
# Every ninth module in path order (bench/cache.sh's set): spread over sizes
# and subsystems, the same set on every machine with the same package.
find "$moddir" -name '*.ko' | sort | awk 'NR % 9 == 0' | head -n "$n" >"$W/mods"
nm=$(wc -l <"$W/mods")
[ "$nm" -gt 0 ] || { echo "SKIP modules: no modules" | tee "$out"; exit 0; }

tools="pahole"
[ -n "$master" ] && tools="$tools master"
tools="$tools pipeline cold warm"
# one TOOL M: a fresh copy of module M encoded by TOOL, measured; prints
# "WALL CPU RSS_KIB" and leaves the copy in $W/k/TOOL.ko.
one() {
	local t=$1 m=$2 k="$W/k/$1.ko"
	cp "$m" "$k"
	case $t in
	pahole) "$measure" "$W/m" "$pahole" -J --btf_gen_floats --btf_base "$vmlinux" "$k" ;;
	master) "$measure" "$W/m" "$master" -J --btf_features=default --btf_base "$vmlinux" "$k" ;;
	pipeline) "$measure" "$W/m" "$top/pipeline.sh" -J --btf_gen_floats --btf_base "$vmlinux" "$k" ;;
	cold) "$measure" "$W/m" "$bin/btfpipe-pahole" -J --btf_gen_floats --btf_base "$vmlinux" "$k" ;;
	warm) BTFPIPE_CACHE_DIR="$W/cache" "$measure" "$W/m" "$bin/btfpipe-pahole" -J --btf_gen_floats \
		--btf_base "$vmlinux" "$k" ;;
	esac >/dev/null 2>"$W/err" || { fail "$t on ${m##*/}: $(tail -2 "$W/err")"; return 1; }
	awk '{ printf "%s %.6f %s\n", $1, $2 + $3, $4 }' "$W/m"
}
mkdir -p "$W/k"
# The warm cache: one pass over every module first (not timed).
echo "bench: modules: filling the cache ($nm modules)" >&2
while read -r m; do
	cp "$m" "$W/k/fill.ko"
	BTFPIPE_CACHE_DIR="$W/cache" "$bin/btfpipe-pahole" -J --btf_gen_floats --btf_base "$vmlinux" "$W/k/fill.ko" ||
		fail "filling the cache: ${m##*/}"
done <"$W/mods"
# Process starts, for the breakdown.
for ((i = 0; i < 21; i++)); do
	"$measure" "$W/m" /bin/true && awk '{ print "true", $1 }' "$W/m" >>"$W/starts"
	for s in dwarf-extract dedup-merge btf-emit; do
		GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=67108864 \
			"$measure" "$W/m" "$bin/$s" --version >/dev/null && awk -v s="$s" '{ print s, $1 }' "$W/m" >>"$W/starts"
	done
done

for ((r = 1; r <= runs; r++)); do
	echo "bench: modules: round $r/$runs" >&2
	while read -r m; do
		name=${m##*/}
		for t in $tools; do
			v=$(one "$t" "$m") || continue
			echo "$name $t $v" >>"$W/samples"
		done
		# Every btfpipe run wrote the same .BTF.
		for t in pipeline warm; do
			cmp -s "$W/k/cold.ko" "$W/k/$t.ko" || fail "$name: $t's output differs from the cold run's"
		done
		if [ "$r" -eq 1 ]; then
			# The cold run's breakdown, from the stages' --stats.
			cp "$m" "$W/k/stats.ko"
			BTFPIPE_STATS=1 "$bin/btfpipe-pahole" -J --btf_gen_floats --btf_base "$vmlinux" "$W/k/stats.ko" \
				2>"$W/stats.txt" >/dev/null
			awk -v m="$name" '$2 == "wall" { sub(":", "", $1); print m, $1, "wall", $3 }
				$2 == "phase" { sub(":", "", $1); print m, $1, $3, $4 }' "$W/stats.txt" >>"$W/phases"
			if [ ! -e "$W/bpftool.done" ] && command -v bpftool >/dev/null; then
				objcopy --dump-section .BTF="$W/first.btf" "$W/k/cold.ko" "$W/k/x.ko" 2>/dev/null &&
					bpftool -B "$vmlinux" btf dump file "$W/first.btf" >/dev/null 2>&1 ||
					fail "bpftool cannot read $name's BTF over the vmlinux"
				touch "$W/bpftool.done"
			fi
		fi
	done <"$W/mods"
done

# ---- report ----
# Per module and tool: the median of its rounds (wall, CPU, RSS).
awk '{ k = $1 " " $2; w[k] = w[k] " " $3; c[k] = c[k] " " $4; r[k] = r[k] " " $5 }
	END { for (k in w) print k "|" w[k] "|" c[k] "|" r[k] }' "$W/samples" |
	while IFS='|' read -r k ws cs rs; do
		echo "$k $(printf '%s\n' $ws | median) $(printf '%s\n' $cs | median) $(printf '%s\n' $rs | median)"
	done | sort >"$W/per"
col() { awk -v t="$1" -v f="$2" '$2 == t { print $f }' "$W/per"; }
sum() { col "$1" "$2" | awk '{ s += $1 } END { printf "%.3f", s }'; }
# ratios TOOL REF FIELD: the median over modules of TOOL / REF.
ratios() {
	awk -v t="$1" -v ref="$2" -v f="$3" '$2 == ref { b[$1] = $f } $2 == t { a[$1] = $f }
		END { for (m in a) if (m in b && b[m] > 0) print a[m] / b[m] }' "$W/per" | median
}
fmt() { awk -v v="$1" 'BEGIN { if (v == "-" || v == "") print "-"; else printf "%.3f", v }'; }
# what STAGE PHASE: what the phase is, for the phases a module's run is about.
what() {
	case "$1 $2" in
	"dwarf-extract open") echo " (the ELF, its relocations)" ;;
	"dwarf-extract extract") echo " (DIEs to records)" ;;
	"dedup-merge scan") echo " (records to classes)" ;;
	"btf-emit read") echo " (the .graph and the ELF's symbols)" ;;
	"btf-emit base_read") echo " (reading and indexing the base)" ;;
	"btf-emit base") echo " (matching against the base)" ;;
	"btf-emit write") echo " (writing the ELF)" ;;
	esac
}
{
	echo "## One module at a time, as a kernel build runs pahole ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "$(nproc) CPUs, btfpipe $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?'), pahole $("$pahole" --version 2>/dev/null)${master:+, pahole master ($master)}." \
		"$nm modules of $moddir (every ninth), -J --btf_base ${vmlinux##*/} on a fresh copy each; each module's number is the median of $runs rounds."
	echo
	label() { case $1 in pahole) echo "pahole 1.24" ;; master) echo "pahole master" ;; pipeline) echo "pipeline.sh" ;;
		cold) echo "btfpipe-pahole, no cache" ;; warm) echo "btfpipe-pahole, warm cache" ;; esac; }
	echo "| tool | median wall ms | median CPU ms | median RSS MiB | sum wall s | median of wall / pahole 1.24 | median of wall / master | sum wall / sum pahole 1.24 |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for t in $tools; do
		mw=$(col "$t" 3 | median) mc=$(col "$t" 4 | median) mr=$(col "$t" 5 | median)
		printf '| %s | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n' "$(label "$t")" "$(awk -v v="$mw" 'BEGIN { print v * 1000 }')" \
			"$(awk -v v="$mc" 'BEGIN { print v * 1000 }')" "$(awk -v v="$mr" 'BEGIN { print v / 1024 }')" "$(sum "$t" 3)" \
			"$(fmt "$(ratios "$t" pahole 3)")" "$([ -n "$master" ] && fmt "$(ratios "$t" master 3)" || echo -)" \
			"$(awk -v a="$(sum "$t" 3)" -v b="$(sum pahole 3)" 'BEGIN { printf "%.3f", a / b }')"
	done
	echo
	echo "Where a cold btfpipe-pahole run's time goes (medians over the modules, ms):"
	echo
	st_true=$(awk '$1 == "true" { print $2 }' "$W/starts" | median)
	echo "| part | ms |"
	echo "|---|---:|"
	echo "| the whole run (btfpipe-pahole, no cache) | $(fmt "$(col cold 3 | median | awk '{ print $1 * 1000 }')") |"
	echo "| a process start on this machine (/bin/true) | $(fmt "$(awk -v v="$st_true" 'BEGIN { print v * 1000 }')") |"
	for s in dwarf-extract dedup-merge btf-emit; do
		echo "| $s: start (--version) | $(fmt "$(awk -v s="$s" '$1 == s { print $2 * 1000 }' "$W/starts" | median)") |"
		echo "| $s: its own wall time (--stats) | $(fmt "$(awk -v s="$s" '$2 == s && $3 == "wall" { print $4 * 1000 }' "$W/phases" | median)") |"
		for p in $(awk -v s="$s" '$2 == s && $3 != "wall" { print $3 }' "$W/phases" | awk '!seen[$1]++'); do
			echo "| $s: phase $p$(what "$s" "$p") | $(fmt "$(awk -v s="$s" -v p="$p" '$2 == s && $3 == p { print $4 * 1000 }' "$W/phases" | median)") |"
		done
	done
	echo "| sh (pipeline.sh less btfpipe-pahole, median of per-module differences) | $(fmt "$(awk '$2 == "pipeline" { a[$1] = $3 } $2 == "cold" { b[$1] = $3 }
		END { for (m in a) if (m in b) print (a[m] - b[m]) * 1000 }' "$W/per" | median)") |"
	echo
	[ -e "$W/notes" ] && { echo; sed 's/^/    /' "$W/notes"; }
} | tee "$out"
[ $failed -eq 0 ]
