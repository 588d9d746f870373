#!/usr/bin/env bash
# bench/scale.sh (make bench-scale): how the cost of btfpipe, Debian's pahole
# 1.24 and pahole master grows with the input, from a vmlinux-sized program
# to one eight times as big, and whether btfpipe's peak memory keeps to its
# target there: at 8x at most 0.3 times pahole's, and growing no faster than
# the input.
#
# Why generated programs: one vmlinux says how the tools compare at one size,
# not how their cost grows; kernels twice or eight times as big do not exist,
# and a kernel built with LTO is a different program from the one without.
# tests/gen/scale-prog.py writes a kernel-like C program (a core header every
# unit includes, group headers shared by eight units, each unit's own structs,
# callbacks, enums, typedefs, globals and about 20 functions) whose first
# BENCH_SCALE_CUS units have about BENCH_SCALE_TYPES distinct types after
# dedup: by default the 2,172 CUs and ~110,000 types of Debian's 6.1 cloud
# vmlinux, and about its .debug_info per CU. The units are compiled once, at
# the largest factor, in parallel, and each size links a prefix of the
# objects: 1x the first 1/8, 2x the first 1/4, ... (plus main.o, which finds
# the units linked through a linker-made table). Two flavours: gcc -O2 -g
# (objects linked by gcc), and clang-19 thin LTO (-flto=thin bitcode,
# compiled once, each size linked by lld-19, whose back ends emit the DWARF:
# more CUs than units, as ThinLTO imports functions into other modules).
# Everything is kept in tests/out/bench-scale/uCUS-tTYPES-xMAX, each build
# with a stamp of the generator's checksum, the compiler's version and the
# arguments (as tests/gen/build-lto.sh does): a second run reuses it, an
# interrupted compile resumes. At the default sizes the first build takes
# more than an hour on 2 CPUs and some 15 GB of disk; the measurements take
# minutes.
#
# Per flavour and size: the input (CUs from dwarf-extract --stats, BTF types
# of btfpipe's output from bin/tools/btfcheck, .debug_info bytes from the
# section header), then BENCH_SCALE_RUNS rounds of btfpipe, pahole 1.24 and
# pahole master, one after the other (this VM's speed drifts by tens of
# percent over minutes: a tool measured ten minutes after another would
# measure the drift), each with its input in the page cache first. btfpipe is
# its three stages with checkpoint files, each -jN: wall and CPU summed, RSS
# the largest. pahole 1.24 runs as kernels ran it (-J -jN --btf_gen_floats),
# master with --btf_features=default. Every process is measured by
# bin/tools/measure (bench/measure.c): wall, user + sys CPU and peak RSS.
# btfpipe's output must parse with bpftool and be the same bytes in every
# round, else FAIL and exit 1.
#
# Report on stdout and in bench/results/scale-latest.md: a table (medians),
# per flavour btfpipe's RSS growth against the input's and its RSS at the
# largest size against each pahole's; a plot of wall, CPU and peak RSS
# against .debug_info size (log-log: a line's slope is its growth; a grey
# line grows as the input does) in bench/results/scale.png, by gnuplot
# (gnuplot-nox; without it SKIP).
#
# Knobs (environment): BENCH_SCALE_CUS (2172: CUs of the 1x program),
# BENCH_SCALE_TYPES (110000: its distinct types), BENCH_SCALE_FACTORS
# ("1 2 4 8": sizes, in multiples of 1x; the largest is compiled),
# BENCH_SCALE_FLAVOURS ("gcc thin"), BENCH_SCALE_RUNS (1), BENCH_SCALE_JOBS
# (2: -jN of every tool), BENCH_SCALE_TIMEOUT (900: the seconds after which
# a pahole run is killed and left unmeasured, 0 for no limit),
# BENCH_SCALE_MEM_MB (this machine's memory less 3 GiB: the address space a
# pahole run may take, 0 for no limit; pahole held 23 times the input's
# .debug_info on the thin LTO programs, all 24 GiB of this machine at 4x,
# and left to the kernel's OOM killer it takes the machine with it),
# BENCH_BIN (bin/ of this checkout), BENCH_PAHOLE
# (/usr/bin/pahole), BENCH_PAHOLE_MASTER (default
# tests/out/shared/anchors/bin/pahole when built, which make bench does;
# without it no master column). GCC, CLANG and LLD name the compilers (gcc,
# clang-19, lld-19). A quick check (a minute of CPU):
# BENCH_SCALE_CUS=40 BENCH_SCALE_TYPES=2000 bench/scale.sh
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_BIN:-$top/bin}
export BTFPIPE_BIN=$bin
pahole=${BENCH_PAHOLE:-/usr/bin/pahole}
cus=${BENCH_SCALE_CUS:-2172}
types=${BENCH_SCALE_TYPES:-110000}
factors=${BENCH_SCALE_FACTORS:-1 2 4 8}
flavours=${BENCH_SCALE_FLAVOURS:-gcc thin}
runs=${BENCH_SCALE_RUNS:-1}
jobs=${BENCH_SCALE_JOBS:-2}
timeout=${BENCH_SCALE_TIMEOUT:-900}
memtotal_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 }' /proc/meminfo 2>/dev/null)
mem_mb=${BENCH_SCALE_MEM_MB:-$(( ${memtotal_mb:-0} > 4096 ? ${memtotal_mb:-0} - 3072 : 0 ))}
: "${GCC:=gcc}" "${CLANG:=clang-19}" "${LLD:=lld-19}"
cpus=$(nproc)
seed=1

