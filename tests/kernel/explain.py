#!/usr/bin/env python3
"""explain.py: every difference between pahole 1.24's BTF (side A) and ours
(side B) must have a documented cause; print the causes with counts and any
difference left unexplained (exit 1 when there is one).

  explain.py --types TYPES.cmp --funcs FUNCS.cmp --skips SKIPS --elf ELF

TYPES.cmp is `btfcmp.py --flatten-arrays --width 0 A B` (types only),
FUNCS.cmp the same with --funcs, SKIPS our btf-emit --skip-report, ELF the
binary (its symbol table, through nm). The causes are btf-emit's documented
rules (stages/btf-emit/funcs.c, vars.c) and pahole 1.24's known behaviour.
"""
import argparse
import collections
import re
import subprocess
import sys

RULES = ("optimized parameters", "ambiguous address", "inconsistent prototype",
         "a parameter is in an unexpected register", "uncertain parameter location",
         "reordered parameters")


def detail_lines(path):
    return [l.strip() for l in open(path) if l.startswith("  ")]


def func_symbols(elf):
    out = subprocess.run(["nm", "--defined-only", elf], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return {l.split()[2] for l in out.splitlines() if len(l.split()) == 3 and l.split()[1] in "tTwW"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--types", required=True)
    ap.add_argument("--funcs", required=True)
    ap.add_argument("--skips", required=True)
    ap.add_argument("--elf", required=True)
    o = ap.parse_args()
    causes = collections.Counter()
    unexplained = []

    # Types (no functions): the only differences allowed are these.
    datasec = {}
    for line in detail_lines(o.types):
        m = re.match(r"count VAR A=(\d+) B=(\d+)$", line)
        if m and int(m[2]) - int(m[1]) == 1:
            continue
        if line == "only-in-B var fixed_percpu_data linkage=global struct fixed_percpu_data":
            causes["VAR fixed_percpu_data: at offset 0 of .data..percpu, which pahole 1.24 drops "
                   "(pahole master encodes it)"] += 1
            continue
        m = re.match(r"only-in-([AB]) datasec (\.data\.\.percpu .*)", line)
        if m:
            datasec[m[1]] = m[2]
            continue
        m = re.match(r"count CONST A=(\d+) B=(\d+)$", line)
        if m and 0 < int(m[2]) - int(m[1]) <= 8:
            causes["CONST over multi-dimensional arrays: pahole flattens them before its dedup "
                   "and merges const char[1][32] with const char[32]"] += int(m[2]) - int(m[1])
            continue
        if line == "only-in-B const([0](const(int 'char')))":
            continue
        unexplained.append("type: " + line)
    if datasec:
        if datasec.get("A", "") != re.sub(r"fixed_percpu_data@0\+\d+, ", "", datasec.get("B", "")):
            unexplained.append("type: the .data..percpu DATASEC differs by more than fixed_percpu_data")

    # Functions.
    skips = {}
    for line in open(o.skips):
        m = re.match(r"func (\S+): (.*) \(CU .*\)$", line.strip())
        if m:
            skips[m[1]] = m[2]
    syms = func_symbols(o.elf)
    lines = [l for l in detail_lines(o.funcs) if re.match(r"only-in-[AB] func ", l)]
    protos = {"A": {}, "B": {}}
    for l in lines:
        m = re.match(r"only-in-([AB]) func (\S+) linkage=\S+ (.*)", l)
        protos[m[1]][m[2]] = m[3]
    # Loosely equal: parameter names, const and parentheses aside (the
    # consistent_func comparison ignores const too).
    strip = lambda p: re.sub(r"[()]|\bconst\b", "", re.sub(r"(\w+|\(anon\)): ", ": ", p))
    for name, proto in sorted(protos["A"].items()):
        if name in protos["B"]:
            if strip(proto) == strip(protos["B"][name]):
                causes["another description of the same function: ours is the definition at the "
                       "symbol's address (strong over weak), pahole 1.24 takes the first CU's"] += 1
            else:
                unexplained.append("func %s: A %s / B %s" % (name, proto, protos["B"][name]))
            continue
        why = skips.get(name, "")
        rule = next((r for r in RULES if why.startswith(r)), None)
        if rule:
            causes["skipped by rule: " + rule + " (pahole 1.24 predates the rule)"] += 1
        else:
            unexplained.append("func %s only in pahole's, our reason: %s" % (name, why or "none"))
    for name in sorted(set(protos["B"]) - set(protos["A"])):
        if name not in syms and any(s.startswith(name + ".") for s in syms):
            causes["encoded from a suffixed symbol (%s.isra/.constprop/...): pahole 1.24 matches "
                   "exact symbol names only" % "NAME"] += 1
        else:
            unexplained.append("func %s only in ours" % name)

    for cause, n in causes.most_common():
        print("%6d  %s" % (n, cause))
    for u in unexplained:
        print("UNEXPLAINED " + u)
    print("explain: %d causes, %d unexplained" % (len(causes), len(unexplained)))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
