#!/usr/bin/env python3
"""structure.py: the shape the code must keep, checked (tests/t0060).

    structure.py cycles OBJDIR:SRCDIR...   file cycles per directory
    structure.py lengths SRCDIR...         functions over the limit
    structure.py tables TOP                hash tables and growth outside their helpers

cycles: within each directory, file A uses file B when A.c or A.h
includes B.h (a data dependence: A reads B's structs or macros) or A.o
calls or reads a symbol B.o defines (read with nm). A cycle of uses means
two files own each other's state, which no reader can follow; each is
printed with the evidence of every edge, and the exit status is 1. The
files a header names as its module on its first line ("x.h: ... (x.c,
y.c)") count as one file: they share its state by design.

lengths: a function of more than LIMIT lines (its signature to its closing
brace) is printed as FILE:LINE and counted, unless it is a per-kind switch:
a body with at least SWITCH_CASES case labels, one per kind it dispatches
(a table of kinds reads best as one switch). Exit status 1 if any.

tables: every open-addressing probe (a "(j + 1) & mask" step) lives in
common/offmap (integer keys) or common/idmap (keys kept by the caller),
but the tables HAND_TABLES names with the reason they stay written out;
and every realloc() is vec.h's, whose growth is capped. Each other
place is printed as FILE:LINE; exit status 1 if any.
"""
import collections
import glob
import os
import re
import subprocess
import sys

LIMIT = 100
SWITCH_CASES = 6
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"', re.M)


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


MODULE = re.compile(r"^/\*\s*\w+\.h:.*\(([\w.]+\.c(?:, [\w.]+\.c)+)\)")


def modules(srcdir):
    """{file: module}: a header whose first line names several .c files in
    parentheses ("x.h: ... (x.c, y.c, z.c)") declares them one module, the
    header's: files that share its state struct by design, one unit for
    this check. Every other file is a module of its own."""
    owner = {}
    for h in glob.glob(os.path.join(srcdir, "*.h")):
        m = MODULE.match(open(h, encoding="utf-8", errors="replace").readline())
        if m:
            for c in m.group(1).split(", "):
                owner[c[:-2]] = os.path.basename(h)[:-2]
    return owner


def uses(objdir, srcdir):
    """{module: {other: why}} for the files of one directory."""
    edges = collections.defaultdict(dict)
    owner = modules(srcdir)
    mod = lambda f: owner.get(f, f)
    names = set()
    for path in glob.glob(os.path.join(srcdir, "*.[ch]")):
        base = os.path.basename(path)[:-2]
        names.add(base)
    for path in sorted(glob.glob(os.path.join(srcdir, "*.[ch]"))):
        base, ext = os.path.basename(path)[:-2], path[-1]
        edges[mod(base)]
        for inc in INCLUDE.findall(open(path, encoding="utf-8", errors="replace").read()):
            if mod(inc) != mod(base) and inc in names:
                edges[mod(base)].setdefault(mod(inc), "%s.%s includes %s.h" % (base, ext, inc))
    objs = {os.path.basename(o)[:-2]: symbols(o) for o in sorted(glob.glob(os.path.join(objdir, "*.o")))}
    for a, (_, und) in objs.items():
        for b, (dfn, _) in objs.items():
            common = sorted(und & dfn) if mod(a) != mod(b) else []
            if common:
                edges[mod(a)].setdefault(mod(b), "%s.o uses %s (%s.o)" % (a, common[0], b))
    return edges


def find_cycle(graph):
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if not state.get(v):
                c = visit(v)
                if c:
                    return c
        stack.pop()
        state[u] = 2
        return None

    for n in sorted(graph):
        if not state.get(n):
            c = visit(n)
            if c:
                return c
    return None