die() { echo "bench-scale: error: $*" >&2; exit 2; }
isnum() { case $1 in '' | *[!0-9]* | 0*) return 1 ;; esac; }
isnum "$cus" || die "BENCH_SCALE_CUS must be a positive number, not '$cus'"
isnum "$types" || die "BENCH_SCALE_TYPES must be a positive number, not '$types'"
[ "$types" -ge $((20 * cus)) ] || die "BENCH_SCALE_TYPES must be at least 20 x BENCH_SCALE_CUS (a unit has some 20 types at the least)"
isnum "$runs" || die "BENCH_SCALE_RUNS must be a positive number, not '$runs'"
case $timeout in '' | *[!0-9]*) die "BENCH_SCALE_TIMEOUT must be a number of seconds (0: no limit), not '$timeout'" ;; esac
case $mem_mb in '' | *[!0-9]*) die "BENCH_SCALE_MEM_MB must be a number of MiB (0: no limit), not '$mem_mb'" ;; esac
isnum "$jobs" || die "BENCH_SCALE_JOBS must be a positive number, not '$jobs'"
for f in $factors; do isnum "$f" || die "BENCH_SCALE_FACTORS must be positive numbers, not '$f'"; done
# shellcheck disable=SC2086 # factors is a word list
factors=$(printf '%s\n' $factors | sort -nu | paste -sd' ')
[ -n "$factors" ] || die "BENCH_SCALE_FACTORS is empty"
fmin=${factors%% *} fmax=${factors##* }
for fl in $flavours; do
	case $fl in gcc | thin) ;; *) die "BENCH_SCALE_FLAVOURS: unknown flavour '$fl' (gcc thin)" ;; esac
done
for t in "$bin/dwarf-extract" "$bin/dedup-merge" "$bin/btf-emit" "$bin/tools/btfcheck"; do
	[ -x "$t" ] || die "$t not built (make)"
done
measure=$bin/tools/measure
[ -x "$measure" ] || die "$measure missing (bench/measure.c; make builds it)"
command -v "$pahole" >/dev/null || die "$pahole missing (make deps installs dwarves)"
command -v python3 >/dev/null || die "python3 missing (tests/gen/scale-prog.py)"
command -v readelf >/dev/null || die "readelf missing (binutils)"

W=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe-bench-scale.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM # through the EXIT trap, so the work dir goes too
# Measurements, one line each, read back by the report:
#   samples: INPUT RUN KEY WALL CPU RSS_KIB  (KEY btfpipe pahole master extract merge emit)
#   facts:   INPUT KEY VALUE                 (KEY cus types debug_info)
: >"$W/samples"; : >"$W/facts"; : >"$W/notes"
failed=0
. "$top/bench/lib.sh"

