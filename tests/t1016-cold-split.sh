#!/usr/bin/env bash
# t1016-cold-split: where btfpipe and pahole 1.32 part ways on purpose, and
# why pahole is wrong there.
#
# GCC -O2 splits a function with an unlikely branch into foo and foo.cold
# and gives its DIE DW_AT_ranges instead of DW_AT_low_pc. pahole 1.32 (and
# master) reads a function's address only from DW_AT_low_pc, so for such a
# function it sees no address, and two of its rules then misfire. On
# Debian's 7.2 vmlinux (GCC 16) this is every FUNC difference left between
# the two tools: 43 clones 1.32 encodes and we skip, and 16 functions whose
# parameter names differ (the syscall wrappers of fs/aio.c, itimer.c,
# finit_module, landlock, with a weak COND_SYSCALL stub in kernel/sys_ni.c).
# tests/fixtures/coldsplit builds one of each:
#
#  - cs_sys: a weak stub in stub.c (parameter __unused, first in link order)
#    and the strong definition in sys.c (parameter regs), split hot/cold.
#    The code at the symbol is sys.c's: funcs.c rule 5 names the parameter
#    regs. pahole names it __unused, from the stub the linker threw away.
#  - cs_clone.constprop.0: cs_clone(b, n, flag) with flag unused, split
#    hot/cold. The clone is called with b and n only; flag's location is
#    DW_OP_GNU_parameter_ref (its value is the caller's, never passed), and
#    the clone uses rdx, flag's register, as scratch. Rule 6 skips it: no
#    BTF signature describes the code. pahole encodes cs_clone(b, n, flag),
#    so a tracer reading flag reads whatever rdx holds.
#
# The pahole checks assert its wrong answers: when a pahole fixes them,
# this test fails, and funcs.c should follow it again.
. "$(dirname "$0")/lib.sh"

FIX=tests/fixtures/coldsplit
d=$T_OUT
if ! have bpftool; then
	skip "cold-split functions" "bpftool not found: nothing can read the BTF"
	test_done
fi
objs=()
for f in main stub sys clone; do # link order = CU order: the stub before sys.c
	(cd "$T_TOP" && "$GCC" -O2 -gdwarf-5 "-fdebug-prefix-map=$T_TOP=/btfpipe" -c "$FIX/$f.c" -o "$d/$f.o") \
		>"$d/build.log" 2>&1 || { not_ok "build $f.c" "$(cat "$d/build.log")"; test_done; }
	objs+=("$d/$f.o")
done
"$GCC" -o "$d/cs" "${objs[@]}" >"$d/build.log" 2>&1 || { not_ok "link" "$(cat "$d/build.log")"; test_done; }

# ---- construction: what GCC made ----
nm "$d/cs" >"$d/nm"
clone=$(awk '$3 ~ /^cs_clone\.(isra|constprop)\.0$/ { print $3 }' "$d/nm")
if grep -q ' cs_sys\.cold$' "$d/nm" && [ -n "$clone" ] && grep -q " $clone\.cold\$" "$d/nm"; then
	ok "construction: cs_sys.cold, $clone and $clone.cold"
else
	not_ok "construction: cs_sys and the cs_clone clone split hot/cold" "$(grep ' cs_' "$d/nm")"
fi
if have llvm-dwarfdump-19; then
	llvm-dwarfdump-19 --name=cs_sys --name=cs_clone --show-children "$d/cs" >"$d/dies" 2>&1
	# The strong cs_sys (parameter regs) and the clone's concrete DIE: ranges, no low_pc.
	strong=$(awk '/DW_TAG_subprogram/ { blk = "" } { blk = blk $0 "\n" } /DW_AT_name.*"regs"/ { print blk; exit }' "$d/dies")
	if grep -q DW_AT_ranges <<<"$strong" && ! grep -q DW_AT_low_pc <<<"$strong"; then
		ok "construction: the strong cs_sys has DW_AT_ranges, no DW_AT_low_pc"
	else
		not_ok "construction: the strong cs_sys has DW_AT_ranges, no DW_AT_low_pc" "$strong"
	fi
	# flag's location in the clone: DW_OP_GNU_parameter_ref (0xfa), then DW_OP_stack_value.
	if grep -A3 'abstract_origin.*"flag"' "$d/dies" | grep -q 'fa .. .. .. .. 9f'; then
		ok "construction: the clone's flag is DW_OP_GNU_parameter_ref: not passed"
	else
		not_ok "construction: the clone's flag is DW_OP_GNU_parameter_ref" "$(grep -A3 'abstract_origin.*"flag"' "$d/dies")"
	fi
