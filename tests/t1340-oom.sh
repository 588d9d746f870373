#!/usr/bin/env bash
# t1340-oom: every stage under a memory limit, from plenty down to too
# little to start a program at all.
#
# A build host's `ulimit -v` (RLIMIT_AS) caps a process's address space; a
# stage that hits it must say so and leave what it found: exit 4
# (docs/performance.md, "Limits and failures") with one line
# `btfpipe: FILE: error: out of memory in phase P`, naming the pass that
# needed more, the previous output byte for byte, and nothing else in the
# output directory, nor in TMPDIR (pipeline.sh's directory of
# checkpoints). Or it succeeds, with the same bytes as an unlimited run.
# Never a crash, a hang or another exit code.
#
# Cases (each over an output that already exists, at -j1 and at -j8, where
# most of a thread's 8 MiB stack must fit under the limit too):
#   extract     dwarf-extract of the 120-unit program (tests/gen/many-cus.sh)
#   merge       dedup-merge of its .cus
#   emit        btf-emit --elf -o (raw BTF)
#   emit-elf    btf-emit --elf-out (a new copy of the ELF with .BTF)
#   pipeline    pipeline.sh -o, the three stages chained by the driver
#
# Limits: from the smallest under which /bin/true itself starts (below it
# no program starts: the kernel or the C library's start-up faults before
# main(), ours as anyone's; found by bisection on this machine), or the
# stage's own --version if that needs more (its static image is bigger), for
# pipeline.sh from the smallest under which its shell can run it (--version),
# up by steps to 256 MiB, where every case succeeds. Each case must both
# fail cleanly at some limit and succeed at some other, or the sweep did not
# reach the range that matters and says so.
#
# Mutants this fails on: the malloc tunables applied under a limit
# (memtune.c without memtune__limited(): a 64 MiB top pad, and glibc's
# start-up faults, exit 139, below about 66 MiB); a thread that cannot start
# made an error (pool.c: exit 3 at -j8 under 20 MiB); diag_report() without
# the phase (the message check); pipeline.sh without its EXIT trap (its
# directory left in TMPDIR from the lowest limit on).
#
# Not under a sanitizer: ASan reserves terabytes of shadow address space, so
# no ulimit -v can apply; the sanitized builds skip this test, counted.
# (ASan's max_allocation_size_mb, tried instead, fails no allocation of
# this input: none is over 1 MiB.)
. "$(dirname "$0")/lib.sh"

case "$T_VARIANT" in
bin-asan | bin-tsan)
	skip "memory limits (ulimit -v) on the $T_VARIANT build" "a sanitizer's shadow memory needs more address space than any limit leaves"
	test_done
	;;
esac

REF="$T_OUT/ref"
many_refs "$REF"
ELF=$MANY_ELF
# each case's reference output by its name
for x in extract:cus merge:graph emit:btf emit-elf:elf pipeline:btf; do
	cp "$REF/many.${x#*:}" "$REF/${x%%:*}"
done

# run_case CASE J OUT: the case's command line writing OUT.
case_cmd() {
	local j=$2 o=$3
	case $1 in
	extract) echo "$T_BIN/dwarf-extract -j$j -q -o $o $ELF" ;;
	merge) echo "$T_BIN/dedup-merge -j$j -q -o $o $REF/extract" ;;
	emit) echo "$T_BIN/btf-emit -j$j -q --elf $ELF -o $o $REF/merge" ;;
	emit-elf) echo "$T_BIN/btf-emit -j$j -q --elf $ELF --elf-out $o $REF/merge" ;;
	pipeline) echo "$T_TOP/pipeline.sh -j$j -q --features default -o $o $ELF" ;;
	esac
}

export BTFPIPE_BIN="$T_BIN"