# pahole master: a third column when there is one; run.sh builds the default.
master=${BENCH_PAHOLE_MASTER:-}
if [ -n "$master" ]; then
	[ -x "$master" ] || die "BENCH_PAHOLE_MASTER=$master is not an executable"
elif [ -x "$top/tests/out/shared/anchors/bin/pahole" ]; then
	master=$top/tests/out/shared/anchors/bin/pahole
else
	note "SKIP pahole master: no $top/tests/out/shared/anchors/bin/pahole (make bench builds it from ../shared/anchors; or BENCH_PAHOLE_MASTER=PATH): no master column"
fi
tools="btfpipe pahole"
[ -n "$master" ] && tools="$tools master"


# warm FILE: the input read into the page cache before each tool's run (this
# VM's host takes clean page cache back within seconds; see run.sh).
warm() { cat "$1" >/dev/null 2>&1 || true; }

# --- build: generate once, compile once at the largest factor, link each size --
D="$top/tests/out/bench-scale/u$cus-t$types-x$fmax"
mkdir -p "$D"
gen_id="$(cksum <"$top/tests/gen/scale-prog.py" | cut -d' ' -f1) --units $cus --types $types --factor $fmax --seed $seed"
if [ "$(cat "$D/src.stamp" 2>/dev/null)" != "$gen_id" ]; then
	echo "bench-scale: generating $((cus * fmax)) units into $D/src" >&2
	rm -rf "$D/src" "$D/src.stamp" "$D/gen.log"
	measure gen python3 "$top/tests/gen/scale-prog.py" --units "$cus" --types "$types" \
		--factor "$fmax" --seed "$seed" "$D" || die "tests/gen/scale-prog.py failed: $(tail -3 "$W/gen.err")"
	echo "gen $M_WALL $M_CPU $(cat "$W/gen.out")" >"$D/gen.log"
	echo "$gen_id" >"$D/src.stamp"
fi

