#!/usr/bin/env bash
# t0810-merge-candidate-refs: a function, variable or typedef whose type is
# a DIE in another CU that no CU of the file holds is bad input.
# dedup-merge must refuse it (exit 1) with one message naming the file, the
# CU and the DIE, the same message at -j1 and -j2, and leave no output.
#
# The merge resolves a candidate's references while it prepares the
# candidates, several CUs at once (build.c, cand_prepare()), and reports the
# lowest failing CU's message. A type's reference into another CU is a stop
# edge of its key, resolved earlier, in CU order (classes.c,
# classes_resolve_xrefs()): the typedef takes that path. Both go through
# classes_xref_gid(), so the three messages have one shape. No
# compiler writes such DWARF, so the .cus is made by hand: the sample's
# .cus with its first CU's blob replaced by one that holds a single record
# whose type is extern 0, at a DIE offset no record has, and every
# checksum made again (tests/tools/cusfile.py).
. "$(dirname "$0")/lib.sh"

IN="$T_OUT/in"
build_fixture "$GCC" -O0 5 "$IN" sample >"$T_OUT/build.log" 2>&1 || {
	not_ok "build the sample fixture" "$(cat "$T_OUT/build.log")"
	test_done
}
check "extract the sample" "$T_BIN/dwarf-extract" -o "$T_OUT/good.cus" "$IN/sample"
check "the sample merges" "$T_BIN/dedup-merge" -o "$T_OUT/good.graph" "$T_OUT/good.cus"

# make KIND OUT: the good .cus with CU 0's blob replaced by one record of
# KIND (func or var) named "cand" whose type is extern 0 = DIE 0x7ffff0.
make_cus() {
	python3 - "$T_OUT/good.cus" "$1" "$2" "$T_TOP/tests/tools" <<'PY'
import sys

src, kind, out = sys.argv[1:4]
sys.path.insert(0, sys.argv[4])
from cusfile import build, parse, uleb, xxhash  # tests/tools/cusfile.py

f = parse(open(src, "rb").read())
ents = f["ents"]

# CU 0's new blob: its unit fields as the index has them, strings "" and
# "cand", one extern, one record (CU-RECORDS.md, "Blob layout").
lang, ut, dv, co = (ents[0][k] for k in ("lang", "ut", "dv", "co"))
strs = b"\0cand\0"
blob = b"CU1\0" + uleb(co) + uleb(ut) + uleb(dv) + uleb(8) + uleb(lang)
blob += uleb(0) + uleb(0) + uleb(0)                  # producer, name, comp_dir
blob += uleb(len(strs)) + strs
blob += uleb(1) + uleb(0x7ffff0)                     # externs: one, no record there
blob += uleb(1)                                      # one record
EXTERNAL, HAS_ADDR, TOPLEVEL = 1 << 1, 1 << 7, 1 << 9
if kind == "func":
    # kind 13, die delta, flags, name, linkage, type (2e+1: extern 0),
    # inline, cc, origin, spec, params
    blob += bytes([13]) + uleb(0x20) + uleb(EXTERNAL) + uleb(1) + uleb(0) + uleb(1)
    blob += uleb(0) + uleb(0) + uleb(0) + uleb(0) + uleb(0)
elif kind == "typedef":
    # kind 7, die delta, flags, name, type (2e+1: extern 0)
    blob += bytes([7]) + uleb(0x20) + uleb(0) + uleb(1) + uleb(1)
else:
    # kind 15, die delta, flags, name, linkage, type, spec, addr, shndx (a
    # variable with an address: only those are candidates)
    blob += bytes([15]) + uleb(0x20) + uleb(EXTERNAL | HAS_ADDR | TOPLEVEL) + uleb(1) + uleb(0) + uleb(1)
    blob += uleb(0) + uleb(0x1000) + uleb(1)
ents[0]["blob"] = blob
open(out, "wb").write(build(f, xxhash()))
PY
}

for kind in func var typedef; do
	if ! out=$(make_cus "$kind" "$T_OUT/$kind.cus" 2>&1); then
		not_ok "$kind: make the .cus" "$out"
		continue
	fi
	# The file itself is well formed: only the merge can tell.
	check "$kind: the .cus dumps (well formed)" "$T_BIN/dwarf-extract" --dump "$T_OUT/$kind.cus"
	for j in 1 2; do
		rm -f "$T_OUT/$kind-j$j.graph"
		check_exit "$kind -j$j: exit 1" 1 "$T_BIN/dedup-merge" -j "$j" -o "$T_OUT/$kind-j$j.graph" "$T_OUT/$kind.cus"
		cp "$T_OUT/last.err" "$T_OUT/$kind-j$j.err"
		cp "$T_OUT/last.err" "$T_OUT/$kind-j$j.msg"
		# The input is where the error is, not the output (issue 53).
		check_grep "$kind -j$j: the message names the input .cus as the file, CU 0 and the DIE" \
			"^btfpipe: [^ ]*/$kind\\.cus: error: CU 0 \\(0x[0-9a-f]+\\) refers to DIE 0x7ffff0 in another CU" \
			"$T_OUT/$kind-j$j.err"
		grep -q "\\.graph" "$T_OUT/$kind-j$j.err" &&
			not_ok "$kind -j$j: the output .graph is not named" "$(cat "$T_OUT/$kind-j$j.err")" ||
			ok "$kind -j$j: the output .graph is not named"
		n=$(wc -l <"$T_OUT/$kind-j$j.err")
		if [ "$n" -eq 1 ]; then ok "$kind -j$j: one line on stderr"; else
			not_ok "$kind -j$j: one line on stderr" "$(cat "$T_OUT/$kind-j$j.err")"; fi
		if [ ! -e "$T_OUT/$kind-j$j.graph" ]; then ok "$kind -j$j: no output left behind"; else
			not_ok "$kind -j$j: no output left behind" "$(ls -la "$T_OUT/$kind-j$j.graph")"; fi
	done
	check_same "$kind: the same message at -j1 and -j2" "$T_OUT/$kind-j1.msg" "$T_OUT/$kind-j2.msg"
done
test_done
