#!/usr/bin/env python3
"""btf_funcs.py FILE [NAME-PREFIX]: each FUNC of a BTF file (raw, or an ELF's
.BTF) as one line "name(param:type, ...) -> type", types spelled by name
(pointers as *, qualifiers in front), read through bpftool's JSON dump, so
that a test can compare two encoders' signatures whatever their type ids.
Sorted; only names starting with NAME-PREFIX when given.
"""
import json
import subprocess
import sys


def main():
    out = subprocess.run(["bpftool", "-j", "btf", "dump", "file", sys.argv[1]], capture_output=True, text=True,
                         check=True).stdout
    types = {t["id"]: t for t in json.loads(out)["types"]}

    def spell(i, depth=0):
        if i == 0:
            return "void"
        t = types.get(i)
        if t is None or depth > 8:
            return "?"
        k = t["kind"]
        if k == "PTR":
            return "*" + spell(t["type_id"], depth + 1)
        if k in ("CONST", "VOLATILE", "RESTRICT"):
            return k.lower() + " " + spell(t["type_id"], depth + 1)
        if k == "TYPE_TAG":
            return "tag(" + t["name"] + ") " + spell(t["type_id"], depth + 1)
        name = t.get("name", "(anon)")
        return {"STRUCT": "struct ", "UNION": "union ", "ENUM": "enum ", "ENUM64": "enum "}.get(k, "") + name

    prefix = sys.argv[2] if len(sys.argv) > 2 else ""
    lines = []
    for t in types.values():
        if t["kind"] != "FUNC" or not t["name"].startswith(prefix):
            continue
        p = types[t["type_id"]]
        params = ", ".join(f'{q["name"]}:{spell(q["type_id"])}' for q in p.get("params", []))
        lines.append(f'{t["name"]}({params}) -> {spell(p["ret_type_id"])}')
    print("\n".join(sorted(lines)))


if __name__ == "__main__":
    main()
