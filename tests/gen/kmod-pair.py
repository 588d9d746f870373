#!/usr/bin/env python3
"""kmod-pair.py DIR [NTYPES]: a generated "kernel" and "module" in C, for the
distilled-base tests (t1040), at the size of a vmlinux's type graph slice
that a module uses.

DIR/base.c   NTYPES named structs (each with scalars, a pointer to another,
             an embedded earlier struct, an anonymous union, an array, a
             function pointer), typedefs of some, enums and 64-bit enums, and
             functions that use them: the base (vmlinux).
DIR/base2.c  the same types, declared in another order and with extra
             types among them, one struct that no one embeds grown by a
             field: another build of the "same kernel", whose BTF ids differ
             (a relocation target).
DIR/mod.c    a module that uses a tenth of the base's types in every way
             (pointers, embedded, typedefs, enums, arrays of them) and has
             types of its own.
Deterministic: the same NTYPES gives the same files.
"""
import os
import random
import sys


def gen(n):
    r = random.Random(1040)
    structs = []
    for i in range(n):
        fields = [f"long a{i}", f"int b{i}"]
        if i > 0:
            fields.append(f"struct s{r.randrange(i)} *p")
            if i % 3 == 0:
                fields.append(f"struct s{r.randrange(max(1, i - 50), i)} emb")
        fields.append(f"union {{ int u{i}; char c[{1 + i % 7}]; }} un")
        fields.append(f"unsigned short arr[{1 + i % 5}][{2 + i % 3}]")
        fields.append(f"int (*fn)(struct s{i} *, long)")
        if i % 5 == 0:
            fields.append(f"struct {{ long x; struct s{i} *self; }} anon")
        structs.append(fields)
    return r, structs


def write_types(f, structs, order, extra, grown):
    # Forward declarations first, so pointers may point anywhere.
    for i in range(len(structs)):
        f.write(f"struct s{i};\n")
    # Definitions in dependency order (embedded ones first), then order.
    done = set()

    def define(i):
        if i in done:
            return
        for fl in structs[i]:
            if fl.startswith("struct s") and fl.endswith(" emb"):
                define(int(fl.split()[1][1:]))
        done.add(i)
        fl = list(structs[i])
        if i in grown:
            fl.append("long grown")
        f.write(f"struct s{i} {{ " + "; ".join(fl) + "; };\n")
        if i in extra:
            f.write(f"struct extra{i} {{ int e{i}; struct s{i} *back; }};\n")
            f.write(f"struct extra{i} extra_var{i};\n")

    for i in order:
        define(i)
    n = len(structs)
    for i in range(0, n, 7):
        f.write(f"typedef struct s{i} s{i}_t;\n")
    for i in range(0, n, 11):
        f.write(f"enum e{i} {{ E{i}_A = {i}, E{i}_B, E{i}_C = {i * 3 + 1} }};\n")
    for i in range(0, n, 29):
        f.write(f"enum e64_{i} {{ E64_{i}_A = 0x{i + 1:x}00000000ULL, E64_{i}_B = 2 }};\n")


def write_base(path, structs, order, extra=(), grown=()):
    n = len(structs)
    with open(path, "w") as f:
        write_types(f, structs, order, set(extra), set(grown))
        # Every type used, so that its DWARF is emitted.
        f.write("long base_use(" + ", ".join(f"struct s{i} *v{i}" for i in range(n)) + ")\n{ return 0")
        for i in range(0, n, 7):
            f.write(f" + sizeof(s{i}_t)")
        for i in range(0, n, 11):
            f.write(f" + (long)sizeof(enum e{i})")
        for i in range(0, n, 29):
            f.write(f" + (long)sizeof(enum e64_{i})")
        f.write("; }\n")
        for i in range(0, n, 13):
            f.write(f"struct s{i} base_var{i};\n")


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    r, structs = gen(n)
    os.makedirs(d, exist_ok=True)
    write_base(os.path.join(d, "base.c"), structs, list(range(n)))
    order = list(range(n))
    random.Random(7).shuffle(order)
    # A struct no one embeds, grown: a non-embedded size change relocates.
    embedded = {int(fl.split()[1][1:]) for s in structs for fl in s if fl.endswith(" emb")}
    grown = [i for i in range(n - 1, 0, -1) if i not in embedded][:1]
    write_base(os.path.join(d, "base2.c"), structs, order, extra=range(0, n, 97), grown=grown)
    used = sorted(r.sample(range(n), max(1, n // 10)))
    with open(os.path.join(d, "mod.c"), "w") as f:
        write_types(f, structs, list(range(n)), set(), set())
        f.write("struct mod_own { struct mod_own *next; int k; };\n")
        for k, i in enumerate(used):
            f.write(f"struct mod_t{k} {{ struct s{i} held; struct s{i} *ptr; struct s{i} arr[2]; "
                    f"struct mod_own *own; }};\n")
            f.write(f"int mod_fn{k}(struct mod_t{k} *m, struct s{i} *p) {{ return m->ptr == p; }}\n")
        for i in range(0, n, 7):
            if i % 2:
                f.write(f"s{i}_t *mod_td{i}(s{i}_t *x) {{ return x; }}\n")
        for i in range(0, n, 11):
            f.write(f"enum e{i} mod_en{i}(enum e{i} e) {{ return e; }}\n")
        for i in range(0, n, 29):
            f.write(f"enum e64_{i} mod_en64_{i};\n")


if __name__ == "__main__":
    main()
