#!/usr/bin/env bash
# t1360-kill-loop: many kills at random moments, the way a scheduler ends
# jobs, for every stage and for pipeline.sh, with and without the cache.
#
# t1310 kills each stage at chosen moments and at the syscalls that matter;
# this one repeats the blind case: KILL_RUNS runs per target (20 in `make
# test`, 200 in `make check-robust`), each killed after a random delay
# between 0 and 1.3 times an uninterrupted run, SIGKILL and SIGTERM in
# turn, sent to the whole process group (pipeline.sh's stages too, as a
# job control or a build system's timeout does). After each run:
#   - exit 0 and the reference bytes, or death by the signal (128 + N) with
#     the output path holding the previous bytes or the complete new ones;
#   - nothing else beside the output: after SIGTERM nothing at all; after
#     SIGKILL at most the stage's one hidden temp file of the linkat-rename
#     window (t1310), complete, never partial;
#   - pipeline.sh's temp directory ($TMPDIR/btfpipe.*) gone after SIGTERM
#     (its EXIT trap); after SIGKILL nothing can remove it: counted, shown.
# After the loop: one uninterrupted run of the target gives the reference
# bytes and removes a leftover temp file of a dead process (a later run
# never trips over one), and for the cache targets the cache verifies:
# dwarf-extract --cache-verify over it exits 0, as does a pipeline.sh run
# with BTFPIPE_CACHE_VERIFY=1.
#
# Mutants this fails on: outfile.c without its SIGTERM handler (a temp
# file left after SIGTERM); a cache entry written in place rather than
# renamed into place (cachedir.c: --cache-verify then meets a torn entry).
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
MERGE="$T_BIN/dedup-merge"
EMIT="$T_BIN/btf-emit"
RUNS=${KILL_RUNS:-20}
export BTFPIPE_BIN="$T_BIN"
# The cache's size limit must not evict during the loop.
export BTFPIPE_CACHE_MAX_SIZE=0

REF="$T_OUT/ref"
C="$T_OUT/cache"
rm -rf "$C" "$T_OUT/tmp"
mkdir -p "$C" "$T_OUT/tmp"
many_refs "$REF"
ELF=$MANY_ELF
for s in cus graph btf elf; do
	for ((i = 0; i < 2000; i++)); do echo "previous $s output, line $i"; done >"$REF/old.$s"
done

# Targets: LABEL<TAB>OUTPUT NAME<TAB>PREVIOUS<TAB>REFERENCE<TAB>COMMAND, @D@
# the run's directory.
TARGETS="extract	many.cus	$REF/old.cus	$REF/many.cus	$EXTRACT -j2 -q -o @D@/many.cus $ELF
extract-cache	many.cus	$REF/old.cus	$REF/many.cus	$EXTRACT -j2 -q --cache $C/x -o @D@/many.cus $ELF
merge	many.graph	$REF/old.graph	$REF/many.graph	$MERGE -j2 -q -o @D@/many.graph $REF/many.cus
merge-cache	many.graph	$REF/old.graph	$REF/many.graph	$MERGE -j2 -q --cache $C/m -o @D@/many.graph $REF/many.cus
emit	many.btf	$REF/old.btf	$REF/many.btf	$EMIT -j2 -q --elf $ELF -o @D@/many.btf $REF/many.graph
emit-elf	many.elf	$REF/old.elf	$REF/many.elf	$EMIT -j2 -q --elf $ELF --elf-out @D@/many.elf $REF/many.graph
emit-inplace	vmlinux	$ELF	$REF/many.elf	$EMIT -j2 -q --elf @D@/vmlinux --elf-out @D@/vmlinux $REF/many.graph
pipeline	many.btf	$REF/old.btf	$REF/many.btf	$T_TOP/pipeline.sh -j2 -q --features default -o @D@/many.btf $ELF
pipeline-cache	many.btf	$REF/old.btf	$REF/many.btf	$T_TOP/pipeline.sh -j2 -q --features default --cache $C/p -o @D@/many.btf $ELF
pahole-J	vmlinux	$ELF	$REF/pahole.elf	$T_TOP/pipeline.sh -J -j2 @D@/vmlinux"

# ms_of CMD...: an uninterrupted run's wall time in ms (at least 5).
ms_of() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000 > 5 ? (t1 - t0) / 1000000 : 5))
}

