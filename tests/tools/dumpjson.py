#!/usr/bin/env python3
"""dumpjson.py: the stages' two dumps held against each other and against
the tables they are made from (t0310).

    dumpjson.py tables HEADER JSON   every object's fields are its kind's table's
    dumpjson.py text cus|graph JSON TEXT   the JSON, printed by the text grammar
                                           of format/, is the text dump

`tables` reads the X-macro tables of format/cus.h or format/graph.h (the
one description the codec, the reader and the JSON dump are made from)
and checks that each record or node of the JSON dump has exactly its
kind's fields, in the table's order, and its items exactly the items
table's. `text` rebuilds the text dump from the JSON lines by the grammar
written in format/CU-RECORDS.md and TYPE-GRAPH.md and compares line by
line: the two dumps must say the same thing. Exit 1 with the first
difference, naming the line.
"""
import json
import re
import sys

FIXED = {"rec", "die", "kind", "flags", "items", "addr", "shndx", "annots", "node", "from_count", "from",
         "item"}


def tables(header):
    """{kind name: (fields, items)} from the header's K(KIND, FIELDS, ITEMS) table."""
    src = open(header).read().replace("\\\n", " ")
    macros = {}
    for m in re.finditer(r"#define (\w+)\(F\)(.*)", src):
        macros[m.group(1)] = re.findall(r"F\((\w+), (\w+)\)", m.group(2))
    table = re.search(r"#define (CUS_RECORD_KINDS|GRAPH_NODE_KINDS)\(K\)(.*)", src).group(2)
    out = {}
    for kind, fields, items in re.findall(r"K\((\w+), (\w+), (\w+)\)", table):
        name = kind.split("_", 1)[1].lower()
        name = {"unspec": "unspecified", "func_proto": "func_proto"}.get(name, name)
        out[name] = (macros[fields], macros[items])
    return out, macros


def keys_of(obj):
    """The field keys of a JSON object, without fixed keys and *_name companions."""
    return [k for k in obj if k not in FIXED and not k.endswith("_name")]


def check_tables(header, path):
    kinds, macros = tables(header)
    n = 0
    with open(path) as f:
        for no, line in enumerate(f, 1):
            o = json.loads(line)
            if "func" in o or "var" in o:
                table = macros["GRAPH_FUNC_FIELDS" if "func" in o else "GRAPH_VAR_FIELDS"]
                want = [fld for fld, _ in table]
                got = [k for k in o if k not in ("func", "var", "flags_names", "cu_name", "locs", "annots")]
                if got != want:
                    return fail(path, no, "fields %s, its table says %s" % (got, want))
                for loc in o.get("locs", ()):
                    lw = [fld for fld, _ in macros["GRAPH_LOC_FIELDS"]]
                    lg = [k for k in loc if k not in ("param", "annots") and not k.endswith("_name")]
                    if lg != lw:
                        return fail(path, no, "location fields %s, its table says %s" % (lg, lw))
                n += 1
                continue
            if "kind" not in o:
                continue
            kind = o["kind"]
            if kind not in kinds:
                return fail(path, no, "kind %r is in no table" % kind)
            fields, items = kinds[kind]
            want = [fld for fld, _ in fields]
            got = keys_of(o)[1:] if "node" in o else keys_of(o)  # a node's name leads, outside the table
            if got != want:
                return fail(path, no, "%s: fields %s, its table says %s" % (kind, got, want))
            if bool(items) != ("items" in o):
                return fail(path, no, "%s: items %s, its table says %s" % (kind, "items" in o, bool(items)))
            iw = [fld for fld, _ in items]
            for it in o.get("items", ()):
                ig = [k for k in it if k not in ("item", "annots") and not k.endswith("_name")]
                if ig != iw:
                    return fail(path, no, "%s item: fields %s, its table says %s" % (kind, ig, iw))
            n += 1
    print("%s: %d objects have their tables' fields" % (path, n))
    return 0


def fail(path, no, why):
    print("%s:%d: %s" % (path, no, why))
    return 1


# ---- the text grammar of format/, from the JSON


def q(s):
    """STR: quoted, '"' and '\\' escaped, bytes outside printable ASCII \\xNN."""
    out = []
    for ch in s:
        c = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7f:
            out.append(ch)
        else:
            out.append("\\x%02x" % c)
    return '"' + "".join(out) + '"'


WORDS = ("decl", "external", "artificial", "prototyped", "varargs", "signed", "toplevel", "class",
         "template", "const_value", "unnamed_param", "reordered")


def flags(fl):
    return "".join(" " + w for w in fl if w in WORDS)


def named(o, k):
    return o[k + "_name"] if o.get(k + "_name") is not None else "0x%x" % o[k]


