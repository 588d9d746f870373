#!/usr/bin/env bash
# t1110-hard-dwarf: DWARF that is awkward to read or to map to BTF.
#  (a) compressed debug sections (gcc -gz, clang-19 -gz=zlib) of the sample
#      fixture: the same .cus (but for the header line's identity fields) and
#      the same BTF as the uncompressed build;
#  (b) type units: DWARF 4 ones (.debug_types, -gdwarf-4
#      -fdebug-types-section) are refused with exit 1 and a message naming
#      -fdebug-types-section; DWARF 5 ones (DW_UT_type units inside
#      .debug_info) must be refused the same way or read correctly (the BTF
#      equals the build without type units);
#  (c) split DWARF (-gsplit-dwarf, DWARF 4 and 5): refused with exit 1 and a
#      message naming .dwo and -gsplit-dwarf;
#  (d) C++ (tests/fixtures/hard/refs.cpp, g++ and clang++-19): the pipeline
#      succeeds, templates and reference-dependent types and functions are in
#      the skip report with their reasons, the plain structs are in the BTF,
#      and libbpf and the kernel accept it;
#  (e) Rust (tests/fixtures/hard/rlib.rs, a staticlib linked into rmain.c):
#      the .cus marks the Rust CU lang=Rust; with --lang-exclude rust no Rust
#      CU contributes a node and no Rust type reaches the BTF, while the C
#      types do; without it the pipeline still succeeds;
#  (f) _Atomic int is written as int (struct counters, DWARF 5) and
#      int m[3][4][5] as nested ARRAYs (struct matrix), read through bpftool.
. "$(dirname "$0")/lib.sh"

SAMPLE=tests/fixtures/sample
HARD=tests/fixtures/hard
BTFCMP="$T_TOP/tools/btfcmp.py"
BTFCHECK="$T_BIN/tools/btfcheck"

if ! have bpftool || ! have python3; then
	skip "hard DWARF" "bpftool or python3 missing: nothing can read the BTF"
	test_done
fi

# cc_sample DIR CC FLAGS...: the sample fixture into DIR/sample (paths
# relative to the checkout; the prefix map makes them independent of it).
cc_sample() {
	local dir=$1 cc=$2; shift 2
	mkdir -p "$dir"
	(cd "$T_TOP" && "$cc" "$@" -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$dir/sample" "$SAMPLE"/*.c) 2>&1
}

# chain ELF [DEDUP-MERGE-OPTIONS...]: the three stages; leaves ELF.cus,
# .cus.txt, .graph, .btf, .skips and .dump (bpftool's).
chain() {
	local e=$1; shift
	"$T_BIN/dwarf-extract" -o "$e.cus" "$e" 2>&1 &&
		"$T_BIN/dwarf-extract" --dump "$e.cus" >"$e.cus.txt" 2>&1 &&
		"$T_BIN/dedup-merge" "$@" -o "$e.graph" "$e.cus" 2>&1 &&
		"$T_BIN/btf-emit" --elf "$e" --skip-report "$e.skips" -o "$e.btf" "$e.graph" 2>&1 &&
		bpftool btf dump file "$e.btf" >"$e.dump" 2>&1
}

# compressed ELF: its .debug_info has the C (SHF_COMPRESSED) flag.
compressed() {
	readelf -S -W "$1" | awk '$2 == ".debug_info"' | grep -Eq ' [A-Z]*C[A-Z]* +[0-9]+ +[0-9]+ +[0-9]+$'
}

# has_type DUMP KIND NAME: bpftool's dump has a KIND named NAME.
has_type() { grep -q "^\[[0-9]*\] $2 '$3' " "$1"; }

# member_chain DUMP STRUCT MEMBER: the type of STRUCT's MEMBER, followed
# through PTR, ARRAY and qualifiers to a named type, as words:
# "PTR", "ARRAY[N]", "CONST", ..., then "KIND 'name'".
member_chain() {
	awk -v s="$2" -v m="$3" -v q="'" '
	/^\[/ {
		id = substr($1, 2, length($1) - 2); kind[id] = $2; name[id] = $3
		ty[id] = ""; n[id] = ""
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^type_id=/) ty[id] = substr($i, 9)
			if ($i ~ /^nr_elems=/) n[id] = substr($i, 10)
		}
		cur = ($2 == "STRUCT" && $3 == q s q) ? 1 : 0
		next
	}
	cur && $1 == q m q { for (i = 2; i <= NF; i++) if ($i ~ /^type_id=/) start = substr($i, 9) }
	END {
		if (start == "") { print "no member " m " in struct " s; exit }
		out = ""; t = start
		for (d = 0; d < 16; d++) {
			if (t == "0") { out = out "void"; break }
			k = kind[t]
			if (k == "ARRAY") out = out "ARRAY[" n[t] "] "
			else if (k == "PTR" || k == "CONST" || k == "VOLATILE" || k == "RESTRICT" || k == "TYPE_TAG") out = out k " "
			else { out = out k " " name[t]; break }
			t = ty[t]
		}
		print out
	}' "$1"
}

