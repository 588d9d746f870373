#!/usr/bin/env bash
# t1320-hostile: absurd but well-formed inputs, and DWARF damaged on purpose,
# through all three stages.
#
# For every input, each stage (extract -> merge -> emit, stopping at the first
# that fails) must:
#   - finish within `timeout 60`, and (bin/ only: ASan needs terabytes of
#     address space for its shadow) within `ulimit -v` of 4 GiB; with
#     /usr/bin/time, no stage may peak above 2 GiB of RSS in either variant;
#   - never crash: exit >= 128, 124 (timeout) or a sanitizer report fails;
# and then, row by row, either
#   - refuse: exit 1 (bad input: docs/debugging.md), exactly one line on
#     stderr `btfpipe: FILE: error: WHAT` naming the file (every file of a
#     case carries the case name) and saying what is wrong, and no output
#     file nor temp file in that stage's output directory; or
#   - succeed with correct output, checked against the input: libbpf must
#     parse the BTF (bin/tools/btfcheck) and bpftool's dump must say what the
#     C source says.
# Which of the two is right depends on the row:
#
#   wide-struct   a struct of 70,000 int members. BTF's vlen is 16 bits
#                 (max 65535), so it cannot be encoded as is: a refusal, or
#                 a documented mapping (the struct left out, or kept with its
#                 size and no members, and named in --skip-report). A STRUCT
#                 with a wrapped vlen (70000 & 0xffff = 4464) is a silent
#                 wrong BTF. The .cus and .graph can hold it and must.
#   wide-enum     the same for an enum of 100,000 enumerators.
#   wide-datasec  the same for 70,000 globals in one .bss (global_var).
#   huge-array    structs holding char[2^40], char[2^20][2^20] and a typedef'd
#                 row array: nothing may allocate by the element count; BTF's
#                 struct size and nr_elems are 32 bits, so again refuse or
#                 leave out, never truncate (size=4, nr_elems=0).
#   huge-count    DW_AT_count near 2^64, patched into clang's assembly: 2^64-2,
#                 2^63, and 2^61+1 and 2^61 of 8-byte longs, whose byte sizes
#                 wrap 64 bits to 8 and 0, and 2^32 (one past nr_elems). The
#                 .cus keeps each count; BTF must leave each out (named in
#                 --skip-report) or refuse, never encode a truncated or
#                 wrapped one. 2^32-1 is encoded; 2^64-1 is clang's "no
#                 count" (a flexible array): nr_elems=0.
#   many-sections a .o with 70,000+ sections (SHN_XINDEX: e_shnum 0, symbols
#                 in sections >= 65280), made with `as`, its DWARF'd objects
#                 placed after the fillers: extract must read the section
#                 indices right and the pipeline must succeed; emit
#                 --elf-out may write the ELF or refuse cleanly (the input
#                 left byte-identical).
#   ref-*         an executable whose DWARF is patched (bytes of a DW_FORM_ref4,
#                 found with llvm-dwarfdump-19): typedef cycles (a typedef of
#                 itself, two typedefs of each other, a cycle through const)
#                 must be refused, not hang and not become a BTF loop (which
#                 the kernel refuses: "Loop detected"); references past the
#                 end of the CU, far past .debug_info, into the middle of a
#                 DIE, and to the unit header (CU offset 0) must be refused
#                 naming the CU and the DIE. A reference to a non-type DIE (a
#                 member) may be refused or left out: only "no crash" and
#                 "libbpf parses the result" are asked.
#   deep-N        a struct member whose type is N levels of typedef'd
#                 pointer-to-pointer (t0 = struct leaf *, tK = tK-1 *): must
#                 succeed, and the BTF must hold the whole chain. N = 10,000,
#                 and 100,000 when clang can compile it. Also emitted with
#                 --libbpf-dedup over its own BTF (libbpf recurses per level).
#   nul-str       .debug_str, then .debug_line_str, with its last byte (the
#                 last string's NUL) made 'X': the string ran on into the next
#                 section (a variable was named "g_lastX/tmp/..."). Refused,
#                 also compressed by objcopy (zlib: SHF_COMPRESSED; zlib-gnu:
#                 .zdebug_*, which keeps its name once libdw decompresses it).
#   nul-string    a hand-written unit whose last DIE's DW_FORM_string name
#                 runs to the end of the unit and of .debug_info with no NUL:
#                 refused naming the CU and the DIE.
#   dup-info      a second section named .debug_info after the real one (the
#                 sample's .strtab renamed, holding one well-formed DWARF 5
#                 unit): libdw reads the first, so must dwarf-extract. The
#                 records must be the plain sample's. Listing the units from
#                 the last one dropped all but the first CU, silently.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
MERGE="$T_BIN/dedup-merge"
EMIT="$T_BIN/btf-emit"
BTFCHECK="$T_TOP/bin/tools/btfcheck"
IN="$T_OUT/in"
mkdir -p "$IN"
MEM_KB=$((4 * 1024 * 1024))
RSS_MAX_KB=$((2 * 1024 * 1024))
asan=0
case $(basename "$T_BIN") in *asan*) asan=1 ;; esac

for tool in python3 bpftool llvm-dwarfdump-19 as readelf "$GCC"; do
	if ! have "$tool"; then
		not_ok "$tool is installed (tests/deps.sh)" "without it these inputs cannot be made or read"
		test_done
	fi
done
if [ ! -x "$BTFCHECK" ]; then
	not_ok "btfcheck is built" "$BTFCHECK is missing: run make"
	test_done
fi
TIME=""
[ -x /usr/bin/time ] && TIME=/usr/bin/time

# describe_rc RC: what an unexpected exit code means, for failure messages.
describe_rc() {
	case $1 in
	124) echo "exit 124: hung, killed by timeout" ;;
	86 | 87) echo "exit $1: sanitizer report (ASan/UBSan exit code)" ;;
	*) if [ "$1" -ge 128 ]; then echo "exit $1: killed by signal $(($1 - 128))"; else echo "exit $1"; fi ;;
	esac
}

# limited RSSFILE CMD...: CMD under timeout 60 and, but under ASan, ulimit -v;
# its peak RSS in kB goes to RSSFILE when /usr/bin/time is there.
limited() {
	local rss=$1; shift
	(
		if [ "$asan" = 0 ]; then ulimit -v "$MEM_KB" || exit 99; fi
		if [ -n "$TIME" ]; then
			exec "$TIME" -f %M -o "$rss" timeout 60 "$@"
		else
			exec timeout 60 "$@"
		fi
	)
}

