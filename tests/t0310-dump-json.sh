#!/usr/bin/env bash
# t0310-dump-json: the JSON-lines dumps (`--dump FILE --json`) hold every
# field the tables of format/cus.h and format/graph.h describe, and say the
# same as the text dumps.
#
# The codec of each format, the graph's reader and writer and the JSON dumps
# are all made from those tables (one description per record kind), and
# btfpipe-diff reads the JSON dumps; the text dumps are written by hand, by
# the grammar in format/CU-RECORDS.md and TYPE-GRAPH.md. Per fixture, for the
# .cus and the .graph: tests/tools/dumpjson.py checks each JSON object's
# keys against its kind's table, in order, items included; then prints the
# JSON by the text grammar and compares it line by line with the text dump.
#
# Mutants this fails on (tried): a struct's fields left out of its JSON
# record (10 checks fail); the text dump printing `align=` where the grammar
# says not when zero (5 fail).
. "$(dirname "$0")/lib.sh"

E="$T_BIN/dwarf-extract" M="$T_BIN/dedup-merge"
J="$T_TOP/tests/tools/dumpjson.py"

# Fixtures that reach every kind and encoding the dumps print: the sample
# (bitfields, enums, arrays, prototypes), its -O2 build (abstract origins,
# parameter locations), tags (annotations, clang), LTO (references into
# other CUs: externs).
one() {
	local name=$1 cc=$2 opt=$3 fix=$4
	shift 4
	have "$cc" || { skip "$name" "$cc not found"; return; }
	if ! out=$(cd "$T_TOP" && "$cc" "$opt" -gdwarf-5 -fno-omit-frame-pointer "$@" \
		-o "$T_OUT/$name" tests/fixtures/"$fix"/*.c 2>&1); then
		not_ok "$name: build" "$out"
		return
	fi
	"$E" -q -o "$T_OUT/$name.cus" "$T_OUT/$name" && "$M" -q -o "$T_OUT/$name.graph" "$T_OUT/$name.cus" ||
		{ not_ok "$name: extract and merge"; return; }
	for st in cus graph; do
		local tool=$E hdr=$T_TOP/format/cus.h
		[ $st = graph ] && tool=$M hdr=$T_TOP/format/graph.h
		"$tool" --dump "$T_OUT/$name.$st" --json >"$T_OUT/$name.$st.json" &&
			"$tool" --dump "$T_OUT/$name.$st" >"$T_OUT/$name.$st.txt" ||
			{ not_ok "$name.$st: dumps"; continue; }
		check "$name.$st: every JSON object has its table's fields" python3 "$J" tables "$hdr" "$T_OUT/$name.$st.json"
		check "$name.$st: the JSON, printed by format/'s text grammar, is the text dump" \
			python3 "$J" text $st "$T_OUT/$name.$st.json" "$T_OUT/$name.$st.txt"
	done
}

one sample-O0 "$GCC" -O0 sample
one sample-O2 "$GCC" -O2 sample
one sample-clang "$CLANG" -O0 sample
one tags "$CLANG" -O2 tags
one lto "$GCC" -O2 lto -flto

# The kinds the fixtures reached: a table's kind no fixture has would be
# checked by nothing. C gives no unspecified or unsupported record (C++'s
# nullptr_t, Fortran's types); t1110's hard DWARF reaches those.
if [ -f "$T_OUT/sample-O2.cus.json" ]; then
	kinds=$(cat "$T_OUT"/*.cus.json | python3 -c '
import json, sys
print(" ".join(sorted({json.loads(l).get("kind") for l in sys.stdin} - {None})))')
	want="array atomic base const enum func param ptr restrict struct subroutine typedef union var volatile"
	[ "$kinds" = "$want" ] && ok "the fixtures' records reach the kinds: $kinds" ||
		not_ok "the fixtures' records reach the kinds the dumps print" "got:  $kinds${IFS:0:1}want: $want"
fi

check_exit "--json without --dump is a usage error" 2 "$E" --json -o "$T_OUT/x.cus" "$T_OUT/sample-O0"
check_exit "dedup-merge: --json without --dump is a usage error" 2 "$M" --json -o "$T_OUT/x.graph" "$T_OUT/sample-O0.cus"
test_done
