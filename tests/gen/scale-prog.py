#!/usr/bin/env python3
"""tests/gen/scale-prog.py: a generated C program, kernel-like, whose units
can be linked in prefixes of any length, for the scaling bench.

    scale-prog.py --units U --types T [--factor F] [--seed K] DIR

writes DIR/src/: core.h, g0000.h ... (group headers), u00000.c ...
(F * U units), main.c and units.list (the unit sources in link order),
a pure function of (U, T, F, K): the same bytes on every run. The first
U units and main.c make the "1x" program: U compilation units with about
T distinct types after dedup (BTF kinds counted as the emitted BTF counts
them: STRUCT, PTR, FUNC, FUNC_PROTO, ...). The first 2U units make the
2x program, with about 2T types, and so on up to F * U.

Why: bench/scale.sh measures how the cost of btfpipe and pahole grows with
the input, at 1, 2, 4 and 8 times the size of Debian's cloud vmlinux
(2,172 CUs, about 110,000 types), without compiling four programs: the
units are compiled once at the largest size and each size links a prefix
of the objects. So every unit may only use what comes before it (calls go
to lower-numbered units), and main.c finds the units it was linked with
through a linker-made table (section "scale_reg", __start_/__stop_), not by
name. And so that the types grow with the units, not with a header that
every size shares, the types are laid out as a kernel's are:

- core.h (about 1.5 % of T): what every unit includes, like the kernel's
  list_head, atomic_t, spinlock_t and u8...s64, and a strongly connected
  graph of core structs (pointer cycles, embedded earlier structs,
  anonymous unions, function pointer members, typedefs, enums). Every unit
  points into it, so every CU repeats all of it in DWARF, as every kernel
  CU repeats the closure of task_struct: the bulk of each CU's DWARF
  (with gcc about 85 KB of .debug_info a CU at the default sizes; the
  vmlinux has 75 KB) and what the dedup removes.
- g*.h (about 18.5 %): one header per group of 8 consecutive units, like a
  driver directory's header: structs in a pointer ring, typedefs, an enum,
  an ops struct of function pointers, and a few function signatures that
  the group's units share (many FUNCs, one FUNC_PROTO). A unit includes its
  own group's header and one earlier group's; other groups' structs are only
  declared (a FWD in that CU, a STRUCT in the CUs that include its header).
- each unit (the remaining 80 %, spread evenly): its own structs, a callback
  member in every other, an enum, a typedef, globals, and about 20 functions, half with
  a prototype of their own and half with one of their group's, as the
  vmlinux has 42,000 FUNCs over 22,500 FUNC_PROTOs.

The type counts are planned here per construct (plan_*); what the emitted
BTF really holds is measured by bench/scale.sh (its "types" column), and
this generator prints its own prediction for the 1x program on stdout.
"""
import argparse
import os
import sys

GROUP_UNITS = 8     # units per group header (a "driver directory")
CORE_SHARE = 0.015  # of T: the core header
GROUP_SHARE = 0.185  # of T: the group headers of the 1x program
BASE_TYPES = 55     # int, char, u8..s64, list_head, main(), ...: as measured
TEMPLATES = 6       # shared function signatures per group

SCALARS = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "unsigned long",
           "long", "int", "unsigned int", "kbool", "short"]
FIELDS = ["flags", "state", "count", "seq", "mask", "index", "mode", "len",
          "gen", "prio", "size", "cookie", "hash", "owner_id"]


SEED = 1  # --seed: set once by gen(), folded into every mix()