# run_pipe CASE ELF [EMIT OPTIONS...]: extract, merge and emit (-o raw BTF)
# CASE, each stage into its own directory $T_OUT/CASE/STAGE, stopping at the
# first that fails; then the "no crash" check. Sets P_STAGE (the stage that
# failed, or none), P_RC, P_ERR (its stderr), P_DIR (its output directory),
# and P_CUS, P_GRAPH, P_BTF (the outputs).
run_pipe() {
	local case=$1 elf=$2 stage rc peak=0 r
	shift 2
	local d="$T_OUT/$case"
	rm -rf "$d" && mkdir -p "$d/extract" "$d/merge" "$d/emit"
	P_STAGE=none P_RC=0 P_ERR="" P_DIR=""
	P_CUS="$d/extract/$case.cus" P_GRAPH="$d/merge/$case.graph" P_BTF="$d/emit/$case.btf"
	for stage in extract merge emit; do
		case $stage in
		extract) limited "$d/$stage.rss" "$EXTRACT" -o "$P_CUS" "$elf" ;;
		merge) limited "$d/$stage.rss" "$MERGE" -o "$P_GRAPH" "$P_CUS" ;;
		emit) limited "$d/$stage.rss" "$EMIT" --elf "$elf" "$@" -o "$P_BTF" "$P_GRAPH" ;;
		esac >"$d/$stage.out" 2>"$d/$stage.err"
		rc=$?
		r=$(tail -n 1 "$d/$stage.rss" 2>/dev/null)
		case $r in '' | *[!0-9]*) ;; *) [ "$r" -gt "$peak" ] && peak=$r ;; esac
		if [ "$rc" -ne 0 ] || grep -qE 'Sanitizer|runtime error:' "$d/$stage.err"; then
			P_STAGE=$stage P_RC=$rc P_ERR="$d/$stage.err" P_DIR="$d/$stage"
			break
		fi
	done
	local bound="60 s"
	[ "$asan" = 0 ] && bound="$bound, ulimit -v $((MEM_KB / 1024 / 1024)) GiB"
	[ -n "$TIME" ] && bound="$bound, peak RSS $((peak / 1024)) MiB <= $((RSS_MAX_KB / 1024 / 1024)) GiB"
	if [ "$P_STAGE" != none ] && { [ "$P_RC" -gt 5 ] || [ "$P_RC" -eq 0 ] ||
		grep -qE 'Sanitizer|runtime error:' "$P_ERR"; }; then
		not_ok "$case: no crash, hang or sanitizer report ($bound)" \
			"$P_STAGE: $(describe_rc "$P_RC"); stderr: $(head -c 2000 "$P_ERR")"
	elif [ "$peak" -gt "$RSS_MAX_KB" ]; then
		not_ok "$case: no crash, hang or sanitizer report ($bound)" "peak RSS $peak kB"
	else
		ok "$case: no crash, hang or sanitizer report ($bound)"
	fi
}

# check_refused CASE ERE WHY-SUCCESS-IS-WRONG: the run of run_pipe was
# refused cleanly: exit 1, one `btfpipe: FILE: error:` line naming the case's
# file and matching ERE (case-insensitive), nothing left in the output
# directory of the stage that refused.
check_refused() {
	local case=$1 ere=$2 why=$3
	if [ "$P_STAGE" = none ]; then
		not_ok "$case: refused (exit 1)" "every stage exited 0: $why"
		return
	fi
	if [ "$P_RC" -eq 1 ]; then ok "$case: $P_STAGE refuses it (exit 1)"; else
		not_ok "$case: $P_STAGE refuses it (exit 1)" "$(describe_rc "$P_RC"): $(head -c 1500 "$P_ERR")"
	fi
	local lines
	lines=$(wc -l <"$P_ERR")
	if [ "$lines" -eq 1 ] && grep -Eq "^btfpipe: [^ ]*${case}[^ ]*: error: " "$P_ERR" &&
		grep -Eiq -- "$ere" "$P_ERR"; then
		ok "$case: one 'btfpipe: FILE: error:' line naming the file and saying /$ere/"
	else
		not_ok "$case: one 'btfpipe: FILE: error:' line naming the file and saying /$ere/" \
			"$lines lines: $(head -c 1500 "$P_ERR")"
	fi
	if [ -z "$(ls -A "$P_DIR")" ]; then ok "$case: no output and no temp file left by $P_STAGE"; else
		not_ok "$case: no output and no temp file left by $P_STAGE" "$(ls -lA "$P_DIR")"
	fi
}

# btf_header KIND FILE: the name, size and vlen of the first type of KIND
# (a BTF_KIND_* number) in raw BTF FILE, read by hand: for a file libbpf
# refuses, this says why.
btf_header() {
	python3 - "$1" "$2" <<'PY' 2>&1
import struct, sys
want, b = int(sys.argv[1]), open(sys.argv[2], "rb").read()
hl, = struct.unpack_from("<I", b, 4)
toff, tlen, soff, slen = struct.unpack_from("<IIII", b, 8)
p, end, tid = hl + toff, hl + toff + tlen, 1
extra = {1: lambda v: 4, 2: lambda v: 0, 3: lambda v: 12, 4: lambda v: 12 * v, 5: lambda v: 12 * v,
         6: lambda v: 8 * v, 13: lambda v: 8 * v, 14: lambda v: 4, 15: lambda v: 12 * v,
         17: lambda v: 4, 19: lambda v: 12 * v}
while p + 12 <= end:
    name, info, size = struct.unpack_from("<III", b, p)
    kind, vlen = (info >> 24) & 0x1f, info & 0xffff
    if kind == want:
        s = hl + soff + name
        print("BTF type [%d]: kind %d '%s' size=%d vlen=%d (info 0x%08x), then %d bytes of types to go"
              % (tid, kind, b[s:b.index(b"\0", s)].decode(), size, vlen, info, end - p - 12))
        break
    p += 12 + extra.get(kind, lambda v: 0)(vlen)
    tid += 1
PY
}

# kernel_verdict FILE: what the running kernel's BTF checker says of FILE
# (btfcheck --load), one line, for failure messages; "not asked" when the
# kernel refuses bpf() itself.
kernel_verdict() {
	local out rc
	out=$("$BTFCHECK" --load "$1" 2>&1)
	rc=$?
	case $rc in
	0) echo "the kernel loads it" ;;
	77) echo "the kernel was not asked (bpf() unavailable)" ;;
	*) echo "the kernel refuses it: $(echo "$out" | grep -B2 -e '-- END BTF LOAD LOG' | grep -v -e '-- END' | grep . | tail -n 1)" ;;
	esac
}

# btf_dump CASE [KIND]: bpftool's dump of P_BTF into $T_OUT/CASE/btf.txt; the
# check that libbpf (btfcheck) parses it. Returns 1 when it does not. KIND
# (a BTF_KIND_* number): the type whose header to show when libbpf refuses.
btf_dump() {
	local case=$1 kind=${2:-} out
	if out=$("$BTFCHECK" "$P_BTF" 2>&1); then
		ok "$case: libbpf parses the BTF"
	else
		[ -n "$kind" ] && out="$out
$(btf_header "$kind" "$P_BTF")"
		not_ok "$case: libbpf parses the BTF" "$out"
		return 1
	fi
	if ! bpftool btf dump file "$P_BTF" >"$T_OUT/$case/btf.txt" 2>"$T_OUT/$case/btf.err"; then
		not_ok "$case: bpftool dumps the BTF" "$(head -c 1500 "$T_OUT/$case/btf.err")"
		return 1
	fi
}

