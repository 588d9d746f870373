#!/usr/bin/env bash
# t0200-fixture-facts: what dwarf-extract records about the sample fixture must
# agree with what the compiled program says about itself.
#
# tests/fixtures/sample prints "fact size TAG BYTES" and "fact bitoff TAG.MEMBER
# BITS" lines computed with sizeof/offsetof (and, for bitfields, by setting the
# field in a zeroed struct). For each compiler x -O0/-O2 x DWARF 4/5 we build it,
# run it, extract its DWARF, dump the .cus file and look every fact up in the
# dump: one check per fact. A fact that matches no record fails; nothing passes
# by default. A few structural checks follow (declared-here-defined-there
# struct opaque, the two file-local struct conflict, _Atomic, anonymous members).
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"

# Every struct/union tag the fixture must report facts about; a fact that the
# fixture stops printing would otherwise vanish from the test unnoticed.
FACT_TAGS="enums flags wire outer packet zla point matrix ops quals counters
scalars value opaque conflict"

# compare_facts LABEL DWARF FACTS DUMP: print one result per line,
# "ok<TAB>desc", "fail<TAB>desc<TAB>detail" or "skip<TAB>desc<TAB>reason".
compare_facts() {
	python3 - "$@" "$FACT_TAGS" <<'PY'
import re, sys

label, dwarf, facts_path, dump_path, tags = sys.argv[1:6]
out = []
def res(status, desc, detail=""):
    detail = detail.replace("\t", " ").replace("\n", " | ")
    out.append(f"{status}\t{label}: {desc}\t{detail}")

# Parse the dump (format/CU-RECORDS.md, "Text dump"): "cu N ..." starts a CU,
# "  #k <0x..> KIND ..." a record, "    .NAME ..." (". " when anonymous) a
# member of the struct/union record above it.
recs, cu, cur = [], -1, None
rec_re = re.compile(r'^  #\d+ <0x[0-9a-f]+> (\w+)(.*)$')
for line in open(dump_path, errors="replace"):
    line = line.rstrip("\n")
    if line.startswith("cu "):
        cu, cur = int(line.split()[1]), None
        continue
    m = rec_re.match(line)
    if m:
        kind, rest = m.groups()
        n = re.match(r'\s*"([^"]*)"(.*)$', rest)
        name, tail = (n.group(1), n.group(2)) if n else ("", rest)
        size = re.search(r'\bsize=(\d+)', tail)
        cur = dict(cu=cu, kind=kind, name=name, line=line.strip(),
                   decl="decl" in tail.split(),
                   size=int(size.group(1)) if size else None, members=[])
        recs.append(cur)
        continue
    m = re.match(r'^    \.(\S*) (.*)$', line)
    if m and cur is not None and cur["kind"] in ("struct", "union"):
        b = re.search(r'\bbitoff=(\d+)', m.group(2))
        cur["members"].append((m.group(1), int(b.group(1)) if b else None))

def named(kinds, name):
    return [r for r in recs if r["kind"] in kinds and r["name"] == name]

def shown(rs):
    return "; ".join(r["line"] for r in rs[:6]) or "no such record"

if not recs:
    res("fail", "dump has records", "no '  #k <0x..> kind' line in " + dump_path)

# One check per fact.
seen_tags = set()
for line in open(facts_path):
    f = line.split()
    if not f or f[0] != "fact":
        continue
    if len(f) == 4 and f[1] == "size":
        tag, want = f[2], int(f[3])
        seen_tags.add(tag)
        cands = named(("struct", "union"), tag)
        good = any(r["size"] == want and not r["decl"] for r in cands)
        res("ok" if good else "fail", f"size {tag} {want}", shown(cands))
    elif len(f) == 4 and f[1] == "bitoff" and "." in f[2]:
        tag, mem = f[2].split(".", 1)
        want = int(f[3])
        seen_tags.add(tag)
        cands = named(("struct",), tag)
        good = any((mem, want) in r["members"] for r in cands)
        got = [f"{r['name']}.{m}={b}" for r in cands for m, b in r["members"] if m == mem]
        res("ok" if good else "fail", f"bitoff {tag}.{mem} {want}",
            "found " + (", ".join(got) or "no member") + "; " + shown(cands))
    else:
        res("fail", "well-formed fact", line.strip())

missing = sorted(set(tags.split()) - seen_tags)
res("fail" if missing else "ok", "facts cover every fixture struct",
    "no fact for: " + " ".join(missing))

# struct opaque: a declaration in some CU, the definition in another.
op = named(("struct",), "opaque")
decl_cus = {r["cu"] for r in op if r["decl"]}
def_cus = {r["cu"] for r in op if not r["decl"] and (r["size"] or 0) > 0}
good = any(d != e for d in decl_cus for e in def_cus)
res("ok" if good else "fail", "struct opaque declared in one CU, defined in another",
    f"decl in CUs {sorted(decl_cus)}, defined in CUs {sorted(def_cus)}; " + shown(op))

# The two file-local struct conflict stay distinct (size or member names).
sigs = {(r["size"], tuple(m for m, _ in r["members"]))
        for r in named(("struct",), "conflict") if not r["decl"]}
res("ok" if len(sigs) >= 2 else "fail", "two different struct conflict",
    f"{len(sigs)} distinct definition(s): {sorted(sigs, key=str)}")

# _Atomic: both gcc 12 and clang 19 drop DW_TAG_atomic_type (a DWARF 5 tag)
# from DWARF 4 output, leaving the plain type, so there is nothing to find.
if dwarf == "4":
    res("skip", "atomic record", "the compilers emit DW_TAG_atomic_type only for DWARF 5")
else:
    res("ok" if any(r["kind"] == "atomic" for r in recs) else "fail", "atomic record",
        "no '  #k <0x..> atomic' line")

# struct outer holds an anonymous union and an anonymous struct.
outer = named(("struct",), "outer")
good = any(sum(1 for m, _ in r["members"] if m == "") >= 2 for r in outer)
res("ok" if good else "fail", "struct outer has two anonymous members", shown(outer))

print("\n".join(out))
PY
}