while IFS=$'\t' read -r label name old ref cmd; do
	base="$T_OUT/run/$label"
	rm -rf "$base" && mkdir -p "$base"
	tmpd="$T_OUT/tmp/$label"
	mkdir -p "$tmpd"
	d="$base/probe" && mkdir -p "$d" && cp "$old" "$d/$name"
	dur=$(ms_of ${cmd//@D@/$d})
	# pahole -J's reference is its own uninterrupted run (pahole's default
	# features differ from btf-emit's; t0910 checks that front).
	[ "$label" = pahole-J ] && cp "$d/$name" "$ref"
	if ! cmp -s "$d/$name" "$ref"; then
		not_ok "$label: an uninterrupted run gives the reference bytes" "$(cmp "$d/$name" "$ref" 2>&1)"
		continue
	fi
	bad="" n_done=0 n_kept=0 n_new=0 n_window=0 n_tmpdirs=0
	for ((i = 1; i <= RUNS; i++)); do
		sig=KILL
		[ $((i % 2)) = 0 ] && sig=TERM
		d="$base/$i"
		mkdir -p "$d" && cp "$old" "$d/$name"
		delay_ms=$((RANDOM % (dur * 13 / 10 + 1)))
		c=${cmd//@D@/$d}
		# setsid: the command leads its own process group, killed whole.
		# The subshell takes bash's "Killed" notice.
		# shellcheck disable=SC2086 # our own paths, no spaces
		rc=$( (
			TMPDIR=$tmpd setsid $c >/dev/null 2>"$d.err" &
			pid=$!
			sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
			kill -s "$sig" -- "-$pid" 2>/dev/null
			wait "$pid"
			echo $?
		) 2>/dev/null)
		killed=$((128 + $(kill -l "$sig")))
		what="run $i (SIG$sig after ${delay_ms} ms)"
		if [ "$rc" = 0 ]; then
			n_done=$((n_done + 1))
			cmp -s "$d/$name" "$ref" || bad+="$what: exit 0 but not the reference bytes"$'\n'
		elif [ "$rc" = "$killed" ] || { [ "$sig" = TERM ] && [ "$rc" = 143 ]; }; then
			if cmp -s "$d/$name" "$old"; then
				n_kept=$((n_kept + 1))
			elif cmp -s "$d/$name" "$ref"; then
				n_new=$((n_new + 1))
			else
				bad+="$what: the output is neither the previous one nor the complete new one"$'\n'
			fi
		else
			bad+="$what: exit $rc: $(head -c 300 "$d.err")"$'\n'
		fi
		# shellcheck disable=SC2010 # our own file names
		left=$(ls -A "$d" | grep -Fvx "$name")
		if [ -n "$left" ]; then
			if [ "$sig" = KILL ] && [ "$(echo "$left" | wc -l)" = 1 ] &&
				echo "$left" | grep -Eq "^\.${name//./\\.}\.tmp\.[0-9]+\.[0-9A-Za-z]{6}\$" &&
				cmp -s "$d/$left" "$ref"; then
				n_window=$((n_window + 1))
				# the next run must clear it: kept for the check after the loop
				[ -e "$base/window" ] || { mkdir -p "$base/window" && cp -a "$d/." "$base/window/"; }
			else
				bad+="$what: left beside the output: $left"$'\n'
			fi
		fi
		tmps=$(ls -A "$tmpd")
		if [ -n "$tmps" ]; then
			if [ "$sig" = TERM ]; then
				bad+="$what: pipeline.sh's temp directory left after SIGTERM: $tmps"$'\n'
			else
				n_tmpdirs=$((n_tmpdirs + $(echo "$tmps" | wc -l)))
			fi
			rm -rf "${tmpd:?}"/*
		fi
		rm -rf "$d"
	done
	if [ -z "$bad" ]; then
		ok "$label: $RUNS random SIGKILL/SIGTERM (uninterrupted run ${dur} ms): $n_done finished, $n_kept killed with the previous bytes, $n_new killed after the commit; $n_window complete temp files of the linkat-rename window; no partial output"
	else
		not_ok "$label: $RUNS random kills: the previous or the complete output, nothing partial, nothing left after SIGTERM" "$bad"
	fi
	[ "$n_tmpdirs" -gt 0 ] && echo "info: $label: $n_tmpdirs pipeline.sh temp directories left by SIGKILL (nothing runs after it to remove them)"
	# A later run over a leftover temp file of a dead process.
	d="$base/window"
	if [ ! -e "$d" ]; then
		d="$base/after" && mkdir -p "$d" && cp "$old" "$d/$name"
	fi
	c=${cmd//@D@/$d}
	# shellcheck disable=SC2086
	if TMPDIR=$tmpd $c >/dev/null 2>"$d.err" && cmp -s "$d/$name" "$ref" && [ "$(ls -A "$d")" = "$name" ]; then
		ok "$label: a run after the kills gives the reference bytes and leaves only the output$([ -e "$base/window" ] && echo ", the dead run's temp file removed")"
	else
		not_ok "$label: a run after the kills gives the reference bytes and leaves only the output" "$(ls -lA "$d"; head -c 300 "$d.err")"
	fi
done <<<"$TARGETS"

# The caches the kills hit verify.
bad=""
for x in x p; do
	[ -d "$C/$x" ] || continue
	"$EXTRACT" -j2 -q --cache "$C/$x" --cache-verify -o "$T_OUT/verify.cus" "$ELF" 2>"$T_OUT/verify.err" ||
		bad+="dwarf-extract --cache-verify over $C/$x: $(head -c 300 "$T_OUT/verify.err")"$'\n'
done
BTFPIPE_CACHE_VERIFY=1 "$T_TOP/pipeline.sh" -j2 -q --features default --cache "$C/p" -o "$T_OUT/verify.btf" "$ELF" 2>"$T_OUT/verify.err" ||
	bad+="pipeline.sh with BTFPIPE_CACHE_VERIFY=1 over $C/p: $(head -c 300 "$T_OUT/verify.err")"$'\n'
cmp -s "$T_OUT/verify.btf" "$REF/many.btf" || bad+="the verified pipeline run: not the reference BTF"$'\n'
stale=$(find "$C" -name '*.tmp*' -o -name '.*tmp*' | head -5)
if [ -z "$bad" ]; then
	ok "after the kills every cache verifies (--cache-verify, BTFPIPE_CACHE_VERIFY=1)"
else
	not_ok "after the kills every cache verifies" "$bad"
fi
[ -n "$stale" ] && echo "info: temp files of killed cache stores still in the cache: $stale"
test_done