# --- wide-struct, wide-enum, wide-datasec: 70,000 or 100,000 members --------------
python3 - "$IN" <<'PY'
import os, sys
d = sys.argv[1]
with open(os.path.join(d, "wide-struct.c"), "w") as f:
    f.write("struct big {\n" + "".join("\tint m%d;\n" % i for i in range(70000)) + "};\nstruct big g_big;\n")
with open(os.path.join(d, "wide-enum.c"), "w") as f:
    f.write("enum huge {\n" + "".join("\tH%d,\n" % i for i in range(100000)) + "};\nenum huge g_huge;\n")
with open(os.path.join(d, "wide-datasec.c"), "w") as f:
    f.write("".join("int v%d;\n" % i for i in range(70000)))
PY
# wide_case CASE KIND NAME N: KIND 'NAME' (bpftool's words: STRUCT 'big') has
# N members in the source.
wide_case() {
	local case=$1 kind=$2 name=$3 n=$4 opts=()
	if ! out=$("$GCC" -g -O0 -c -o "$IN/$case.o" "$IN/$case.c" 2>&1); then
		not_ok "$case: build" "$out"
		return
	fi
	[ "$kind" = DATASEC ] && opts=(--features "default,global_var")
	run_pipe "$case" "$IN/$case.o" "${opts[@]}" --skip-report "$T_OUT/$case-skips.txt"
	# What extract and merge wrote must still say N (their formats can).
	local want_cus want_graph
	case $kind in
	STRUCT) want_cus="struct \"big\" size=$((4 * n)) members=$n" want_graph=$want_cus ;;
	ENUM) want_cus="enum \"huge\" size=4 .*values=$n" want_graph=$want_cus ;;
	DATASEC) want_cus="var \"v$((n - 1))\" " want_graph=" vars=$n( |\$)" ;;
	esac
	if [ "$P_STAGE" != extract ]; then
		"$EXTRACT" --dump "$P_CUS" >"$T_OUT/$case/cus.txt" 2>&1
		check_grep "$case: the .cus keeps all $n" "$want_cus" "$T_OUT/$case/cus.txt"
	fi
	if [ "$P_STAGE" = none ] || [ "$P_STAGE" = emit ]; then
		"$MERGE" --dump "$P_GRAPH" >"$T_OUT/$case/graph.txt" 2>&1
		check_grep "$case: the .graph keeps all $n" "$want_graph" "$T_OUT/$case/graph.txt"
	fi
	if [ "$P_STAGE" != none ]; then
		check_refused "$case" "$name|$n|65535|member|vlen|too many"
		return
	fi
	# Success: a documented mapping, never a wrapped vlen.
	local kind_nr
	case $kind in STRUCT) kind_nr=4 ;; ENUM) kind_nr=6 ;; DATASEC) kind_nr=15 ;; esac
	btf_dump "$case" "$kind_nr" || return
	local lines bad
	lines=$(grep -E "^\[[0-9]+\] $kind '${name}' " "$T_OUT/$case/btf.txt")
	if [ "$kind" = DATASEC ]; then
		# One or more DATASECs may hold the variables; together, all of them.
		local nvar
		nvar=$(grep -cE "^\[[0-9]+\] VAR 'v[0-9]+' " "$T_OUT/$case/btf.txt")
		if [ "$nvar" -eq "$n" ]; then ok "$case: all $n VARs are encoded"; else
			check_grep "$case: the VARs left out ($((n - nvar))) are named in --skip-report" \
				"v[0-9]+" "$T_OUT/$case-skips.txt"
		fi
		return
	fi
	bad=$(echo "$lines" | grep -Ev " vlen=(0|$n)\$" | grep .)
	if [ -z "$bad" ]; then ok "$case: $kind $name is not encoded with a wrapped vlen"; else
		not_ok "$case: $kind $name is not encoded with a wrapped vlen" "$bad"
	fi
	if ! echo "$lines" | grep -q " vlen=$n\$"; then
		check_grep "$case: $kind $name, not fully encoded, is named in --skip-report" \
			"$name" "$T_OUT/$case-skips.txt"
	fi
}
wide_case wide-struct STRUCT big 70000
wide_case wide-enum ENUM huge 100000
wide_case wide-datasec DATASEC .bss 70000

# --- huge-array: 2^40 elements ------------------------------------------------------
cat >"$IN/huge-array.c" <<'EOF'
struct big1 { int head; char big[1ULL << 40]; };
struct big2 { int head; char big[1 << 20][1 << 20]; };
typedef char row_t[1 << 20];
struct big3 { int head; row_t rows[1 << 20]; };
struct big1 *g_big1;
struct big2 *g_big2;
struct big3 *g_big3;
EOF
if ! out=$("$GCC" -g -O0 -c -o "$IN/huge-array.o" "$IN/huge-array.c" 2>&1); then
	not_ok "huge-array: build" "$out"
else
	run_pipe huge-array "$IN/huge-array.o" --skip-report "$T_OUT/huge-array-skips.txt"
	if [ "$P_STAGE" != none ]; then
		check_refused huge-array "big[123]|size|2\^?40|1099511627|too (large|big)|32"
	elif btf_dump huge-array; then
		# sizeof(struct bigN) = 2^40 + 4: no 32-bit size holds it.
		bad=$(grep -E "^\[[0-9]+\] STRUCT 'big[123]' size=" "$T_OUT/huge-array/btf.txt" |
			grep -v " size=1099511627780 ")
		if [ -z "$bad" ]; then ok "huge-array: no struct is encoded with a truncated size"; else
			not_ok "huge-array: no struct is encoded with a truncated size" \
				"sizeof is 1099511627780 in the DWARF, the BTF says: $bad
$(kernel_verdict "$P_BTF")"
		fi
		# No array of this source is flexible: nr_elems=0 is 2^40 truncated.
		bad=$(grep -E "^\[[0-9]+\] ARRAY .* nr_elems=0\$" "$T_OUT/huge-array/btf.txt")
		if [ -z "$bad" ]; then ok "huge-array: no array is encoded with a truncated element count"; else
			not_ok "huge-array: no array is encoded with a truncated element count" \
				"char[1ULL << 40] became: $bad"
		fi
		for s in big1 big2 big3; do
			if ! grep -qE "^\[[0-9]+\] STRUCT '$s' " "$T_OUT/huge-array/btf.txt"; then
				check_grep "huge-array: struct $s, left out, is named in --skip-report" "$s" \
					"$T_OUT/huge-array-skips.txt"
			fi
		done
	fi
