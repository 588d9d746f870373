#!/usr/bin/env bash
# bench/run.sh (make bench): btfpipe against Debian's pahole -J on the same
# inputs, in one invocation, and a markdown table of the medians and ratios.
#
# Inputs: Debian's cloud vmlinux, a few of its modules (split BTF over the
# vmlinux's own .BTF) and a generated 120-unit C program (tests/gen). For each
# input, run and thread count, btfpipe and pahole run back to back, so the
# two tools see the same machine state: this VM's speed drifts by tens of
# percent over minutes, and a tool measured ten minutes after the other would
# measure the drift. Each starts with its input in the page cache (warm()).
# Every number reported is the median of BENCH_RUNS runs on the vmlinux and
# of BENCH_SMALL_RUNS on the modules and the fixture: a run of those takes
# tens of milliseconds, where one process start more or less on this VM
# moves a ratio by 0.05, and more runs cost seconds.
#
# Each process is measured by bench/measure.c: what /usr/bin/time reports
# (wall, user+sys CPU, peak RSS), to the microsecond rather than the
# hundredth of a second that a small module's stages fall under.
# btfpipe on the vmlinux and the fixture is its three stages run one after
# the other (what a Makefile calling the stages does): wall and CPU are the
# sums, RSS the largest. On modules it is ./pipeline.sh as a whole (what a
# kernel build runs per module), and the stages once more on their own only
# for the breakdown. Every stage run has --stats, whose phase times (read,
# extract, ..., write) make the breakdown lines.
#
# Checks: every btfpipe BTF of an input is byte-identical to its first one,
# across runs, thread counts and pipeline.sh vs the stages (cmp), and the
# first btfpipe and pahole outputs parse with bpftool (the other btfpipe
# outputs are the same bytes). A failure prints FAIL and the exit code is 1.
#
# Knobs (environment): BENCH_RUNS (3), BENCH_SMALL_RUNS (9, at least
# BENCH_RUNS), BENCH_JOBS ("1 2", and powers of two
# up to nproc, and nproc, on bigger machines), BENCH_INPUTS ("vmlinux modules
# fixture"), BENCH_MODULES (paths under the modules' kernel/ directory),
# BENCH_VMLINUX, BENCH_MODDIR, BENCH_FIXTURE_CUS (120), BENCH_BIN (bin/),
# BENCH_PAHOLE (/usr/bin/pahole), BENCH_PAHOLE_FLAGS (--btf_gen_floats: what
# kernels pass 1.24; make bench-7x gives pahole 1.32 7.x's Makefile.btf
# list; BENCH_MERGE_FLAGS and BENCH_EMIT_FLAGS give the stages the same
# --lang-exclude and --features), BENCH_PAHOLE_MASTER (pahole's master
# branch: else built once from ../shared/anchors into tests/out/shared, the
# tests' copy; without either, no third column). Report on stdout and in
# bench/results/latest.md.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_BIN:-$top/bin}
export BTFPIPE_BIN=$bin # pipeline.sh runs the stages under test, not others
pahole=${BENCH_PAHOLE:-/usr/bin/pahole}
runs=${BENCH_RUNS:-3}
small_runs=${BENCH_SMALL_RUNS:-9}
inputs=${BENCH_INPUTS:-vmlinux modules fixture}
modules=${BENCH_MODULES:-net/sched/sch_fq.ko drivers/net/virtio_net.ko fs/ext4/ext4.ko fs/xfs/xfs.ko arch/x86/kvm/kvm.ko}
fixture_cus=${BENCH_FIXTURE_CUS:-120}
if [ -n "${BENCH_JOBS:-}" ]; then jobs=$BENCH_JOBS; else
	jobs="1 2" n=$(nproc)
	for ((j = 4; j < n; j *= 2)); do jobs="$jobs $j"; done
	[ "$n" -gt 2 ] && jobs="$jobs $n"
fi

