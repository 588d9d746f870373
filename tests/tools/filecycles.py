#!/usr/bin/env python3
"""filecycles.py OBJDIR...: the link-level calls between the object files of
each directory (a stage's .o files: which file uses a symbol another one
defines, read with nm) and any cycle among them. Prints one line per
directory, "DIR: N files, M edges, no cycle" or "DIR: cycle A -> B -> A";
exits 1 when a directory has a cycle (or cannot be read)."""
import collections, glob, os, subprocess, sys


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


def main(dirs):
    bad = 0
    for d in dirs:
        objs = sorted(glob.glob(os.path.join(d, "*.o")))
        if not objs:
            print("%s: no object files" % d)
            bad = 1
            continue
        syms = {os.path.basename(o)[:-2]: symbols(o) for o in objs}
        graph = collections.defaultdict(set)
        for a, (_, und) in syms.items():
            graph[a]
            for b, (dfn, _) in syms.items():
                if a != b and und & dfn:
                    graph[a].add(b)
        edges = sum(len(v) for v in graph.values())
        c = find_cycle(graph)
        if c:
            print("%s: cycle %s" % (d, " -> ".join(c)))
            bad = 1
        else:
            print("%s: %d files, %d edges, no cycle" % (d, len(objs), edges))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
