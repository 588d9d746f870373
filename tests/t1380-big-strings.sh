#!/usr/bin/env bash
# t1380-big-strings: 4 GiB of names, past the limit of BTF and of the .graph.
#
# BTF's header counts its string bytes, and every name offset, in 32 bits,
# and so does the .graph format. The input: a relocatable x86-64 ELF
# (tests/gen/big-names.py) whose DWARF 5 holds two units of 132 empty
# structs each, every one named by a different 16 MiB name: 4.43 GB of
# names. dwarf-extract has no such limit (the .cus counts in 64 bits) and
# must keep every name; dedup-merge must refuse, at -j1 and -j2: exit 1, one
# line `btfpipe: FILE: error:` that names the type whose name went past
# 4 GiB (cut to a readable length, not 16 MiB of it) and says which limit,
# no output and no temp file left. pahole cannot be run on it (it would
# need the same strings in memory twice over); libbpf's btf__add_str()
# stops at the same limit. Then names just under 4 GiB, which the merge
# keeps, but with BTF's header and types the whole passes 4 GiB: btf-emit
# must refuse that at -j1 and -j2 with the totals, exit 1, no output.
#
# About 9 GB of disk (input, .cus) and 13 GB of memory for a
# minute or two: it runs in `make check-robust` (BIG_STRINGS=1) and is a
# counted skip in `make test`, and under ASan (whose shadow memory and
# checks would multiply both). Its files are removed at the end.
#
# Mutants this fails on: strtab.c without its 4 GiB check (offsets wrap:
# a graph that names the wrong strings); a message without DIAG_CLIP (the
# 16 MiB name fills the message, the reason is lost); encode.c's join()
# without its check of the whole (exit 0 at -j2 with a 1.7 KB BTF whose
# header wrapped).
. "$(dirname "$0")/lib.sh"

case $(basename "$T_BIN") in *asan* | *tsan*)
	skip "t1380-big-strings" "4.4 GB of names under a sanitizer: bin/ only"
	test_done ;;
esac
if [ "${BIG_STRINGS:-0}" != 1 ]; then
	skip "t1380-big-strings" "9 GB of disk, 13 GB of memory: make check-robust runs it"
	test_done
fi
mkdir -p "$T_OUT"
avail_kb=$(df -Pk "$T_OUT" | awk 'NR == 2 { print $4 }')
mem_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ "${avail_kb:-0}" -lt $((10 * 1024 * 1024)) ] || [ "${mem_kb:-0}" -lt $((14 * 1024 * 1024)) ]; then
	skip "t1380-big-strings" "needs 10 GB of disk and 14 GB of memory free: $((avail_kb / 1048576)) GB and $((mem_kb / 1048576)) GB here"
	test_done
fi
if [ ! -x /usr/bin/time ]; then
	not_ok "/usr/bin/time is installed (tests/deps.sh)" "the peak RSS of each run is read with it"
	test_done
fi

X="$T_BIN/dwarf-extract" M="$T_BIN/dedup-merge"
D="$T_OUT/big"
rm -rf "$D"
mkdir -p "$D/out"
cleanup() { rm -rf "$D"; }
trap cleanup EXIT

CUS=2 STRUCTS=132 NAME=$((16 << 20))
total=$((CUS * STRUCTS * NAME))
if ! out=$(python3 "$T_TOP/tests/gen/big-names.py" "$D/big.o" "$CUS" "$STRUCTS" "$NAME" 2>&1); then
	not_ok "generate $total bytes of names" "$out"
	test_done
fi
echo "   input: $(stat -c %s "$D/big.o") bytes, $((CUS * STRUCTS)) names of $NAME bytes"

# run STEP CMD...: CMD under /usr/bin/time; its exit code in RC, peak RSS in MiB in RSS.
run() {
	local step=$1
	shift
	/usr/bin/time -f %M -o "$D/$step.rss" "$@" >"$D/$step.out" 2>"$D/$step.err"
	RC=$?
	RSS=$(tail -n 1 "$D/$step.rss" 2>/dev/null)
	case $RSS in '' | *[!0-9]*) RSS="?" ;; *) RSS=$((RSS / 1024)) ;; esac
}

run extract "$X" -j 2 -o "$D/big.cus" "$D/big.o"
if [ "$RC" -eq 0 ]; then ok "extract keeps the $total bytes of names (peak RSS $RSS MiB)"; else
	not_ok "extract keeps the $total bytes of names" "exit $RC: $(head -c 1500 "$D/extract.err")"
	test_done