# check_refused DESC ELF ERE...: dwarf-extract refuses ELF with exit 1 and a
# message matching every ERE.
check_refused() {
	local desc=$1 elf=$2 ere missing=""; shift 2
	"$T_BIN/dwarf-extract" -o "$elf.cus" "$elf" >"$elf.out" 2>"$elf.err"
	local rc=$?
	for ere in "$@"; do grep -Eq -- "$ere" "$elf.err" || missing+=" /$ere/"; done
	if [ "$rc" -eq 1 ] && [ -z "$missing" ] && [ ! -e "$elf.cus" ]; then
		ok "$desc: exit 1: $(head -1 "$elf.err" | sed 's/^btfpipe: [^:]*: //')"
	else
		not_ok "$desc" "exit $rc (wanted 1), message lacks${missing:- nothing}, output file $([ -e "$elf.cus" ] && echo left behind || echo absent): $(cat "$elf.err")"
	fi
}

# ---- (a) compressed debug sections -------------------------------------------
# gcc records its switches (so -gz) in DW_AT_producer, which is part of each
# CU's content key: both gcc builds leave them out to differ only in -gz.
while IFS='|' read -r label cc zflag; do
	d="$T_OUT/gz-$label"
	if ! have "$cc"; then
		skip "$label: compressed debug sections" "compiler $cc not found"
		continue
	fi
	extra=()
	[ "$cc" = "$GCC" ] && extra=(-gno-record-gcc-switches)
	if ! out=$(cc_sample "$d/plain" "$cc" -O2 -g "${extra[@]}") ||
		! out=$(cc_sample "$d/z" "$cc" -O2 -g "${extra[@]}" "$zflag"); then
		not_ok "$label: build the sample with and without $zflag" "$out"
		continue
	fi
	if compressed "$d/z/sample" && ! compressed "$d/plain/sample"; then
		ok "$label: $zflag compresses .debug_info, the plain build does not"
	else
		not_ok "$label: $zflag compresses .debug_info, the plain build does not" \
			"$(readelf -S -W "$d/z/sample" "$d/plain/sample" | grep -E '^File|\.debug_info ')"
		continue
	fi
	if ! out=$(chain "$d/plain/sample") || ! out2=$(chain "$d/z/sample"); then
		not_ok "$label: our three stages encode both builds" "$out ${out2:-}"
		continue
	fi
	ok "$label: our three stages encode both builds"
	# The header's identity fields (input name and size, DWARF hash,
	# build-id) describe the file, not its DWARF's meaning.
	for v in plain z; do
		sed '1s/ \(input\|size\|dwarf\|build-id\)=[^ ]*//g' "$d/$v/sample.cus.txt" >"$d/$v.cus.cmp"
	done
	if out=$(diff -u "$d/plain.cus.cmp" "$d/z.cus.cmp"); then
		ok "$label: the .cus dumps are equal but for the header's identity fields"
	else
		not_ok "$label: the .cus dumps are equal but for the header's identity fields" "$out"
	fi
	check_exit "$label: the BTF equals the uncompressed build's (btfcmp --funcs)" 0 \
		"$BTFCMP" --funcs --flatten-arrays "$d/plain/sample.btf" "$d/z/sample.btf"
	check_same "$label: the BTF is byte-identical to the uncompressed build's" \
		"$d/plain/sample.btf" "$d/z/sample.btf"
done <<EOF
gcc|$GCC|-gz
clang|$CLANG|-gz=zlib
EOF