def cref(r):
    if r is None:
        return "void"
    if isinstance(r, dict):
        return "@0x%x" % r["die"]
    return "#%d" % r


def gref(r):
    return "void" if r is None else "#%d" % r


def annots(o, indent):
    return ["%sannot %s=%s" % (indent, a, q(v)) for a, v in o.get("annots", ())]


def cus_record(o):
    k, ref = o["kind"], cref
    s = "  #%d <0x%x> %s" % (o["rec"], o["die"], k)
    opt = lambda key, label: " %s=%s" % (label, o[key]) if o.get(key) else ""
    if k == "base":
        s += " %s enc=%s size=%d%s%s" % (q(o["name"]), named(o, "encoding"), o["size"], opt("bit_size", "bits"),
                                         opt("bit_offset", "bitoff"))
    elif k == "ptr":
        s += " type=%s size=%d" % (ref(o["type"]), o["size"])
    elif k in ("const", "volatile", "restrict", "atomic"):
        s += " type=%s" % ref(o["type"])
    elif k == "typedef":
        s += " %s type=%s" % (q(o["name"]), ref(o["type"]))
    elif k in ("struct", "union"):
        s += " %s size=%d%s members=%d" % (q(o["name"]), o["size"], opt("alignment", "align"), len(o["items"]))
    elif k == "enum":
        s += " %s size=%d type=%s values=%d" % (q(o["name"]), o["size"], ref(o["type"]), len(o["items"]))
    elif k == "array":
        s += " type=%s dims=%s" % (ref(o["type"]), "".join("[%d]" % (i["value"] - 1) if i["value"] else "[]"
                                                          for i in o["items"]))
    elif k == "subroutine":
        s += "%s type=%s params=(%s)" % (" " + q(o["name"]) if o["name"] else "", ref(o["type"]),
                                         ", ".join(ref(i["type"]) for i in o["items"]))
    elif k == "func":
        s += " " + q(o["name"]) + (" linkage=" + q(o["linkage"]) if o["linkage"] else "")
        s += " type=%s%s%s" % (ref(o["type"]), opt("inline_kind", "inline"), opt("cc", "cc"))
        s += "".join(" %s=%s" % (f, ref(o[f])) for f in ("origin", "spec") if o[f] is not None)
        if "addr" in o:
            s += " pc=0x%x shndx=%d" % (o["addr"], o["shndx"])
        s += " params=%d" % o["item_count"]
    elif k == "param":
        s += " %s type=%s" % (q(o["name"]), ref(o["type"]))
        s += " origin=%s" % ref(o["origin"]) if o["origin"] is not None else ""
        s += " loc=%s" % o["loc_name"]
    elif k == "var":
        s += " " + q(o["name"]) + (" linkage=" + q(o["linkage"]) if o["linkage"] else "")
        s += " type=%s" % ref(o["type"]) + (" spec=%s" % ref(o["spec"]) if o["spec"] is not None else "")
        if "addr" in o:
            s += " addr=0x%x shndx=%d" % (o["addr"], o["shndx"])
    elif k == "unspecified":
        s += " " + q(o["name"])
    elif k == "unsupported":
        s += " tag=%s %s" % (named(o, "tag"), q(o["name"]))
        s += " type=%s" % ref(o["type"]) if o["type"] is not None else ""
    out = [s + flags(o["flags"])] + annots(o, "    ")
    if k in ("struct", "union"):
        for i in o["items"]:
            out.append("    .%s type=%s bitoff=%d%s%s" % (i["name"], ref(i["type"]), i["value"],
                                                        " bits=%d" % i["bit_size"] if i["bit_size"] else "",
                                                        flags(i["flags"])))
            out += annots(i, "      ")
    elif k == "enum":
        out += ["    %s=%d" % (i["name"], i["value"]) for i in o["items"]]
    return out


def cus_text(objs):
    head = objs[0]
    out = ["btfpipe-cus v%d input=%s size=%d dwarf=%s build-id=%s machine=%d class=%d data=%s flags=%d cus=%d"
           % (head["version"], q(head["input"]), head["size"], head["dwarf"], head["build_id"], head["machine"],
              head["class"], head["data"], head["flags"], head["cus"])]
    for o in objs[1:]:
        if "cu" in o:
            out.append("cu %d off=0x%x lang=%s ut=%s v%d addr=%d name=%s comp_dir=%s producer=%s records=%d "
                       "externs=%d key=%s content=%s addrs=%d"
                       % (o["cu"], o["off"], o["language_name"] or "unknown", o["unit_type_name"] or "unknown",
                          o["dwarf_version"], o["addr_size"], q(o["name"]), q(o["comp_dir"]), q(o["producer"]),
                          o["records"], o["externs"], o["key"], o["content"], o["addrs"]))
        else:
            out += cus_record(o)
    return out


