#!/usr/bin/env bash
# t0140-outfile-special: an output path that is not a regular file (a FIFO,
# a character device such as /dev/null) is written into, never replaced.
#
# Every output is made in a temp file and renamed over its target
# (common/outfile.c), which over a device would put a regular file where the
# device was: `btfpipe -o /dev/null` as root replaced /dev/null itself, and
# every later `2>/dev/null` on the machine wrote into that file. Now the
# bytes are made in $TMPDIR and copied in at commit. Checked on each stage
# and the driver, with a FIFO of this test's and (as root) a null device
# node of its own, never the system's /dev/null:
#  - the run exits 0, the FIFO is still a FIFO and the device still a
#    character device;
#  - what a reader gets from the FIFO is the bytes a regular file gets;
#  - a run that fails writes nothing into the FIFO;
#  - the driver with a cache neither waits on the FIFO to memoize its
#    output nor memoizes anything but the real bytes.
# Mutant this fails on (tried): common/outfile.c before this test (the
# rename): the FIFO and the device become regular files.
. "$(dirname "$0")/lib.sh"

D=$T_OUT
build_fixture gcc -O2 5 "$D" sample || { not_ok "build sample"; test_done; }
"$T_BIN/dwarf-extract" -q -o "$D/s.cus" "$D/sample" && "$T_BIN/dedup-merge" -q -o "$D/s.graph" "$D/s.cus" &&
	"$T_BIN/btf-emit" -q --elf "$D/sample" -o "$D/s.btf" "$D/s.graph" &&
	"$T_BIN/btfpipe" -q --no-cache -o "$D/s.drv.btf" "$D/sample" || { not_ok "the stages on the sample"; test_done; }

# each NAME TARGET: every program's run with -o TARGET, as "NAME CMD...".
runs() {
	local t=$1
	echo "dwarf-extract $T_BIN/dwarf-extract -q -o $t $D/sample"
	echo "dedup-merge $T_BIN/dedup-merge -q -o $t $D/s.cus"
	echo "btf-emit $T_BIN/btf-emit -q --elf $D/sample -o $t $D/s.graph"
	echo "btfpipe $T_BIN/btfpipe -q --no-cache -o $t $D/sample"
}
want() { # NAME: the regular file the program writes
	case $1 in dwarf-extract) echo "$D/s.cus" ;; dedup-merge) echo "$D/s.graph" ;; btf-emit) echo "$D/s.btf" ;;
	*) echo "$D/s.drv.btf" ;; esac
}

F=$D/fifo
while read -r name cmd; do
	rm -f "$F" && mkfifo "$F"
	timeout 60 cat "$F" >"$D/got.$name" &
	reader=$!
	# shellcheck disable=SC2086 # the command line, split
	timeout 60 $cmd
	rc=$?
	wait $reader
	[ $rc = 0 ] && [ -p "$F" ] && ok "$name -o FIFO: exit 0, and it is still a FIFO" ||
		not_ok "$name -o FIFO: exit 0, and it is still a FIFO" "exit $rc; $(ls -l "$F")"
	check_same "$name -o FIFO: the reader gets the bytes a regular file gets" "$D/got.$name" "$(want "$name")"
done < <(runs "$F")

# A failing run: nothing is written into the FIFO (the reader sees no
# writer at all, and gives up after 3 s).
rm -f "$F" && mkfifo "$F"
printf 'not a cus file at all\n' >"$D/bad.cus"
timeout 3 cat "$F" >"$D/got.bad" &
reader=$!
"$T_BIN/dedup-merge" -q -o "$F" "$D/bad.cus" 2>"$D/bad.err"
rc=$?
wait $reader
[ $rc = 1 ] && [ ! -s "$D/got.bad" ] && [ -p "$F" ] && ok "a failing run (exit 1) writes nothing into the FIFO" ||
	not_ok "a failing run writes nothing into the FIFO" "exit $rc, $(wc -c <"$D/got.bad") bytes: $(cat "$D/bad.err")"

# The driver with a cache: its run memo reads the output back to store it,
# which a FIFO or a device cannot give; it must not wait for one nor store
# anything but the real bytes.
rm -f "$F" && mkfifo "$F"
timeout 60 cat "$F" >"$D/got.memo" &
reader=$!
timeout 30 "$T_BIN/btfpipe" -q --cache "$D/cache" -o "$F" "$D/sample"
rc=$?
wait $reader
[ $rc = 0 ] && ok "btfpipe --cache -o FIFO: exit 0, no wait for the FIFO after its bytes" ||
	not_ok "btfpipe --cache -o FIFO: exit 0, no wait for the FIFO after its bytes" "exit $rc"
check_same "btfpipe --cache -o FIFO: the reader gets the driver's bytes" "$D/got.memo" "$D/s.drv.btf"
"$T_BIN/btfpipe" -q --cache "$D/cache" -o "$D/after.btf" "$D/sample"
check_same "... and a run after it on the same cache writes the right bytes (nothing else memoized)" \
	"$D/after.btf" "$D/s.drv.btf"

if [ "$(id -u)" = 0 ]; then
	N=$D/null
	while read -r name cmd; do
		rm -f "$N" && mknod -m 666 "$N" c 1 3
		# shellcheck disable=SC2086 # the command line, split
		$cmd
		rc=$?
		[ $rc = 0 ] && [ -c "$N" ] && ok "$name -o a null device: exit 0, and it is still the device" ||
			not_ok "$name -o a null device: exit 0, and it is still the device" "exit $rc; $(ls -l "$N")"
	done < <(runs "$N")
	rm -f "$N"
else
	skip "-o a null device" "mknod needs root"
fi
[ -c /dev/null ] && ok "the system's /dev/null is still the null device" || not_ok "the system's /dev/null is still the null device" "$(ls -l /dev/null)"
test_done