fi

# --- huge-count: DW_AT_count near 2^64 -----------------------------------------------
# clang writes a count past 2^32 as `.quad N # DW_AT_count`; each sentinel N
# (2^32 + k) becomes the count to try. No compiler takes such a C array.
huge_count() {
	local d="$IN/huge-count" out n c txt bad t
	if ! have "$CLANG"; then
		skip "huge-count" "$CLANG not found (its assembly is what is patched)"
		return
	fi
	mkdir -p "$d"
	cat >"$d/huge-count.c" <<'CSRC'
typedef char n1_t[0x100000001ULL];
typedef char n2_t[0x100000002ULL];
typedef char n3_t[0x100000003ULL];
typedef long n4_t[0x100000004ULL];
struct n5 { int head; long tail[0x100000005ULL]; };
struct ok { int a[4]; };
typedef char b1_t[0x100000000ULL];
typedef char b2_t[0xffffffffULL];
n1_t *g1; n2_t *g2; n3_t *g3; n4_t *g4; struct n5 *g5; struct ok g_ok; b1_t *gb1; b2_t *gb2;
CSRC
	# 2^64-1, 2^64-2, 2^63, 2^61+1 longs (2^64+8 bytes), 2^61 longs (2^64 bytes)
	if ! out=$("$CLANG" -g -O0 -S -o "$d/plain.s" "$d/huge-count.c" 2>&1 &&
		sed -E -e 's/\.quad\t4294967297 /.quad\t18446744073709551615 /' \
			-e 's/\.quad\t4294967298 /.quad\t18446744073709551614 /' \
			-e 's/\.quad\t4294967299 /.quad\t9223372036854775808 /' \
			-e 's/\.quad\t4294967300 /.quad\t2305843009213693953 /' \
			-e 's/\.quad\t4294967301 /.quad\t2305843009213693952 /' "$d/plain.s" >"$d/huge-count.s" &&
		"$CLANG" -c -o "$d/huge-count.o" "$d/huge-count.s" 2>&1); then
		not_ok "huge-count: build" "$out"
		return
	fi
	n=$(diff "$d/plain.s" "$d/huge-count.s" | grep -c '^> .*DW_AT_count')
	if [ "$n" -ne 5 ]; then
		not_ok "huge-count: build" "$n of clang's 5 DW_AT_count lines were patched (its assembly changed?)"
		return
	fi
	run_pipe huge-count "$d/huge-count.o" --skip-report "$T_OUT/huge-count-skips.txt"
	if [ "$P_STAGE" = extract ]; then
		check_refused huge-count "count|element|DIE|too (large|big)" "the .cus format counts in 64 bits"
		return
	fi
	"$EXTRACT" --dump "$P_CUS" >"$T_OUT/huge-count/cus.txt" 2>&1
	for c in 18446744073709551614 9223372036854775808 2305843009213693953 2305843009213693952; do
		check_grep "huge-count: the .cus keeps the count $c" "dims=\[$c\]" "$T_OUT/huge-count/cus.txt"
	done
	if [ "$P_STAGE" != none ]; then
		check_refused huge-count "n[1-5]_t|n5|count|element|4G|too (large|big)" "the .graph format counts in 64 bits"
		return
	fi
	btf_dump huge-count || return
	txt="$T_OUT/huge-count/btf.txt"
	# The arrays this source can have in BTF: ok's int[4], b2_t's 2^32-1
	# (the most nr_elems holds), and n1_t's flexible one (clang's count -1
	# means "no count"); any other is a count cut to 32 bits.
	t=$(awk '/^\[[0-9]+\] TYPEDEF .n1_t. / { sub(/.*type_id=/, ""); print }' "$txt")
	if [ -n "$t" ] && grep -qE "^\[$t\] ARRAY .* nr_elems=0\$" "$txt"; then
		ok "huge-count: count 2^64-1 is a flexible array (nr_elems=0)"
	else
		not_ok "huge-count: count 2^64-1 is a flexible array (nr_elems=0)" "$(grep -A1 n1_t "$txt")"
	fi
	bad=$(grep -E '^\[[0-9]+\] ARRAY ' "$txt" | grep -vE "^\[${t:-x}\] |nr_elems=(4|4294967295)\$")
	if [ -z "$bad" ]; then ok "huge-count: no array is encoded with a truncated or wrapped count"; else
		not_ok "huge-count: no array is encoded with a truncated or wrapped count" "$bad"
	fi
	t=$(awk '/^\[[0-9]+\] TYPEDEF .b2_t. / { sub(/.*type_id=/, ""); print }' "$txt")
	if [ -n "$t" ] && grep -qE "^\[$t\] ARRAY .* nr_elems=4294967295\$" "$txt"; then
		ok "huge-count: count 2^32-1 is encoded as it is"
	else
		not_ok "huge-count: count 2^32-1 is encoded as it is" "$(grep -A1 b2_t "$txt")"
	fi
	# What pahole writes for the same object, for the record (docs/design.md, "BTF mapping").
	if have pahole && cp "$d/huge-count.o" "$d/pahole.o" && pahole -J "$d/pahole.o" >/dev/null 2>&1; then
		echo "info: huge-count: pahole $(pahole --version) writes $(bpftool btf dump file "$d/pahole.o" 2>/dev/null |
			awk '/^\[[0-9]+\] ARRAY / { id = substr($1, 2, length($1) - 2); sub(/.*nr_elems=/, ""); ne[id] = $0 }
			     /^\[[0-9]+\] TYPEDEF .(n[1-4]|b[12])_t. / { k++; name[k] = $3; t = $4; sub(/type_id=/, "", t); to[k] = t }
			     END { for (i = 1; i <= k; i++) printf "%s nr_elems=%s; ", name[i], ne[to[i]] }')"
	fi
	for t in n2_t n3_t n4_t n5 b1_t; do
		if grep -qE "^\[[0-9]+\] [A-Z]+ '$t' " "$txt"; then
			not_ok "huge-count: $t, whose count BTF cannot hold, is left out" "$(grep -E "'$t'" "$txt")"
		else
			check_grep "huge-count: $t, whose count BTF cannot hold, is left out and named in --skip-report" \
				"$t" "$T_OUT/huge-count-skips.txt"
		fi
	done
}
huge_count