die() { echo "bench: error: $*" >&2; exit 2; }
isnum() { case $1 in '' | *[!0-9]* | 0*) return 1 ;; esac; }
isnum "$runs" || die "BENCH_RUNS must be a positive number, not '$runs'"
isnum "$small_runs" || die "BENCH_SMALL_RUNS must be a positive number, not '$small_runs'"
[ "$small_runs" -ge "$runs" ] || small_runs=$runs
for j in $jobs; do isnum "$j" || die "BENCH_JOBS must be positive numbers, not '$j'"; done
for i in $inputs; do
	case $i in vmlinux | modules | fixture) ;; *) die "BENCH_INPUTS: unknown input '$i' (vmlinux modules fixture)" ;; esac
done
for t in "$bin/dwarf-extract" "$bin/dedup-merge" "$bin/btf-emit"; do
	[ -x "$t" ] || die "$t not built (make)"
done
measure=$bin/tools/measure
[ -x "$measure" ] || die "$measure missing (bench/measure.c; make builds it)"
command -v "$pahole" >/dev/null || die "$pahole missing (make deps installs dwarves)"
# pahole master: the newest pahole, a third column (-J -jN --btf_features=default).
master=${BENCH_PAHOLE_MASTER:-}
anchors=${BTFPIPE_ANCHORS:-$(cd "$top/.." && pwd)/shared/anchors}
master_note=""
if [ -z "$master" ] && [ -x "$anchors/build.sh" ]; then
	dest=$top/tests/out/shared/anchors
	mkdir -p "$dest"
	(
		flock 9
		[ -x "$dest/bin/pahole" ] || { echo "bench: building pahole master from $anchors (once)" >&2
			"$anchors/build.sh" "$dest" >"$dest/build.log" 2>&1; }
	) 9>"$dest/.lock"
	[ -x "$dest/bin/pahole" ] && master=$dest/bin/pahole || master_note="SKIP pahole master: its build failed ($dest/build.log)"
elif [ -z "$master" ]; then
	master_note="SKIP pahole master: no $anchors/build.sh (its source); compared with Debian's pahole alone"
fi
want() { case " $inputs " in *" $1 "*) return 0 ;; esac; return 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe-bench.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM # through the EXIT trap, so the work dir goes too
# Measurements, one line each, read back by report():
#   samples: INPUT J RUN KEY WALL CPU RSS_KIB  (KEY btfpipe pahole extract merge emit)
#   phases:  INPUT J RUN STAGE PHASE SECONDS   (from the stages' --stats)
#   sizes:   INPUT KEY BYTES                   (KEY ckpt btf pahole)
: >"$W/samples"; : >"$W/phases"; : >"$W/sizes"; : >"$W/notes"
failed=0

. "$top/bench/lib.sh"


# warm FILE...: the inputs read into the page cache before a tool's run.
# This VM's host takes clean page cache back within seconds (fincore: 175 of
# the vmlinux's 563 MB resident, 149 twenty seconds later), so without it
# the tool run first in a round (btfpipe) read more of the vmlinux from disk
# than the one after it: extract's first phase, which then read every .debug_*
# byte, took 0.07-0.095 s against 0.033 when cached. Both tools now start
# from a cached input; a stage's own checkpoint files are still its cost.
warm() {
	cat "$@" >/dev/null 2>&1 || true
}

# same_btf INPUT FILE WHAT: FILE must be the bytes of INPUT's first btfpipe BTF.
same_btf() {
	if [ ! -e "$W/$1.ref.btf" ]; then cp "$2" "$W/$1.ref.btf"; return; fi
	cmp -s "$W/$1.ref.btf" "$2" || fail "$1: $3: BTF differs from the first btfpipe run's"
}

