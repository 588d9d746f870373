#!/usr/bin/env python3
"""btfcmp: compare two BTF files by meaning, whatever their type order.

    btfcmp.py [options] A.btf B.btf
    btfcmp.py --list [options] A.btf

Both files are read through `bpftool btf dump file F` (bpftool is the oracle
parser: nothing of btfpipe's own code is used). Type ids are then replaced by
content, so two BTFs that say the same thing with their types in another order,
or with a type repeated, compare equal.

Rendering. A reference to a named STRUCT, UNION, ENUM, ENUM64, FWD, TYPEDEF,
INT or FLOAT renders as "kind name" (a cut point: every cycle in C passes
through a named struct or union, so rendering terminates). Any other type
(PTR, ARRAY, qualifiers, FUNC_PROTO, anonymous records and enums) renders
inline, recursively, memoized per id. A named type itself renders in full:
its size, its members with their offsets and bitfield sizes, its enumerators
and signedness, its INT encoding.

What is compared:
  * per-kind counts (both columns printed). A kind's count is informative only
    (never a difference) for ARRAY under --flatten-arrays, for FUNC, FUNC_PROTO
    and DECL_TAG without --funcs, and for every kind in --ignore-kind-counts;
  * the multiset of full renderings of named types, of anonymous types that no
    other type refers to (top-level anonymous enums, orphan pointers; not
    FUNC_PROTOs, which belong to --funcs), of VARs
    (name, linkage, type) and DATASECs (name, size, entries sorted by
    (var name, offset, size)), and of DECL_TAGs on anything but a FUNC;
  * with --funcs: FUNCs (name, linkage, prototype) and their DECL_TAGs.
A rendering present more times on one side than on the other is one
difference per extra copy, printed as "only-in-A RENDERING" (or only-in-B),
grouped by category.

Normalisations: array index types are always ignored (they are arbitrary).
--flatten-arrays turns each ARRAY-of-ARRAY chain into one ARRAY of the product
of the counts (pahole flattens int m[3][4][5] into [60]; btfpipe nests it).
Flattening merges types a nesting side keeps apart (const char[1][32] and
const char[32] are both const [32] once flat, and pahole's dedup made them
one), so under --flatten-arrays each side's renderings are compared as sets:
how many copies a side has says nothing once flattening may have merged them.
--no-func-linkage leaves FUNC linkage out (pahole 1.24 writes every FUNC as
static).

Exit: 0 equal, 1 different (like diff), 2 usage or parse error. The last line
is always "btfcmp: N differences (...)" unless exiting 2.
"""

import argparse
import collections
import re
import signal
import subprocess
import sys

# Kinds whose named instances are cut points and are compared as a multiset.
NAMED_KINDS = ("STRUCT", "UNION", "ENUM", "ENUM64", "FWD", "TYPEDEF", "INT", "FLOAT")
ALL_KINDS = ("INT", "PTR", "ARRAY", "STRUCT", "UNION", "ENUM", "FWD", "TYPEDEF",
             "VOLATILE", "CONST", "RESTRICT", "FUNC", "FUNC_PROTO", "VAR", "DATASEC",
             "FLOAT", "DECL_TAG", "TYPE_TAG", "ENUM64")

HEADER_RE = re.compile(r"^\[(\d+)\] ([A-Z0-9_]+) '([^']*)'(.*)$")
SECINFO_RE = re.compile(r"^\ttype_id=(\d+) offset=(\d+) size=(\d+)")


class ParseError(Exception):
    pass


class Type:
    __slots__ = ("id", "kind", "name", "attrs", "items")

    def __init__(self, tid, kind, name, attrs):
        self.id = tid
        self.kind = kind
        self.name = name
        self.attrs = attrs
        self.items = []


def kv(text):
    """key=value pairs of a bpftool line ("type_id=6, linkage=global")."""
    try:
        return dict(tok.split("=", 1) for tok in text.replace(",", " ").split())
    except ValueError:
        raise ParseError("not a list of key=value: %r" % text)


def int_attr(t, key, default=None):
    v = t.attrs.get(key)
    if v is None:
        if default is None:
            raise ParseError("[%d] %s: no %s=" % (t.id, t.kind, key))
        return default
    return int(v)


