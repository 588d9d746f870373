#!/usr/bin/env bash
# t0840-graph-write-pieces: the merge writes the .graph's sections in
# pieces of 8192 records, encoded on the pool and placed one after the
# other, written by the workers at their places (format/graph_write.c,
# graph__write()). A graph of the sample
# fixtures has a few hundred nodes, one piece a section; this one has more
# than 8192 nodes, functions and variables, so nodes, provenance, functions
# and variables are each cut into pieces. A piece boundary that loses or repeats a record
# makes the reader refuse the file (counts and lengths no longer agree) or
# the counts below come out wrong; a thread-dependent order shows as a cmp
# difference between -j1, -j2 and -j4.
. "$(dirname "$0")/lib.sh"

d="$T_OUT/pieces"
N=8300 # distinct structs, functions and variables: over one piece of each
mkdir -p "$d"
python3 - "$d/big.c" "$N" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(n):
        f.write("struct s%d { int a%d; long b; };\n" % (i, i))
        f.write("int fn%d(struct s%d *p) { return p->a%d + %d; }\n" % (i, i, i, i))
        f.write("struct s%d gv%d;\n" % (i, i))
PY
if ! $GCC -O0 -g -c -o "$d/big.o" "$d/big.c" 2>"$d/build.err"; then
	not_ok "build the $N-function program" "$(cat "$d/build.err")"
	test_done
fi
check "extract" "$T_BIN/dwarf-extract" -o "$d/big.cus" "$d/big.o"
for j in 1 2 4; do
	# lib.sh exports BTFPIPE_JOBS_EXACT=1: exactly j threads.
	check "merge with exactly $j threads" "$T_BIN/dedup-merge" -j$j -o "$d/big.j$j.graph" "$d/big.cus"
done
check_same "-j2 graph is byte-identical to -j1" "$d/big.j1.graph" "$d/big.j2.graph"
check_same "-j4 graph is byte-identical to -j1" "$d/big.j1.graph" "$d/big.j4.graph"

# The reader accepts it (every section's checksum, length and count), and
# every struct and function is there once.
if "$T_BIN/dedup-merge" --provenance --dump "$d/big.j4.graph" >"$d/dump" 2>"$d/dump.err"; then
	ok "the pieced graph reads back"
	structs=$(grep -c '^#[0-9]* struct "s[0-9]*"' "$d/dump")
	funcs=$(grep -c '^func "fn[0-9]*"' "$d/dump")
	vars=$(grep -c '^var "gv[0-9]*"' "$d/dump")
	[ "$structs" = "$N" ] && ok "$N structs, each once" || not_ok "$N structs, each once" "found $structs"
	[ "$funcs" = "$N" ] && ok "$N functions, each once" || not_ok "$N functions, each once" "found $funcs"
	[ "$vars" = "$N" ] && ok "$N variables, each once" || not_ok "$N variables, each once" "found $vars"
	# Provenance is a section of its own, cut at the same node ids.
	nprov=$(grep -c 'from: ' "$d/dump")
	nnodes=$(grep -c '^#[0-9]' "$d/dump")
	[ "$nprov" = "$nnodes" ] && ok "a provenance line for each of the $nnodes nodes" ||
		not_ok "a provenance line for each node" "$nprov lines, $nnodes nodes"
else
	not_ok "the pieced graph reads back" "$(cat "$d/dump.err")"
fi
check "btf-emit reads it" "$T_BIN/btf-emit" -o "$d/big.btf" "$d/big.j4.graph"
if ! have bpftool; then
	skip "bpftool: $N FUNCs in its BTF" "bpftool not installed (make deps)"
elif [ -s "$d/big.btf" ]; then
	n=$(bpftool btf dump file "$d/big.btf" 2>/dev/null | grep -c "^\[[0-9]*\] FUNC 'fn[0-9]*'")
	[ "$n" = "$N" ] && ok "bpftool: $N FUNCs in its BTF" || not_ok "bpftool: $N FUNCs in its BTF" "found $n"
fi
test_done
