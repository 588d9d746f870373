#!/usr/bin/env bash
# t1345-failalloc: every allocation of every stage made to fail, one run each.
#
# t1340's ulimit -v sweep reaches the few allocations that happen to cross
# its limits. Here the stages are linked again with tests/tools/failalloc.c
# under malloc, calloc and realloc (bin/tools/failalloc/: ours and the
# static libdw's, libelf's and libbpf's calls alike), and run once for each
# N from 1 to one past their count of allocations, with the Nth and every
# later one failing, as under a full address space. Each run must end as
# t1340 asks: exit 4 with exactly one "out of memory in phase P" line and
# the previous output intact, nothing else left, or exit 0 with the bytes of
# a run that failed nothing. Never a signal, never exit 1 or 3 (bad input,
# an I/O error: a refusal a build would blame on its input or disk).
#
# Cases, over a 24-unit program (tests/gen/many-cus.sh: each allocation
# site of the 120-unit one is here, with fewer repeats of each):
#   extract, merge, emit, emit-elf   -j1: every N, deterministic
#   extract-cache                    -j1 --cache into a fresh directory:
#                                    every N, and the cache verifies after
#   extract-rel                      -j1 and -j4: the same units linked -r
#                                    into one relocatable object, as a
#                                    module is (relocations applied to the
#                                    DWARF in extract's own copy)
#   emit-split                       -j1 and -j4: that object's BTF split
#                                    over the program's, as a module's over
#                                    vmlinux
#   emit-distill                     -j1: the same with distilled_base,
#                                    which writes OUT.base beside OUT: a
#                                    pair, both previous or both new
#   emit-both                        -j1: -o and --elf-out in one run: both
#                                    previous or both new
#   extract, merge, emit             -j4: every N, threads racing to fail
#                                    (a thread still working while another
#                                    reports is where a crash would hide)
# and again "once" (the -j1 cases and extract -j4): the Nth allocation
# alone fails and the later ones succeed, as under ulimit -v, where a small
# block can still be had after a big one could not. That finds a caller
# that ignores a failure, which the every-later mode hides: the next
# allocation fails too and takes the blame.
#
# Mutants this fails on: merge_free() without its m->wanted check (SIGSEGV
# when open_inputs()'s calloc fails, at N=2 of merge); elf_begin()'s failure
# said as "not an ELF file" (exit 1 at extract's N=1); graph_read.c copying
# a section's whole diag over the caller's (the phase lost, emit's N=2);
# elf_write.c trusting elf_newscn() without its error code (SIGSEGV in
# libelf's elf_newdata(), emit-elf's N=555 and on); libbpf failing to
# allocate while reading the base said as an unreadable base (exit 1,
# emit-split); base_view__open_raw()'s ENOMEM on our own BTF taken for a
# bug (exit 4 "bug at", emit-split); btf-emit committing -o before it
# wrote OUT.base or the --elf-out ELF (a new OUT beside the previous base,
# emit-distill's N=577..584; beside the previous ELF, emit-both); the build
# without -Wl,--wrap=Dwarf_Abbrev_Hash_init (common/fatal.c: libdw ignores
# that table's failed malloc, then SIGSEGV in Dwarf_Abbrev_Hash_find, extract
# once from N=19). A crash's backtrace is printed from its core (gdb) under
# the failure.
#
# Not under a sanitizer: ASan owns malloc, and there is no failalloc build.
. "$(dirname "$0")/lib.sh"

case "$T_VARIANT" in
bin-asan | bin-tsan)
	skip "allocation failure injection on the $T_VARIANT build" "a sanitizer owns malloc; no failalloc build there"
	test_done
	;;
esac
FA="$T_BIN/tools/failalloc"
for s in dwarf-extract dedup-merge btf-emit; do
	if [ ! -x "$FA/$s" ]; then
		not_ok "the failalloc build of $s" "$FA/$s is missing (make builds it)"
		test_done
	fi
done

if ! out=$(bash "$T_TOP/tests/gen/many-cus.sh" "$T_OUT/in" 24 "$GCC" 2>&1); then
	not_ok "generate and build the 24-unit program" "$out"
	test_done