# --- nul-str: a string section whose last string has no NUL -------------------------
# patch_last_byte IN OUT SECTION: OUT is IN with SECTION's last byte 'X'.
patch_last_byte() {
	python3 - "$1" "$2" "$3" "$T_TOP/tests/tools" <<'PY'
import sys
src, dst, sec, tools = sys.argv[1:5]
sys.path.insert(0, tools)
import elfsections
raw = bytearray(open(src, "rb").read())
s = elfsections.find(elfsections.parse(raw), sec.encode())
end = s["offset"] + s["size"] - 1
if s["size"] == 0 or raw[end] != 0:
    sys.exit("%s does not end in NUL to begin with" % sec)
raw[end] = ord("X")
open(dst, "wb").write(raw)
PY
}
# Long member names, so that objcopy finds .debug_str worth compressing.
{
	echo "struct point { int x, y; };"
	echo "struct point g_point;"
	echo "struct wide {"
	for i in $(seq 1 40); do echo "	int a_member_name_long_enough_to_go_to_debug_str_$i;"; done
	echo "} g_wide;"
	echo "struct zz_last { long v; } g_last;"
} >"$IN/nul.c"
if ! out=$("$GCC" -g -gdwarf-5 -O0 -c -o "$IN/nul.o" "$IN/nul.c" 2>&1); then
	not_ok "nul-str: build" "$out"
