#!/usr/bin/env bash
# t1310-kill: a stage killed at any moment loses no data and leaves no
# partial file.
#
# Every stage writes its output atomically (common/outfile.c: an unnamed
# O_TMPFILE, linked under a hidden temp name, renamed over the target). So
# whenever a stage is SIGKILLed, the output path must hold either
#   - the previous output, byte for byte (killed before the rename), or
#   - the complete new output: the same bytes as an uninterrupted run (killed
#     after the rename, or it finished before the kill);
# and the output directory must hold nothing else (`ls -A`): no partial file,
# no temp file. A make that is interrupted then simply reruns the step.
#
# Stages, each over an output that already exists with known content:
#   extract       dwarf-extract -j2 of a generated 120-CU program
#                 (tests/gen/many-cus.sh, long enough to be killed mid-run)
#   merge         dedup-merge -j2 of its .cus
#   emit          btf-emit -o (raw BTF)
#   emit-elf      btf-emit --elf-out into a separate ELF file
#   emit-inplace  btf-emit --elf-out over its own --elf input (a copy of the
#                 program: what `pahole -J vmlinux` does), so the "previous
#                 output" is the input itself
#
# Two kinds of kill:
#   1. timed: SIGKILL after 2 to 100 ms (kill from the shell, and
#      `timeout -s KILL`). Where the kill lands depends on the machine; an
#      "info:" line per stage says how many kills interrupted the stage.
#   2. deterministic, under strace's fault injection (when strace can trace):
#      SIGKILL on entry to the first write, to the third write, to linkat
#      (the data is complete but has no name yet) and to rename (the data has
#      its hidden temp name); SIGTERM on entry to the first write and to
#      rename (the stage's handler must remove its temp file). These always
#      land where they say, so the checks above run at every interesting
#      point whatever the timing. Also the driver (pipeline.sh, both
#      command lines) signalled just after it made its temp directory
#      (SIGTERM, SIGINT, SIGHUP) or writing into a closed pipe (SIGPIPE):
#      none may stay.
#
# The one place a SIGKILL can leave a file behind is between linkat and
# rename: rename needs a name to move, and nothing runs after SIGKILL. That
# window is not negligible: on ext4, a rename over an existing file first
# flushes the new file's delayed-allocation blocks (auto_da_alloc), about
# 1 ms for the 1 MB .cus here, while a rename to a new name takes 20 us; a
# kill in that flush keeps the old output and leaves the named temp. So after
# a SIGKILL every check allows exactly one extra file, the stage's hidden temp
# (.NAME.tmp.PID.XXXXXX), says so on an "info:" line, and requires it to be
# complete (equal to an uninterrupted run), never partial. Anything else in
# the directory fails. The next run of the stage removes such a leftover (its
# process is gone): checked after the SIGKILL injected on rename.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
MERGE="$T_BIN/dedup-merge"
EMIT="$T_BIN/btf-emit"
MANY_N=${MANY_N:-120}

# describe_rc RC: what an unexpected exit code means, for failure messages.
describe_rc() {
	case $1 in
	124) echo "exit 124: hung, killed by timeout" ;;
	86 | 87) echo "exit $1: sanitizer report (ASan/UBSan exit code)" ;;
	*) if [ "$1" -ge 128 ]; then echo "exit $1: killed by signal $(($1 - 128))"; else echo "exit $1"; fi ;;
	esac
}

# --- inputs and uninterrupted reference outputs -------------------------------
IN="$T_OUT/in"
if ! out=$(bash "$T_TOP/tests/gen/many-cus.sh" "$IN" "$MANY_N" "$GCC" 2>&1); then
	not_ok "generate and build the $MANY_N-unit program" "$out"
	test_done
