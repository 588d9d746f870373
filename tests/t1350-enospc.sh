#!/usr/bin/env bash
# t1350-enospc: a disk that fills while a stage writes.
#
# Each output goes to a small tmpfs mounted for the case, sized so that the
# previous output fits and the new one fills the disk partway through (at a
# quarter, half and three quarters of the new file's size beyond the old),
# then large enough for both. A full disk must give exit 3
# (docs/performance.md, "Limits and failures"), a message naming the file
# and "No space left on device", the previous output byte for byte and
# nothing else in the directory (no temp file); a disk with room must give
# the unlimited run's bytes.
#
# Cases:
#   extract, merge, emit, emit-elf   each stage's -o (or --elf-out) on the tmpfs
#   emit-inplace   btf-emit --elf-out over its own --elf on the tmpfs (what
#                  pahole -J does to a vmlinux): the input must survive whole
#   keep           pipeline.sh --keep DIR with DIR on the tmpfs, the output
#                  elsewhere: exit 3, the output's previous bytes, DIR empty
#   cache          the cache directory on a tmpfs too small for its entries:
#                  a warning per stage naming ENOSPC, exit 0 and the right
#                  bytes (a full cache never fails a build), and afterwards
#                  every entry that was stored verifies (--cache-verify) and
#                  no temp file is left in the cache
#
# Mutants this fails on: outfile.c writing in place instead of through a
# temp file (the previous output is lost); elf_write.c reporting libelf's
# "cannot write data to file" without the errno (the message check); a
# cache store failure made an error (the cache case's exit 0).
#
# Needs root's mount(8) for the tmpfs; without it every case is skipped,
# counted.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
MERGE="$T_BIN/dedup-merge"
EMIT="$T_BIN/btf-emit"
MNT="$T_OUT/mnt"
mkdir -p "$MNT"
mounted=0
cleanup() { [ "$mounted" = 1 ] && umount "$MNT" 2>/dev/null; mounted=0; }
trap cleanup EXIT

# tmpfs KB: a fresh tmpfs of KB KiB at $MNT.
tmpfs() {
	cleanup
	mount -t tmpfs -o "size=${1}k,mode=0755" tmpfs "$MNT" && mounted=1
}
if ! tmpfs 64; then
	skip "disk-full cases on a small tmpfs" "cannot mount a tmpfs here (not root?)"
	test_done
fi
cleanup

REF="$T_OUT/ref"
many_refs "$REF"
ELF=$MANY_ELF
# each case's reference output by its name
for x in extract:cus merge:graph emit:btf emit-elf:elf emit-inplace:elf; do
	cp "$REF/many.${x#*:}" "$REF/${x%%:*}"
done
printf 'previous output\n' >"$REF/prev"

# run_case CASE OUT: the case's command, writing OUT.
run_case() {
	case $1 in
	extract) "$EXTRACT" -j2 -q -o "$2" "$ELF" ;;
	merge) "$MERGE" -j2 -q -o "$2" "$REF/extract" ;;
	emit) "$EMIT" -j2 -q --elf "$ELF" -o "$2" "$REF/merge" ;;
	emit-elf) "$EMIT" -j2 -q --elf "$ELF" --elf-out "$2" "$REF/merge" ;;
	emit-inplace) "$EMIT" -j2 -q --elf "$2" --elf-out "$2" "$REF/merge" ;;
	esac
}

kb_of() { echo $((($1 + 1023) / 1024)); }

