#!/usr/bin/env bash
# t0870-elf-symbols: btf-emit reads the --elf file's symbol table in chunks
# of 8,192 on the pool (stages/btf-emit/elf_info.c: count, fill, sort,
# gather), names pointing into the ELF's own string table. A vmlinux has
# about 120,000 symbols; this relocatable object has more than 100,000, so
# that every pass has many chunks at every thread count, and what decides
# the output sits past the first chunk:
#  - the functions with DWARF are global symbols, after 90,000 local ones;
#  - they live in sections numbered past 65,280, so their symbols' section
#    is SHN_XINDEX and the real one is in .symtab_shndx (a function of a
#    relocatable file is matched to its symbol by section too);
#  - the kfunc set8 and its func symbol in .BTF_ids come after the filler;
#  - filler symbols share the functions' names as prefixes ("fn_17.cold.119"),
#    and two locals have a function's exact name: fn_3 at another offset,
#    fn_11 at the same offset (0) of another section, which makes both
#    functions' addresses ambiguous.
# The BTF must be the same bytes on 1, 2 and 3 threads, have a FUNC for
# every other function and the kfunc's decl tag; pahole is compared, and
# is wrong twice here (below).
. "$(dirname "$0")/lib.sh"

d="$T_OUT/syms"
mkdir -p "$d"
NFN=400    # functions with DWARF, global
NFILL=90000 # local filler symbols, before them in .symtab
NSEC=66000 # sections of the filler, ahead of the functions' sections
python3 - "$d" "$NFN" "$NFILL" "$NSEC" <<'PY'
import sys
d, nfn, nfill, nsec = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(d + "/fill.s", "w") as f:
    # One local function symbol per filler, spread over nsec sections, some
    # named as a real function's prefix.
    per = (nfill + nsec - 1) // nsec
    k = 0
    for s in range(nsec):
        f.write('\t.section .text.fill%d,"ax",@progbits\n' % s)
        for _ in range(per):
            if k >= nfill:
                break
            name = "fn_%d.cold.%d" % (k % nfn, k) if k % 7 == 0 else "fill_%d" % k
            if k == nfill - 1:
                name = "fn_3" # a local with a function's own name, elsewhere
            if k == per * 40000:
                name = "fn_11" # the same, at offset 0 of a section of its own
            f.write('\t.type "%s", @function\n"%s":\n\tret\n\t.size "%s", 1\n' % (name, name, name))
            k += 1
    # The kfunc set after the filler: a set8 flagged BTF_SET8_KFUNCS with
    # one pair, for fn_7, as the kernel's btf_ids.h lays it out.
    f.write('''\t.section .BTF_ids,"a"
\t.balign 4
\t.local __BTF_ID__set8__t_set
\t.type __BTF_ID__set8__t_set, @object
__BTF_ID__set8__t_set:
\t.long 0
\t.long 1
\t.local __BTF_ID__func__fn_7__1
\t.type __BTF_ID__func__fn_7__1, @object
\t.size __BTF_ID__func__fn_7__1, 4
__BTF_ID__func__fn_7__1:
\t.long 0
\t.long 0
\t.size __BTF_ID__set8__t_set, 16
''')
with open(d + "/fns.c", "w") as f:
    f.write("struct rec { int a; long b; };\n")
    for i in range(nfn):
        f.write("int fn_%d(struct rec *r, int x) { return r->a + x + %d; }\n" % (i, i))
PY
if ! out=$(as -o "$d/fill.o" "$d/fill.s" 2>&1 && "$GCC" -O2 -g -ffunction-sections -c -o "$d/fns.o" "$d/fns.c" 2>&1 &&
	ld -r -o "$d/big.o" "$d/fill.o" "$d/fns.o" 2>&1); then
	not_ok "build the object of $NFILL filler symbols and $NFN functions" "$out"
	test_done
fi