# floor RC CMD...: the smallest ulimit -v (KiB, to 32) under which CMD
# exits with RC.
floor() {
	local rc=$1 lo=64 hi=262144 mid
	shift
	(ulimit -v "$hi" && exec "$@") >/dev/null 2>&1
	[ $? = "$rc" ] || return 1
	while [ $((hi - lo)) -gt 32 ]; do
		mid=$(((lo + hi) / 2))
		(ulimit -v "$mid" && exec "$@") >/dev/null 2>&1
		if [ $? = "$rc" ]; then hi=$mid; else lo=$mid; fi
	done
	echo "$hi"
}
# L0: where /bin/true starts. For pipeline.sh, where its shell gets as far
# as its first stage (which exits 3 on a missing input): below that the
# shell itself or the driver's start fails, before any stage runs.
L0=$(floor 0 /bin/true) && LB=$(floor 3 "$T_TOP/pipeline.sh" -q -o "$T_OUT/none.btf" "$T_OUT/none") || {
	not_ok "find the floors" "/bin/true or pipeline.sh does not start under 256 MiB"
	test_done
}
echo "info: /bin/true starts from ulimit -v $L0 KiB; pipeline.sh runs to its first stage from $LB KiB"
# And where each stage itself starts (--version: glibc's static start-up,
# then a line): a static program maps its whole image first, so a bigger one
# (dwarf-extract with libzstd) needs more than /bin/true before main().
declare -A LS
for s in dwarf-extract dedup-merge btf-emit; do
	LS[$s]=$(floor 0 "$T_BIN/$s" --version) || { not_ok "find the floors" "$s --version does not start under 256 MiB"; test_done; }
	[ "${LS[$s]}" -gt "$L0" ] || LS[$s]=$L0
done
echo "info: the stages start (--version) from: dwarf-extract ${LS[dwarf-extract]}, dedup-merge ${LS[dedup-merge]}, btf-emit ${LS[btf-emit]} KiB"
# limits FLOOR: the floor, doubling steps to 256 MiB, and a few between,
# where the -j8 threads stop fitting.
limits_from() {
	local l out="$1"
	for l in 4096 8192 12288 16384 24576 32768 49152 65536 131072 262144; do
		[ "$l" -gt "$1" ] && out+=" $l"
	done
	echo "$out"
}

# core_bt DIR: the faulting thread's backtrace from a core a signal death
# left in DIR (the stages run there with cores on), so that a crash seen once
# in a long run can be read, not just counted. Empty without gdb or a core
# (a core_pattern that pipes cores elsewhere).
core_bt() {
	local core exe
	core=$(ls "$1"/core* 2>/dev/null | head -1)
	[ -n "$core" ] && command -v gdb >/dev/null || return 0
	exe=$(gdb -q -batch -c "$core" 2>/dev/null | sed -n "s/^Core was generated by \`\([^ ']*\).*/\1/p")
	[ -n "$exe" ] || return 0
	# (the kernel keeps 80 bytes of the command line: a long path is cut)
	local s
	for s in dwarf-extract dedup-merge btf-emit; do
		[ -n "${exe##*/}" ] && [[ $s == "${exe##*/}"* ]] && exe="$T_BIN/$s"
	done
	echo "backtrace ($exe):"
	gdb -q -batch -ex 'bt 16' "$exe" "$core" 2>/dev/null | grep '^#' | awk '!seen[$0]++'
}

# ERE of the one error line an out-of-memory exit may print.
OOM_ERE='^btfpipe: [^ ]+: error: out of memory in phase [a-z_]+(: .*)?$'
# ... and the lines allowed beside it: the threads warning, pipeline.sh's
# "stage X failed" when it is the one running the stage.
OK_ERE='^btfpipe: [^ ]+: warning: [0-9]+ worker thread starts? failed|^btfpipe: stage [a-z-]+ failed \(exit 4\)$'