else
	for sec in .debug_str .debug_line_str; do
		c=nul-${sec#.debug_}
		c=${c/_/-}
		if ! out=$(patch_last_byte "$IN/nul.o" "$IN/$c.o" "$sec" 2>&1); then
			not_ok "$c: make the ELF" "$out"
			continue
		fi
		run_pipe "$c" "$IN/$c.o" --features default,global_var
		check_refused "$c" "\\$sec .*NUL" "a name would run on past the section"
		# The same, compressed: libdw decompresses in place, an SHF_COMPRESSED
		# section keeps its name, a GNU one stays .zdebug_*.
		for z in zlib zlib-gnu; do
			want=$sec
			[ "$z" = zlib-gnu ] && want=.z${sec#.}
			if ! out=$(objcopy --compress-debug-sections="$z" "$IN/$c.o" "$IN/$c-$z.o" 2>&1) ||
				! readelf -S "$IN/$c-$z.o" | grep -q -- " \\$want "; then
				not_ok "$c-$z: make the ELF" "objcopy gave no $want section: $out"
				continue
			fi
			run_pipe "$c-$z" "$IN/$c-$z.o" --features default,global_var
			check_refused "$c-$z" "\\$want .*NUL" "a name would run on past the section"
		done
	done
fi

# --- nul-string: DW_FORM_string running to the end of .debug_info ------------------
# One DWARF 5 unit: the CU, an int, and a base type whose name (the DIE's
# last attribute) has no NUL before the unit, and the section, end.
cat >"$IN/nul-string.s" <<'ASM'
	.section .debug_abbrev,"",@progbits
.Labbrev:
	.uleb128 1		# the CU: language, name (string)
	.uleb128 0x11
	.byte 1
	.uleb128 0x13
	.uleb128 0x0b
	.uleb128 0x03
	.uleb128 0x08
	.byte 0, 0
	.uleb128 2		# a base type: byte size, encoding, name (string)
	.uleb128 0x24
	.byte 0
	.uleb128 0x0b
	.uleb128 0x0b
	.uleb128 0x3e
	.uleb128 0x0b
	.uleb128 0x03
	.uleb128 0x08
	.byte 0, 0
	.byte 0
	.section .debug_info,"",@progbits
	.long .Lend - .Lstart
.Lstart:
	.short 5
	.byte 1			# DW_UT_compile
	.byte 8
	.long .Labbrev
	.uleb128 1
	.byte 0x0c		# DW_LANG_C99
	.string "nul-string.c"
	.uleb128 2		# DIE 0x1b
	.byte 4
	.byte 5
	.string "int"
	.uleb128 2		# DIE 0x22
	.byte 8
	.byte 7
	.ascii "unterminated"
.Lend:
ASM
if ! out=$(as -o "$IN/nul-string.o" "$IN/nul-string.s" 2>&1); then
	not_ok "nul-string: build" "$out"
else
	run_pipe nul-string "$IN/nul-string.o"
	check_refused nul-string "CU at 0x0.*DIE 0x22" "the name has no end inside its unit"
fi

# --- many-sections: 70,000+ sections ------------------------------------------------
# Fillers first, so the DWARF'd functions and variables of the small C file
# land in sections past SHN_LORESERVE (their symbols use SHT_SYMTAB_SHNDX).
ms="$IN/many-sections"
cat >"$ms-small.c" <<'EOF'
struct pt { int x, y; };
struct pt g_pt = { 1, 2 };
int g_counter;
int pt_sum(struct pt *p) { return p->x + p->y + g_counter; }
long pt_scale(struct pt *p, long k) { return (p->x + g_pt.y) * k; }
EOF
python3 - "$ms-fill.s" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(70000):
        f.write('\t.section .text.fill%d,"ax",@progbits\n\t.globl fill%d\n\t.type fill%d, @function\n'
                'fill%d:\n\tret\n' % (i, i, i, i))
PY
if ! out=$("$GCC" -g -O1 -ffunction-sections -fdata-sections -S -o "$ms-small.s" "$ms-small.c" 2>&1 &&
	cat "$ms-fill.s" "$ms-small.s" >"$ms.s" && as -o "$ms.o" "$ms.s" 2>&1); then
	not_ok "many-sections: build" "$out"
else
	nsec=$(readelf -h "$ms.o" | sed -n 's/.*Number of section headers: *0 (\([0-9]*\))/\1/p')
	if [ "${nsec:-0}" -gt 70000 ]; then ok "many-sections: the .o has $nsec sections (e_shnum 0, SHN_XINDEX)"; else
		not_ok "many-sections: the .o has more than 70,000 sections" "$(readelf -h "$ms.o" | grep -i section)"
	fi
	run_pipe many-sections "$ms.o" --features default,global_var
	if [ "$P_STAGE" != none ]; then
		not_ok "many-sections: every stage succeeds" "$P_STAGE: $(describe_rc "$P_RC"): $(head -c 1500 "$P_ERR")"
	else
		ok "many-sections: every stage succeeds"
		# The section index of each symbol, as readelf reads it, in the .cus.
		"$EXTRACT" --dump "$P_CUS" >"$T_OUT/many-sections/cus.txt" 2>&1
		readelf -sW "$ms.o" >"$T_OUT/many-sections/syms.txt"
		for sym in g_pt g_counter pt_sum pt_scale; do
			ndx=$(awk -v s="$sym" '$8 == s { print $7 }' "$T_OUT/many-sections/syms.txt")
			check_grep "many-sections: $sym's section index in the .cus is readelf's ($ndx)" \
				"\"$sym\" .*shndx=$ndx( |\$)" "$T_OUT/many-sections/cus.txt"
		done
		if btf_dump many-sections; then
			for f in pt_sum pt_scale; do
				check_grep "many-sections: FUNC $f is encoded" "^\[[0-9]+\] FUNC '$f' " \
					"$T_OUT/many-sections/btf.txt"
			done
			for v in g_pt:.data.g_pt g_counter:.bss.g_counter; do
				if grep -A1 -E "^\[[0-9]+\] DATASEC '${v#*:}' " "$T_OUT/many-sections/btf.txt" |
					grep -q "(VAR '${v%%:*}')"; then
					ok "many-sections: VAR ${v%%:*} is in DATASEC ${v#*:} (a section index above 65535)"
				else
					not_ok "many-sections: VAR ${v%%:*} is in DATASEC ${v#*:}" \
						"$(grep -A1 DATASEC "$T_OUT/many-sections/btf.txt")"
				fi
			done
		fi
		# --elf-out over a copy of the .o: written right, or refused cleanly.
		eo="$T_OUT/many-sections/elf-out"
		mkdir -p "$eo" && cp "$ms.o" "$eo/many-sections.o"
		limited "$eo.rss" "$EMIT" --elf "$eo/many-sections.o" --elf-out "$eo/many-sections.o" \
			"$P_GRAPH" >/dev/null 2>"$eo.err"
		rc=$?
		if [ "$rc" -eq 0 ]; then
			ok "many-sections: btf-emit --elf-out writes the ELF (exit 0)"
			n2=$(readelf -h "$eo/many-sections.o" | sed -n 's/.*Number of section headers: *0 (\([0-9]*\))/\1/p')
			if [ "${n2:-0}" -eq $((nsec + 1)) ] && readelf -SW "$eo/many-sections.o" | grep -q ' \.BTF '; then
				ok "many-sections: --elf-out adds .BTF as section $nsec and keeps the others"
			else
				not_ok "many-sections: --elf-out adds .BTF as section $nsec and keeps the others" \
					"$(readelf -h "$eo/many-sections.o" 2>&1 | grep -i section)"
			fi
			check "many-sections: libbpf parses the .BTF of the written ELF" "$BTFCHECK" "$eo/many-sections.o"
		elif [ "$rc" -eq 1 ]; then
			ok "many-sections: btf-emit --elf-out refuses it (exit 1)"
			echo "info: many-sections: --elf-out refused: $(cat "$eo.err")"
			if [ "$(wc -l <"$eo.err")" -eq 1 ] && grep -q '^btfpipe: [^ ]*many-sections[^ ]*: error: ' "$eo.err"; then
				ok "many-sections: --elf-out: one 'btfpipe: FILE: error:' line naming the file"
			else
				not_ok "many-sections: --elf-out: one 'btfpipe: FILE: error:' line naming the file" "$(cat "$eo.err")"
			fi
			check_same "many-sections: --elf-out refused: the ELF is left byte-identical" "$ms.o" "$eo/many-sections.o"
			if [ "$(ls -A "$eo")" = many-sections.o ]; then ok "many-sections: --elf-out refused: no temp file left"; else
				not_ok "many-sections: --elf-out refused: no temp file left" "$(ls -lA "$eo")"
			fi
		else
			not_ok "many-sections: btf-emit --elf-out writes the ELF or refuses it (exit 0 or 1)" \
				"$(describe_rc "$rc"): $(head -c 1500 "$eo.err")"
		fi
	fi
fi

# --- many-sections-linked: a program that keeps 70,000+ sections ------------------
# The same objects linked with ld --unique, so every .text.fillN, .data.* and
# .bss.* stays its own output section (e_shnum 0, e_shstrndx SHN_XINDEX in
# an executable, not only in a .o), against the same C built without
# -ffunction-sections -fdata-sections and linked plainly. The BTF must be
# the same bytes (the fillers have no DWARF, and nothing is removed without
# --gc-sections); with global_var, the same VARs, each in the DATASEC of its
# own section there (.data.g_pt) and of .data/.bss here. Debian's pahole
# 1.24 did not finish on this program in 120 s (pahole master does): run
# here with a 20 s limit and only said, as its time is not ours to test.
if [ -e "$ms.o" ]; then
	printf '%s\n' 'struct pt;' 'int pt_sum(struct pt *p);' 'extern struct pt g_pt;' \
		'int main(void) { return pt_sum(&g_pt); }' >"$ms-main.c"
	if ! out=$("$GCC" -g -O1 -c -o "$ms-main.o" "$ms-main.c" 2>&1 &&
		"$GCC" -o "$ms-linked" "$ms.o" "$ms-main.o" -Wl,--unique='.text.*' -Wl,--unique='.data.*' \
			-Wl,--unique='.bss.*' 2>&1 &&
		"$GCC" -g -O1 -o "$ms-plain" "$ms-small.c" "$ms-main.c" 2>&1); then
		not_ok "many-sections-linked: build" "$out"
	else
		nsec=$(readelf -h "$ms-linked" | sed -n 's/.*Number of section headers: *0 (\([0-9]*\))/\1/p')
		if [ "${nsec:-0}" -gt 70000 ] && readelf -h "$ms-linked" | grep -qE 'Type: *(EXEC|DYN)'; then
			ok "many-sections-linked: the program has $nsec sections (e_shnum 0, SHN_XINDEX)"
		else
			not_ok "many-sections-linked: a linked program with more than 70,000 sections" \
				"$(readelf -h "$ms-linked" | grep -iE 'type|section')"
		fi
		for feats in default default,global_var; do
			run_pipe many-sections-plain "$ms-plain" --features "$feats"
			cp "$P_BTF" "$T_OUT/plain.btf" 2>/dev/null
			run_pipe many-sections-linked "$ms-linked" --features "$feats"
			if [ "$P_STAGE" != none ]; then
				not_ok "many-sections-linked ($feats): every stage succeeds" \
					"$P_STAGE: $(describe_rc "$P_RC"): $(head -c 1500 "$P_ERR")"
				continue
			fi
			ok "many-sections-linked ($feats): every stage succeeds"
			if [ "$feats" = default ]; then
				check_same "many-sections-linked: the same BTF as the plain build" "$T_OUT/plain.btf" "$P_BTF"
			else
				btf_dump many-sections-linked || continue
				bpftool btf dump file "$T_OUT/plain.btf" >"$T_OUT/plain.txt"
				if diff <(grep -v DATASEC "$T_OUT/plain.txt" | grep -v '^	type_id=') \
					<(grep -v DATASEC "$T_OUT/many-sections-linked/btf.txt" | grep -v '^	type_id=') >/dev/null; then
					ok "many-sections-linked (global_var): the same types, functions and VARs as the plain build"
				else
					not_ok "many-sections-linked (global_var): the same types, functions and VARs as the plain build" \
						"$(diff "$T_OUT/plain.txt" "$T_OUT/many-sections-linked/btf.txt" | head -20)"
				fi
				check_grep "many-sections-linked: VAR g_pt in DATASEC .data.g_pt, its own section" \
					"\\(VAR 'g_pt'\\)" <(grep -A1 "DATASEC '.data.g_pt'" "$T_OUT/many-sections-linked/btf.txt")
			fi
		done
		if have pahole; then
			cp "$ms-linked" "$T_OUT/pahole-linked"
			timeout 20 pahole -J "$T_OUT/pahole-linked" >/dev/null 2>&1
			rc=$?
			if [ "$rc" = 0 ]; then
				echo "info: many-sections-linked: pahole $(pahole --version) finished"
			else
				echo "info: many-sections-linked: pahole $(pahole --version) did not finish in 20 s (exit $rc); btfpipe did"
			fi
		fi
	fi
fi

# --- ref-*: patched DWARF references -------------------------------------------------
# patch-ref.py IN OUT FROM TO TOOLS: copy IN to OUT with the DW_AT_type (DW_FORM_ref4)
# of DIE FROM pointing at TO. FROM: "tag:name" (typedef:myint, member:a).
# TO: "tag:name" (a DIE's offset), "tag:name+N" (N bytes into that DIE),
# "end+N" (N bytes past the end of the CU), "cu+N" (CU offset N), or a hex
# offset. TOOLS: tests/tools, for elfsections.py. Prints the patched DIE's
# offset; checks with llvm-dwarfdump that the reference now reads TO, and
# exits 1 (with a message) when it cannot.
cat >"$T_OUT/patch-ref.py" <<'PY'
import re, struct, subprocess, sys
src, dst, frm, to, tools = sys.argv[1:6]
sys.path.insert(0, tools)
import elfsections  # tests/tools/elfsections.py: the section headers

def dump(path):
    out = subprocess.run(["llvm-dwarfdump-19", "--debug-info", path], capture_output=True, text=True).stdout
    dies, cu, cu_end, tag = [], 0, 0, None
    for line in out.splitlines():
        m = re.match(r"0x([0-9a-f]+): Compile Unit: .*next unit at 0x([0-9a-f]+)", line)
        if m:
            cu, cu_end = int(m.group(1), 16), int(m.group(2), 16)
            continue
        m = re.match(r"0x([0-9a-f]+):\s+(DW_TAG_(\w+)|NULL)", line)
        if m:
            dies.append(dict(off=int(m.group(1), 16), cu=cu, cu_end=cu_end, tag=m.group(3), name=None, type=None))
            continue
        m = re.match(r'\s+DW_AT_name\s+\("(.*)"\)', line)
        if m and dies:
            dies[-1]["name"] = m.group(1)
        m = re.match(r"\s+DW_AT_type\s+\(0x([0-9a-f]+)", line)
        if m and dies:
            dies[-1]["type"] = int(m.group(1), 16)
    return dies

tags = {"typedef": "typedef", "member": "member", "struct": "structure_type", "const": "const_type"}
def find(dies, sel):
    tag, name = sel.split(":")
    for d in dies:
        if d["tag"] == tags[tag] and d["name"] == name:
            return d
    sys.exit("patch-ref: no DIE %s" % sel)

dies = dump(src)
d = find(dies, frm)
if to.startswith("end+"):
    target = d["cu_end"] + int(to[4:], 0)
elif to.startswith("cu+"):
    target = d["cu"] + int(to[3:], 0)
elif ":" in to:
    sel, _, plus = to.partition("+")
    target = find(dies, sel)["off"] + int(plus or "0", 0)
else:
    target = int(to, 16)

b = bytearray(open(src, "rb").read())
info = elfsections.find(elfsections.parse(b), ".debug_info")["offset"]
# The ref4 bytes: the last occurrence of the old CU-relative value inside
# the DIE (DW_AT_type is the last attribute gcc gives these DIEs).
nxt = min(x["off"] for x in dies if x["off"] > d["off"])
old = struct.pack("<I", d["type"] - d["cu"])
pos = bytes(b[info + d["off"]:info + nxt]).rfind(old)
if pos < 0:
    sys.exit("patch-ref: DW_AT_type of %s is not a ref4" % frm)
struct.pack_into("<I", b, info + d["off"] + pos, (target - d["cu"]) & 0xffffffff)
open(dst, "wb").write(b)
got = next(x for x in dump(dst) if x["off"] == d["off"])["type"]
if got != target:
    sys.exit("patch-ref: %s now refers to %s, wanted 0x%x" % (frm, got, target))
print("0x%x" % d["off"])
PY
cat >"$IN/ref.c" <<'EOF'
typedef int myint;
typedef myint myint2;
typedef const myint2 cmyint;
struct holder { myint a; myint2 b; cmyint c; };
struct holder g_holder;
int main(void) { return g_holder.a; }
EOF
if ! out=$("$GCC" -g -gdwarf-5 -O0 -o "$IN/ref" "$IN/ref.c" 2>&1); then
	not_ok "ref: build" "$out"
else
	# CASE<TAB>FROM<TAB>TO<TAB>EXPECT (cycle: refused; dangling: refused naming
	# the CU and the DIE; lenient: no crash, and libbpf parses any BTF).
	while IFS=$'\t' read -r case from to expect; do
		if ! die=$(python3 "$T_OUT/patch-ref.py" "$IN/ref" "$IN/$case" "$from" "$to" "$T_TOP/tests/tools" 2>&1); then
			not_ok "$case: patch $from -> $to" "$die"
			continue
		fi
		run_pipe "$case" "$IN/$case"
		why="the BTF was written"
		if [ "$P_STAGE" = none ]; then
			why="$why: $(bpftool btf dump file "$P_BTF" 2>&1 | head -n 8 | tr '\n' ';')"
			why="$why; $(kernel_verdict "$P_BTF")"
		fi
		case $expect in
		cycle) check_refused "$case" "cycle|loop|circular|myint|DIE|0x[0-9a-f]+" "$why" ;;
		dangling) check_refused "$case" "CU.*DIE $die|DIE $die.*CU" "$why" ;;
		dangling-any) check_refused "$case" "CU.*DIE 0x|DIE 0x.*CU" "$why" ;;
		lenient)
			if [ "$P_STAGE" = none ]; then btf_dump "$case"; else check_refused "$case" "." ""; fi ;;
		esac
	done <<'ROWS'