# build FLAVOUR: the objects of every unit and main.c in D/FLAVOUR/obj (the
# missing ones, xargs -P NCPU), then a program per factor, D/FLAVOUR/prog-Nx.
# D/FLAVOUR/obj.id names the build its objects belong to (written before the
# first one, so an interrupted compile resumes); obj.stamp says all are there.
# Each compile and link appends "compile UNITS WALL CPU" or "link FACTOR WALL
# CPU" to D/FLAVOUR/build.log. Returns 1 after a FAIL.
build() {
	local fl=$1 cc cflags lflags obj_id id f n out
	case $fl in
	gcc) cc=$GCC cflags="-O2 -g" lflags="" ;;
	# ThinLTO's cache: a unit's back end output is keyed on its bitcode, its
	# imports and what the rest of the program needs of it, so the 8x link
	# reuses most of the 4x one's codegen instead of redoing all of it. The
	# programs are the same with or without it.
	thin) cc=$CLANG cflags="-O2 -g -flto=thin"
		lflags="-flto=thin -fuse-ld=$LLD -Wl,--thinlto-jobs=$cpus -Wl,--thinlto-cache-dir=$D/thin/lto-cache" ;;
	esac
	obj_id="$gen_id | $("$cc" --version | head -1) | $cflags"
	if [ "$(cat "$D/$fl/obj.id" 2>/dev/null)" != "$obj_id" ]; then
		rm -rf "${D:?}/$fl"
		mkdir -p "$D/$fl/obj"
		echo "$obj_id" >"$D/$fl/obj.id"
	fi
	if [ "$(cat "$D/$fl/obj.stamp" 2>/dev/null)" != "$obj_id" ]; then
		{ cat "$D/src/units.list"; echo main.c; } | while read -r f; do
			[ -e "$D/$fl/obj/${f%.c}.o" ] || echo "$f"
		done >"$W/todo"
		n=$(wc -l <"$W/todo")
		echo "bench-scale: $fl: compiling $n files, $cpus at a time" >&2
		# shellcheck disable=SC2016 # expanded by the inner shell
		(cd "$D/src" && measure "compile-$fl" xargs -a "$W/todo" -r -P "$cpus" -n 16 sh -c '
			cc=$1 flags=$2 obj=$3; shift 3
			for f; do
				$cc $flags -c "$f" -o "$obj/${f%.c}.o.tmp" && mv "$obj/${f%.c}.o.tmp" "$obj/${f%.c}.o" || exit 255
			done' sh "$cc" "$cflags -fdebug-prefix-map=$D/src=/scale" "$D/$fl/obj" &&
			echo "compile $n $M_WALL $M_CPU" >>"$D/$fl/build.log") ||
			{ fail "$fl: compiling: $(grep -m3 'error' "$W/compile-$fl.err")"; return 1; }
		echo "$obj_id" >"$D/$fl/obj.stamp"
	fi
	for f in $factors; do
		out="$D/$fl/prog-${f}x"
		id="$obj_id | $lflags | $((cus * f)) units"
		[ "$(cat "$out.stamp" 2>/dev/null)" = "$id" ] && [ -e "$out" ] && continue
		rm -f "$out" "$out.stamp"
		# Names relative to obj/: 17,000 absolute paths come close to ARG_MAX
		# where a driver passes them on without a response file.
		{ echo main.o; sed -n "1,$((cus * f))p" "$D/src/units.list" | sed 's/\.c$/.o/'; } >"$W/link.list"
		echo "bench-scale: $fl: linking the ${f}x program ($((cus * f)) units)" >&2
		# shellcheck disable=SC2086 # lflags is a word list
		(cd "$D/$fl/obj" && measure "link-$fl-$f" "$cc" -O2 -g $lflags -o "$out.tmp" @"$W/link.list" &&
			echo "link $f $M_WALL $M_CPU" >>"$D/$fl/build.log") ||
			{ fail "$fl: linking ${f}x: $(tail -3 "$W/link-$fl-$f.err")"; return 1; }
		mv "$out.tmp" "$out"
		echo "$id" >"$out.stamp"
	done
}

built=""
for fl in $flavours; do
	case $fl in
	gcc) command -v "$GCC" >/dev/null || { note "SKIP gcc: $GCC not installed"; continue; } ;;
	thin) { command -v "$CLANG" >/dev/null && command -v "ld.$LLD" >/dev/null; } ||
		{ note "SKIP thin: $CLANG or ld.$LLD not installed"; continue; } ;;
	esac
	build "$fl" && built="$built $fl"
done

# --- measure ----------------------------------------------------------------------
# stages IN RUN ELF: btfpipe's three stages, each measured, recorded as
# extract/merge/emit; sets S_WALL S_CPU S_RSS (sum, sum, largest). Returns 1
# (after FAIL) if a stage failed.
stages() {
	local in=$1 r=$2 elf=$3 d="$W/$1" st
	rm -f "$d.cus" "$d.graph" "$d.btf"
	S_WALL=0 S_CPU=0 S_RSS=0
	for st in extract merge emit; do
		case $st in
		extract) measure "$in.$st" "$bin/dwarf-extract" -j"$jobs" -q --stats -o "$d.cus" "$elf" ;;
		merge) measure "$in.$st" "$bin/dedup-merge" -j"$jobs" -q -o "$d.graph" "$d.cus" ;;
		emit) measure "$in.$st" "$bin/btf-emit" -j"$jobs" -q --elf "$elf" -o "$d.btf" "$d.graph" ;;
		esac || { fail "$in: $st exited $?: $(tail -3 "$W/$in.$st.err")"; return 1; }
		echo "$in $r $st $M_WALL $M_CPU $M_RSS" >>"$W/samples"
		read -r S_WALL S_CPU S_RSS < <(awk -v a="$S_WALL" -v b="$S_CPU" -v c="$S_RSS" \
			-v w="$M_WALL" -v u="$M_CPU" -v m="$M_RSS" \
			'BEGIN { printf "%.6f %.6f %d\n", a + w, b + u, (m > c ? m : c) }')
	done
	rm -f "$d.cus" "$d.graph" # at 8x a gigabyte or more
}