fi
ELF="$IN/many-$(basename "$GCC")"
REF="$T_OUT/ref"
mkdir -p "$REF"
cp "$ELF" "$REF/vmlinux"
ref_ok=1
for step in \
	"$EXTRACT -j2 -o $REF/many.cus $ELF" \
	"$MERGE -j2 -o $REF/many.graph $REF/many.cus" \
	"$EMIT --elf $ELF -o $REF/many.btf $REF/many.graph" \
	"$EMIT --elf $ELF --elf-out $REF/many.elf $REF/many.graph" \
	"$EMIT --elf $REF/vmlinux --elf-out $REF/vmlinux $REF/many.graph"; do
	# shellcheck disable=SC2086 # the paths have no spaces: they are ours
	if ! out=$(timeout 120 $step 2>&1); then
		not_ok "uninterrupted run: ${step#"$T_TOP"/}" "$out"
		ref_ok=0
	fi
done
[ "$ref_ok" = 1 ] || test_done
ok "uninterrupted runs of every stage give the reference outputs"

# The "previous output" each stage finds at its output path. Known content,
# different from the reference (checked below, else "byte-identical to the
# previous output" could not tell a kept file from a new one).
OLD="$T_OUT/old"
mkdir -p "$OLD"
for s in cus graph btf elf; do
	for ((i = 0; i < 2000; i++)); do echo "previous $s output, line $i"; done >"$OLD/many.$s"
done

# The stages: LABEL<TAB>OUTPUT NAME<TAB>PREVIOUS<TAB>REFERENCE<TAB>COMMAND, where
# @D@ in the command is the directory of the run.
STAGES="extract	many.cus	$OLD/many.cus	$REF/many.cus	$EXTRACT -j2 -o @D@/many.cus $ELF
merge	many.graph	$OLD/many.graph	$REF/many.graph	$MERGE -j2 -o @D@/many.graph $REF/many.cus
emit	many.btf	$OLD/many.btf	$REF/many.btf	$EMIT --elf $ELF -o @D@/many.btf $REF/many.graph
emit-elf	many.elf	$OLD/many.elf	$REF/many.elf	$EMIT --elf $ELF --elf-out @D@/many.elf $REF/many.graph
emit-inplace	vmlinux	$ELF	$REF/vmlinux	$EMIT --elf @D@/vmlinux --elf-out @D@/vmlinux $REF/many.graph"

while IFS=$'\t' read -r label name old ref cmd; do
	if cmp -s "$old" "$ref"; then
		not_ok "$label: the previous output differs from the new one" "$old and $ref are equal: a kept file and a new one could not be told apart"
	else
		ok "$label: the previous output differs from the new one"
	fi
done <<<"$STAGES"

# verify WHAT DIR NAME OLD REF RC ERR [SIG]: after a run of a stage into DIR
# that ended with RC: the output is the previous one or a complete new one,
# and DIR holds nothing but NAME. SIG is the signal sent (default KILL).
# Sets $kept to 1 when the previous output was kept (the kill interrupted).
verify() {
	local what=$1 dir=$2 name=$3 old=$4 ref=$5 rc=$6 err=$7 sig=${8:-KILL}
	local out="$dir/$name" killed
	killed=$((128 + $(kill -l "$sig")))
	kept=0
	if [ "$rc" -eq 0 ]; then
		if cmp -s "$ref" "$out"; then
			ok "$what: finished: the output is complete (equals an uninterrupted run)"
		else
			not_ok "$what: finished: the output is complete (equals an uninterrupted run)" \
				"$(ls -l "$out" 2>&1; cmp "$ref" "$out" 2>&1)"
		fi
	elif [ "$rc" -eq "$killed" ]; then
		if cmp -s "$old" "$out"; then
			ok "$what: killed: the previous output is byte-identical"
			kept=1
		elif cmp -s "$ref" "$out"; then
			ok "$what: killed after the commit: the new output is complete"
		else
			not_ok "$what: killed: the output is the previous one or a complete new one" \
				"$(ls -l "$out" 2>&1; echo "vs previous: $(cmp "$old" "$out" 2>&1)"; echo "vs new: $(cmp "$ref" "$out" 2>&1)")"
		fi
	else
		not_ok "$what: exits 0 or dies of SIG$sig ($killed)" "$(describe_rc "$rc"); stderr: $(head -c 1500 "$err")"
	fi
	# The linkat-rename window (see the top of this file): one complete
	# hidden temp may remain after a SIGKILL; it is checked, then moved out.
	local leftover listing
	# shellcheck disable=SC2010 # our own file names: no newlines
	leftover=$(ls -A "$dir" | grep -Fvx "$name")
	if [ "$sig" = KILL ] && [ "$rc" -eq "$killed" ] && [ -n "$leftover" ] &&
		[ "$(echo "$leftover" | wc -l)" -eq 1 ] &&
		echo "$leftover" | grep -Eq "^\.${name//./\\.}\.tmp\.[0-9]+\.[0-9A-Za-z]{6}\$"; then
		echo "info: $what: left its temp file $leftover (the linkat-rename window)"
		check_same "$what: the temp file left behind is complete, not partial" "$ref" "$dir/$leftover"
		mv "$dir/$leftover" "$dir.leftover"
		leftover_name=$leftover
		windows=$((windows + 1))
	fi
	local left="no partial or temporary file left"
	[ -e "$dir.leftover" ] && left="nothing else left (no partial file, no other temp)"
	listing=$(ls -A "$dir")
	if [ "$listing" = "$name" ]; then ok "$what: $left"; else
		not_ok "$what: $left" "$(ls -lA "$dir")"
	fi
}

