#!/usr/bin/env bash
# t0600-objects: addresses from relocatable objects (ET_REL: .o, .ko) and
# shared objects (ET_DYN), checked against the ELF symbol table.
#
# In a .o every section starts at address 0 and DW_AT_low_pc / DW_OP_addr are
# only right after the relocations are applied; dwarf-extract must then record
# each address as an offset inside its section, with that section's index
# (format/CU-RECORDS.md: `pc`, `addr`, flag ET_REL). That is exactly what the
# symbol table says about the same object (st_value, st_shndx), so readelf -sW
# is the reference: an unrelocated address (0 everywhere), a wrong section or a
# virtual address where an offset is due all show up as a mismatch.
# A shared object has virtual addresses: pc must equal st_value there.
#
# Objects: shapes.c (every global kind, incl. .data..percpu and a custom
# section) by gcc and clang-19 at -O2, and again with -ffunction-sections
# -fdata-sections (one section per symbol, all at offset 0); a shared library
# of util.c + opaque.c (gcc, and clang-19).
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
SAMPLE="$T_TOP/tests/fixtures/sample"

# compare_syms LABEL ELF DUMP FLAGS REQUIRED [PERCPU]: print result lines
# "ok<TAB>desc", "fail<TAB>desc<TAB>detail" (see report). REQUIRED is a list
# of "var:NAME" / "func:NAME" that must have an address; PERCPU (optional) is
# a variable that must sit at offset 0 of section .data..percpu.
compare_syms() {
	python3 - "$@" <<'PY'
import re, subprocess, sys

label, elf, dump, want_flags, required = sys.argv[1:6]
percpu = sys.argv[6] if len(sys.argv) > 6 else ""
out = []
def res(good, desc, detail=""):
    out.append("%s\t%s: %s\t%s" % ("ok" if good else "fail", label, desc,
                                    detail.replace("\t", " ").replace("\n", " | ")))

def readelf(*args):
    return subprocess.run(["readelf", *args, elf], capture_output=True, text=True,
                          check=True).stdout

# Symbols: name -> set of (st_value, st_shndx), defined ones only.
syms = {}
for line in readelf("-sW").splitlines():
    f = line.split()
    if len(f) >= 8 and re.fullmatch(r"\d+:", f[0]) and f[6].isdigit():
        syms.setdefault(f[7].split("@")[0], set()).add((int(f[1], 16), int(f[6])))
# Sections: name -> index.
secs = {}
for line in readelf("-SW").splitlines():
    m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
    if m:
        secs[m.group(2)] = int(m.group(1))

# The dump: the header's flags, then every record; a var defined through
# DW_AT_specification (gcc) takes its name from the spec= target.
lines = open(dump).read().splitlines()
m = re.search(r"\bflags=(\d+)\b", lines[0]) if lines else None
res(m is not None and m.group(1) == want_flags, "header flags=%s (%s)" % (
    want_flags, "ET_REL" if want_flags == "1" else "not ET_REL"), lines[0] if lines else "empty dump")
recs, cu = {}, -1
for line in lines:
    if line.startswith("cu "):
        cu = int(line.split()[1])
        continue
    m = re.match(r'^  #(\d+) <0x[0-9a-f]+> (\w+)(?: "([^"]*)")?(.*)$', line)
    if m:
        recs[(cu, int(m.group(1)))] = (m.group(2), m.group(3) or "", m.group(4), line.strip())
placed = []  # (kind, name, addr, shndx, line)
for (c, k), (kind, name, rest, line) in recs.items():
    a = re.search(r"\b(?:pc|addr)=0x([0-9a-f]+) shndx=(\d+)", rest)
    if not a or kind not in ("var", "func"):
        continue
    if not name:
        s = re.search(r"\bspec=#(\d+)", rest)
        if s and (c, int(s.group(1))) in recs:
            name = recs[(c, int(s.group(1)))][1]
    if name:
        placed.append((kind, name, int(a.group(1), 16), int(a.group(2)), line))

# Every named definition with an address agrees with its symbol.
bad = [f"{n}: {l} but symbol table has " +
       (", ".join(f"0x{v:x} in section {s}" for v, s in sorted(syms.get(n, ()))) or "nothing")
       for kind, n, a, s, l in placed if (a, s) not in syms.get(n, set())]
res(not bad and len(placed) > 0,
    "all %d named addresses equal st_value and st_shndx" % len(placed),
    "; ".join(bad[:8]) or "no record with an address")

# The required names, one check each.
for req in required.split():
    kind, name = req.split(":")
    mine = [p for p in placed if p[0] == kind and p[1] == name]
    want = sorted(syms.get(name, ()))
    good = bool(mine) and all((a, s) in syms.get(name, set()) for _, _, a, s, _ in mine)
    res(good, "%s %s at its symbol's %s" % (kind, name, "value and section"),
        "records: " + ("; ".join(p[4] for p in mine) or "none with an address") +
        "; symbol: " + (", ".join(f"0x{v:x} in section {s}" for v, s in want) or "none"))

if percpu:
    k = secs.get(".data..percpu")
    mine = [p for p in placed if p[0] == "var" and p[1] == percpu]
    res(k is not None and any(a == 0 and s == k for _, _, a, s, _ in mine),
        "var %s at addr=0x0 in .data..percpu (section %s)" % (percpu, k),
        "records: " + ("; ".join(p[4] for p in mine) or "none with an address"))
print("\n".join(out))
PY
}