total=0
for c in extract merge emit emit-elf pipeline; do
	for j in 1 8; do
		d="$T_OUT/run/$c-j$j"
		n_ok=0 n_oom=0 bad="" phases=""
		case $c in
		extract) floor=${LS[dwarf-extract]} ;;
		merge) floor=${LS[dedup-merge]} ;;
		emit | emit-elf) floor=${LS[btf-emit]} ;;
		*) floor=$LB ;;
		esac
		limits=$(limits_from "$floor")
		for l in $limits; do
			total=$((total + 1))
			rm -rf "$d" && mkdir -p "$d"
			printf 'previous output of %s\n' "$c" >"$d/out"
			cp "$d/out" "$d/prev"
			cmd=$(case_cmd "$c" "$j" "$d/out")
			# timeout outside the limit: it must start whatever the limit.
			# shellcheck disable=SC2086 # our own paths, no spaces
			# (cores as far as the hard limit lets: the backtrace is a
			# help, not a condition)
			# (its own TMPDIR: pipeline.sh's directory must go too)
			rm -rf "$d.tmp" && mkdir -p "$d.tmp"
			TMPDIR="$d.tmp" timeout 60 bash -c 'cd "$1" || exit 99; ulimit -c unlimited 2>/dev/null; ulimit -v "$2" || exit 99; shift 2; exec "$@"' _ "$d" "$l" $cmd >"$d/stdout" 2>"$d/err"
			rc=$?
			extra=$(ls -A "$d" | grep -vxE 'out|prev|stdout|err|core(\.[0-9]+)?')
			tleft=$(ls -A "$d.tmp")
			[ -n "$tleft" ] && bad+="$l KiB: left in TMPDIR: $tleft"$'\n'
			if [ "$rc" = 0 ]; then
				n_ok=$((n_ok + 1))
				if ! cmp -s "$d/out" "$REF/$c"; then
					bad+="$l KiB: exit 0 but the output differs from the unlimited run's"$'\n'
				elif grep -vqE "$OK_ERE" "$d/err"; then
					bad+="$l KiB: exit 0 with stderr: $(head -c 300 "$d/err")"$'\n'
				fi
			elif [ "$rc" = 4 ]; then
				n_oom=$((n_oom + 1))
				nerr=$(grep -cE "$OOM_ERE" "$d/err")
				if [ "$nerr" != 1 ] || grep -vE "$OOM_ERE" "$d/err" | grep -vqE "$OK_ERE"; then
					bad+="$l KiB: exit 4 without exactly one 'out of memory in phase' line: $(head -c 300 "$d/err")"$'\n'
				elif ! cmp -s "$d/out" "$d/prev"; then
					bad+="$l KiB: exit 4 and the previous output is gone or changed"$'\n'
				fi
				phases+=" $(grep -oE 'in phase [a-z_]+' "$d/err" | head -1 | cut -d' ' -f3)"
			else
				bad+="$l KiB: exit $rc ($([ "$rc" -ge 128 ] && echo "signal $((rc - 128))" || echo "neither 0 nor 4")): $(head -c 300 "$d/err")"$'\n'
				bad+="$(core_bt "$d")"$'\n'
			fi
			[ -n "$extra" ] && bad+="$l KiB: left in the output directory: $extra"$'\n'
		done
		rm -rf "$d" # its "previous output" is no BTF for run.sh's dedup check
		phases=$(echo "$phases" | tr ' ' '\n' | sort -u | tr '\n' ' ')
		if [ -z "$bad" ]; then
			ok "$c -j$j under ulimit -v from $floor KiB to 256 MiB: $n_ok succeeded with the unlimited run's bytes, $n_oom refused cleanly (exit 4, out of memory in phase:${phases% }), previous output intact, nothing left"
		else
			not_ok "$c -j$j under ulimit -v: exit 0 with the right bytes or exit 4 out of memory, previous output intact" "$bad"
		fi
		if [ "$n_ok" -gt 0 ] && [ "$n_oom" -gt 0 ]; then
			ok "$c -j$j: the sweep crossed from out of memory to success"
		else
			not_ok "$c -j$j: the sweep crossed from out of memory to success" "$n_ok successes, $n_oom out-of-memory exits over: $limits"
		fi
	done
done
echo "info: $total limited runs"
test_done
