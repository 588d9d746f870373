#!/usr/bin/env bash
# t0860-emit-pieces: from 2 threads on, btf-emit writes the BTF in pieces
# (stages/btf-emit/encode.c): nodes in pieces of 4096, the extra types, the
# nodes' decl tags in pieces of 4096, the FUNCs in pieces of 2048, the
# variables. A piece of decl tags, FUNCs or variables does not know its ids
# until the pieces before it are counted, and every piece has strings of
# its own; the join places both (str_join.c). The BTF must be the bytes one
# thread writes. This program is cut into several pieces of each kind, with
# decl tags on structs, members, typedefs, functions, parameters and
# variables, type tags, multi-dimensional arrays (extra types) and a
# DATASEC whose entries name the variables by id. A join that places an
# id or a string wrongly shows as a cmp difference; bpftool and the
# kernel's checker then say whether the one-thread BTF itself is sound.
. "$(dirname "$0")/lib.sh"

d="$T_OUT/pieces"
N=4500 # structs, functions, variables: over two pieces of each kind
mkdir -p "$d"
if ! have "$CLANG"; then
	skip "BTF written in pieces" "$CLANG not installed (make deps): decl and type tags need it"
	test_done
fi
python3 - "$d/big.c" "$N" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write('#define TAG(x) __attribute__((btf_decl_tag(x)))\n')
    f.write('#define UTAG __attribute__((btf_type_tag("user")))\n')
    for i in range(n):
        # Every name its own, and some shared by all ("b", "tag_s"): strings
        # that first appear in a later piece, and ones every piece has.
        f.write('struct s%d { int a%d TAG("tag_m%d"); long b; char c%d[%d][3]; } TAG("tag_s");\n'
                % (i, i, i % 97, i, i % 7 + 1))
        f.write('typedef struct s%d t%d TAG("tag_t");\n' % (i, i))
        f.write('TAG("tag_f%d") int fn%d(t%d * UTAG p, int x TAG("tag_p")) { return p->a%d + x; }\n'
                % (i % 13, i, i, i))
        f.write('struct s%d gv%d TAG("tag_v");\n' % (i, i))
PY
if ! out=$("$CLANG" -O0 -g -c -o "$d/big.o" "$d/big.c" 2>&1); then
	not_ok "build the $N-function program with $CLANG" "$out"
	test_done
fi
check "extract and merge" sh -c "'$T_BIN/dwarf-extract' -o '$d/big.cus' '$d/big.o' &&
	'$T_BIN/dedup-merge' -o '$d/big.graph' '$d/big.cus'"
feat="default,global_var"
for j in 1 2 4; do
	# lib.sh exports BTFPIPE_JOBS_EXACT=1: exactly j threads write it.
	check_exit "emit with exactly $j threads" 0 "$T_BIN/btf-emit" -j$j --stats --features "$feat" \
		--elf "$d/big.o" -o "$d/big.j$j.btf" "$d/big.graph"
	n=$(sed -n 's/.*encode_threads *\([0-9]*\).*/\1/p' "$T_OUT/last.err")
	[ "$n" = "$j" ] && ok "-j$j: written on $j threads" || not_ok "-j$j: written on $j threads" "stats say '$n'"
done
check_same "-j2 BTF is byte-identical to -j1" "$d/big.j1.btf" "$d/big.j2.btf"
check_same "-j4 BTF is byte-identical to -j1" "$d/big.j1.btf" "$d/big.j4.btf"

if ! have bpftool; then
	skip "bpftool reads the BTF" "bpftool not installed (make deps)"