def enum_value(text):
    """bpftool prints 32-bit values as %d/%u and 64-bit ones with LL/ULL."""
    return int(re.sub(r"U?LL$", "", text))


def load(path, base=None):
    """Return {id: Type} for the BTF file at path, parsed from bpftool's dump.
    With base, path is split BTF over it: the base's types are loaded too
    (references into the base must render), and the split's own ids are
    marked in the result's .split set."""
    if base:
        types = load(base)
        split = load_one(path, base)
        types.update(split)
        types = SplitTypes(types)
        types.split = set(split)
        return types
    return load_one(path, None)


class SplitTypes(dict):
    split = None


def load_one(path, base):
    try:
        cmd = ["bpftool"] + (["-B", base] if base else []) + ["btf", "dump", "file", path]
        proc = subprocess.run(cmd,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
    except OSError as e:
        raise ParseError("cannot run bpftool: %s" % e)
    if proc.returncode != 0:
        raise ParseError("bpftool cannot dump %s: %s" % (path, proc.stderr.strip()))
    types = {}
    cur = None
    lineno = 0
    try:
        for lineno, line in enumerate(proc.stdout.splitlines(), 1):
            cur = parse_line(line, cur, types)
    except ParseError as e:
        raise ParseError("%s: bpftool line %d: %s" % (path, lineno, e))
    for t in types.values():
        if t.kind not in ALL_KINDS:
            raise ParseError("%s: [%d]: unknown kind %s" % (path, t.id, t.kind))
        vlen = t.attrs.get("vlen")
        if vlen is not None and int(vlen) != len(t.items):
            raise ParseError("%s: [%d] %s '%s': vlen=%s but %d entries"
                             % (path, t.id, t.kind, t.name, vlen, len(t.items)))
    return types


def parse_line(line, cur, types):
    """Add one line of bpftool's dump to types; return the type now being read."""
    if not line:
        return cur
    if line[0] == "[":
        m = HEADER_RE.match(line)
        if not m:
            raise ParseError("cannot parse: %s" % line)
        name = m.group(3)
        cur = Type(int(m.group(1)), m.group(2), "" if name == "(anon)" else name, kv(m.group(4)))
        if cur.id in types:
            raise ParseError("type id %d twice" % cur.id)
        types[cur.id] = cur
        return cur
    if cur is None or line[0] != "\t":
        raise ParseError("unexpected: %s" % line)
    if cur.kind == "DATASEC":
        m = SECINFO_RE.match(line)
        if not m:
            raise ParseError("bad DATASEC entry: %s" % line)
        cur.items.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
        return cur
    end = line.find("'", 2)
    if line[1:2] != "'" or end < 0:
        raise ParseError("bad member: %s" % line)
    name = line[2:end]
    cur.items.append(("" if name == "(anon)" else name, kv(line[end + 1:])))
    return cur


class Renderer:
    """Renderings of one BTF's types, ids replaced by content."""

    def __init__(self, types, opts):
        self.types = types
        self.flatten = opts.flatten_arrays
        self.func_linkage = not opts.no_func_linkage
        self.memo = {}
        self.busy = set()

    def get(self, tid):
        t = self.types.get(tid)
        if t is None:
            raise ParseError("type id %d is referenced but not defined" % tid)
        return t

    def ref(self, tid):
        """How a reference to type tid reads inside another type."""
        if tid == 0:
            return "void"
        t = self.get(tid)
        if t.name and t.kind in NAMED_KINDS:
            if t.kind == "FWD":
                return "fwd %s %s" % (t.attrs.get("fwd_kind", "?"), t.name)
            if t.kind in ("INT", "FLOAT"):  # 'unsigned int' reads better than int unsigned int
                return "%s '%s'" % (t.kind.lower(), t.name)
            return "%s %s" % (t.kind.lower(), t.name)
        return self.full(tid)

    def full(self, tid):
        """The complete rendering of type tid (memoized)."""
        r = self.memo.get(tid)
        if r is not None:
            return r
        if tid in self.busy:  # only malformed BTF has an anonymous cycle
            return "<cycle #%d>" % tid
        self.busy.add(tid)
        try:
            r = self.render(self.get(tid))
        finally:
            self.busy.discard(tid)
        self.memo[tid] = r
        return r

    def render(self, t):
        k, a = t.kind, t.attrs
        if k == "INT":
            return "int '%s' size=%s bits_offset=%s nr_bits=%s encoding=%s" % (
                t.name, a.get("size"), a.get("bits_offset"), a.get("nr_bits"), a.get("encoding"))
        if k == "FLOAT":
            return "float '%s' size=%s" % (t.name, a.get("size"))
        if k == "PTR":
            return "*(%s)" % self.ref(int_attr(t, "type_id"))
        if k in ("CONST", "VOLATILE", "RESTRICT"):
            return "%s(%s)" % (k.lower(), self.ref(int_attr(t, "type_id")))
        if k == "TYPE_TAG":
            return "type_tag '%s'(%s)" % (t.name, self.ref(int_attr(t, "type_id")))
        if k == "TYPEDEF":
            return "typedef %s = %s" % (t.name, self.ref(int_attr(t, "type_id")))
        if k == "FWD":
            return "fwd %s %s" % (a.get("fwd_kind", "?"), t.name)
        if k == "ARRAY":
            nelems = int_attr(t, "nr_elems")
            elem = int_attr(t, "type_id")
            if self.flatten:
                while elem and self.get(elem).kind == "ARRAY":
                    inner = self.get(elem)
                    nelems *= int_attr(inner, "nr_elems")
                    elem = int_attr(inner, "type_id")
            return "[%d](%s)" % (nelems, self.ref(elem))
        if k in ("STRUCT", "UNION"):
            members = []
            for name, ma in t.items:
                s = "%s: %s @%s" % (name or "(anon)", self.ref(int(ma["type_id"])), ma.get("bits_offset"))
                if "bitfield_size" in ma:
                    s += ":%s" % ma["bitfield_size"]
                members.append(s)
            return "%s %s size=%s {%s}" % (k.lower(), t.name or "(anon)", a.get("size"),
                                           "; ".join(members))
        if k in ("ENUM", "ENUM64"):
            vals = ", ".join("%s=%d" % (name, enum_value(va["val"])) for name, va in t.items)
            return "%s %s size=%s %s {%s}" % (k.lower(), t.name or "(anon)", a.get("size"),
                                              a.get("encoding", "?").lower(), vals)
        if k == "FUNC_PROTO":
            params = []
            for name, pa in t.items:
                ptid = int(pa["type_id"])
                params.append("..." if ptid == 0 and not name else
                              "%s: %s" % (name or "(anon)", self.ref(ptid)))
            return "fn(%s) -> %s" % (", ".join(params), self.ref(int_attr(t, "ret_type_id")))
        if k == "FUNC":
            s = "func %s" % t.name
            if self.func_linkage:
                s += " linkage=%s" % a.get("linkage")
            return "%s %s" % (s, self.ref(int_attr(t, "type_id")))
        if k == "VAR":
            return "var %s linkage=%s %s" % (t.name, a.get("linkage"), self.ref(int_attr(t, "type_id")))
        if k == "DATASEC":
            entries = sorted((self.get(vid).name, off, size) for vid, off, size in t.items)
            return "datasec %s size=%s {%s}" % (t.name, a.get("size"),
                                                ", ".join("%s@%d+%d" % e for e in entries))
        if k == "DECL_TAG":
            target = self.get(int_attr(t, "type_id"))
            where = "%s %s" % (target.kind.lower(), target.name or self.full(target.id))
            idx = int_attr(t, "component_idx", -1)
            if idx >= 0:
                if target.kind in ("STRUCT", "UNION"):
                    where += ".%s" % (target.items[idx][0] if idx < len(target.items) else "#%d" % idx)
                elif target.kind == "FUNC":
                    proto = self.get(int_attr(target, "type_id"))
                    where += " arg %s" % (proto.items[idx][0] if idx < len(proto.items) else "#%d" % idx)
                else:
                    where += " #%d" % idx
            return "decl_tag '%s' on %s" % (t.name, where)
        raise ParseError("[%d]: cannot render kind %s" % (t.id, k))


def category(t, types):
    """The category a compared type is listed under, or None if not compared
    by itself (reached only through the types that refer to it)."""
    if t.kind in ("VAR", "DATASEC", "FUNC"):
        return t.kind.lower()
    if t.kind == "DECL_TAG":
        target = types.get(int(t.attrs.get("type_id", 0)))
        return "decl_tag-func" if target is not None and target.kind == "FUNC" else "decl_tag"
    if t.name and t.kind in NAMED_KINDS:
        return t.kind.lower()
    return None


def refs_of(t):
    """The ids one type refers to."""
    refs = []
    for key in ("type_id", "ret_type_id"):
        if key in t.attrs:
            refs.append(int(t.attrs[key]))
    if t.kind == "DATASEC":
        refs.extend(vid for vid, _, _ in t.items)
    elif t.kind in ("STRUCT", "UNION", "FUNC_PROTO"):
        refs.extend(int(ma["type_id"]) for _, ma in t.items)
    return refs


def referenced_ids(types, funcs=True):
    """Ids that some type refers to. Without funcs, a reference made only by a
    FUNC (or by a FUNC_PROTO only a FUNC uses) does not count: which functions
    each side kept must not change which types count as unreferenced."""
    if funcs:
        return {r for t in types.values() for r in refs_of(t)}
    refs = set()
    work = [t for t in types.values() if t.kind not in ("FUNC", "FUNC_PROTO", "DECL_TAG")]
    while work:
        t = work.pop()
        for r in refs_of(t):
            if r in refs:
                continue
            refs.add(r)
            if r in types and types[r].kind == "FUNC_PROTO":
                work.append(types[r])
    return refs


def collect(types, opts):
    """{category: Counter(rendering)} of everything compared for one file."""
    try:
        return collect_renderings(types, opts)
    except (KeyError, ValueError, IndexError) as e:
        raise ParseError("malformed bpftool output: %s: %s" % (type(e).__name__, e))


def collect_renderings(types, opts):
    r = Renderer(types, opts)
    refs = referenced_ids(types, opts.funcs)
    out = collections.defaultdict(collections.Counter)
    only = getattr(types, "split", None)
    # --drop-base-repeats: what the base describes already, a split type may
    # describe again (pahole 1.32's modules repeat base typedefs and
    # pointers); such a repeat adds nothing and is left out.
    in_base = set()
    if only is not None and opts.drop_base_repeats:
        in_base = set(r.full(tid) for tid in types if tid not in only)
    for tid in sorted(types):
        if only is not None and tid not in only:
            continue  # a base type: compared with the base itself, not here
        if in_base and r.full(tid) in in_base:
            continue
        t = types[tid]
        cat = category(t, types)
        if cat is None and tid not in refs and t.kind not in ("FUNC_PROTO",):
            # An anonymous type nothing refers to (a top-level anonymous
            # enum): nothing else would ever compare it. Not an ARRAY when
            # flattening: a nested side reuses int[4] inside int[3][4] where
            # a flat side leaves it unreferenced, so unreferenced arrays
            # cannot be matched up; the arrays inside types still are.
            if t.kind == "ARRAY" and opts.flatten_arrays:
                continue
            cat = "anon-root"
        if cat is None:
            continue
        if cat in ("func", "decl_tag-func") and not opts.funcs:
            continue
        out[cat][r.full(tid)] += 1
    return out


def kind_counts(types):
    only = getattr(types, "split", None)
    return collections.Counter(t.kind for i, t in types.items() if only is None or i in only)


def truncate(s, width):
    if width and len(s) > width:
        return s[:width - 3] + "..."
    return s


def main(argv):
    ap = argparse.ArgumentParser(prog="btfcmp", description=__doc__.split("\n")[0])
    ap.add_argument("a", metavar="A.btf")
    ap.add_argument("b", metavar="B.btf", nargs="?")
    ap.add_argument("--funcs", action="store_true", help="compare FUNCs and their decl tags too")
    ap.add_argument("--base-a", metavar="BASE", help="A is split BTF over BASE (raw BTF or an ELF)")
    ap.add_argument("--base-b", metavar="BASE", help="B is split BTF over BASE")
    ap.add_argument("--drop-base-repeats", action="store_true",
                    help="leave out a split type that renders as a type of its base does")
    ap.add_argument("--flatten-arrays", action="store_true",
                    help="read ARRAY-of-ARRAY chains as one flat ARRAY")
    ap.add_argument("--no-func-linkage", action="store_true", help="leave FUNC linkage out")
    ap.add_argument("--ignore-kind-counts", default="", metavar="KIND[,KIND...]",
                    help="kinds whose counts are informative only (ALL for every kind)")
    ap.add_argument("--width", type=int, default=240, metavar="N",
                    help="truncate difference lines to N characters (0: never)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print the summary line only")
    ap.add_argument("--list", action="store_true",
                    help="print A's compared renderings, one \"CATEGORY RENDERING\" a line, and exit")
    try:
        opts = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    ignore = set(k.strip().upper() for k in opts.ignore_kind_counts.split(",") if k.strip())
    bad = ignore - set(ALL_KINDS) - {"ALL"}
    if bad:
        print("btfcmp: unknown kind in --ignore-kind-counts: %s" % ",".join(sorted(bad)), file=sys.stderr)
        return 2
    if "ALL" in ignore:
        ignore = set(ALL_KINDS)
    if opts.flatten_arrays:
        ignore.add("ARRAY")
    if not opts.funcs:
        ignore.update(("FUNC", "FUNC_PROTO", "DECL_TAG"))

    if (opts.b is None) != opts.list:
        print("btfcmp: give two files to compare, or one with --list", file=sys.stderr)
        return 2
    if opts.list:
        try:
            cats = collect(load(opts.a), opts)
        except ParseError as e:
            print("btfcmp: %s" % e, file=sys.stderr)
            return 2
        except RecursionError:
            print("btfcmp: types nest too deeply to render", file=sys.stderr)
            return 2
        for cat in sorted(cats):
            for s, n in sorted(cats[cat].items()):
                for _ in range(n):
                    print("%s %s" % (cat, s))
        return 0

    try:
        ta, tb = load(opts.a, opts.base_a), load(opts.b, opts.base_b)
        ca, cb = collect(ta, opts), collect(tb, opts)
        if opts.flatten_arrays:
            for cats in (ca, cb):
                for cat in cats:
                    cats[cat] = collections.Counter(set(cats[cat]))
    except ParseError as e:
        print("btfcmp: %s" % e, file=sys.stderr)
        return 2
    except RecursionError:
        print("btfcmp: types nest too deeply to render", file=sys.stderr)
        return 2

    say = (lambda *a: None) if opts.quiet else print
    say("A = %s" % opts.a)
    say("B = %s" % opts.b)
    per_cat = collections.OrderedDict()

    # Kind counts: the table, then the counts that differ as difference lines.
    ka, kb = kind_counts(ta), kind_counts(tb)
    say("%-12s %8s %8s" % ("kind", "A", "B"))
    count_lines = []
    for k in ALL_KINDS:
        if not ka[k] and not kb[k]:
            continue
        note = ""
        if ka[k] != kb[k]:
            if k in ignore:
                note = "  (differs, informative only)"
            else:
                note = "  DIFFERS"
                count_lines.append("count %s A=%d B=%d" % (k, ka[k], kb[k]))
        say("%-12s %8d %8d%s" % (k, ka[k], kb[k], note))
    if count_lines:
        n = len(count_lines)
        per_cat["kind-count"] = n
        say("kind-count: %d difference%s" % (n, "" if n == 1 else "s"))
        for line in count_lines:
            say("  " + line)

    # Renderings.
    for cat in sorted(set(ca) | set(cb)):
        ra, rb = ca.get(cat, collections.Counter()), cb.get(cat, collections.Counter())
        lines = []
        n = 0
        for side, mine, theirs in (("only-in-A", ra, rb), ("only-in-B", rb, ra)):
            for s in sorted(mine):
                d = mine[s] - theirs[s]
                if d <= 0:
                    continue
                n += d
                mult = " (x%d)" % d if d > 1 else ""
                lines.append(truncate("%s%s %s" % (side, mult, s), opts.width))
        if n:
            per_cat[cat] = n
            say("%s: %d difference%s" % (cat, n, "" if n == 1 else "s"))
            for line in lines:
                say("  " + line)

    total = sum(per_cat.values())
    detail = ", ".join("%s %d" % cat_n for cat_n in per_cat.items()) or "equal"
    print("btfcmp: %d differences (%s)" % (total, detail))
    return 1 if total else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `btfcmp ... | head` ends quietly
    sys.setrecursionlimit(20000)
    sys.exit(main(sys.argv[1:]))