for c in extract merge emit emit-elf emit-inplace; do
	new=$(stat -c %s "$REF/$c")
	if [ "$c" = emit-inplace ]; then prev_file=$ELF; else prev_file=$REF/prev; fi
	old=$(stat -c %s "$prev_file")
	bad="" n_full=0 n_fit=0
	# quarters of the new file beyond the old one, then room for both
	for q in 1 2 3 8; do
		kb=$(($(kb_of "$old") + 4 + $(kb_of $((new * q / 4)))))
		[ "$q" = 8 ] && kb=$((kb + $(kb_of "$new")))
		tmpfs "$kb" || { bad+="mount ${kb}k failed"$'\n'; break; }
		cp "$prev_file" "$MNT/out"
		run_case "$c" "$MNT/out" >"$T_OUT/$c.out" 2>"$T_OUT/$c.err"
		rc=$?
		left=$(ls -A "$MNT" | grep -vx out)
		if [ "$q" = 8 ]; then
			n_fit=$((n_fit + 1))
			[ "$rc" = 0 ] || bad+="${kb}k, room for both: exit $rc: $(head -c 300 "$T_OUT/$c.err")"$'\n'
			[ "$rc" = 0 ] && ! cmp -s "$MNT/out" "$REF/$c" && bad+="${kb}k: exit 0 but not the reference bytes"$'\n'
		elif [ "$rc" = 0 ]; then
			bad+="${kb}k (the new file ${new} bytes cannot fit beside the old ${old}): exit 0"$'\n'
		else
			n_full=$((n_full + 1))
			[ "$rc" = 3 ] || bad+="${kb}k: exit $rc, not 3: $(head -c 300 "$T_OUT/$c.err")"$'\n'
			grep -q "$MNT/out.*No space left on device\|No space left on device.*$MNT/out" "$T_OUT/$c.err" ||
				grep -q "^btfpipe: $MNT/out: error: .*No space left on device" "$T_OUT/$c.err" ||
				bad+="${kb}k: the message does not name $MNT/out and ENOSPC: $(head -c 300 "$T_OUT/$c.err")"$'\n'
			cmp -s "$MNT/out" "$prev_file" || bad+="${kb}k: the previous bytes of out are gone"$'\n'
		fi
		[ -n "$left" ] && bad+="${kb}k: left on the disk: $left"$'\n'
		cleanup
	done
	if [ -z "$bad" ]; then
		ok "$c on a full disk: $n_full partway fills gave exit 3 naming the file and ENOSPC with the previous bytes kept and no temp file; with room, the reference bytes"
	else
		not_ok "$c on a full disk: exit 3, ENOSPC named, previous bytes kept, no temp file" "$bad"
	fi
done

# keep: the checkpoints' directory fills; the output is elsewhere.
out="$T_OUT/keep.btf"
cp "$REF/prev" "$out"
tmpfs $(($(kb_of "$(stat -c %s "$REF/extract")") / 2))
mkdir "$MNT/keep"
BTFPIPE_BIN="$T_BIN" "$T_TOP/pipeline.sh" -j2 -q --features default --keep "$MNT/keep" -o "$out" "$ELF" >/dev/null 2>"$T_OUT/keep.err"
rc=$?
left=$(ls -A "$MNT/keep")
if [ "$rc" = 3 ] && grep -q "^btfpipe: .*$MNT/keep/.*No space left on device" "$T_OUT/keep.err" &&
	cmp -s "$out" "$REF/prev" && [ -z "$left" ]; then
	ok "pipeline.sh --keep on a full disk: exit 3 naming the checkpoint and ENOSPC, the output's previous bytes, the directory empty"
else
	not_ok "pipeline.sh --keep on a full disk: exit 3 naming the checkpoint and ENOSPC, previous output, nothing left" \
		"exit $rc; left: $left; $(head -c 400 "$T_OUT/keep.err")"
fi
cleanup

# cache: too small for the entries. Twice: the second run meets what the
# first managed to store.
tmpfs 300
bad=""
for i in 1 2; do
	out="$T_OUT/cache$i.btf"
	BTFPIPE_BIN="$T_BIN" "$T_TOP/pipeline.sh" -j2 -q --features default --cache "$MNT/cache" -o "$out" "$ELF" >/dev/null 2>"$T_OUT/cache$i.err"
	rc=$?
	[ "$rc" = 0 ] || bad+="run $i: exit $rc: $(head -c 300 "$T_OUT/cache$i.err")"$'\n'
	cmp -s "$out" "$REF/emit" || bad+="run $i: not the reference BTF"$'\n'
	grep -q "warning: cache $MNT/cache: cannot store .*No space left on device" "$T_OUT/cache$i.err" ||
		bad+="run $i: no warning naming ENOSPC: $(head -c 300 "$T_OUT/cache$i.err")"$'\n'
	grep -v "warning: cache" "$T_OUT/cache$i.err" | grep -q . && bad+="run $i: other messages: $(grep -v 'warning: cache' "$T_OUT/cache$i.err" | head -3)"$'\n'
done
"$EXTRACT" -j2 -q --cache "$MNT/cache" --cache-verify --cache-readonly -o "$T_OUT/verify.cus" "$ELF" 2>"$T_OUT/verify.err" ||
	bad+="--cache-verify over the full cache: $(head -c 300 "$T_OUT/verify.err")"$'\n'
cmp -s "$T_OUT/verify.cus" "$REF/extract" || bad+="--cache-verify run: not the reference .cus"$'\n'
tmps=$(find "$MNT/cache" -name '*tmp*' | head -5)
[ -n "$tmps" ] && bad+="temp files left in the cache: $tmps"$'\n'
if [ -z "$bad" ]; then
	ok "a full cache: each stage warns naming ENOSPC, exit 0 with the reference bytes twice, what was stored verifies, no temp file"
else
	not_ok "a full cache: warning, exit 0, right bytes, entries verify, no temp file" "$bad"
fi
cleanup
test_done