ref-typedef-self	typedef:myint	typedef:myint	cycle
ref-typedef-pair	typedef:myint	typedef:myint2	cycle
ref-typedef-const	typedef:myint	typedef:cmyint	cycle
ref-past-cu	member:a	end+0x40	dangling
ref-far	member:a	7ffffff0	dangling
ref-into-die	member:a	typedef:myint+2	dangling-any
ref-unit-header	member:a	cu+0	dangling
ref-to-member	member:a	member:b	lenient
ROWS
fi

# --- deep-N: N levels of typedef'd pointer-to-pointer -------------------------------------
# clang compiles these in a blink (gcc takes seconds per 10,000 typedefs, so it
# is the fallback for 10,000 only); clang's own parser recurses once per
# level, so it gets an unlimited stack for 100,000.
deep_case() {
	local n=$1 case="deep-$1" cc
	python3 - "$IN/$case.c" "$n" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("struct leaf { int v; };\ntypedef struct leaf *t0;\n")
    f.write("".join("typedef t%d *t%d;\n" % (i - 1, i) for i in range(1, n + 1)))
    f.write("struct deep { t%d p; int tail; };\nstruct deep g_deep;\n" % n)
PY
	if have "$CLANG"; then cc=$CLANG; elif [ "$n" -le 10000 ]; then cc=$GCC; else
		skip "$case" "$CLANG not found (gcc would take minutes)"
		return
	fi
	if ! out=$( (ulimit -s unlimited 2>/dev/null; "$cc" -g -O0 -c -o "$IN/$case.o" "$IN/$case.c") 2>&1); then
		if [ "$n" -gt 10000 ]; then skip "$case" "$(basename "$cc") cannot compile it: $(echo "$out" | head -n 1)"; else
			not_ok "$case: build with $(basename "$cc")" "$out"; fi
		return
	fi
	run_pipe "$case" "$IN/$case.o"
	if [ "$P_STAGE" != none ]; then
		not_ok "$case: every stage succeeds" "$P_STAGE: $(describe_rc "$P_RC"): $(head -c 1500 "$P_ERR")"
		return
	fi
	ok "$case: every stage succeeds"
	btf_dump "$case" || return
	# Walk the chain from struct deep's member p down to struct leaf.
	if out=$(python3 - "$T_OUT/$case/btf.txt" "$n" <<'PY'
import re, sys
path, n = sys.argv[1], int(sys.argv[2])
types, cur = {}, None
for line in open(path):
    m = re.match(r"\[(\d+)\] (\w+) '([^']*)'(.*)", line)
    if m:
        cur = int(m.group(1))
        types[cur] = dict(kind=m.group(2), name=m.group(3), rest=m.group(4), members=[])
    elif cur is not None:
        m = re.match(r"\s+'(\w+)' type_id=(\d+)", line)
        if m:
            types[cur]["members"].append((m.group(1), int(m.group(2))))
deep = [t for t in types.values() if t["kind"] == "STRUCT" and t["name"] == "deep"]
if len(deep) != 1:
    sys.exit("%d STRUCT 'deep'" % len(deep))
tid = dict(deep[0]["members"]).get("p")
ref = lambda t: int(re.search(r"type_id=(\d+)", t["rest"]).group(1))
for k in range(n, -1, -1):
    t = types.get(tid)
    if not t or t["kind"] != "TYPEDEF" or t["name"] != "t%d" % k:
        sys.exit("level %d: wanted TYPEDEF 't%d', found %s" % (k, k, t and (t["kind"], t["name"])))
    t = types.get(ref(t))
    if not t or t["kind"] != "PTR":
        sys.exit("level %d: t%d is not a typedef of a PTR: %s" % (k, k, t and t["kind"]))
    tid = ref(t)
t = types.get(tid)
if not t or t["kind"] != "STRUCT" or t["name"] != "leaf":
    sys.exit("the chain ends in %s, not STRUCT 'leaf'" % (t and (t["kind"], t["name"])))
PY
	); then
		ok "$case: the BTF holds all $n levels, from struct deep down to struct leaf"
	else
		not_ok "$case: the BTF holds all $n levels, from struct deep down to struct leaf" "$out"
	fi
	# libbpf's btf__dedup() (--libbpf-dedup over a base) recurses once per
	# level: at 100,000 it overflowed the main thread's stack and btf-emit
	# crashed. Over its own BTF as the base, every type is the base's.
	local split="$T_OUT/$case/emit/split.btf"
	limited "$T_OUT/$case/split.rss" "$EMIT" --btf-base "$P_BTF" --libbpf-dedup -o "$split" "$P_GRAPH" \
		>"$T_OUT/$case/split.out" 2>"$T_OUT/$case/split.err"
	local rc=$?
	if [ "$rc" -eq 0 ] && out=$("$T_BIN/tools/btfcheck" --base "$P_BTF" "$split" 2>&1) &&
		[ "$(echo "$out" | head -n 1)" = "types 0" ]; then
		ok "$case: --libbpf-dedup over its own BTF: exit 0, no type left in the split BTF"
	else
		not_ok "$case: --libbpf-dedup over its own BTF: exit 0, no type left in the split BTF" \
			"$(describe_rc "$rc"): $(head -c 1500 "$T_OUT/$case/split.err") $out"
	fi
}
deep_case 10000
deep_case 100000