fi
# nothing_left WHAT: a refused run left $D/out empty.
nothing_left() {
	if [ -z "$(ls -A "$D/out")" ]; then ok "$1: no output and no temp file left"; else
		not_ok "$1: no output and no temp file left" "$(ls -la "$D/out")"
	fi
}
# The .graph's name offsets are 32-bit, as BTF's are: the merge is where
# 4 GiB of names is met, at the type whose name goes past it.
for j in 1 2; do
	rm -rf "$D/out" && mkdir -p "$D/out"
	run "merge-j$j" "$M" -j "$j" -o "$D/out/big.graph" "$D/big.cus"
	err="$D/merge-j$j.err"
	if [ "$RC" -eq 1 ]; then ok "merge -j$j refuses it: exit 1 (peak RSS $RSS MiB)"; else
		not_ok "merge -j$j refuses it: exit 1" "exit $RC: $(head -c 1500 "$err")"
	fi
	lines=$(wc -l <"$err")
	bytes=$(wc -c <"$err")
	if [ "$lines" -eq 1 ] && [ "$bytes" -lt 1024 ] &&
		grep -Eq '^btfpipe: [^ ]*big\.graph: error: .*"big_[01]_[0-9]+_x+\.\.\." \(16777216 bytes\)' "$err" &&
		grep -q '4 GiB' "$err"; then
		ok "merge -j$j: one line naming the type's name (cut) and the 4 GiB limit: $(sed -E 's/^btfpipe: [^ ]*: error: //; s/"big_[^"]*"/"big_..."/' "$err")"
	else
		not_ok "merge -j$j: one line naming the type's name (cut) and the 4 GiB limit" \
			"$lines lines, $bytes bytes: $(head -c 600 "$err")"
	fi
	nothing_left "merge -j$j"
done

# Names that fit, BTF that does not: the same 264 structs with names of
# 16,268,809 bytes are 1 + 264 * 16,268,810 = 4,294,965,841 bytes of
# strings, under 4 GiB, so the merge writes its graph; but the BTF's
# header, 264 types of 12 bytes and those strings come to past 4 GiB, where
# btf-emit must stop at its check of the whole (encode.c's too_big, by the
# one writer at -j1, by the join of pieces at -j2) with one line that says
# so, and write nothing.
rm -f "$D/big.o" "$D/big.cus"
FIT=16268809
if ! out=$(python3 "$T_TOP/tests/gen/big-names.py" "$D/fit.o" "$CUS" "$STRUCTS" "$FIT" 2>&1); then
	not_ok "generate $((CUS * STRUCTS * FIT)) bytes of names" "$out"
	test_done
fi
run extract-fit "$X" -j 2 -o "$D/fit.cus" "$D/fit.o"
[ "$RC" -eq 0 ] || { not_ok "extract the names just under 4 GiB" "exit $RC: $(head -c 1500 "$D/extract-fit.err")"; test_done; }
rm -f "$D/fit.o"
run merge-fit "$M" -j 2 -o "$D/fit.graph" "$D/fit.cus"
if [ "$RC" -eq 0 ]; then ok "merge keeps names just under 4 GiB: a graph (peak RSS $RSS MiB)"; else
	not_ok "merge keeps names just under 4 GiB: a graph" "exit $RC: $(head -c 1500 "$D/merge-fit.err")"
	test_done
fi
rm -f "$D/fit.cus"
for j in 1 2; do
	rm -rf "$D/out" && mkdir -p "$D/out"
	run "emit-j$j" "$T_BIN/btf-emit" -j "$j" -o "$D/out/fit.btf" "$D/fit.graph"
	err="$D/emit-j$j.err"
	lines=$(wc -l <"$err")
	if [ "$RC" -eq 1 ] && [ "$lines" -eq 1 ] && grep -q '264 types in 3168 bytes and 4294965841 bytes of strings' "$err" &&
		grep -q '4 GiB in all' "$err"; then
		ok "emit -j$j: types and strings past 4 GiB together: exit 1, one line: $(sed -E 's/^btfpipe: [^ ]*: error: //' "$err") (peak RSS $RSS MiB)"
	else
		not_ok "emit -j$j: types and strings past 4 GiB together: exit 1, one line with the totals" \
			"exit $RC, $lines lines: $(head -c 600 "$err")"
	fi
	nothing_left "emit -j$j"
done
test_done