# debug_info_bytes ELF: the size of its .debug_info section.
debug_info_bytes() {
	local hex
	hex=$(readelf -SW "$1" | sed -n 's/.*\] \.debug_info  *[A-Z]*  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')
	echo $((16#${hex:-0}))
}

# pahole_run IN RUN KEY LABEL CMD...: one pahole's run, recorded as KEY.
# pahole's time grows faster than its input (minutes at 8x), so with
# BENCH_SCALE_TIMEOUT a run is killed after that many seconds, and its
# memory too (on the thin LTO programs), so with BENCH_SCALE_MEM_MB it runs
# under that address-space limit (ulimit -v): a run that failed holding
# more than half the limit resident ran out of it (the input ELF is mapped
# too, so the heap meets the limit below it). Either way a note says so and no
# sample is kept, so its cells read "-". Any other failure FAILs.
pahole_run() {
	local in=$1 r=$2 key=$3 label=$4 rc; shift 4
	[ "$timeout" -gt 0 ] && set -- timeout -s KILL "$timeout" "$@"
	[ "$mem_mb" -gt 0 ] && set -- bash -c 'ulimit -v "$0" && exec "$@"' $((mem_mb * 1024)) "$@"
	measure "$in.$key" "$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "$in $r $key $M_WALL $M_CPU $M_RSS" >>"$W/samples"
	elif [ "$timeout" -gt 0 ] && { [ "$rc" -eq 137 ] || [ "$rc" -eq 124 ]; } &&
		awk -v w="$M_WALL" -v t="$timeout" 'BEGIN { exit !(w >= t - 1) }'; then
		note "$in: run $r: $label killed after $timeout s (BENCH_SCALE_TIMEOUT), not measured; it held $((M_RSS / 1024)) MiB"
	elif [ "$mem_mb" -gt 0 ] && [ "$M_RSS" -gt $((mem_mb * 1024 / 2)) ]; then
		note "$in: run $r: $label ran out of its $mem_mb MiB (BENCH_SCALE_MEM_MB) after $M_WALL s, exit $rc, not measured"
	else
		fail "$in: $label exited $rc: $(tail -3 "$W/$in.$key.err")"
	fi
}

# The paholes' thread flag: -j1 is 1.24's default, so no flag (as run.sh).
pj=()
[ "$jobs" -gt 1 ] && pj=(-j"$jobs")
bpftool=$(command -v bpftool) || note "SKIP the bpftool check of btfpipe's BTF: bpftool not installed"
order=""
for fl in $built; do
	for f in $factors; do
		in="$fl-${f}x" elf="$D/$fl/prog-${f}x"
		echo "$in debug_info $(debug_info_bytes "$elf")" >>"$W/facts"
		for ((r = 1; r <= runs; r++)); do
			warm "$elf"
			if stages "$in" "$r" "$elf"; then
				echo "$in $r btfpipe $S_WALL $S_CPU $S_RSS" >>"$W/samples"
				if [ ! -e "$W/$in.ref.btf" ]; then
					mv "$W/$in.btf" "$W/$in.ref.btf"
					echo "$in cus $(sed -n 's/^dwarf-extract: units *//p' "$W/$in.extract.err")" >>"$W/facts"
					echo "$in types $("$bin/tools/btfcheck" "$W/$in.ref.btf" 2>/dev/null | sed -n 's/^types //p')" >>"$W/facts"
					[ -z "$bpftool" ] || bpftool btf dump file "$W/$in.ref.btf" >/dev/null 2>"$W/$in.bpftool.err" ||
						fail "$in: bpftool cannot parse btfpipe's BTF: $(tail -1 "$W/$in.bpftool.err")"
				elif ! cmp -s "$W/$in.ref.btf" "$W/$in.btf"; then
					fail "$in: run $r: btfpipe's BTF differs from run 1's"
				fi
			fi
			rm -f "$W/$in.ph.btf"
			warm "$elf"
			pahole_run "$in" "$r" pahole "pahole 1.24" "$pahole" -J "${pj[@]}" --btf_gen_floats \
				--btf_encode_detached="$W/$in.ph.btf" "$elf"
			rm -f "$W/$in.ph.btf"
			if [ -n "$master" ]; then
				warm "$elf"
				pahole_run "$in" "$r" master "pahole master" "$master" -J "${pj[@]}" --btf_features=default \
					--btf_encode_detached="$W/$in.pm.btf" "$elf"
				rm -f "$W/$in.pm.btf"
			fi
			echo "bench-scale: $in run $r/$runs done" >&2
		done
		order="$order $in"
	done
done

# --- report -----------------------------------------------------------------------
# median: the median of the numbers on stdin, one a line ("-" if none).
# med INPUT KEY FIELD: median of a samples column (4 wall, 5 CPU, 6 RSS KiB).
med() { awk -v i="$1" -v k="$2" -v f="$3" '$1 == i && $3 == k { print $f }' "$W/samples" | median; }
fact() { awk -v i="$1" -v k="$2" '$1 == i && $2 == k { print $3; exit }' "$W/facts"; }
# fmt KIND V: "s" seconds (three decimals below 1 s), "mib" KiB to MiB,
# "mb" bytes to MB (10^6, the size of an input).
fmt() {
	awk -v k="$1" -v v="$2" 'BEGIN {
		if (v == "-" || v == "") print "-"
		else if (k == "s") printf (v < 1 ? "%.3f\n" : "%.2f\n"), v
		else if (k == "mib") printf "%.0f\n", v / 1024
		else printf "%.1f\n", v / 1e6 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
# cell IN KEY: "wall / CPU / RSS MiB" of a tool.
cell() { echo "$(fmt s "$(med "$1" "$2" 4)") / $(fmt s "$(med "$1" "$2" 5)") / $(fmt mib "$(med "$1" "$2" 6)")"; }
# rcell IN KEY: btfpipe / KEY for wall, CPU and RSS.
rcell() {
	local c out=""
	for c in 4 5 6; do out="$out${out:+ / }$(ratio "$(med "$1" btfpipe $c)" "$(med "$1" "$2" $c)")"; done
	echo "$out"
}
# build_line FLAVOUR: what building it cost, from D/FLAVOUR/build.log (the
# first run's; a cached run shows the same numbers).
build_line() {
	awk -v fl="$1" '$1 == "compile" { n += $2; cw += $3; cc += $4 }
		$1 == "link" { lw += $3; lc += $4; links = links sprintf("%s%dx %.1f s", links ? ", " : "", $2, $3) }
		END { printf "%s: compiled %d files in %.0f s wall, %.0f s CPU (%.0f ms CPU a file); linked %s (%.1f s wall, %.1f s CPU in all)",
			fl, n, cw, cc, n ? 1000 * cc / n : 0, links ? links : "nothing", lw, lc }' "$D/$1/build.log" 2>/dev/null
}

# plot: bench/results/scale.png, three panels (wall, CPU, peak RSS) against
# .debug_info MB, log-log, a line per tool and flavour. Prints where it went
# or why not.
plot() {
	local png=$top/bench/results/scale.png term fl f t in v cmd="" col lc dt x0 y0 panel p label
	command -v gnuplot >/dev/null || { echo "SKIP plot: gnuplot not installed (apt-get install gnuplot-nox)"; return; }
	term="pngcairo size 1800,700 font ',10'"
	gnuplot -e "set terminal pngcairo" 2>/dev/null || term="png size 1800,700"
	for fl in $built; do
		for f in $factors; do
			in="$fl-${f}x"
			printf '%s %s' "$f" "$(awk -v b="$(fact "$in" debug_info)" 'BEGIN { print b / 1e6 }')"
			for t in btfpipe pahole master; do
				for col in 4 5 6; do
					v=$(med "$in" "$t" $col)
					[ "$v" = "-" ] && v="?"
					[ "$col" = 6 ] && [ "$v" != "?" ] && v=$(awk -v v="$v" 'BEGIN { print v / 1024 }')
					printf ' %s' "$v"
				done
			done
			echo
		done >"$W/plot-$fl.dat"
	done
	# The grey reference line: btfpipe's RSS on the first flavour's smallest
	# size, grown as the input grows.
	# shellcheck disable=SC2086 # built is a word list
	set -- $built
	read -r x0 y0 < <(awk 'NR == 1 { print $2, $5 }' "$W/plot-$1.dat")
	for panel in "3 wall time (s)" "4 CPU time, user + sys (s)" "5 peak RSS (MiB)"; do
		p=${panel%% *}
		cmd="${cmd}set title '${panel#* }'; plot "
		for fl in $built; do
			dt=1; [ "$fl" = thin ] && dt=2
			for t in $tools; do
				case $t in btfpipe) lc="#1f77b4" col=$p ;; pahole) lc="#d62728" col=$((p + 3)) ;; master) lc="#2ca02c" col=$((p + 6)) ;; esac
				label=$t; [ "$t" = pahole ] && label="pahole 1.24"; [ "$t" = master ] && label="pahole master"
				cmd="$cmd'$W/plot-$fl.dat' using 2:$col with linespoints lw 2 pt 7 dt $dt lc rgb '$lc' title '$label, $fl', "
			done
		done
		if [ "$p" = 5 ] && [ -n "${y0:-}" ] && [ "$y0" != "?" ]; then
			cmd="${cmd}$y0 * x / $x0 with lines dt 3 lw 1.5 lc rgb '#606060' title 'as the input grows', "
		fi
		cmd="${cmd%, }; "
	done
	cat >"$W/plot.gp" <<EOF
set terminal $term
set termoption noenhanced
set output '$png'
set datafile missing '?'
set multiplot layout 1,3 title 'btfpipe vs pahole -J: cost against input size (-j$jobs; ${factors// /, } x $cus CUs, ~$types types at 1x)'
set logscale x 2
set logscale y 10
set format xy '%g'
set xlabel '.debug_info (MB)'
set key below font ',9'
set grid
$cmd
unset multiplot
EOF
	if gnuplot "$W/plot.gp" >"$W/gnuplot.out" 2>&1; then
		echo "Plot: bench/results/scale.png (wall, CPU and peak RSS against .debug_info MB, log-log; solid gcc, dashed thin LTO)"
	else
		echo "FAIL plot: gnuplot: $(tail -2 "$W/gnuplot.out")"
	fi
}

