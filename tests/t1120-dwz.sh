#!/usr/bin/env bash
# t1120-dwz: DWARF compressed by dwz. Single-file dwz moves shared DIEs into
# partial units of the same file; dwz -m moves them into an alternate file
# named by .gnu_debugaltlink. Either way the BTF must be the one of the
# program before dwz. pahole 1.24 warns about partial units and loses their
# types; that is recorded as information.
. "$(dirname "$0")/lib.sh"

if ! have dwz; then
	skip "dwz" "dwz not installed (make deps installs it)"
	test_done
fi
P="$T_TOP/pipeline.sh"
export BTFPIPE_BIN="$T_BIN"
BTFCMP="$T_TOP/tools/btfcmp.py"
d="$T_OUT"
(cd "$T_TOP" && gcc -O2 -g -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$d/a" tests/fixtures/sample/*.c &&
	gcc -O1 -g -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$d/b" tests/fixtures/sample/*.c) ||
	not_ok "build the sample twice"
check "before dwz: pipeline" "$P" -o "$d/a.btf" "$d/a"

# Single file.
cp "$d/a" "$d/a1"
check "dwz a1" dwz "$d/a1"
n=$(readelf -wi "$d/a1" 2>/dev/null | grep -c 'DW_TAG_partial_unit')
[ "$n" -gt 0 ] && ok "dwz made $n partial units" || not_ok "dwz made partial units" "none"
check "single-file dwz: pipeline" "$P" -j2 --keep "$d/k1" -o "$d/a1.btf" "$d/a1"
check "single-file dwz: the same BTF as before dwz" python3 "$BTFCMP" --funcs "$d/a.btf" "$d/a1.btf"

# Alternate file.
cp "$d/a" "$d/a3"
cp "$d/b" "$d/b3"
rm -f "$d/common.debug"
check "dwz -m common.debug a3 b3" dwz -m "$d/common.debug" -M "$d/common.debug" "$d/a3" "$d/b3"
readelf -SW "$d/common.debug" | grep -q ' \.debug_info ' && ok "the alternate file has shared DIEs" ||
	not_ok "the alternate file has shared DIEs" "$(readelf -SW "$d/common.debug")"
check "alternate file: pipeline" "$P" -j2 --keep "$d/k3" -o "$d/a3.btf" "$d/a3"
check "alternate file: the same BTF as before dwz" python3 "$BTFCMP" --funcs "$d/a.btf" "$d/a3.btf"
"$T_BIN/dwarf-extract" --dump "$d/k3/a3.cus" >"$d/a3.dump"
check_grep "alternate file: its units are extracted (bit 62 offsets)" '^cu [0-9]+ off=0x40000000' "$d/a3.dump"
check "alternate file: -j1" "$T_BIN/dwarf-extract" -j1 -o "$d/j1.cus" "$d/a3"
check_same "alternate file: -j1 and -j2 give the same .cus" "$d/j1.cus" "$d/k3/a3.cus"
check "alternate file: libbpf and the kernel" sh -c "'$T_BIN/tools/btfcheck' --dedup --load '$d/a3.btf'; r=\$?; [ \$r -eq 0 ] || [ \$r -eq 77 ]"

# The alternate file missing: exit 3, named, no output.
mv "$d/common.debug" "$d/common.debug.away"
check_exit "alternate file missing: exit 3" 3 "$T_BIN/dwarf-extract" -o "$d/gone.cus" "$d/a3"
check_grep "alternate file missing: the message names it" 'common\.debug.*not found' "$d/last.err"
[ -e "$d/gone.cus" ] && not_ok "alternate file missing: no output" || ok "alternate file missing: no output"
mv "$d/common.debug.away" "$d/common.debug"

# pahole 1.24 on the same file (information).
if have pahole; then
	pahole -J --btf_gen_floats --btf_encode_detached="$d/p3.btf" "$d/a3" >"$d/p3.out" 2>&1
	rc=$?
	ours=$(bpftool btf dump file "$d/a3.btf" | grep -c "^\[[0-9]*\] STRUCT")
	theirs=$([ -s "$d/p3.btf" ] && bpftool btf dump file "$d/p3.btf" | grep -c "^\[[0-9]*\] STRUCT" || echo 0)
	echo "info: pahole 1.24 on dwz -m output: exit $rc, $theirs STRUCTs (ours $ours); it says: $(head -1 "$d/p3.out")"
	[ "$ours" -gt "$theirs" ] && ok "pahole 1.24 loses structs of dwz output ($theirs), we keep them ($ours)" ||
		not_ok "we keep more structs than pahole 1.24 on dwz output" "ours $ours, pahole $theirs"
fi
test_done