# ---- (b) type units ----------------------------------------------------------
# DWARF 4: .debug_types. C has no type units with clang (LLVM only makes
# them for types with an ODR identifier), so clang++ builds the C++ fixture.
while IFS='|' read -r label cc src; do
	d="$T_OUT/tu4-$label"
	e="$d/prog"
	if ! have "$cc"; then
		skip "$label: DWARF 4 type units refused" "compiler $cc not found"
		continue
	fi
	mkdir -p "$d"
	# shellcheck disable=SC2086 # src: a list of files (and globs), relative to the checkout
	if ! out=$(cd "$T_TOP" && "$cc" -O2 -gdwarf-4 -fdebug-types-section -o "$e" $src 2>&1); then
		not_ok "$label: build with -gdwarf-4 -fdebug-types-section" "$out"
		continue
	fi
	if ! readelf -S -W "$e" | grep -q ' \.debug_types '; then
		not_ok "$label: -gdwarf-4 -fdebug-types-section makes a .debug_types section" \
			"$(readelf -S -W "$e" | grep debug)"
		continue
	fi
	check_refused "$label: DWARF 4 type units (.debug_types) refused" "$e" '-fdebug-types-section'
done <<EOF
gcc|$GCC|$SAMPLE/*.c
clang++|${CLANGXX:-clang++-19}|$HARD/refs.cpp
EOF

# DWARF 5: type units are DW_UT_type units in .debug_info, and the compile
# units refer to them by signature (DW_FORM_ref_sig8). Refusing them is as
# good as reading them; reading them wrong is not.
while IFS='|' read -r label cc src; do
	d="$T_OUT/tu5-$label"
	if ! have "$cc"; then
		skip "$label: DWARF 5 type units refused or read" "compiler $cc not found"
		continue
	fi
	mkdir -p "$d"
	# shellcheck disable=SC2086 # src: a list of files (and globs), relative to the checkout
	if ! out=$(cd "$T_TOP" && "$cc" -O2 -gdwarf-5 -fdebug-types-section -o "$d/tu" $src 2>&1 &&
		"$cc" -O2 -gdwarf-5 -o "$d/plain" $src 2>&1); then
		not_ok "$label: build with and without -gdwarf-5 -fdebug-types-section" "$out"
		continue
	fi
	ntu=$(readelf --debug-dump=info "$d/tu" 2>/dev/null | grep -c 'Unit Type: *DW_UT_type')
	if [ "$ntu" -eq 0 ]; then
		not_ok "$label: -gdwarf-5 -fdebug-types-section makes DW_UT_type units" "none in $d/tu"
		continue
	fi
	"$T_BIN/dwarf-extract" -o "$d/tu.cus" "$d/tu" >/dev/null 2>"$d/tu.err"
	rc=$?
	if [ "$rc" -eq 1 ]; then
		check_grep "$label: DWARF 5 type units ($ntu DW_UT_type) refused, naming -fdebug-types-section" \
			'-fdebug-types-section' "$d/tu.err"
	elif [ "$rc" -ne 0 ]; then
		not_ok "$label: DWARF 5 type units ($ntu DW_UT_type) refused (exit 1) or read" "exit $rc: $(cat "$d/tu.err")"
	elif ! out=$(chain "$d/tu") || ! out2=$(chain "$d/plain"); then
		not_ok "$label: DWARF 5 type units ($ntu DW_UT_type) read: the pipeline encodes them" \
			"dwarf-extract accepted them, then: $out ${out2:-}"
	else
		desc="$label: DWARF 5 type units ($ntu DW_UT_type) read: the BTF equals the build without them"
		if "$BTFCMP" --funcs --flatten-arrays --width 0 "$d/plain.btf" "$d/tu.btf" >"$d/cmp" 2>&1; then
			ok "$desc"
		else
			not_ok "$desc" "dwarf-extract accepted them (exit 0); btfcmp, without type units = A, with = B:"$'\n'"$(grep -E '^  (only-in|count)|^btfcmp:' "$d/cmp")"
		fi
	fi
done <<EOF
gcc|$GCC|$SAMPLE/*.c
clang++|${CLANGXX:-clang++-19}|$HARD/refs.cpp
EOF

# ---- (c) split DWARF -----------------------------------------------------------
for cc in "$GCC" "$CLANG"; do
	for dw in 4 5; do
		label="$(basename "$cc")-dwarf$dw"
		d="$T_OUT/split-$label"
		if ! have "$cc"; then
			skip "$label: split DWARF refused" "compiler $cc not found"
			continue
		fi
		mkdir -p "$d"
		# The .dwo files land in the current directory: build in $d.
		if ! out=$(cd "$d" && "$cc" -O2 "-gdwarf-$dw" -gsplit-dwarf -o prog "$T_TOP/$SAMPLE"/*.c 2>&1); then
			not_ok "$label: build with -gsplit-dwarf" "$out"
			continue
		fi
		if ! ls "$d"/*.dwo >/dev/null 2>&1; then
			not_ok "$label: -gsplit-dwarf writes .dwo files" "none in $d"
			continue
		fi
		check_refused "$label: split DWARF refused" "$d/prog" '\.dwo' '-gsplit-dwarf'
	done
done

# ---- (d) C++ -------------------------------------------------------------------
# REFS_ROWS: skip-report lines refs.cpp must produce (ERE, anchored), for
# both compilers: what BTF cannot name and what BTF cannot express.
REFS_ROWS='^type box<int>: a name BTF does not allow
^type box<long( int)?>: a name BTF does not allow
^func unbox<int>: a name BTF does not allow
^type [^:]*: DWARF with no BTF form
^type holder: needs a type with no BTF form
^type wrapper: needs a type with no BTF form
^func bump: its prototype needs a type with no BTF form'
for cxx in g++ "${CLANGXX:-clang++-19}"; do
	label=$(basename "$cxx")
	d="$T_OUT/cxx-$label"
	e="$d/refs"
	if ! have "$cxx"; then
		skip "$label: C++ fixture" "compiler $cxx not found"
		continue
	fi
	mkdir -p "$d"
	if ! out=$(cd "$T_TOP" && "$cxx" -O2 -g -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$e" "$HARD/refs.cpp" 2>&1); then
		not_ok "$label: build refs.cpp" "$out"
		continue
	fi
	nref=$(readelf --debug-dump=info "$e" 2>/dev/null | grep -c 'DW_TAG_reference_type')
	if [ "$nref" -eq 0 ]; then
		not_ok "$label: refs.cpp has DW_TAG_reference_type in its DWARF" "none"
		continue
	fi
	if ! out=$(chain "$e"); then
		not_ok "$label: the pipeline encodes refs.cpp" "$out"
		continue
	fi
	ok "$label: the pipeline encodes refs.cpp ($nref DW_TAG_reference_type)"
	while IFS= read -r row; do
		check_grep "$label: skip report: ${row#^}" "$row" "$e.skips"
	done <<<"$REFS_ROWS"
	for t in plain_pt plain_rec; do
		if has_type "$e.dump" STRUCT "$t"; then ok "$label: struct $t is in the BTF"
		else not_ok "$label: struct $t is in the BTF" "$(grep -E '^\[' "$e.dump")"; fi
	done
	if has_type "$e.dump" FUNC rec_sum; then ok "$label: FUNC rec_sum (plain types, C linkage) is in the BTF"
	else not_ok "$label: FUNC rec_sum (plain types, C linkage) is in the BTF" "$(grep -E '^\[' "$e.dump")"; fi
	leaked=$(grep -E "^\[[0-9]+\] [A-Z_0-9]+ '(holder|wrapper|box<[^']*|bump|unbox<[^']*)' " "$e.dump")
	if [ -z "$leaked" ]; then ok "$label: nothing left out reaches the BTF"
	else not_ok "$label: nothing left out reaches the BTF" "$leaked"; fi
	check "$label: libbpf parses the BTF and btf__dedup removes nothing" "$BTFCHECK" --dedup "$e.btf"
	check_loads "$label: the kernel loads the BTF" "$e.btf"
	# The same graph with every node's provenance emptied (a merge never
	# writes that, a file may): the skip report names no CU for the left-out
	# types ("CU ?"), where btf-emit once read past its provenance array.
	if ! out=$(PYTHONPATH="$T_TOP/tests/tools" python3 - "$e.graph" "$e.noprov.graph" 2>&1 <<'PY'
import struct, sys
import cusfile  # libxxhash through ctypes
xx = cusfile.xxhash()
src, dst = sys.argv[1:3]
b = bytearray(open(src, "rb").read())
nsec, = struct.unpack_from("<I", b, 20)
table = [list(struct.unpack_from("<IIQQQ", b, 64 + 32 * i)) for i in range(nsec)]
secs = [bytes(b[t[2]:t[2] + t[3]]) for t in table]
def nodes_count(sec):  # the nodes section starts with the node count (uleb)
    v = shift = 0
    for c in sec:
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v
n = nodes_count(secs[3])  # section 4: nodes
assert table[4][0] == 5, "section 5 is provenance"
def uleb(v):
    out = bytearray()
    while True:
        out.append((v & 0x7f) | (0x80 if v >= 0x80 else 0))
        v >>= 7
        if not v:
            return bytes(out)
# One uleb 0 per node, in blocks of 8192 (format 3, TYPE-GRAPH.md): each
# block's header says its nodes, its bytes, no entries and no nodes with any.
prov = bytearray()
for lo in range(0, n, 8192):
    k = min(8192, n - lo)
    prov += uleb(k) + uleb(k) + uleb(0) + uleb(0) + bytes(k)
secs[4] = bytes(prov)
off = 64 + 32 * nsec
out = bytearray(b[:off])
for i, t in enumerate(table):
    t[2], t[3], t[4] = off, len(secs[i]), xx.XXH3_64bits(secs[i], len(secs[i]))
    struct.pack_into("<IIQQQ", out, 64 + 32 * i, *t)
    off += len(secs[i])
for sec in secs:
    out += sec
struct.pack_into("<Q", out, 24, len(out))
chk = bytes(out[:32]) + bytes(out[64:64 + 32 * nsec])
struct.pack_into("<Q", out, 32, xx.XXH3_64bits(chk, len(chk)))
open(dst, "wb").write(out)
PY
	); then
		not_ok "$label: a graph with its provenance emptied (made from refs.graph)" "$out"
	elif ! out=$("$T_BIN/btf-emit" --elf "$e" --skip-report "$e.noprov.skips" -o "$e.noprov.btf" \
		"$e.noprov.graph" 2>&1); then
		not_ok "$label: btf-emit encodes a graph with no provenance" "$out"
	else
		ok "$label: btf-emit encodes a graph with no provenance"
		check_same "$label: no provenance: the same BTF" "$e.btf" "$e.noprov.btf"
		check_grep "$label: no provenance: a left-out type's report line names no CU" \
			'^type holder: needs a type with no BTF form \(CU \?\)$' "$e.noprov.skips"
	fi
done

# ---- (e) Rust --------------------------------------------------------------------
# RUST_TYPES: types of the Rust CU, seen in the BTF without --lang-exclude
# (so the check that they are gone can fail). C_TYPES: rmain.c's.
RUST_TYPES="STRUCT:RPair INT:u64 INT:usize INT:u32"
C_TYPES="STRUCT:c_pair STRUCT:c_only_config FUNC:main"
d="$T_OUT/rust"
e="$d/rmain"
if ! have rustc; then
	skip "Rust CUs and --lang-exclude rust" "rustc not on PATH"
elif ! have "$GCC"; then
	skip "Rust CUs and --lang-exclude rust" "compiler $GCC not found"
else
	mkdir -p "$d"
	if ! out=$(cd "$d" && rustc --crate-type=staticlib -g -O -o "$d/librlib.a" "$T_TOP/$HARD/rlib.rs" 2>&1 &&
		cd "$T_TOP" && "$GCC" -O2 -g -o "$e" "$HARD/rmain.c" "$d/librlib.a" 2>&1); then
		not_ok "rust: build rlib.rs as a staticlib and link it into rmain.c" "$out"
	elif ! out=$(chain "$e"); then
		not_ok "rust: the pipeline encodes the mixed C and Rust program" "$out"
	else
		ok "rust: the pipeline encodes the mixed C and Rust program (no --lang-exclude)"
		rust_cus=$(sed -n 's/^cu [0-9]* .* lang=Rust .* name="\([^"]*\)".*/\1/p' "$e.cus.txt")
		nrust=$(grep -c . <<<"$rust_cus")
		if [ -n "$rust_cus" ] && grep -q '^cu .* lang=C[0-9]* .*name="[^"]*rmain.c"' "$e.cus.txt"; then
			ok "rust: the .cus marks $nrust CU(s) lang=Rust and rmain.c's lang=C"
		else
			not_ok "rust: the .cus marks the Rust CU lang=Rust and rmain.c's lang=C" "$(grep '^cu ' "$e.cus.txt" | cut -c1-160)"
		fi
		"$T_BIN/dedup-merge" --provenance --dump "$e.graph" >"$d/all.prov" 2>&1
		for t in $RUST_TYPES $C_TYPES; do
			if has_type "$e.dump" "${t%%:*}" "${t#*:}"; then ok "rust: without --lang-exclude, the BTF has ${t%%:*} ${t#*:}"
			else not_ok "rust: without --lang-exclude, the BTF has ${t%%:*} ${t#*:}" "$(grep -E '^\[' "$e.dump")"; fi
		done
		# The same ELF, Rust excluded: by dedup-merge itself and by pipeline.sh.
		x="$d/rmain-x"
		if ! out=$("$T_BIN/dedup-merge" --lang-exclude rust -o "$x.graph" "$e.cus" 2>&1 &&
			"$T_BIN/btf-emit" --elf "$e" -o "$x.btf" "$x.graph" 2>&1 &&
			bpftool btf dump file "$x.btf" >"$x.dump" 2>&1 &&
			"$T_BIN/dedup-merge" --provenance --dump "$x.graph" >"$x.prov" 2>&1); then
			not_ok "rust: dedup-merge --lang-exclude rust, then btf-emit" "$out"
		else
			ok "rust: dedup-merge --lang-exclude rust, then btf-emit"
			named=0 leaked=""
			while IFS= read -r cu; do
				[ -n "$cu" ] || continue
				grep '^    from: ' "$d/all.prov" | grep -Fq ":\"$cu\"" && named=$((named + 1))
				leaked+=$(grep '^    from: ' "$x.prov" | grep -F ":\"$cu\"" | head -3)
			done <<<"$rust_cus"
			if [ "$named" -eq 0 ]; then
				not_ok "rust: without --lang-exclude, some node comes from a Rust CU (the provenance check can fail)" \
					"no from: line names $rust_cus"
			elif [ -z "$leaked" ] && grep -q '^    from: ' "$x.prov"; then
				ok "rust: with --lang-exclude rust no node comes from a Rust CU (without it, $named did)"
			else
				not_ok "rust: with --lang-exclude rust no node comes from a Rust CU" "${leaked:-no from: lines at all}"
			fi
			for t in $RUST_TYPES; do
				if has_type "$x.dump" "${t%%:*}" "${t#*:}"; then
					not_ok "rust: with --lang-exclude rust, no ${t%%:*} ${t#*:}" "$(grep "'${t#*:}'" "$x.dump")"
				else
					ok "rust: with --lang-exclude rust, no ${t%%:*} ${t#*:}"
				fi
			done
			for t in $C_TYPES; do
				if has_type "$x.dump" "${t%%:*}" "${t#*:}"; then ok "rust: with --lang-exclude rust, the BTF keeps ${t%%:*} ${t#*:}"
				else not_ok "rust: with --lang-exclude rust, the BTF keeps ${t%%:*} ${t#*:}" "$(grep -E '^\[' "$x.dump")"; fi
			done
			if out=$(BTFPIPE_BIN="$T_BIN" "$T_TOP/pipeline.sh" --lang-exclude rust -o "$d/pipe-x.btf" "$e" 2>&1); then
				check_same "rust: pipeline.sh --lang-exclude rust writes the same BTF" "$x.btf" "$d/pipe-x.btf"
			else
				not_ok "rust: pipeline.sh --lang-exclude rust" "$out"
			fi
		fi
	fi