def mix(*xs):
    """A 64-bit hash of small integers and the seed (splitmix64 steps):
    stable across Python versions and runs, unlike hash() or random."""
    h = 0x9E3779B97F4A7C15
    for x in (SEED,) + xs:
        h = (h ^ (x & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        h = (h ^ (h >> 27)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
    return h


def share(total, n, i):
    """The i-th of n near-equal integer shares of total (Bresenham): any
    prefix of shares sums to its fair part, so any prefix of units gets its
    part of the type budget."""
    return int((i + 1) * total / n) - int(i * total / n)


# --- the plan: how many of each construct, and the types that yields --------

def plan_core(budget):
    """Core structs K for a budget of BTF types. A core struct yields a
    STRUCT and a PTR, half of them a callback (PTR + FUNC_PROTO), a third an
    anonymous UNION, a quarter a TYPEDEF with a PTR to it; an enum per 8."""
    k = max(4, int((budget - BASE_TYPES) / (2 + 1 + 1 / 3 + 2 / 4 + 1 / 8)))
    return k


def core_yield(k):
    return (BASE_TYPES + 2 * k + 2 * (k // 2) + (k + 2) // 3 + 2 * ((k + 3) // 4)
            + max(1, k // 8))


def plan_group(budget):
    """Group structs M: each a STRUCT and a PTR, a typedef (TYPEDEF + PTR)
    for every third, plus an enum, an ops struct (STRUCT, PTR, three
    callbacks of PTR + FUNC_PROTO) and TEMPLATES shared FUNC_PROTOs."""
    m = 1
    while group_yield(m + 1) <= budget:
        m += 1
    return m


def group_yield(m):
    return 2 * m + 2 * ((m + 2) // 3) + 1 + 8 + TEMPLATES


def plan_unit(budget):
    """(L structs, Ft functions with a group's prototype, Fu with their own,
    pad typedefs) for a unit's budget. Structs: STRUCT + PTR, a callback
    (PTR + FUNC_PROTO) for every odd one, an anonymous UNION for every third;
    the first holds an ARRAY of pointers. Fixed: an enum, a typedef, the
    FUNCs f*_get and f*_entry (their prototypes are shared), a CONST and its
    PTR (the first own function's const parameter). Ft: one FUNC each; Fu:
    FUNC + FUNC_PROTO; what is left (0 or 1) an extra typedef."""
    ls = max(1, round(budget * 0.09))
    while ls > 1 and unit_fixed(ls) + 3 > budget:
        ls -= 1
    rest = max(0, budget - unit_fixed(ls))
    fu = rest // 3
    ft = rest - 2 * fu
    ft = min(ft, TEMPLATES * 3)  # at most three functions per template
    fu = (rest - ft) // 2
    pad = rest - ft - 2 * fu
    return ls, ft, fu, pad


def unit_fixed(ls):
    return 2 * ls + 2 * (ls // 2) + (ls + 2) // 3 + 1 + 1 + 1 + 2 + 2


# --- writers -------------------------------------------------------------------

def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def gen_core(src, k, banner):
    """core.h: base types and k core structs c0..c{k-1} in one pointer ring
    (c_i -> c_{i+1}) plus a random pointer each, so every CU that touches one
    holds them all."""
    ne = max(1, k // 8)
    h = [f"/* core.h: {banner} */", "#ifndef SCALE_CORE_H", "#define SCALE_CORE_H", ""]
    h += ["typedef unsigned char u8;", "typedef unsigned short u16;", "typedef unsigned int u32;",
          "typedef unsigned long long u64;", "typedef signed char s8;", "typedef short s16;",
          "typedef int s32;", "typedef long long s64;", "typedef _Bool kbool;",
          "typedef struct { int counter; } atomic_t;",
          "typedef struct { long counter; } atomic64_t;",
          "typedef struct spinlock { unsigned int val; } spinlock_t;",
          "struct list_head { struct list_head *next, *prev; };",
          "struct hlist_node { struct hlist_node *next, **pprev; };",
          "struct hlist_head { struct hlist_node *first; };",
          "struct rb_node { unsigned long __rb_parent_color; struct rb_node *rb_right; struct rb_node *rb_left; };",
          "struct rb_root { struct rb_node *rb_node; };",
          "struct kref { atomic_t refcount; };",
          "/* main.c walks these: one per unit linked, in section scale_reg */",
          "struct scale_reg { int (*entry)(int); const void *data; } __attribute__((aligned(16)));",
          ""]
    for i in range(k):
        h.append(f"struct c{i};")
    for i in range(0, k, 4):
        h.append(f"typedef struct c{i} ct{i};")
    for e in range(ne):
        h.append(f"enum ce{e} {{ CE{e}_NONE, CE{e}_ONE, CE{e}_MAX = {e + 3} }};")
    h.append("")
    for i in range(k):
        m = [f"struct c{i} {{"]
        m.append(f"	struct c{(i + 1) % k} *next;")
        m.append(f"	struct c{mix(1, i) % k} *{FIELDS[i % len(FIELDS)]}_ref;")
        for f in range(3):
            m.append(f"	{SCALARS[(i + f) % len(SCALARS)]} {FIELDS[(i + 3 * f) % len(FIELDS)]}_{f};")
        m.append(f"	enum ce{i % ne} state;")
        if i % 2 == 0:
            m.append("	struct list_head list;")
        if i % 3 == 0:
            m.append("	atomic_t refcnt;")
            m.append(f"	union {{ long raw; struct c{i} *self; }} u;")
        if i % 4 == 0:
            m.append(f"	ct{i} *alias;")
        if i % 4 == 1:
            m.append("	spinlock_t lock;")
        if i % 2 == 1:
            m.append(f"	void (*release)(struct c{i} *, int);")
        if i % 5 == 2:
            m.append("	struct hlist_node hnode;")
        if i % 7 == 3:
            m.append("	struct rb_node rb;")
        if i % 6 == 4:
            m.append("	char comm[16];")
        if i % 9 == 5:
            m.append(f"	struct c{mix(2, i) % i} embedded;")
        m.append("	unsigned int dead : 1, queued : 1;")
        m.append("};")
        h += m
    h += ["", "int scale_sink(const void *p);", "", "#endif"]
    write(os.path.join(src, "core.h"), h)


def group_other(g):
    """The earlier group that group g's first struct points at (declared only)."""
    return mix(3, g) % g if g > 0 else None


def gen_group(src, g, m, k, banner):
    gn = f"g{g}"
    o = group_other(g)
    h = [f"/* g{g:04d}.h: {banner} */", f"#ifndef SCALE_G{g}_H", f"#define SCALE_G{g}_H",
         '#include "core.h"', ""]
    for j in range(m):
        h.append(f"struct {gn}_s{j};")
    if o is not None:
        h.append(f"struct g{o}_s0;	/* declared only: g{o:04d}.h defines it */")
    h.append(f"struct {gn}_ops;")
    for j in range(0, m, 3):
        h.append(f"typedef struct {gn}_s{j} {gn}_t{j};")
    h.append(f"enum {gn}_mode {{ G{g}_OFF, G{g}_ON, G{g}_AUTO = 7 }};")
    h.append("")
    for j in range(m):
        s = [f"struct {gn}_s{j} {{"]
        s.append("	struct list_head node;")
        s.append(f"	struct {gn}_s{(j + 1) % m} *next;")
        s.append(f"	struct c{mix(4, g, j) % k} *core;")
        s.append("	u32 flags;")
        s.append(f"	{SCALARS[(g + j) % len(SCALARS)]} {FIELDS[(g + j) % len(FIELDS)]}_val;")
        if j % 3 == 0:
            s.append(f"	{gn}_t{j} *parent;")
        if j == 0:
            s.append(f"	struct {gn}_ops *ops;")
            s.append(f"	enum {gn}_mode mode;")
            s.append("	spinlock_t lock;")
            if o is not None:
                s.append(f"	struct g{o}_s0 *peer;")
        s.append("	char name[16];")
        s.append("	unsigned int active : 1, dying : 1;")
        s.append("};")
        h += s
    h.append(f"struct {gn}_ops {{")
    h.append(f"	int (*probe)(struct {gn}_s0 *, u32);")
    h.append(f"	void (*remove)(struct {gn}_s0 *);")
    h.append(f"	long (*ioctl)(struct {gn}_s{1 % m} *, unsigned int, unsigned long);")
    h.append("};")
    h += ["", "#endif"]
    write(os.path.join(src, f"g{g:04d}.h"), h)


def template(g, m, t):
    """Shared signature t of group g: (return type, params as "type name")."""
    ret = ["int", "long", "void", "int", "kbool", "u32"][t % 6]
    p = [f"struct g{g}_s{t % m} *dev"]
    if t % 2 == 0:
        p.append("u32 flags")
    if t % 3 == 1:
        p.append("unsigned long arg")
    return ret, p


def gen_unit(src, u, budget, groups_m, k, banner, width):
    g = u // GROUP_UNITS
    m = groups_m[g]
    o = group_other(g) if mix(5, u) % 2 else None
    ls, ft, fu, pad = plan_unit(budget)
    un = f"u{u}"
    c = [f"/* u{u:0{width}d}.c: {banner} */", '#include "core.h"', f'#include "g{g:04d}.h"']
    if o is not None:
        c.append(f'#include "g{o:04d}.h"')
    c.append("")
    c.append(f"enum {un}_state {{ U{u}_IDLE, U{u}_BUSY = 2, U{u}_GONE = -1 }};")
    c.append(f"typedef u64 {un}_cookie_t;")
    for p in range(pad):
        c.append(f"typedef u32 {un}_pad{p}_t;")
    for j in range(ls):
        c.append(f"struct {un}_s{j};")
    c.append("")
    for j in range(ls):
        s = [f"struct {un}_s{j} {{"]
        s.append(f"	struct {un}_s{(j + 1) % ls} *next;")
        s.append(f"	struct g{g}_s{mix(6, u, j) % m} *dev;")
        s.append(f"	struct c{mix(7, u, j) % k} *core;")
        s.append("	struct list_head list;")
        s.append("	u32 flags;")
        if j == 0:
            s.append(f"	{un}_cookie_t cookie;")
            s.append(f"	enum {un}_state state;")
            s.append(f"	struct {un}_s{ls - 1} *slots[4];")
            s.append("	const char *label;")
            for p in range(pad):
                s.append(f"	{un}_pad{p}_t pad{p};")
            if o is not None:
                s.append(f"	struct g{o}_s{mix(8, u) % groups_m[o]} *peer;")
        if j % 2 == 1:
            s.append(f"	int (*cb)(struct {un}_s{j} *, long);")
        if j % 3 == 0:
            s.append(f"	union {{ long raw; struct {un}_s{j} *self; }} u;")
        s.append("	char tag[8];")
        s.append("	unsigned int busy : 1, hot : 1;")
        s.append("};")
        c += s
    for j in range(ls):
        c.append(f"struct {un}_s{j} {un}_g{j};")
    c.append("")
    calls = []
    # Functions of the group's signatures (one FUNC each, the FUNC_PROTO shared).
    for i in range(ft):
        t = i % TEMPLATES
        ret, params = template(g, m, t)
        name = f"{un}_t{i}"
        c.append(f"__attribute__((noinline)) {ret} {name}({', '.join(params)})")
        c.append("{")
        c.append(f"	if (!dev)\n		return{'' if ret == 'void' else ' 0'};")
        used = "".join(f" + (u32){p.split()[-1]}" for p in params[1:])
        c.append(f"	{un}_g{i % ls}.flags += dev->flags{used};")
        c.append(f"	scale_sink(dev{'->next' if i % 2 else ''});")
        if ret != "void":
            c.append(f"	return ({ret})(dev->flags + {i});")
        c.append("}")
        args = [f"(void *){un}_g{i % ls}.dev"] + ["v" for _ in params[1:]]
        calls.append((ret, f"{name}({', '.join(args)})"))
    # Functions of their own (FUNC + FUNC_PROTO each; parameter names make
    # the prototype the unit's own even when the types repeat).
    for i in range(fu):
        j = i % ls
        params = [f"{'const ' if i == 0 else ''}struct {un}_s{j} *p{i}", "long v"]
        params += [f"long a{e}" for e in range(i // ls)]
        name = f"{un}_f{i}"
        c.append(f"__attribute__((noinline)) int {name}({', '.join(params)})")
        c.append("{")
        c.append(f"	int s = (int)v + (int)p{i}->flags;")
        if j % 2 == 1 and i != 0:
            c.append(f"	if (p{i}->cb)\n		s += p{i}->cb(p{i}, v);")
        c.append(f"	if (p{i}->next)\n		s += (int)p{i}->next->flags;")
        c.append(f"	if (p{i}->dev)\n		s += (int)p{i}->dev->flags;")
        for e in range(i // ls):
            c.append(f"	s += (int)a{e};")
        c.append("	return s;")
        c.append("}")
        args = [f"&{un}_g{j}", "v"] + ["v" for _ in range(i // ls)]
        calls.append(("int", f"{name}({', '.join(args)})"))
    c.append("")
    # Small functions that later units call: under ThinLTO they are imported
    # (and a CU of this file appears in the importing module too).
    c.append(f"int f{u}_get(void *p)")
    c.append("{")
    c.append(f"	struct {un}_s0 *q = p;")
    c.append("	return q ? (int)q->flags + 1 : 0;")
    c.append("}")
    c.append("")
    callees = sorted(set(mix(9, u, x) % u for x in range(2))) if u > 0 else []
    for j in callees:
        c.append(f"int f{j}_get(void *p);")
    c.append(f"int f{u}_entry(int v)")
    c.append("{")
    c.append("	int s = v;")
    for ret, call in calls:
        c.append(f"	{call};" if ret == "void" else f"	s += (int){call};")
    for j in callees:
        c.append(f"	s += f{j}_get(&{un}_g0);")
    c.append(f"	s += f{u}_get(&{un}_g0);")
    c.append(f'	{un}_g0.label = "{un}";')
    c.append("	return s;")
    c.append("}")
    c.append("")
    c.append(f"static const struct scale_reg {un}_reg __attribute__((used, section(\"scale_reg\"))) =")
    c.append(f"	{{ f{u}_entry, &{un}_g0 }};")
    write(os.path.join(src, f"u{u:0{width}d}.c"), c)
    return unit_fixed(ls) + ft + 2 * fu + pad


def gen_main(src, banner):
    m = [f"/* main.c: {banner} */", '#include "core.h"', "",
         "/* The linker defines these around section scale_reg: the units linked. */",
         "extern const struct scale_reg __start_scale_reg[], __stop_scale_reg[];", "",
         "__attribute__((noinline)) int scale_sink(const void *p)", "{",
         "	static const void *volatile last;", "	last = p;", "	return p != 0;", "}", "",
         "int main(int argc, char **argv)", "{", "	int s = argc;", "	(void)argv;",
         "	for (const struct scale_reg *r = __start_scale_reg; r < __stop_scale_reg; r++)",
         "		s += r->entry(s) + scale_sink(r->data);", "	return s == 42;", "}"]
    write(os.path.join(src, "main.c"), m)


def gen(units, types, factor, seed, src):
    global SEED
    SEED = seed
    banner = (f"generated by tests/gen/scale-prog.py --units {units} --types {types} "
              f"--factor {factor} --seed {seed}; do not edit.")
    n = units * factor
    width = max(5, len(str(n - 1)))
    os.makedirs(src, exist_ok=True)
    k = plan_core(types * CORE_SHARE)
    gen_core(src, k, banner)
    g1 = (units + GROUP_UNITS - 1) // GROUP_UNITS
    ng = (n + GROUP_UNITS - 1) // GROUP_UNITS
    gbudget = types * GROUP_SHARE
    # Groups of uneven size (+-1 struct), as directories are.
    groups_m = [plan_group(share(gbudget, g1, g % g1) + 2 * (mix(10, g) % 3) - 2) for g in range(ng)]
    for g in range(ng):
        gen_group(src, g, groups_m[g], k, banner)
    planned_1x = core_yield(k) + sum(group_yield(groups_m[g]) for g in range(g1))
    ubudget = max(units * 12, types - planned_1x)
    for u in range(n):
        y = gen_unit(src, u, share(ubudget, units, u % units), groups_m, k, banner, width)
        if u < units:
            planned_1x += y
    gen_main(src, banner)
    write(os.path.join(src, "units.list"), [f"u{u:0{width}d}.c" for u in range(n)])
    print(f"scale-prog.py: {n} units, {ng} groups, {k} core structs; "
          f"the first {units} units: about {planned_1x} types")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", type=int, default=40, help="units of the 1x program")
    ap.add_argument("--types", type=int, default=2000, help="distinct types of the 1x program")
    ap.add_argument("--factor", type=int, default=8, help="units written: factor x units")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("dir")
    a = ap.parse_args()
    if a.units < 1 or a.factor < 1 or a.types < 20 * a.units:
        sys.exit("scale-prog.py: need --units >= 1, --factor >= 1 and --types >= 20 x --units")
    gen(a.units, a.types, a.factor, a.seed, os.path.join(a.dir, "src"))


if __name__ == "__main__":
    main()