fi
ELF="$T_OUT/in/many-$(basename "$GCC")"
REL="$T_OUT/in/many.o"
REF="$T_OUT/ref"
mkdir -p "$REF" "$T_OUT/in/obj"
# The module-shaped input: the units compiled (-O2 -g, as many-cus.sh
# builds them) and linked -r.
if ! out=$(for f in "$T_OUT"/in/src/u*.c; do
	"$GCC" -O2 -g -c -o "$T_OUT/in/obj/$(basename "$f" .c).o" "$f" || exit 1
done 2>&1 && ld -r -o "$REL" "$T_OUT"/in/obj/*.o 2>&1); then
	not_ok "compile the units and link them -r into one object" "$out"
	test_done
fi
if ! out=$("$T_BIN/dwarf-extract" -q -o "$REF/cus" "$ELF" 2>&1 &&
	"$T_BIN/dedup-merge" -q -o "$REF/graph" "$REF/cus" 2>&1 &&
	"$T_BIN/btf-emit" -q --elf "$ELF" -o "$REF/btf" "$REF/graph" 2>&1 &&
	"$T_BIN/btf-emit" -q --elf "$ELF" --elf-out "$REF/elf" "$REF/graph" 2>&1 &&
	"$T_BIN/dwarf-extract" -q -o "$REF/rel.cus" "$REL" 2>&1 &&
	"$T_BIN/dedup-merge" -q -o "$REF/rel.graph" "$REF/rel.cus" 2>&1 &&
	"$T_BIN/btf-emit" -q --elf "$REL" --btf-base "$REF/btf" -o "$REF/split" "$REF/rel.graph" 2>&1 &&
	"$T_BIN/btf-emit" -q --features default,distilled_base --elf "$REL" --btf-base "$REF/btf" -o "$REF/distill" "$REF/rel.graph" 2>&1); then
	not_ok "reference runs of the 24-unit program and object" "$out"
	test_done
fi

# Under a limit, as t1340's runs are: that is what a stage's out-of-memory
# paths assume (common/fatal.h: a library's failed assert reads as out of
# memory only there), and no stage starts itself again for its tunables.
ulimit -v 16777216
# cores for the backtrace, as far as the hard limit lets
ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -Hc)"
shopt -s nullglob dotglob # the leftover check globs the output directory

# case_args CASE J OUT: the stage and its arguments, writing OUT.
case_args() {
	local j=$2 o=$3
	case $1 in
	extract) echo "dwarf-extract -j$j -q -o $o $ELF" ;;
	extract-cache) echo "dwarf-extract -j$j -q --cache $D/cache -o $o $ELF" ;;
	extract-rel) echo "dwarf-extract -j$j -q -o $o $REL" ;;
	emit-split) echo "btf-emit -j$j -q --elf $REL --btf-base $REF/btf -o $o $REF/rel.graph" ;;
	emit-distill) echo "btf-emit -j$j -q --features default,distilled_base --elf $REL --btf-base $REF/btf -o $o $REF/rel.graph" ;;
	emit-both) echo "btf-emit -j$j -q --elf $ELF -o $o --elf-out $o.elf $REF/graph" ;;
	merge) echo "dedup-merge -j$j -q -o $o $REF/cus" ;;
	emit) echo "btf-emit -j$j -q --elf $ELF -o $o $REF/graph" ;;
	emit-elf) echo "btf-emit -j$j -q --elf $ELF --elf-out $o $REF/graph" ;;
	esac
}
# phases_of CASE: the phases whose allocations every case's sweep reaches;
# a failure in each must name it (a stage that named the phase after the
# one that failed reported every merge failure from the scan on as "write").
# At -j1 only: with threads, how many allocations a run makes depends on
# which worker took which item (their buffers grow apart), from 836 to 1132
# on one extract -j4, so a sweep as long as the reference run's may end
# before the last phase's allocations.
phases_of() {
	case $1 in
	extract*) echo "open extract write" ;;
	merge) echo "open scan refine build write" ;;
	emit-split | emit-distill) echo "read select encode base write" ;;
	emit*) echo "read select encode write" ;;
	esac
}
ref_of() {
	case $1 in
	extract-rel) echo "$REF/rel.cus" ;; emit-split) echo "$REF/split" ;; emit-distill) echo "$REF/distill" ;;
	extract*) echo "$REF/cus" ;; merge) echo "$REF/graph" ;; emit | emit-both) echo "$REF/btf" ;; emit-elf) echo "$REF/elf" ;;
	esac
}

OOM_RE='^btfpipe: [^ ]+: error: out of memory in phase [a-z_]+(: .*)?$'
# The warnings allowed beside it: a worker thread that cannot start (-j4),
# a cache that cannot be opened or written (the run goes on without it).
WARN_RE='^btfpipe: [^ ]+: warning: ([0-9]+ worker thread starts? failed|.*going on without the cache$|cache .*\(the output is not affected\)$)'

# Run the case for N = 1 .. count+1. Checks use shell builtins where they
# can: there are thousands of runs.
total_runs=0
# FAILALLOC_CASES: some of them only (CASE:J or CASE:J:once words), to
# debug one stage.
for cj in ${FAILALLOC_CASES:-extract:1 extract-cache:1 merge:1 emit:1 emit-elf:1 extract-rel:1 emit-split:1 emit-distill:1 emit-both:1 extract:4 merge:4 emit:4 extract-rel:4 emit-split:4 \
	extract:1:once extract-cache:1:once merge:1:once emit:1:once emit-elf:1:once extract-rel:1:once emit-split:1:once emit-distill:1:once extract:4:once}; do
	IFS=: read -r c j once <<<"$cj"
	# once: the Nth allocation alone fails (failalloc.c's BTFPIPE_FAILALLOC_ONLY)
	only="" mode="made to fail in turn" label="$c -j$j"
	[ "$once" = once ] && only=1 mode="made to fail alone, in turn" label="$c -j$j (once)"
	D="$T_OUT/run/$c-j$j${once:+-once}"
	rm -rf "$D" && mkdir -p "$D"
	cd "$D" || exit 1
	ref=$(ref_of "$c")
	# A second output written with OUT (the same rules for both) and its
	# reference: distilled_base's OUT.base, --elf-out's ELF.
	two="" two_ref=""
	case $c in
	emit-distill) two="$D/out.base" two_ref="$ref.base" ;;
	emit-both) two="$D/out.elf" two_ref="$REF/elf" ;;
	esac
	args=()
	read -ra args <<<"$(case_args "$c" "$j" "$D/out")"
	if [ "${#args[@]}" = 0 ]; then
		not_ok "FAILALLOC_CASES: $cj" "no such case"
		continue
	fi
	rm -rf "$D/cache"
	BTFPIPE_FAILALLOC_COUNT="$D/count" "$FA/${args[0]}" "${args[@]:1}" 2>"$D/err"
	rc=$?
	count=""
	read -r count 2>/dev/null <"$D/count"
	# A count this small means the wrap did not take (no stage run makes
	# fewer than several hundred allocations here).
	if [ "$rc" != 0 ] || ! cmp -s "$D/out" "$ref" || { [ -n "$two" ] && ! cmp -s "$two" "$two_ref"; } || [ "${count:-0}" -lt 100 ]; then
		not_ok "$label: a failalloc run that fails nothing gives the reference bytes and a count of its allocations" "exit $rc, count '$count': $(head -c 300 "$D/err")"
		continue
	fi
	rm -f "$D/count"
	bad="" n_ok=0 n_oom=0 phases=" " first_rc=""
	for ((n = 1; n <= count + 1; n++)); do
		[ "$c" = extract-cache ] && rm -rf "$D/cache"
		printf 'prev\n' >"$D/out"
		[ -n "$two" ] && printf 'prev\n' >"$two"
		BTFPIPE_FAILALLOC=$n BTFPIPE_FAILALLOC_ONLY=$only "$FA/${args[0]}" "${args[@]:1}" >"$D/stdout" 2>"$D/err"
		rc=$?
		total_runs=$((total_runs + 1))
		[ -n "$first_rc" ] || first_rc=$rc
		why=""
		if [ "$rc" = 0 ]; then
			n_ok=$((n_ok + 1))
			nbad=0
			while IFS= read -r line || [ -n "$line" ]; do
				[[ $line =~ $WARN_RE ]] || nbad=$((nbad + 1))
			done <"$D/err"
			if ! cmp -s "$D/out" "$ref" || { [ -n "$two" ] && ! cmp -s "$two" "$two_ref"; }; then
				why="exit 0 but not the reference bytes"
			elif [ "$nbad" != 0 ]; then
				why="exit 0 with an error or unknown warning"
			fi
		elif [ "$rc" = 4 ]; then
			n_oom=$((n_oom + 1))
			nline=0 nbad=0 phase=""
			while IFS= read -r line || [ -n "$line" ]; do
				if [[ $line =~ $OOM_RE ]]; then
					nline=$((nline + 1))
					phase=${line#* in phase }
					phase=${phase%%:*}
				elif ! [[ $line =~ $WARN_RE ]]; then
					nbad=$((nbad + 1))
				fi
			done <"$D/err"
			if [ "$nline" != 1 ] || [ "$nbad" != 0 ]; then
				why="exit 4 without exactly one 'out of memory in phase' line"
			else
				for o in "$D/out" $two; do
					a="" b=""
					if ! { IFS= read -r a && ! IFS= read -r b && [ -z "$b" ] && [ "$a" = prev ]; } <"$o"; then
						why="exit 4 and the previous output is gone or changed (${o##*/})"
					fi
				done
				[[ $phases == *" $phase "* ]] || phases+="$phase "
			fi
		else
			why="exit $rc$([ "$rc" -ge 128 ] && echo " (signal $((rc - 128)))")"
		fi
		leftover=""
		for f in "$D"/*; do
			case ${f##*/} in out | stdout | err | cache | core*) ;; out.base | out.elf) [ "$f" = "$two" ] || leftover+="${f##*/} " ;; *) leftover+="${f##*/} " ;; esac
		done
		[ -n "$leftover" ] && why+="${why:+; }left in the output directory: $leftover"
		if [ -z "$why" ] && [ "$c" = extract-cache ] && [ -d "$D/cache" ] &&
			! err=$("$T_BIN/dwarf-extract" -q --cache "$D/cache" --cache-verify -o "$D/verify.cus" "$ELF" 2>&1); then
			why="the cache it left does not verify: $err"
		fi
		rm -f "$D/verify.cus"
		if [ -n "$why" ]; then
			bad+="N=$n: $why: $(head -c 200 "$D/err" | tr '\n' '|')"$'\n'
			for core in "$D"/core*; do
				[ -f "$core" ] && command -v gdb >/dev/null &&
					bad+="$(gdb -q -batch -ex 'bt 12' "$FA/${args[0]}" "$core" 2>/dev/null | grep '^#' | awk '!seen[$0]++')"$'\n'
				rm -f "$core"
			done
			# the first few say enough; the rest are counted
			[ "$(printf '%s' "$bad" | grep -c '^N=')" -ge 8 ] && { bad+="(stopped at N=$n of $((count + 1)))"; break; }
		fi
	done
	cd "$T_OUT" || exit 1
	rm -rf "$D" # its outputs are no BTF for run.sh's dedup check
	# The injection itself: the first allocation failing must stop the run.
	# (once, the run may recover from its first allocation failing alone)
	{ [ "$first_rc" = 4 ] || [ -n "$only" ]; } && [ "$n_oom" -gt 0 ] ||
		bad+="the injection did not take: N=1 exited ${first_rc:-?}, $n_oom runs out of memory"$'\n'
	missing=""
	for p in $([ "$j" = 1 ] && phases_of "$c"); do
		[[ $phases == *" $p "* ]] || missing+="$p "
	done
	[ -z "$missing" ] ||
		bad+="no failure was reported in phase ${missing% } (the phases named:${phases% }): a message names the wrong phase"$'\n'
	if [ -z "$bad" ]; then
		ok "$label: each of its $count allocations $mode: $n_oom runs refused cleanly (exit 4, out of memory in phase:${phases% }), $n_ok succeeded with the reference bytes; no crash, previous output intact, nothing left"
	else
		not_ok "$label: each of its $count allocations $mode: exit 4 out of memory with the previous output intact, or exit 0 with the reference bytes" "$bad"
	fi
done
echo "info: $total_runs runs with an allocation failing"
test_done