# report FILE: turn result lines into ok / not_ok.
report() {
	local st desc detail
	while IFS=$'\t' read -r st desc detail; do
		if [ "$st" = ok ]; then ok "$desc"; else not_ok "$desc" "$detail"; fi
	done <"$1"
}

# extract_and_compare LABEL ELF FLAGS REQUIRED [PERCPU]
extract_and_compare() {
	local label=$1 elf=$2
	if ! out=$("$EXTRACT" -o "$elf.cus" "$elf" 2>&1); then
		not_ok "$label: extract" "$out"
		return
	fi
	if ! "$EXTRACT" --dump "$elf.cus" >"$elf.dump" 2>"$elf.dump.err"; then
		not_ok "$label: dump" "$(cat "$elf.dump.err")"
		return
	fi
	ok "$label: extract and dump"
	if ! compare_syms "$label" "$elf" "$elf.dump" "${@:3}" >"$elf.results" 2>"$elf.err"; then
		not_ok "$label: compare with readelf" "$(cat "$elf.err")"
		return
	fi
	report "$elf.results"
}

SHAPES_REQ="var:g_percpu_hits var:g_orphan_sec var:g_enums var:g_flags var:g_answer
var:g_ops var:g_cube func:flags_sum func:wire_len func:copy_ints func:print_shape_facts"
LIB_REQ="func:opaque_get func:opaque_value func:ops_sum func:ignore_second func:on_event_log
func:util_remember func:scale var:g_opaque_pool var:g_conflict_small var:g_conflict_big
var:g_util_last"

for cc in "$GCC" "$CLANG"; do
	ccn=$(basename "$cc")
	if ! have "$cc"; then
		skip "$ccn: objects" "compiler $cc not found"
		continue
	fi
	# ET_REL: one .text, .data, ... and the two named sections.
	for variant in plain sections; do
		extra=
		[ "$variant" = sections ] && extra="-ffunction-sections -fdata-sections"
		obj="$T_OUT/shapes-$ccn-$variant.o"
		# shellcheck disable=SC2086
		if ! out=$(cd "$SAMPLE" && "$cc" -O2 -gdwarf-5 $extra -c shapes.c -o "$obj" 2>&1); then
			not_ok "$ccn: compile shapes.c ($variant)" "$out"
			continue
		fi
		extract_and_compare "$ccn shapes.o${extra:+ $extra}" "$obj" 1 "$SHAPES_REQ" g_percpu_hits
	done

	# ET_DYN: virtual addresses.
	so="$T_OUT/libsample-$ccn.so"
	if ! out=$(cd "$SAMPLE" && "$cc" -shared -fPIC -g -O2 -o "$so" util.c opaque.c 2>&1); then
		not_ok "$ccn: build libsample.so" "$out"
		continue
	fi
	extract_and_compare "$ccn libsample.so" "$so" 0 "$LIB_REQ"
done
test_done