fi

# ---- (f) _Atomic and multi-dimensional arrays -----------------------------------
for cc in "$GCC" "$CLANG"; do
	label="$(basename "$cc")-dwarf5"
	d="$T_OUT/atomic-$label"
	if ! have "$cc"; then
		skip "$label: _Atomic and nested arrays" "compiler $cc not found"
		continue
	fi
	if ! out=$(cc_sample "$d" "$cc" -O2 -gdwarf-5) || ! out=$(chain "$d/sample"); then
		not_ok "$label: build the sample and encode it" "$out"
		continue
	fi
	natomic=$(readelf --debug-dump=info "$d/sample" 2>/dev/null | grep -c DW_TAG_atomic_type)
	if [ "$natomic" -gt 0 ]; then ok "$label: the DWARF has $natomic DW_TAG_atomic_type"
	else not_ok "$label: the DWARF has DW_TAG_atomic_type" "none: the _Atomic rows below would prove nothing"; fi
	while IFS='|' read -r s m want; do
		got=$(member_chain "$d/sample.dump" "$s" "$m")
		if [ "$got" = "$want" ]; then ok "$label: struct $s.$m is $want"
		else not_ok "$label: struct $s.$m is $want" "bpftool says: $got"; fi
	done <<'EOF'
counters|hits|INT 'int'
counters|head|PTR INT 'int'
matrix|m|ARRAY[3] ARRAY[4] ARRAY[5] INT 'int'
matrix|grid|ARRAY[2] ARRAY[3] STRUCT 'point'
EOF
done