# fresh DIR NAME OLD: an empty DIR holding only NAME, a copy of OLD.
fresh() {
	rm -rf "$1" && mkdir -p "$1" && cp "$3" "$1/$2"
}

# --- 1. timed kills -------------------------------------------------------------
# Delays in seconds: the kill from the shell, then timeout -s KILL.
KILL_DELAYS="0.005 0.02 0.05 0.1 0.002 0.01 0.035 0.075"
TIMEOUT_DELAYS="0.005 0.02 0.05"
while IFS=$'\t' read -r label name old ref cmd; do
	n=0 interrupted=0 runs=0 windows=0
	for how in kill timeout; do
		if [ "$how" = kill ]; then delays=$KILL_DELAYS; else delays=$TIMEOUT_DELAYS; fi
		for d in $delays; do
			n=$((n + 1))
			dir="$T_OUT/timed/$label.$n"
			fresh "$dir" "$name" "$old"
			c=${cmd//@D@/$dir}
			err="$dir.err"
			# The subshells take bash's "Killed" notice; the stage's own stderr
			# goes to $err. Word splitting of $c is wanted (our paths).
			if [ "$how" = kill ]; then
				# shellcheck disable=SC2086
				rc=$( (
					$c >/dev/null 2>"$err" &
					pid=$!
					sleep "$d"
					kill -KILL "$pid" 2>/dev/null
					wait "$pid"
					echo $?
				) 2>/dev/null)
			else
				# shellcheck disable=SC2086
				rc=$( (
					timeout -s KILL "$d" $c >/dev/null 2>"$err"
					echo $?
				) 2>/dev/null)
			fi
			verify "$label: SIGKILL ($how) after $(awk "BEGIN { print $d * 1000 }") ms" \
				"$dir" "$name" "$old" "$ref" "$rc" "$err"
			runs=$((runs + 1))
			interrupted=$((interrupted + kept))
		done
	done
	echo "info: $label ($(basename "$T_BIN")): $interrupted of $runs timed kills interrupted the stage;" \
		"$windows of them in the linkat-rename window"
done <<<"$STAGES"

# --- 2. the sweep leaves alone what is not a dead writer's leftover --------------
# A temp of a live process (this shell: another writer of the same target,
# mid-write) and names not of the exact form stay.
dir="$T_OUT/sweep"
fresh "$dir" many.graph "$OLD/many.graph"
live=".many.graph.tmp.$$.abc123"
for f in "$live" ".many.graph.tmp.XXXXXX" ".many.graph.tmp.12.abc" "other.tmp.1.abc123"; do
	echo partial >"$dir/$f"
done
if "$MERGE" -j2 -o "$dir/many.graph" "$REF/many.cus" 2>"$dir.err"; then
	check_same "sweep: the merge writes its output" "$REF/many.graph" "$dir/many.graph"
	got=$(ls -A "$dir" | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$live" ".many.graph.tmp.XXXXXX" ".many.graph.tmp.12.abc" "other.tmp.1.abc123" many.graph | sort | tr '\n' ' ')
	if [ "$got" = "$want" ]; then ok "sweep: a live writer's temp and other names are left alone"; else
		not_ok "sweep: a live writer's temp and other names are left alone" "got: $got; want: $want"; fi
else
	not_ok "sweep: the merge writes its output" "$(cat "$dir.err")"
fi

# --- 3. kills at exact points, by strace fault injection ---------------------------
# LSan cannot work under ptrace; nothing here is about leaks.
if ! have strace; then
	skip "kills at exact syscalls" "strace is not installed"
	test_done
fi
if ! strace -f -qq -o /dev/null true 2>/dev/null; then
	skip "kills at exact syscalls" "strace cannot trace here (ptrace not permitted)"
	test_done
fi
WRITES=write,pwrite64,writev,pwritev,pwritev2
# POINT<TAB>SIGNAL<TAB>SYSCALLS<TAB>WHEN<TAB>MUST HIT (1: the stage always makes that call)
POINTS="first write	KILL	$WRITES	1	1
third write	KILL	$WRITES	3	0
linkat (complete, no name yet)	KILL	linkat	1	1
rename (complete, under its temp name)	KILL	rename,renameat,renameat2	1	1
first write	TERM	$WRITES	1	1
rename (complete, under its temp name)	TERM	rename,renameat,renameat2	1	1"
while IFS=$'\t' read -r label name old ref cmd; do
	while IFS=$'\t' read -r point sig calls when must; do
		n=$((n + 1))
		what="$label: SIG$sig on entry to $point"
		dir="$T_OUT/exact/$label.$n"
		fresh "$dir" "$name" "$old"
		c=${cmd//@D@/$dir}
		err="$dir.err"
		# shellcheck disable=SC2086
		rc=$( (
			ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
				timeout 60 strace -f -qq -o /dev/null -e trace="$calls" \
				-e inject="$calls:signal=$sig:when=$when" $c >/dev/null 2>"$err"
			echo $?
		) 2>/dev/null)
		windows=0
		if [ "$must" = 1 ]; then
			if [ "$rc" -ne 0 ]; then ok "$what: the injected signal lands"; else
				not_ok "$what: the injected signal lands" \
					"exit 0: the stage never entered $calls; stderr: $(head -c 1500 "$err")"
			fi
		fi
		verify "$what" "$dir" "$name" "$old" "$ref" "$rc" "$err" "$sig"
		if [ "$sig" = KILL ] && [ -e "$dir.leftover" ] && case $point in rename*) true ;; *) false ;; esac; then
			# The leftover back in place, as the killed run left it; the
			# next run must finish and sweep it.
			mv "$dir.leftover" "$dir/$leftover_name"
			# shellcheck disable=SC2086
			if $c >/dev/null 2>"$err"; then
				check_same "$label: the run after a kill on rename writes the complete output" "$ref" "$dir/$name"
				listing=$(ls -A "$dir")
				if [ "$listing" = "$name" ]; then ok "$label: ... and removes the killed run's leftover temp"; else
					not_ok "$label: ... and removes the killed run's leftover temp" "$(ls -lA "$dir")"
				fi
			else
				not_ok "$label: the run after a kill on rename succeeds" "$(head -c 1500 "$err")"
			fi
		fi
	done <<<"$POINTS"
done <<<"$STAGES"

# --- 4. the driver's temp directory ------------------------------------------
# The driver (pipeline.sh execs bin/btfpipe) keeps the stages' checkpoints
# in a directory of its own under $TMPDIR and must remove it whatever ends
# the run. A signal on entry to the mkdir that makes it lands just after
# the directory exists, before any stage starts: the window where a handler
# not yet installed left the directory. Each signal it catches, in both
# command lines: the run ends with 128 + the signal, the input untouched,
# nothing left.
for sig in TERM INT HUP; do
	for mode in J native; do
		what="pipeline.sh ($mode): SIG$sig on entry to the mkdir of its temp directory"
		dir="$T_OUT/exact/driver-$mode-$sig"
		fresh "$dir" vmlinux "$ELF"
		mkdir -p "$dir.tmp"
		if [ $mode = J ]; then args=(-J -j2 "$dir/vmlinux"); else args=(-j2 -o "$dir/out.btf" "$dir/vmlinux"); fi
		rc=$( (
			TMPDIR="$dir.tmp" ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
				timeout 60 strace -f -qq -o /dev/null -e trace=mkdir \
				-e inject=mkdir:signal=$sig:when=1 "$T_TOP/pipeline.sh" "${args[@]}" >/dev/null 2>"$dir.err"
			echo $?
		) 2>/dev/null)
		want=$((128 + $(kill -l $sig)))
		left=$(ls -A "$dir.tmp")
		if [ "$rc" = $want ] && [ -z "$left" ] && cmp -s "$ELF" "$dir/vmlinux" && [ "$(ls -A "$dir")" = vmlinux ]; then
			ok "$what: exit $want, the input untouched, no temp directory left"
		else
			not_ok "$what: exit $want, the input untouched, no temp directory left" \
				"exit $rc; left in TMPDIR: ${left:-nothing}; in $dir: $(ls -A "$dir" | tr '\n' ' '); $(cmp "$ELF" "$dir/vmlinux" 2>&1); $(head -c 600 "$dir.err")"
		fi
	done
done

# A writer killed in the linkat-rename window whose parent died with it is
# a zombie until something reaps it, and on a VM whose init does not, it
# stays one: kill(pid, 0) still finds it. Its temp file must go all the
# same. (The zombie: a sleep 0.3 that ends after its parent bash became
# sleep 5, which never reaps it; ended before the exec, bash would reap it.)
dir="$T_OUT/exact/zombie"
rm -rf "$dir" && mkdir -p "$dir"
bash -c 'sleep 0.3 & echo $! >"$1/zpid"; exec sleep 5' _ "$dir" &
holder=$!
for _ in $(seq 30); do
	zpid=$(cat "$dir/zpid" 2>/dev/null)
	[ -n "$zpid" ] && grep -q '^[0-9]* ([^)]*) Z' "/proc/$zpid/stat" 2>/dev/null && break
	sleep 0.1
done
if [ -n "$zpid" ] && grep -q '^[0-9]* ([^)]*) Z' "/proc/$zpid/stat" 2>/dev/null; then
	rm -f "$dir/zpid"
	cp "$REF/many.btf" "$dir/.many.btf.tmp.$zpid.abcdef"
	"$EMIT" --elf "$ELF" -o "$dir/many.btf" "$REF/many.graph" 2>"$dir.err"
	if cmp -s "$dir/many.btf" "$REF/many.btf" && [ "$(ls -A "$dir")" = many.btf ]; then
		ok "a dead writer's temp file is removed though the writer is a zombie (pid $zpid)"
	else
		not_ok "a dead writer's temp file is removed though the writer is a zombie (pid $zpid)" "$(ls -A "$dir"; head -c 300 "$dir.err")"
	fi
else
	skip "a dead writer's temp file is removed though the writer is a zombie" "no zombie could be made: $(cut -c1-40 "/proc/$zpid/stat" 2>&1)"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# SIGPIPE: -o - into a pipe whose reader has gone. The driver writes the BTF
# itself (the stages write files), so the signal is its own: it ends with
# 141 and leaves nothing, like the others.
what="pipeline.sh -o - into a closed pipe (SIGPIPE)"
dir="$T_OUT/exact/driver-pipe"
mkdir -p "$dir.tmp"
rc=$( (
	set -o pipefail
	TMPDIR="$dir.tmp" "$T_TOP/pipeline.sh" -j2 -o - "$ELF" 2>"$dir.err" | (exec 0<&-; true)
	echo $?
) 2>/dev/null)
left=$(ls -A "$dir.tmp")
if [ "$rc" = 141 ] && [ -z "$left" ]; then
	ok "$what: exit 141, no temp directory left"
else
	not_ok "$what: exit 141, no temp directory left" "exit $rc; left in TMPDIR: ${left:-nothing}; $(head -c 600 "$dir.err")"
fi
test_done