# growth FLAVOUR: btfpipe's RSS growth from the smallest size to the largest
# against the input's, and its RSS at the largest against each pahole's.
growth() {
	local fl=$1 a="$1-${fmin}x" b="$1-${fmax}x" r0 r1 d0 d1 t name line
	r0=$(med "$a" btfpipe 6) r1=$(med "$b" btfpipe 6)
	d0=$(fact "$a" debug_info) d1=$(fact "$b" debug_info)
	[ "$r0" = "-" ] || [ "$r1" = "-" ] && { echo "- **$fl**: no btfpipe measurement at ${fmin}x and ${fmax}x"; return; }
	line=$(awk -v r0="$r0" -v r1="$r1" -v d0="$d0" -v d1="$d1" -v a="$fmin" -v b="$fmax" 'BEGIN {
		g = r1 / r0; h = d1 / d0
		printf "btfpipe peak RSS %dx -> %dx: %.0f -> %.0f MiB, x%.2f; input (.debug_info) x%.2f: ", a, b, r0 / 1024, r1 / 1024, g, h
		if (g <= h) printf "grows no faster than the input, target met"
		else printf "grows faster than the input, target missed by %.0f %%", 100 * (g / h - 1) }')
	for t in pahole master; do
		[ "$t" = master ] && [ -z "$master" ] && continue
		name="pahole 1.24's"; [ "$t" = master ] && name="master's"
		line="$line. At ${fmax}x $(awk -v b="$r1" -v p="$(med "$b" "$t" 6)" -v n="$name" 'BEGIN {
			if (p == "-" || p + 0 == 0) { printf "%s RSS not measured", n; exit }
			x = b / p
			printf "%.2fx %s RSS (%.0f MiB): ", x, n, p / 1024
			if (x <= 0.3) printf "target met"; else printf "target missed by %.2f", x - 0.3 }')"
	done
	[ "$fmax" = 8 ] || line="$line (the target is stated at 8x)"
	echo "- **$fl**: $line."
}