else
	bpftool btf dump file "$d/big.j4.btf" >"$d/dump" 2>"$d/dump.err" &&
		ok "bpftool reads the 4-thread BTF" || not_ok "bpftool reads the 4-thread BTF" "$(cat "$d/dump.err")"
	count() { grep -c "$1" "$d/dump"; }
	for what in "FUNC 'fn[0-9]*'" "VAR 'gv[0-9]*'" "STRUCT 's[0-9]*'" "TYPEDEF 't[0-9]*'"; do
		n=$(count "^\[[0-9]*\] $what")
		[ "$n" = "$N" ] && ok "$N of $what" || not_ok "$N of $what" "found $n"
	done
	# Per struct: its own tag and its member's; per typedef, function,
	# parameter and variable one each: 6 per i.
	n=$(count "^\[[0-9]*\] DECL_TAG")
	[ "$n" = $((6 * N)) ] && ok "$((6 * N)) DECL_TAGs" || not_ok "$((6 * N)) DECL_TAGs" "found $n"
	# The DATASEC's entries are the VARs, each named gvI of size 24 or more.
	bad=$(awk '/^\[[0-9]+\] VAR /{gsub(/[\[\]]/,"",$1); var[$1]=$3}
		/^\[[0-9]+\] DATASEC/{ds=1; next} /^\[/{ds=0}
		ds && /type_id=/{split($1,a,"="); if (!(a[2] in var)) print a[2]; n++}
		END{if (n != '"$N"') print "entries " n}' "$d/dump" | head -3)
	[ -z "$bad" ] && ok "the DATASEC names the $N VARs by id" || not_ok "the DATASEC names the $N VARs by id" "$bad"
	# Each tag names what it was written on, and the component.
	kinds=$(awk '/^\[[0-9]+\] /{id=$1; gsub(/[\[\]]/,"",id); kind[id]=$2}
		/ DECL_TAG /{v=$3; gsub(/\047|[0-9]+\047$/,"",v); sub(/[0-9]+$/,"",v)
			split($4,a,"="); split($5,c,"="); n[v " " kind[a[2]] " " c[2]]++}
		END{for (k in n) print k, n[k]}' "$d/dump" | sort | tr '\n' ';')
	want="tag_f FUNC -1 $N;tag_m STRUCT 0 $N;tag_p FUNC 1 $N;tag_s STRUCT -1 $N;tag_t TYPEDEF -1 $N;tag_v VAR -1 $N;"
	[ "$kinds" = "$want" ] && ok "each decl tag on its kind and component ($N of each of 6)" ||
		not_ok "each decl tag on its kind and component" "got '$kinds', wanted '$want'"
fi
check "the kernel accepts the 4-thread BTF" sh -c "'$T_BIN/tools/btfcheck' --load '$d/big.j4.btf'; [ \$? -eq 0 ] || [ \$? -eq 77 ]"

# The fixtures of t1000/t1010, whose FUNCs carry kfunc tags and a true
# signature (a prototype of its own, in a piece of FUNCs).
FIX="$T_TOP/tests/fixtures/funcsel"
if out=$("$GCC" -O2 -gdwarf-5 -c -o "$d/kf.o" "$FIX/kfunc.c" 2>&1) &&
	out=$("$GCC" -O2 -gdwarf-5 -c -o "$d/cl.o" "$FIX/clone.c" 2>&1); then
	for o in kf cl; do
		"$T_BIN/dwarf-extract" -o "$d/$o.cus" "$d/$o.o" && "$T_BIN/dedup-merge" -o "$d/$o.graph" "$d/$o.cus" ||
			{ not_ok "$o: extract and merge"; continue; }
		for j in 1 3; do
			check "$o: emit on $j threads" "$T_BIN/btf-emit" -j$j --features default,true_signature \
				--elf "$d/$o.o" -o "$d/$o.j$j.btf" "$d/$o.graph"
		done
		check_same "$o: 3 threads write the bytes of one" "$d/$o.j1.btf" "$d/$o.j3.btf"
	done
	grep -q "bpf_kfunc" "$d/kf.j3.btf" && ok "kf: the kfunc's tag is there" || not_ok "kf: the kfunc's tag is there"
else
	not_ok "build the funcsel fixtures" "$out"
fi

# Arrays, no int and a decl tag: the index type of our own comes right after
# the extra types, where its id was planned. (Written after the decl tags,
# as before 038af36, it got another id and btf-emit failed: "array index
# type got id 8, planned 7 (a bug)".)
printf '%s\n' 'struct s { char a[4]; char b[2][3]; } __attribute__((btf_decl_tag("x")));' 'struct s v;' >"$d/ix.c"
if out=$("$CLANG" -O0 -g -c -o "$d/ix.o" "$d/ix.c" 2>&1); then
	"$T_BIN/dwarf-extract" -o "$d/ix.cus" "$d/ix.o" && "$T_BIN/dedup-merge" -o "$d/ix.graph" "$d/ix.cus"
	for j in 1 2; do
		check "no int, arrays, a decl tag: emit on $j threads" "$T_BIN/btf-emit" -j$j -o "$d/ix.j$j.btf" "$d/ix.graph"
	done
	check_same "no int: 2 threads write the bytes of one" "$d/ix.j1.btf" "$d/ix.j2.btf"
	check "no int: the kernel accepts it" sh -c "'$T_BIN/tools/btfcheck' --load '$d/ix.j2.btf'; [ \$? -eq 0 ] || [ \$? -eq 77 ]"
else
	not_ok "build the no-int program" "$out"
fi
test_done