# ---- the object is what this test needs ----
size=$(readelf -SW "$d/big.o" | sed -n 's/^ *\[ *[0-9]*\] \.symtab  *SYMTAB  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')
nsym=$((16#${size:-0} / 24))
xsec=$(readelf -SW "$d/big.o" | grep -c ' SYMTAB SECTION INDICES ' || true)
fnsec=$(readelf -sW "$d/big.o" | awk '$8 == "fn_5" && $5 == "GLOBAL" { print $7 }')
kidx=$(readelf -sW "$d/big.o" | awk '$8 == "__BTF_ID__func__fn_7__1" { sub(":", "", $1); print $1 }')
if [ "$nsym" -gt 100000 ] && [ "$xsec" = 1 ] && [ "${fnsec:-0}" -gt 65280 ] && [ "${kidx:-0}" -gt 65536 ]; then
	ok "construction: $nsym symbols, .symtab_shndx, fn_5 in section $fnsec, the kfunc's symbol at $kidx"
else
	not_ok "construction: over 100,000 symbols, fn_5 past section 65,280, the kfunc's symbol past 65,536" \
		"symbols $nsym, SYMTAB_SHNDX sections $xsec, fn_5's section '${fnsec}', kfunc symbol '${kidx}'"
fi

check "extract and merge" sh -c "'$T_BIN/dwarf-extract' -o '$d/big.cus' '$d/big.o' &&
	'$T_BIN/dedup-merge' -o '$d/big.graph' '$d/big.cus'"
for j in 1 2 3; do
	# lib.sh exports BTFPIPE_JOBS_EXACT=1: exactly j threads read the symbols.
	check_exit "emit on $j threads" 0 "$T_BIN/btf-emit" -j$j --elf "$d/big.o" -o "$d/big.j$j.btf" "$d/big.graph"
done
check_same "2 threads: the BTF is the bytes of 1" "$d/big.j1.btf" "$d/big.j2.btf"
check_same "3 threads: the BTF is the bytes of 1" "$d/big.j1.btf" "$d/big.j3.btf"
# The passes' chunks under ThreadSanitizer (bin-tsan/, as t1330): a data
# race exits 66.
if [ -x "$T_TOP/bin-tsan/btf-emit" ]; then
	check_exit "emit on 4 threads under TSan" 0 "$T_TOP/bin-tsan/btf-emit" -j4 --elf "$d/big.o" -o "$d/big.tsan.btf" "$d/big.graph"
	check_same "TSan, 4 threads: the BTF is the bytes of 1" "$d/big.j1.btf" "$d/big.tsan.btf"
else
	skip "emit on 4 threads under TSan" "no bin-tsan/ build (make test makes it)"
fi

if ! have bpftool; then
	skip "the functions and the kfunc tag in the BTF" "bpftool not installed (make deps)"
	test_done
fi
bpftool btf dump file "$d/big.j3.btf" >"$d/dump" 2>&1
nfunc=$(grep -c "^\[[0-9]*\] FUNC 'fn_[0-9]*' " "$d/dump")
if [ "$nfunc" = $((NFN - 2)) ] && ! grep -Eq "FUNC 'fn_(3|11)' " "$d/dump"; then
	ok "a FUNC for each function but the ambiguous fn_3 and fn_11 (symbols SHN_XINDEX, past 90,000 locals)"
else
	not_ok "a FUNC for each function but the ambiguous fn_3 and fn_11" \
		"$nfunc FUNCs named fn_*, wanted $((NFN - 2)): $(grep -E "FUNC 'fn_(3|11)' " "$d/dump")"
fi
kid=$(sed -n "s/^\[\([0-9]*\)\] FUNC 'fn_7' .*/\1/p" "$d/dump")
if [ -n "$kid" ] && grep -q "DECL_TAG 'bpf_kfunc' type_id=$kid component_idx=-1" "$d/dump"; then
	ok "fn_7: the bpf_kfunc tag from the set8 past the first chunks"
else
	not_ok "fn_7: the bpf_kfunc tag from the set8 past the first chunks" "FUNC id '${kid:-none}'; $(grep DECL_TAG "$d/dump" | head -5)"
fi
# pahole on the same object, and where it is wrong. fn_3 is ambiguous: a
# local symbol of its name sits at another address, and pahole skips such
# functions since 1.28, as btf-emit does; Debian's 1.24 predates the rule.
# fn_11 is ambiguous too, its twin at the same offset (0) of another
# section: pahole master compares addresses without their sections, and
# never an address of 0 (btf_encoder.c, elf_function__has_ambiguous_address),
# so it keeps fn_11. And it reads .BTF_ids' symbols by st_shndx alone, which
# past section 65,280 is SHN_XINDEX: it finds no kfunc set here, and fn_7
# gets no bpf_kfunc tag.
funcs() { bpftool btf dump file "$1" | sed -n "s/^\[[0-9]*\] FUNC '\([^']*\)' .*/\1/p" | sort; }
funcs "$d/big.j3.btf" >"$d/ours.funcs"
if pahole_master "pahole master's FUNCs"; then
	if "$T_PAHOLE_MASTER" -J --btf_features=default --btf_encode_detached="$d/master.btf" "$d/big.o" >"$d/master.out" 2>&1; then
		funcs "$d/master.btf" >"$d/master.funcs"
		(cat "$d/ours.funcs"; echo fn_11) | sort >"$d/want.master"
		check_same "pahole master's FUNCs are ours and fn_11, whose twin at offset 0 of another section it misses" \
			"$d/want.master" "$d/master.funcs"
		if bpftool btf dump file "$d/master.btf" | grep -q "DECL_TAG 'bpf_kfunc'"; then
			not_ok "pahole master misses the kfunc set in a section past SHN_LORESERVE" "it tagged: $(bpftool btf dump file "$d/master.btf" | grep DECL_TAG)"
		else
			ok "pahole master misses the kfunc set in a section past SHN_LORESERVE (btf-emit finds it)"
		fi
	else
		not_ok "pahole master encodes the object" "$(tail -5 "$d/master.out")"
	fi
fi
if have pahole; then
	if pahole -J --btf_encode_detached="$d/pahole.btf" "$d/big.o" >"$d/pahole.out" 2>&1; then
		funcs "$d/pahole.btf" >"$d/pahole.funcs"
		(cat "$d/ours.funcs"; echo fn_3; echo fn_11) | sort >"$d/want.1.24"
		check_same "pahole 1.24's FUNCs are ours and the ambiguous fn_3 and fn_11" "$d/want.1.24" "$d/pahole.funcs"
	else
		not_ok "pahole 1.24 encodes the object" "$(tail -5 "$d/pahole.out")"
	fi
else
	skip "pahole 1.24's FUNCs are ours and the ambiguous fn_3 and fn_11" "pahole not installed (make deps)"
fi
test_done