def cycles(pairs):
    bad = 0
    for pair in pairs:
        objdir, srcdir = pair.split(":", 1)
        if not glob.glob(os.path.join(objdir, "*.o")):
            print("%s: no object files" % objdir)
            bad = 1
            continue
        g = uses(objdir, srcdir)
        c = find_cycle(g)
        if c:
            bad = 1
            print("%s: file cycle %s" % (srcdir, " -> ".join(c)))
            for a, b in zip(c, c[1:]):
                print("    %s" % g[a][b])
        else:
            print("%s: %d files, %d uses, no cycle" % (srcdir, len(g), sum(len(v) for v in g.values())))
    return bad


FUNC_START = re.compile(r"^[A-Za-z_][^;{}()]*\b([A-Za-z_]\w*)\s*\(")


def long_functions(path):
    """(line, name, length) of each function of path over LIMIT lines that
    is not a per-kind switch. A function starts at a line that begins in
    column 0 with a name and an open parenthesis and whose signature ends
    at a line that is just "{"; it ends at the first "}" in column 0."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FUNC_START.match(lines[i])
        if not m or lines[i].startswith(("static inline", "#")):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j] != "{" and not lines[j].rstrip().endswith(";") and j - i < 8:
            j += 1
        if j >= len(lines) or lines[j] != "{":
            i += 1
            continue
        k = j + 1
        while k < len(lines) and lines[k] != "}":
            k += 1
        n = k - i + 1
        cases = sum(1 for l in lines[j:k] if re.match(r"^\s*case\b", l))
        if n > LIMIT and cases < SWITCH_CASES:
            out.append((i + 1, m.group(1), n))
        i = k + 1
    return out


def lengths(dirs):
    bad = 0
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.c"))):
            for line, name, n in long_functions(path):
                print("%s:%d: %s() is %d lines (at most %d, or a switch of %d cases or more)" %
                      (path, line, name, n, LIMIT, SWITCH_CASES))
                bad = 1
    if not bad:
        print("%d directories: no function over %d lines but per-kind switches" % (len(dirs), LIMIT))
    return bad


PROBE = re.compile(r"\(\s*\w+\s*\+\s*1\s*\)\s*&\s*(\(|\w)")
REALLOC = re.compile(r"\brealloc\s*\(")
TABLE_HOMES = {"common/offmap.h", "common/offmap.c", "common/idmap.h", "common/idmap.c"}
HAND_TABLES = {
    # Read by the scan threads while one thread inserts (release-ordered
    # slots, old arrays kept): an idmap frees its arrays as it grows.
    "stages/dedup-merge/weak.c",
    # Signatures of length and end bytes behind a filter, no hash over
    # the bytes: bench/README.md, "The hash tables that stay hand-written".
    "stages/btf-emit/str_match.c",
}


def hash_tables(top):
    bad = 0
    for path in sorted(glob.glob(os.path.join(top, "**", "*.[ch]"), recursive=True)):
        rel = os.path.relpath(path, top)
        if not rel.startswith(("stages/", "common/", "format/")):
            continue
        for no, line in enumerate(open(path, errors="replace"), 1):
            code = line.split("//")[0]
            if code.lstrip().startswith(("*", "/*")):
                continue
            if PROBE.search(code) and rel not in TABLE_HOMES | HAND_TABLES:
                print("%s:%d: a probe loop of its own: use common/idmap or common/offmap" % (rel, no))
                bad += 1
            if REALLOC.search(code) and rel != "common/vec.h":
                print("%s:%d: realloc() outside vec.h: grow through vec_grow()/vec_resize()" % (rel, no))
                bad += 1
    if bad:
        return 1
    print("%s: every hash table on offmap or idmap but %d named ones; every growth through vec.h"
          % (top, len(HAND_TABLES)))
    return 0


def main(argv):
    if len(argv) == 2 and argv[0] == "tables":
        return hash_tables(argv[1])
    if len(argv) < 2 or argv[0] not in ("cycles", "lengths"):
        sys.stderr.write(__doc__)
        return 2
    return cycles(argv[1:]) if argv[0] == "cycles" else lengths(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