# --- dup-info: two sections named .debug_info -------------------------------------------
dup_info() {
	local d="$T_OUT/dup-info"
	build_fixture "$GCC" -O0 5 "$d" sample || { not_ok "dup-info: build the sample"; return; }
	if ! python3 - "$d/sample" "$d/dup.elf" "$T_TOP/tests/tools" <<'PY'
import struct, sys
src, dst, tools = sys.argv[1:4]
sys.path.insert(0, tools)
import elfsections
raw = bytearray(open(src, "rb").read())
secs = elfsections.parse(raw)
names = [x["name"] for x in secs]
if b".debug_info" not in names or b".strtab" not in names:
    sys.exit("no .debug_info or no .strtab")
info, strtab = secs[names.index(b".debug_info")], secs[names.index(b".strtab")]
if names.index(b".strtab") < names.index(b".debug_info") or strtab["size"] < 16:
    sys.exit("no .strtab of 16 bytes or more after .debug_info")
# Its sh_name becomes .debug_info's.
struct.pack_into("<I", raw, strtab["hdr"], struct.unpack_from("<I", raw, info["hdr"])[0])
# One DWARF 5 compile unit (abbrev offset 0) filling the section, then null entries.
at, size = strtab["offset"], strtab["size"]
raw[at:at + size] = struct.pack("<IHBBI", size - 4, 5, 1, 8, 0) + bytes(size - 12)
open(dst, "wb").write(raw)
PY
	then
		not_ok "dup-info: make the ELF" "python3 failed"
		return
	fi
	"$EXTRACT" -q -o "$d/plain.cus" "$d/sample" && "$EXTRACT" -q -o "$d/dup.cus" "$d/dup.elf" \
		2>"$d/dup.err" || { not_ok "dup-info: extract" "$(cat "$d/dup.err")"; return; }
	# All but the first line, the file's identity.
	"$EXTRACT" --dump "$d/plain.cus" | tail -n +2 >"$d/plain.txt"
	"$EXTRACT" --dump "$d/dup.cus" | tail -n +2 >"$d/dup.txt"
	if [ -s "$d/plain.txt" ] && cmp -s "$d/plain.txt" "$d/dup.txt"; then
		ok "dup-info: the units libdw reads, the sample's records ($(wc -l <"$d/plain.txt") lines)"
	else
		not_ok "dup-info: the units libdw reads, the sample's records" \
			"$(wc -l <"$d/plain.txt") against $(wc -l <"$d/dup.txt") lines: $(diff "$d/plain.txt" "$d/dup.txt" | head -5)"
	fi
}
dup_info
test_done