def from_text(o):
    n = o["from_count"]
    s = "    from: %d CU%s:" % (n, "" if n == 1 else "s")
    s += "".join(" %s:%s" % (i, q(c)) for i, c in o["from"])
    return s + (" ..." if len(o["from"]) < n else "")


def graph_node(o):
    k = o["kind"]
    s = "#%d %s %s" % (o["node"], k, q(o["name"]))
    if k == "base":
        s += " enc=%s size=%d%s%s" % (named(o, "encoding"), o["size"],
                                      " bits=%d" % o["bit_size"] if o["bit_size"] else "",
                                      " bitoff=%d" % o["bit_offset"] if o["bit_offset"] else "")
    elif k in ("ptr", "const", "volatile", "restrict", "atomic", "typedef"):
        s += " type=%s" % gref(o["type"])
    elif k in ("struct", "union"):
        s += " size=%d members=%d" % (o["size"], len(o["items"]))
    elif k == "enum":
        s += " size=%d values=%d" % (o["size"], len(o["items"]))
    elif k == "array":
        s += " type=%s dims=%s" % (gref(o["type"]), "".join("[%d]" % (i["value"] - 1) if i["value"] else "[]"
                                                           for i in o["items"]))
    elif k == "func_proto":
        s += " ret=%s params=(%s)" % (gref(o["type"]), ", ".join(
            ("%s:" % i["name"] if i["name"] else "") + ("#%d" % i["type"] if i["type"] else "void")
            for i in o["items"]))
    elif k == "fwd":
        s += " of=%s" % o["fwd_kind_name"]
    elif k == "unsupported":
        s += " tag=%s" % named(o, "tag") + (" type=%s" % gref(o["type"]) if o["type"] else "")
    out = [s + flags(o["flags"])] + annots(o, "    ")
    if k in ("struct", "union"):
        for i in o["items"]:
            out.append("    .%s type=%s bitoff=%d%s%s" % (i["name"], gref(i["type"]), i["value"],
                                                        " bits=%d" % i["bit_size"] if i["bit_size"] else "",
                                                        flags(i["flags"])))
            out += annots(i, "      ")
    elif k == "enum":
        out += ["    %s=%d" % (i["name"], i["value"]) for i in o["items"]]
    return out + [from_text(o)]


def graph_text(objs):
    h = objs[0]
    out = ["btfpipe-graph v%d inputs=%d cus=%d nodes=%d funcs=%d vars=%d"
           % (h["version"], h["inputs"], h["cus"], h["nodes"], h["funcs"], h["vars"])]
    for o in objs[1:]:
        if "input" in o:
            out.append("input %d %s dwarf=%s cus=%d" % (o["input"], q(o["name"]), o["dwarf"], o["cus"]))
        elif "node" in o:
            out += graph_node(o)
        elif "func" in o:
            s = "func %s proto=#%d pc=0x%x shndx=%d" % (q(o["name"]), o["proto"], o["pc"], o["shndx"])
            s += " inline=%d" % o["inline_kind"] if o["inline_kind"] else ""
            s += " cc=%d" % o["cc"] if o["cc"] else ""
            s += " locs=(%s)" % ", ".join(l["loc_name"] for l in o["locs"])
            s += "".join(" param%d.%s=%s" % (l["param"], a, q(v)) for l in o["locs"] for a, v in l.get("annots", ()))
            s += flags(o["flags_names"]) + " cu=%s:%s" % (o["cu_name"][0], q(o["cu_name"][1]))
            out += [s] + annots(o, "    ")
        elif "var" in o:
            s = "var %s type=%s addr=0x%x shndx=%d" % (q(o["name"]), gref(o["type"]), o["addr"], o["shndx"])
            s += flags(o["flags_names"]) + " cu=%s:%s" % (o["cu_name"][0], q(o["cu_name"][1]))
            out += [s] + annots(o, "    ")
    return out


def check_text(which, jpath, tpath):
    with open(jpath) as f:
        objs = [json.loads(line) for line in f]
    mine = (cus_text if which == "cus" else graph_text)(objs)
    with open(tpath, errors="surrogateescape") as f:
        theirs = [line.rstrip("\n") for line in f]
    for no, (a, b) in enumerate(zip(mine, theirs), 1):
        if a != b:
            print("%s:%d: the JSON says\n  %s\nthe text dump says\n  %s" % (tpath, no, a, b))
            return 1
    if len(mine) != len(theirs):
        print("%s: %d lines from the JSON, %d in the text dump" % (tpath, len(mine), len(theirs)))
        return 1
    print("%s: %d lines, the same from the JSON" % (tpath, len(mine)))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "tables":
        return check_tables(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "text" and argv[2] in ("cus", "graph"):
        return check_text(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