# stages INPUT J RUN ELF [BASE]: the three stages, each measured, with
# --stats. Records them as extract/merge/emit, and sets S_WALL S_CPU S_RSS to
# their sum, sum and largest. Returns 1 (after FAIL) if a stage failed.
stages() {
	local in=$1 j=$2 r=$3 elf=$4 base=${5:-} d="$W/$1" st
	local -a eflags=(--elf "$elf")
	[ -n "$base" ] && eflags+=(--btf-base "$base")
	rm -f "$d.cus" "$d.graph" "$d.btf"
	S_WALL=0 S_CPU=0 S_RSS=0
	for st in extract merge emit; do
		case $st in
		extract) measure "$in.$st" "$bin/dwarf-extract" -j"$j" -q --stats -o "$d.cus" "$elf" ;;
		# shellcheck disable=SC2086 # BENCH_MERGE_FLAGS, BENCH_EMIT_FLAGS: words
		merge) measure "$in.$st" "$bin/dedup-merge" -j"$j" -q --stats ${BENCH_MERGE_FLAGS:-} -o "$d.graph" "$d.cus" ;;
		# shellcheck disable=SC2086
		emit) measure "$in.$st" "$bin/btf-emit" -j"$j" -q --stats ${BENCH_EMIT_FLAGS:-} "${eflags[@]}" -o "$d.btf" "$d.graph" ;;
		esac || { fail "$in -j$j: $st exited $?: $(tail -3 "$W/$in.$st.err")"; return 1; }
		echo "$in $j $r $st $M_WALL $M_CPU $M_RSS" >>"$W/samples"
		# "dwarf-extract: phase write      0.012000 s cpu 0.011000 s serial 0.012000 s"
		#   -> "... dwarf-extract write 0.012000 0.011000 0.012000" (wall, CPU of all
		#   threads, serial: what no thread count shortens, pool_clock())
		awk -v p="$in $j $r" '$2 == "phase" { sub(":", "", $1); print p, $1, $3, $4, $7, ($10 == "" ? "-" : $10) }' \
			"$W/$in.$st.err" >>"$W/phases"
		read -r S_WALL S_CPU S_RSS < <(awk -v a="$S_WALL" -v b="$S_CPU" -v c="$S_RSS" \
			-v w="$M_WALL" -v u="$M_CPU" -v m="$M_RSS" \
			'BEGIN { printf "%.6f %.6f %d\n", a + w, b + u, (m > c ? m : c) }')
	done
	echo "$in ckpt $(($(stat -c %s "$d.cus") + $(stat -c %s "$d.graph")))" >>"$W/sizes"
	same_btf "$in" "$d.btf" "stages -j$j run $r"
}