else
	skip "construction: DW_AT_ranges and DW_OP_GNU_parameter_ref" "llvm-dwarfdump-19 not found"
fi

# params DUMP NAME: FUNC NAME's parameters, "name name ..." (empty: no FUNC).
params() {
	local t
	t=$(sed -n "s/^\[[0-9]*\] FUNC '$2' type_id=\([0-9]*\) .*/\1/p" "$1")
	[ -n "$t" ] && awk -v id="[$t]" '$1 == id { on = 1; next } /^\[/ { on = 0 } on { gsub("\047", "", $1); printf "%s ", $1 }' "$1"
}

# ---- ours ----
e=$d/cs
if out=$("$T_BIN/dwarf-extract" -o "$e.cus" "$e" 2>&1 && "$T_BIN/dedup-merge" -o "$e.graph" "$e.cus" 2>&1 &&
	"$T_BIN/btf-emit" --elf "$e" --skip-report "$e.skips" -o "$e.btf" "$e.graph" 2>&1 &&
	bpftool btf dump file "$e.btf" >"$e.dump" 2>&1); then
	got=$(params "$e.dump" cs_sys)
	[ "$got" = "regs " ] && ok "cs_sys: (regs), the definition at the symbol's address" ||
		not_ok "cs_sys: (regs), the definition at the symbol's address" "parameters: '${got:-no FUNC}'"
	if [ -z "$(params "$e.dump" cs_clone)" ] &&
		grep -q '^func cs_clone: optimized parameters: the symbol is a .isra/.constprop clone' "$e.skips"; then
		ok "cs_clone: skipped, optimized parameters of a clone"
	else
		not_ok "cs_clone: skipped, optimized parameters of a clone" "FUNC: $(params "$e.dump" cs_clone); $(grep cs_clone "$e.skips")"
	fi
else
	not_ok "the three stages run" "$out"
fi

# ---- pahole, wrong ----
# pahole_says WHO PAHOLE: its BTF for the fixture, and the two wrong answers.
pahole_says() {
	local who=$1 p=$2
	if ! "$p" -J --btf_features=default --btf_encode_detached="$d/$who.btf" "$d/cs" >"$d/$who.log" 2>&1 ||
		! bpftool btf dump file "$d/$who.btf" >"$d/$who.dump" 2>&1; then
		not_ok "$who encodes the fixture" "$(tail -5 "$d/$who.log")"
		return
	fi
	local got
	got=$(params "$d/$who.dump" cs_sys)
	[ "$got" = "__unused " ] && ok "$who is wrong: cs_sys's parameter named __unused, from the weak stub the linker dropped" ||
		not_ok "$who names cs_sys's parameter __unused (expected its known error)" "parameters: '${got:-no FUNC}'"
	got=$(params "$d/$who.dump" cs_clone)
	[ "$got" = "b n flag " ] && ok "$who is wrong: cs_clone(b, n, flag), though $clone is passed b and n only" ||
		not_ok "$who encodes cs_clone(b, n, flag) (expected its known error)" "parameters: '${got:-no FUNC}'"
}
if pahole_master "pahole master's answers"; then
	pahole_says "pahole master" "$T_PAHOLE_MASTER"
fi
# pahole 1.32 itself, when tests/kernel/sid.sh has fetched it (make check-kfuncs does).
if [ -x "$T_TOP/tests/out/sid/pahole-1.32" ]; then
	pahole_says "pahole 1.32" "$T_TOP/tests/out/sid/pahole-1.32"
else
	skip "pahole 1.32's answers" "tests/out/sid/pahole-1.32 not fetched (tests/kernel/sid.sh pahole)"
fi
test_done
