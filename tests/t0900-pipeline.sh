#!/usr/bin/env bash
# t0900-pipeline: pipeline.sh (the driver under the name a kernel Makefile
# gives) chains the stages: the same BTF as the stages run by hand with
# pahole's default features, checkpoints kept on request, reruns
# from a kept checkpoint, and a failing stage stops it with that stage's
# message and exit code, leaving no output.
. "$(dirname "$0")/lib.sh"

P="$T_TOP/pipeline.sh"
export BTFPIPE_BIN="$T_BIN"
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
elf="$T_OUT/sample"

check "stages by hand" sh -c "'$T_BIN/dwarf-extract' -o '$T_OUT/h.cus' '$elf' &&
	'$T_BIN/dedup-merge' -o '$T_OUT/h.graph' '$T_OUT/h.cus' &&
	'$T_BIN/btf-emit' --elf '$elf' --features var,decl_tag,type_tag,enum64 -o '$T_OUT/h.btf' '$T_OUT/h.graph'"
mkdir -p "$T_OUT/tmp"
check "pipeline runs" env TMPDIR="$T_OUT/tmp" "$P" -o "$T_OUT/p.btf" "$elf"
check_same "pipeline gives the stages' BTF" "$T_OUT/h.btf" "$T_OUT/p.btf"
left=$(ls -A "$T_OUT/tmp")
[ -z "$left" ] && ok "no temporary checkpoint directory left behind" ||
	not_ok "no temporary checkpoint directory left behind" "$left"

# The temp directory cannot be made: a clear error, exit 3, no output.
check_exit "TMPDIR missing: exit 3" 3 env TMPDIR="$T_OUT/no-such-dir" "$P" -o "$T_OUT/p4.btf" "$elf"
check_grep "TMPDIR missing: says so" 'no-such-dir' "$T_OUT/last.err"
[ ! -e "$T_OUT/p4.btf" ] && ok "TMPDIR missing: no output" || not_ok "TMPDIR missing: no output"
printf 'not an elf\n' >"$T_OUT/notelf0"
check_exit "a failing stage: exit 1" 1 env TMPDIR="$T_OUT/tmp" "$P" -o "$T_OUT/bad0.btf" "$T_OUT/notelf0"
left=$(ls -A "$T_OUT/tmp")
[ -z "$left" ] && ok "no temporary checkpoint directory left behind (all runs, a failed one too)" ||
	not_ok "no temporary checkpoint directory left behind (all runs, a failed one too)" "$left"

check "--keep keeps the checkpoints" "$P" -j2 --keep "$T_OUT/keep" -o "$T_OUT/k.btf" "$elf"
check_same "--keep: the .cus is the stage's" "$T_OUT/h.cus" "$T_OUT/keep/sample.cus"
check_same "--keep: the .graph is the stage's" "$T_OUT/h.graph" "$T_OUT/keep/sample.graph"
check_same "--keep: same BTF" "$T_OUT/h.btf" "$T_OUT/k.btf"

rm -f "$T_OUT/keep/sample.cus"
check "--from graph reruns only the emit (the .cus is gone)" "$P" --from graph --keep "$T_OUT/keep" -o "$T_OUT/g.btf" "$elf"
check_same "--from graph: same BTF" "$T_OUT/h.btf" "$T_OUT/g.btf"
cp "$T_OUT/h.cus" "$T_OUT/keep/sample.cus"
rm -f "$T_OUT/keep/sample.graph"
check "--from cus reruns merge and emit" "$P" --from cus --keep "$T_OUT/keep" -o "$T_OUT/c.btf" "$elf"
check_same "--from cus: same BTF" "$T_OUT/h.btf" "$T_OUT/c.btf"

# A failing first stage: its message, its exit code, no output.
printf 'not an elf\n' >"$T_OUT/notelf"
check_exit "bad input: extract's exit code 1" 1 "$P" -o "$T_OUT/bad.btf" "$T_OUT/notelf"
check_grep "bad input: extract's message" '^btfpipe: .*notelf: error: not an ELF file' "$T_OUT/last.err"
check_grep "bad input: which stage failed" 'stage dwarf-extract failed \(exit 1\)' "$T_OUT/last.err"
[ -e "$T_OUT/bad.btf" ] && not_ok "bad input: no output" || ok "bad input: no output"
# A failing later stage: a corrupted kept graph.
printf 'garbage' >"$T_OUT/keep/sample.graph"
check_exit "corrupted checkpoint: emit's exit code 1" 1 "$P" --from graph --keep "$T_OUT/keep" -o "$T_OUT/bad.btf" "$elf"
check_grep "corrupted checkpoint: emit's message names it" 'sample\.graph' "$T_OUT/last.err"
check_grep "corrupted checkpoint: which stage failed" 'stage btf-emit failed' "$T_OUT/last.err"
[ -e "$T_OUT/bad.btf" ] && not_ok "corrupted checkpoint: no output" || ok "corrupted checkpoint: no output"

check_exit "usage: no input is exit 2" 2 "$P" -o "$T_OUT/x.btf"
check_exit "usage: --from without --keep is exit 2" 2 "$P" --from graph -o "$T_OUT/x.btf" "$elf"
check_exit "usage: unknown option is exit 2" 2 "$P" --bogus -o "$T_OUT/x.btf" "$elf"
check "--help" "$P" --help
test_done