# bench_input INPUT ELF [BASE]: rounds over the thread counts (BENCH_RUNS
# on the vmlinux, BENCH_SMALL_RUNS on the rest), btfpipe then pahole each
# time. With BASE (a module) the BTF is split over BASE.
bench_input() {
	local in=$1 elf=$2 base=${3:-} r j bw n=$small_runs
	local -a pflags=() pj=()
	[ "$in" = vmlinux ] && n=$runs
	[ -n "$base" ] && pflags=(--btf_base "$base")
	for ((r = 1; r <= n; r++)); do
		for j in $jobs; do
			warm "$elf" ${base:+"$base"}
			if [ -n "$base" ]; then
				measure "$in.pipe" "$top/pipeline.sh" --features default -j"$j" -q --btf-base "$base" -o "$W/$in.p.btf" "$elf" ||
					{ fail "$in -j$j: pipeline.sh exited $?: $(tail -3 "$W/$in.pipe.err")"; continue; }
				echo "$in $j $r btfpipe $M_WALL $M_CPU $M_RSS" >>"$W/samples"
				same_btf "$in" "$W/$in.p.btf" "pipeline.sh -j$j run $r"
				bw=$M_WALL
			else
				stages "$in" "$j" "$r" "$elf" || continue
				echo "$in $j $r btfpipe $S_WALL $S_CPU $S_RSS" >>"$W/samples"
				bw=$S_WALL
			fi
			# pahole 1.24 takes -jN glued; -j1 is its default, so no flag.
			# --btf_gen_floats: what the kernel's scripts/pahole-flags.sh passes
			# to pahole >= 1.21, and btfpipe encodes FLOAT by default.
			pj=(); [ "$j" -gt 1 ] && pj=(-j"$j")
			rm -f "$W/$in.ph.btf"
			warm "$elf" ${base:+"$base"}
			# shellcheck disable=SC2086 # BENCH_PAHOLE_FLAGS: words
			measure "$in.pahole" "$pahole" -J ${BENCH_PAHOLE_FLAGS:---btf_gen_floats} "${pj[@]}" "${pflags[@]}" \
				--btf_encode_detached="$W/$in.ph.btf" "$elf" ||
				{ fail "$in -j$j: pahole exited $?: $(tail -3 "$W/$in.pahole.err")"; continue; }
			echo "$in $j $r pahole $M_WALL $M_CPU $M_RSS" >>"$W/samples"
			[ -e "$W/$in.pahole.btf" ] || cp "$W/$in.ph.btf" "$W/$in.pahole.btf"
			echo "bench: $in -j$j run $r/$n: btfpipe ${bw} s, pahole ${M_WALL} s" >&2
			if [ -n "$master" ]; then
				rm -f "$W/$in.pm.btf"
				warm "$elf" ${base:+"$base"}
				if measure "$in.master" "$master" -J "${pj[@]}" --btf_features=default "${pflags[@]}" \
					--btf_encode_detached="$W/$in.pm.btf" "$elf"; then
					echo "$in $j $r master $M_WALL $M_CPU $M_RSS" >>"$W/samples"
				else
					fail "$in -j$j: pahole master exited $?: $(tail -3 "$W/$in.master.err")"
				fi
			fi
			# Modules: the three stages chained in one measured shell, the
			# "(stages)" row (what a Makefile calling them per module pays;
			# one measurement, not three rounded ones summed), then once
			# more each on its own for the breakdown (not in the ratios).
			if [ -n "$base" ]; then
				rm -f "$W/$in.s.btf"
				# shellcheck disable=SC2016 # expanded by the inner shell
				if measure "$in.chain" sh -c '"$1/dwarf-extract" -j"$2" -q -o "$3.s.cus" "$4" &&
					"$1/dedup-merge" -j"$2" -q -o "$3.s.graph" "$3.s.cus" &&
					"$1/btf-emit" -j"$2" -q --btf-base "$5" --elf "$4" -o "$3.s.btf" "$3.s.graph"' \
					sh "$bin" "$j" "$W/$in" "$elf" "$base"; then
					echo "$in $j $r stages $M_WALL $M_CPU $M_RSS" >>"$W/samples"
					same_btf "$in" "$W/$in.s.btf" "the stages chained, -j$j run $r"
				else
					fail "$in -j$j: the stages chained exited $?: $(tail -3 "$W/$in.chain.err")"
				fi
				stages "$in" "$j" "$r" "$elf" "$base"
			fi
		done
	done
	[ -e "$W/$in.ref.btf" ] || return
	echo "$in btf $(stat -c %s "$W/$in.ref.btf")" >>"$W/sizes"
	[ -e "$W/$in.pahole.btf" ] && echo "$in pahole $(stat -c %s "$W/$in.pahole.btf")" >>"$W/sizes"
	if ! command -v bpftool >/dev/null; then note "SKIP $in: bpftool parse check (bpftool not installed)"; return; fi
	local -a bflags=()
	[ -n "$base" ] && bflags=(-B "$base")
	local f
	for f in "$W/$in.ref.btf" "$W/$in.pahole.btf"; do
		[ -e "$f" ] || continue
		bpftool "${bflags[@]}" btf dump file "$f" format raw >/dev/null 2>"$W/$in.bpftool.err" ||
			fail "$in: bpftool cannot parse $(basename "$f"): $(tail -1 "$W/$in.bpftool.err")"
	done
}

# --- inputs ---------------------------------------------------------------------
vmlinux=${BENCH_VMLINUX:-$(printf '%s\n' /usr/lib/debug/boot/vmlinux-*-cloud-amd64 | sort -V | tail -1)}
[ -e "$vmlinux" ] || [ -n "${BENCH_VMLINUX:-}" ] || vmlinux="" # the glob matched nothing
[ -n "$vmlinux" ] && [ ! -r "$vmlinux" ] && die "BENCH_VMLINUX $vmlinux: not readable"
skip_vm="SKIP vmlinux: no /usr/lib/debug/boot/vmlinux-*-cloud-amd64 (apt-get install linux-image-cloud-amd64-dbg, or BENCH_VMLINUX=PATH)"
order=""
[ -n "$master_note" ] && note "$master_note"
if want vmlinux; then
	if [ -n "$vmlinux" ]; then bench_input vmlinux "$vmlinux"; order="vmlinux"; else note "$skip_vm"; fi