report() {
	local in fl st
	echo "## How cost grows: btfpipe vs pahole -J ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "$cpus CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), btfpipe" \
		"$(git -C "$top" describe --always --dirty 2>/dev/null || echo '?'), pahole 1.24 ($pahole, $("$pahole" --version))," \
		"${master:+pahole master ($master, $("$master" --version)), }-j$jobs, medians of $runs interleaved runs." \
		"The program: tests/gen/scale-prog.py --units $cus --types $types --factor $fmax (in $D," \
		"$(du -sh "$D" 2>/dev/null | cut -f1)); Nx links its first N x $cus units." \
		"btfpipe is the three stages, wall and CPU summed, RSS the largest. Cells: wall s / CPU s / peak RSS MiB;" \
		"ratios btfpipe / pahole (below 1: btfpipe is better)."
	echo
	printf '| size | flavour | CUs | types | .debug_info MB | btfpipe |'
	printf ' pahole 1.24 |'; [ -n "$master" ] && printf ' pahole master |'
	printf ' btfpipe / 1.24 |'; [ -n "$master" ] && printf ' btfpipe / master |'
	echo
	printf '|---|---|---:|---:|---:|---:|---:|---:|'; [ -n "$master" ] && printf -- '---:|---:|'
	echo
	for in in $order; do
		printf '| %s | %s | %s | %s | %s | %s | %s |' "${in#*-}" "${in%-*}" "$(fact "$in" cus)" "$(fact "$in" types)" \
			"$(fmt mb "$(fact "$in" debug_info)")" "$(cell "$in" btfpipe)" "$(cell "$in" pahole)"
		[ -n "$master" ] && printf ' %s |' "$(cell "$in" master)"
		printf ' %s |' "$(rcell "$in" pahole)"
		[ -n "$master" ] && printf ' %s |' "$(rcell "$in" master)"
		echo
	done
	if [ "$fmin" = 1 ]; then
		echo
		printf 'BTF types of the 1x programs, planned about %s:' "$types"
		for fl in $built; do
			printf ' %s %s (%s),' "$fl" "$(fact "$fl-1x" types)" \
				"$(awk -v n="$(fact "$fl-1x" types)" -v t="$types" 'BEGIN { printf "%+.1f %%", 100 * (n / t - 1) }')"
		done | sed 's/,$/./'
		case " $built " in *" thin "*) echo " ThinLTO's have fewer FUNCs: its optimizer removes some functions and changes the signature of others (btfpipe and master leave those out)." ;; *) echo ;; esac
	fi
	echo
	echo "Peak RSS against the target (at 8x at most 0.3x pahole's, growing no faster than the input):"
	echo
	for fl in $built; do growth "$fl"; done
	echo
	echo "btfpipe's stages at ${fmax}x (wall s / CPU s / peak RSS MiB):"
	echo
	for fl in $built; do
		in="$fl-${fmax}x"
		printf -- '- %s:' "$fl"
		for st in extract merge emit; do printf ' %s %s,' "$st" "$(cell "$in" "$st")"; done
		echo
	done | sed 's/,$//'
	echo
	echo "Building (once; kept in $D):"
	echo
	[ -s "$D/gen.log" ] && awk '{ printf "- generating: %.1f s wall (", $2; for (i = 4; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : ""; print ")" }' "$D/gen.log"
	for fl in $built; do echo "- $(build_line "$fl")"; done
	echo
	plot
	if [ -s "$W/notes" ]; then echo; sed 's/^/    /' "$W/notes"; fi
}

mkdir -p "$top/bench/results"
report | tee "$top/bench/results/scale-latest.md"
if [ "$failed" -ne 0 ] || grep -q '^FAIL' "$top/bench/results/scale-latest.md"; then
	echo "FAIL: see the FAIL lines above" >&2
	exit 1
fi