# ---- (g) base types BTF has no size for ----------------------------------------
# A 3-byte DW_ATE_unsigned_24 that nothing refers to (added to the CU's
# retained types through the IR: clang makes them for DW_OP_convert in
# location lists, the clang thin-LTO kernel's case) is left out and
# reported; a 32-byte `unsigned _BitInt(200)` that a member needs becomes
# pahole's placeholder, a 4-byte INT __SANITIZED_FAKE_INT__.
d="$T_OUT/oddbase"
mkdir -p "$d"
if ! have "$CLANG"; then
	skip "odd base types" "compiler $CLANG not found"
elif ! out=$("$CLANG" -O2 -gdwarf-5 -S -emit-llvm -o "$d/ob.ll" "$HARD/oddbase.c" 2>&1) ||
	! grep -q '^!2 = distinct !DICompileUnit(.*nameTableKind: None)$' "$d/ob.ll"; then
	not_ok "odd base types: the IR of $HARD/oddbase.c, with a CU line to add a retained type to" \
		"$out $(grep DICompileUnit "$d/ob.ll" 2>/dev/null)"
else
	sed 's/^\(!2 = distinct !DICompileUnit(.*nameTableKind: None\))$/\1, retainedTypes: !90)/' "$d/ob.ll" >"$d/ob2.ll"
	printf '%s\n' '!90 = !{!91}' '!91 = !DIBasicType(name: "DW_ATE_unsigned_24", size: 24, encoding: DW_ATE_unsigned)' >>"$d/ob2.ll"
	if ! out=$("$CLANG" -O2 -o "$d/ob" "$d/ob2.ll" 2>&1) || ! out=$(chain "$d/ob"); then
		not_ok "odd base types: build and encode" "$out"
	else
		if grep -q '"DW_ATE_unsigned_24" .*size=3' "$d/ob.cus.txt"; then ok "odd base types: the DWARF has a 3-byte DW_ATE_unsigned_24"
		else not_ok "odd base types: the DWARF has a 3-byte DW_ATE_unsigned_24" "$(grep base "$d/ob.cus.txt")"; fi
		check_grep "odd base types: the unused 3-byte one is in the skip report" \
			"^type DW_ATE_unsigned_24: a base type of a size BTF has no INT or FLOAT for, which no kept type refers to" "$d/ob.skips"
		if ! grep -q DW_ATE_unsigned_24 "$d/ob.dump"; then ok "odd base types: and not in the BTF"
		else not_ok "odd base types: and not in the BTF" "$(cat "$d/ob.dump")"; fi
		got=$(member_chain "$d/ob.dump" wide big)
		if [ "$got" = "INT '__SANITIZED_FAKE_INT__'" ]; then ok "odd base types: the member of 32 bytes is pahole's placeholder INT"
		else not_ok "odd base types: the member of 32 bytes is pahole's placeholder INT" "bpftool says: $got"; fi
		check "odd base types: libbpf parses it and btf__dedup removes nothing" "$BTFCHECK" --dedup "$d/ob.btf"
		check_loads "odd base types: the kernel loads the BTF" "$d/ob.btf"
		if have pahole; then
			pahole -J --btf_gen_floats --btf_encode_detached="$d/pahole.btf" "$d/ob" >"$d/pahole.out" 2>&1
			echo "info: odd base types: pahole $(pahole --version): exit $?, $(grep -c . "$d/pahole.out") lines of output: $(head -1 "$d/pahole.out")"
		fi
	fi
fi
test_done