fi
if want modules; then
	# Base BTF: the vmlinux's own .BTF section (what pahole -J wrote in
	# Debian's build), extracted once, so both tools split over the same base.
	if [ -z "$vmlinux" ]; then note "${skip_vm/vmlinux:/modules (they need its BTF as base):}"
	elif ! mkdir -p "$W/base" || ! objcopy -O binary --only-section=.BTF "$vmlinux" "$W/base/vmlinux.btf" 2>"$W/objcopy.err" || [ ! -s "$W/base/vmlinux.btf" ]; then
		note "SKIP modules: no .BTF section in $vmlinux to use as base"
	else
		rel=${vmlinux##*/vmlinux-}
		moddir=${BENCH_MODDIR:-/usr/lib/debug/lib/modules/$rel/kernel}
		for m in $modules; do
			name=${m##*/}; name=${name%.ko}
			if [ -r "$moddir/$m" ]; then bench_input "$name" "$moddir/$m" "$W/base/vmlinux.btf"; order="$order $name"
			else note "SKIP $name: no $moddir/$m (BENCH_MODDIR, BENCH_MODULES)"; fi
		done
	fi
fi
if want fixture; then
	# The determinism test's generated program: many CUs of uneven size that
	# share one big header, so the merge has real cross-CU dedup to do.
	if ! command -v gcc >/dev/null; then note "SKIP fixture: gcc not installed"
	elif ! "$top/tests/gen/many-cus.sh" "$W/gen" "$fixture_cus" gcc >"$W/gen.log" 2>&1; then
		fail "fixture: tests/gen/many-cus.sh $fixture_cus gcc: $(tail -3 "$W/gen.log")"
	else
		bench_input fixture "$W/gen/many-gcc"; order="$order fixture"
	fi
fi

# --- report -------------------------------------------------------------------
# median: the median of the numbers on stdin, one a line ("-" if none).
# med INPUT J KEY FIELD: median of a samples column (5 wall, 6 cpu, 7 rss KiB).
med() { awk -v i="$1" -v j="$2" -v k="$3" -v f="$4" '$1 == i && $2 == j && $4 == k { print $f }' "$W/samples" | median; }
# fmt KIND V: "s" seconds (two decimals, three below 1 s: a small module's
# stages take milliseconds), "mib" KiB to MiB, "size" bytes to KiB/MiB.
fmt() {
	awk -v k="$1" -v v="$2" 'BEGIN {
		if (v == "-") print "-"
		else if (k == "s") printf (v < 1 ? "%.3f\n" : "%.2f\n"), v
		else if (k == "mib") printf "%.1f\n", v / 1024
		else if (v >= 1048576) printf "%.1f MiB\n", v / 1048576
		else printf "%.1f KiB\n", v / 1024 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
size() { awk -v i="$1" -v k="$2" '$1 == i && $2 == k { print $3 }' "$W/sizes" | median; }

# row LABEL INPUT J KEY [REF]: one line of the summary table, KEY's medians
# (btfpipe, or stages) against REF's (pahole, or master).
row() {
	local bw pw bc pc br pr ref=${5:-pahole}
	bw=$(med "$2" "$3" "$4" 5) pw=$(med "$2" "$3" "$ref" 5)
	bc=$(med "$2" "$3" "$4" 6) pc=$(med "$2" "$3" "$ref" 6)
	br=$(med "$2" "$3" "$4" 7) pr=$(med "$2" "$3" "$ref" 7)
	echo "| $1 | $3 | $(fmt s "$bw") | $(fmt s "$pw") | $(ratio "$bw" "$pw") |" \
		"$(fmt s "$bc") | $(fmt s "$pc") | $(ratio "$bc" "$pc") |" \
		"$(fmt mib "$br") | $(fmt mib "$pr") | $(ratio "$br" "$pr") |"
}

report() {
	local in j st line
	echo "## btfpipe vs pahole -J ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "$(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), btfpipe" \
		"$(git -C "$top" describe --always --dirty 2>/dev/null || echo '?'), pahole $("$pahole" --version)," \
		"vmlinux ${vmlinux:-none}. Medians of $runs interleaved runs on the vmlinux, $small_runs elsewhere; ratio = btfpipe / pahole" \
		"(below 1: btfpipe is better). btfpipe on modules is pipeline.sh (\"(stages)\": the three" \
		"stages chained in one sh -c, as a Makefile calling them runs), elsewhere the three stages summed."
	echo
	echo "| input | -j | btfpipe wall s | pahole wall s | wall ratio | btfpipe CPU s | pahole CPU s | CPU ratio | btfpipe RSS MiB | pahole RSS MiB | RSS ratio |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for in in $order; do
		for j in $jobs; do row "$in" "$in" "$j" btfpipe; done
		# Modules: the three stages chained, measured right after pahole.
		for j in $jobs; do
			[ "$(med "$in" "$j" stages 5)" = "-" ] || row "$in (stages)" "$in" "$j" stages
		done
	done
	if [ -n "$master" ]; then
		echo
		echo "Against pahole master ($master, \`-J -jN --btf_features=default\`), in the same rounds:"
		echo
		echo "| input | -j | btfpipe wall s | master wall s | wall ratio | btfpipe CPU s | master CPU s | CPU ratio | btfpipe RSS MiB | master RSS MiB | RSS ratio |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for in in $order; do
			for j in $jobs; do row "$in" "$in" "$j" btfpipe master; done
		done
	fi
	echo
	echo "Per-stage breakdown (medians; wall s / CPU s / peak RSS MiB; write = the stages' write phases):"
	echo
	for in in $order; do
		echo "- **$in**: BTF $(fmt size "$(size "$in" btf)") (pahole's $(fmt size "$(size "$in" pahole)"))," \
			"checkpoints .cus + .graph $(fmt size "$(size "$in" ckpt)")"
		for j in $jobs; do
			line="  - -j$j:"
			for st in extract merge emit; do
				line="$line $st $(fmt s "$(med "$in" "$j" $st 5)") / $(fmt s "$(med "$in" "$j" $st 6)") / $(fmt mib "$(med "$in" "$j" $st 7)"),"
			done
			# Phase medians in the order the stages print them, grouped by
			# stage; the write phases are also summed up front.
			line="$line $(awk -v i="$in" -v j="$j" '$1 == i && $2 == j {
					k = $4 " " $5; if (!(k in n)) { ord[++nk] = k } n[k]++; v[k, n[k]] = $6; u[k, n[k]] = $7 }
				function median(arr, k, c,   a, b, t, s) {
					for (a = 1; a <= c; a++) s[a] = arr[k, a]   # insertion sort: mawk has no asort
					for (a = 2; a <= c; a++) for (b = a; b > 1 && s[b - 1] > s[b]; b--) { t = s[b]; s[b] = s[b - 1]; s[b - 1] = t }
					return (c % 2) ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2 }
				END { for (x = 1; x <= nk; x++) { k = ord[x]; c = n[k]
						m = median(v, k, c); mc = median(u, k, c)
						split(k, kk, " "); if (kk[2] == "write") w += m
						ph = ph sprintf("%s%s %.3f/%.3f", (kk[1] == last ? ", " : (x > 1 ? "; " : "") kk[1] ": "), kk[2], m, mc)
						last = kk[1]
						# Idle CPU: what J threads could have done in the
						# wall time of the phase and did not (a serial phase
						# at -j2 leaves about its wall time idle).
						id[x] = j * m - mc; if (id[x] < 0) id[x] = 0; idle += id[x]; tw += m }
					printf "write %.3f s\n    - phases (wall/CPU s): %s", w, ph
					if (j > 1 && tw > 0) {
						for (a = 1; a <= nk; a++) o[a] = a
						for (a = 2; a <= nk; a++) for (b = a; b > 1 && id[o[b - 1]] < id[o[b]]; b--) { t = o[b]; o[b] = o[b - 1]; o[b - 1] = t }
						top = ""
						for (a = 1; a <= nk && a <= 4; a++) { split(ord[o[a]], kk, " "); top = top sprintf("%s%s %s %.3f", a > 1 ? ", " : "", kk[1], kk[2], id[o[a]]) }
						printf "\n    - idle CPU in the phases: %.3f s of %d x %.3f s (%.0f%%); most: %s", idle, j, tw, 100 * idle / (j * tw), top }
				}' "$W/phases")"
			echo "$line"
		done
	done
	amdahl
	if [ -s "$W/notes" ]; then echo; sed 's/^/    /' "$W/notes"; fi
}

# amdahl: beyond two cores, on paper. Each stage's serial time is measured,
# not inferred: every --stats phase reports the wall time it spent outside
# the thread pool, in its in-order part, or in the longest item of a pool
# whose items come from the input (common/pool.h, pool_clock()), and
# what the stage's process spent outside its phases (start, exit) is serial
# too. At -j1, s = serial / wall; the speedup at N threads is then
# 1 / (s + (1 - s) / N) (Amdahl), and the phase with the most serial time
# bounds the stage. For comparison, s as two cores suggest it (T2 = T1 (s +
# (1 - s) / 2), so s = 2 T2 / T1 - 1): that one also counts what a second
# thread costs (memory bandwidth, the pool's own work) and varies from run
# to run by more than the serial parts take.
amdahl() {
	case " $order " in *" vmlinux "*) ;; *) return ;; esac
	case " $jobs " in *" 1 "*) ;; *) return ;; esac
	case " $jobs " in *" 2 "*) ;; *) return ;; esac
	echo
	echo "Amdahl on the vmlinux (s: the serial fraction at -j1, measured by --stats; bound: the phase with the most serial time; s from -j2: 2 T2 / T1 - 1):"
	echo
	echo "| stage | wall -j1 s | wall -j2 s | speedup at 2 | serial s at -j1 | s | at 8 | at 16 | at 64 | bound: phase (serial s) | s from -j2 |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
	local st t1 t2 res tool
	for st in extract merge emit btfpipe; do
		t1=$(med vmlinux 1 "$st" 5) t2=$(med vmlinux 2 "$st" 5)
		[ "$t1" = "-" ] || [ "$t2" = "-" ] && continue
		tool=$(case $st in extract) echo dwarf-extract ;; merge) echo dedup-merge ;; emit) echo btf-emit ;; esac)
		# Per -j1 run: the serial phases' sum and the phases' wall sum;
		# their medians, and each phase's median serial time.
		res=$(awk -v st="$tool" '$1 == "vmlinux" && $2 == 1 && (st == "" || $4 == st) && $8 != "-" {
				k = $4 " " $5; n[k]++; v[k, n[k]] = $8; keys[k] = 1
				ser[$3] += $8; wal[$3] += $6; runs[$3] = 1 }
			function med(arr, k, c,   a, b, t, x) { if (!c) return -1
				for (a = 1; a <= c; a++) x[a] = arr[k, a]
				for (a = 2; a <= c; a++) for (b = a; b > 1 && x[b - 1] > x[b]; b--) { t = x[b]; x[b] = x[b - 1]; x[b - 1] = t }
				return (c % 2) ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2 }
			END { best = -1
				for (k in keys) { m = med(v, k, n[k]); if (m > best) { best = m; bk = k } }
				c = 0; for (r in runs) { c++; S[0, c] = ser[r]; P[0, c] = wal[r] }
				if (best < 0) { print "- - -"; exit }
				printf "%.6f %.6f %s (%.3f)\n", med(S, 0, c), med(P, 0, c), bk, best }' "$W/phases")
		awk -v st="$st" -v a="$t1" -v b="$t2" -v res="$res" 'BEGIN {
			split(res, f, " "); ser = f[1]; ph = f[2]; bd = substr(res, length(f[1]) + length(f[2]) + 3)
			s2 = 2 * b / a - 1; if (s2 < 0) s2 = 0; if (s2 > 1) s2 = 1
			if (ser == "-") { printf "| %s | %.3f | %.3f | %.2f | - | - | - | - | - | - | %.2f |\n", st == "btfpipe" ? "all three" : st, a, b, a / b, s2; exit }
			# Outside the phases (process start and exit) is serial too.
			out = a - ph; if (out < 0) out = 0; ser += out
			s = ser / a; if (s > 1) s = 1
			printf "| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f | %.2f | %.2f | %s | %.2f |\n", st == "btfpipe" ? "all three" : st,
				a, b, a / b, ser, s, 1 / (s + (1 - s) / 8), 1 / (s + (1 - s) / 16), 1 / (s + (1 - s) / 64), bd, s2 }'
	done
}

mkdir -p "$top/bench/results"
report | tee "$top/bench/results/latest.md"
if [ "$failed" -ne 0 ]; then echo "FAIL: see the FAIL lines above" >&2; exit 1; fi