# report FILE: turn compare_facts lines into ok / not_ok / skip.
report() {
	local st desc detail
	while IFS=$'\t' read -r st desc detail; do
		case $st in
		ok) ok "$desc" ;;
		skip) skip "$desc" "$detail" ;;
		*) not_ok "$desc" "$detail" ;;
		esac
	done <"$1"
}

for cc in "$GCC" "$CLANG"; do
	for opt in -O0 -O2; do
		for dw in 4 5; do
			label="$(basename "$cc") $opt dwarf$dw"
			if ! have "$cc"; then
				skip "$label" "compiler $cc not found"
				continue
			fi
			dir="$T_OUT/$(basename "$cc")$opt-dwarf$dw"
			if ! out=$(build_fixture "$cc" "$opt" "$dw" "$dir" sample 2>&1); then
				not_ok "$label: build sample" "$out"
				continue
			fi
			if ! "$dir/sample" >"$dir/run.out" 2>&1; then
				not_ok "$label: run sample" "$(cat "$dir/run.out")"
				continue
			fi
			grep '^fact ' "$dir/run.out" >"$dir/facts" || true
			nfacts=$(wc -l <"$dir/facts")
			if [ "$nfacts" -lt 25 ]; then
				not_ok "$label: sample prints at least 25 facts" "got $nfacts"
				continue
			fi
			ok "$label: build and run sample ($nfacts facts)"

			# Without an extraction nothing can be compared: one failure
			# stands for the unchecked facts (never a skip).
			if ! out=$("$EXTRACT" -o "$dir/sample.cus" "$dir/sample" 2>&1); then
				not_ok "$label: dwarf-extract ($nfacts facts not checked)" "$out"
				continue
			fi
			if ! "$EXTRACT" --dump "$dir/sample.cus" >"$dir/sample.dump" 2>"$dir/dump.err"; then
				not_ok "$label: dwarf-extract --dump ($nfacts facts not checked)" \
					"$(cat "$dir/dump.err")"
				continue
			fi
			if ! compare_facts "$label" "$dw" "$dir/facts" "$dir/sample.dump" \
				>"$dir/results" 2>"$dir/compare.err"; then
				not_ok "$label: compare facts" "$(cat "$dir/compare.err")"
				continue
			fi
			report "$dir/results"
		done
	done
done
test_done
