#!/usr/bin/env bash
# t1230-stats: --stats[=json] on each stage and pipeline.sh, and the progress
# line: shown on a terminal, never when stderr is not one, never with -q.
. "$(dirname "$0")/lib.sh"

build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
e="$T_OUT/sample"
"$T_BIN/dwarf-extract" --stats=json -o "$T_OUT/s.cus" "$e" 2>"$T_OUT/x.json" >"$T_OUT/x.out"
"$T_BIN/dedup-merge" --stats=json -o "$T_OUT/s.graph" "$T_OUT/s.cus" 2>"$T_OUT/m.json"
"$T_BIN/btf-emit" --stats=json --elf "$e" -o "$T_OUT/s.btf" "$T_OUT/s.graph" 2>"$T_OUT/e.json"
# Split BTF over the sample's own BTF: matching against the base is a phase.
"$T_BIN/btf-emit" --stats=json --btf-base "$T_OUT/s.btf" -o "$T_OUT/split.btf" "$T_OUT/s.graph" 2>"$T_OUT/eb.json"
[ -s "$T_OUT/x.out" ] && not_ok "stats stay off stdout" "$(cat "$T_OUT/x.out")" || ok "stats stay off stdout"

# The numbers must be the truth, as other tools count it.
units=$("$T_BIN/dwarf-extract" --dump "$T_OUT/s.cus" | grep -c '^cu ')
nodes=$("$T_BIN/dedup-merge" --dump "$T_OUT/s.graph" | grep -c '^#[0-9]')
types=$("$T_BIN/tools/btfcheck" "$T_OUT/s.btf" | sed -n 's/^types //p')
structs=$(bpftool btf dump file "$T_OUT/s.btf" | grep -c "^\[[0-9]*\] STRUCT ")
python3 - "$T_OUT" "$units" "$nodes" "$types" "$structs" >"$T_OUT/py.out" 2>&1 <<'PY'
import json, sys
d, units, nodes, types, structs = sys.argv[1], *map(int, sys.argv[2:])
x = json.load(open(d + "/x.json")); m = json.load(open(d + "/m.json")); e = json.load(open(d + "/e.json"))
eb = json.load(open(d + "/eb.json"))
def say(ok, what): print(("ok " if ok else "FAIL ") + what)
say(x["tool"] == "dwarf-extract" and x["counts"]["units"] == units, "extract: units %d" % units)
say(x["peak_rss_kib"] > 0 and "extract" in x["phases"], "extract: rss and phases")
say(m["counts"]["nodes"] == nodes, "merge: nodes %d" % nodes)
say(m["counts"]["type_records"] > m["counts"]["classes"] > 0, "merge: more type records than classes")
say(e["counts"]["btf_types"] == types and e["counts"]["STRUCT"] == structs, "emit: %d types, %d structs" % (types, structs))
say("base" in eb["phases"] and "base" not in e["phases"] and "base_read" in eb["phases"] and "base_read" not in e["phases"],
    "emit: base and base_read phases with --btf-base only")
# Each phase's CPU time: the same phases, none negative, together no more
# than the process's CPU time (rounding aside).
for name, j in (("extract", x), ("merge", m), ("emit", e), ("emit over a base", eb)):
    pc = j.get("phase_cpu", {})
    say(list(pc) == list(j["phases"]) and all(v >= 0 for v in pc.values()) and
        sum(pc.values()) <= j["cpu_s"] + 0.001 * len(pc) + 0.001, "%s: a CPU time per phase" % name)
    # Serial time (outside the pool, or its in-order part): the same
    # phases, each within its wall time. (pool-check measures the clock.)
    ps = j.get("phase_serial", {})
    say(list(ps) == list(j["phases"]) and all(0 <= ps[p] <= j["phases"][p] + 0.001 for p in ps),
        "%s: a serial time per phase, within its wall time" % name)
PY
while read -r v what; do
	[ "$v" = ok ] && ok "stats: $what" || not_ok "stats: $what" "$(cat "$T_OUT/py.out")"
done <"$T_OUT/py.out"

BTFPIPE_BIN="$T_BIN" "$T_TOP/pipeline.sh" --stats=json -o "$T_OUT/p.btf" "$e" >"$T_OUT/p.json" 2>"$T_OUT/p.err"
check "pipeline --stats=json: one JSON object with the three stages" python3 -c "
import json, sys; j = json.load(open(sys.argv[1])); assert set(j) == {'dwarf-extract', 'dedup-merge', 'btf-emit'}, j" "$T_OUT/p.json"

# Progress: never on a pipe; on a terminal (script gives one), unless -q.
"$T_BIN/dwarf-extract" -j1 -o "$T_OUT/q.cus" "$e" 2>"$T_OUT/pipe.err"
[ -s "$T_OUT/pipe.err" ] && not_ok "no progress line when stderr is not a terminal" "$(od -c "$T_OUT/pipe.err" | head -3)" ||
	ok "no progress line when stderr is not a terminal"
if have script; then
	script -qfec "'$T_BIN/dwarf-extract' -j1 -o '$T_OUT/t.cus' '$e'" /dev/null >"$T_OUT/tty.out" 2>&1
	check_grep "a progress line on a terminal" 'dwarf-extract: CU [0-9]+/[0-9]+' "$T_OUT/tty.out"
	script -qfec "'$T_BIN/dwarf-extract' -q -j1 -o '$T_OUT/t.cus' '$e'" /dev/null >"$T_OUT/ttyq.out" 2>&1
	grep -q 'CU [0-9]*/' "$T_OUT/ttyq.out" && not_ok "-q: no progress line on a terminal" || ok "-q: no progress line on a terminal"
else
	skip "progress on a terminal" "script (util-linux) not installed"
fi
test_done
