#!/usr/bin/env bash
# t0875-elf-mismatch: btf-emit refuses an --elf file that is not the one the
# graph was made from (stages/btf-emit/elf_match.c). Its symbol table picks
# the functions and variables: another program's gave BTF of the wrong
# FUNCs and VARs, without a word.
#
# A graph of one input is checked: by the two GNU build ids when both files
# have one; else by e_machine, class and byte order, and by the offsets of
# the .debug_info units against the graph's CUs (the unit headers walked:
# DWARF 4, 5, 64-bit DWARF, big-endian; a dwz alternate file's units passed
# over; the CUs --lang-exclude emptied still counted). A refusal is exit 1,
# one line naming the ELF, the graph, the input it was made from and what
# differs, and nothing written. Accepted: the same
# file, the same program without its build id note or without its DWARF,
# objects with the same units, an ELF without DWARF or with it compressed
# (nothing to compare), a graph of several inputs (any ELF).
. "$(dirname "$0")/lib.sh"

d=$T_OUT
X="$T_BIN/dwarf-extract" M="$T_BIN/dedup-merge" E="$T_BIN/btf-emit"
PM="-fdebug-prefix-map=$T_TOP=/btfpipe"

# graph OUT IN...: OUT from the .cus of each IN, one input per file.
graph() {
	local out=$1 in cus=() err
	shift
	for in in "$@"; do
		"$X" -q -o "$in.cus" "$in" 2>"$out.err" || { not_ok "extract $in" "$(cat "$out.err")"; return 1; }
		cus+=("$in.cus")
	done
	"$M" -q -o "$out" "${cus[@]}" 2>"$out.err" || { not_ok "merge $out" "$(cat "$out.err")"; return 1; }
}

# accepted DESC GRAPH ELF [ARGS...]: exit 0 with the BTF written.
accepted() {
	local desc=$1 g=$2 elf=$3
	shift 3
	rm -f "$d/out.btf"
	"$E" "$@" --elf "$elf" -o "$d/out.btf" "$g" >"$d/last.out" 2>"$d/last.err"
	local rc=$?
	if [ "$rc" = 0 ] && [ -s "$d/out.btf" ]; then ok "$desc"; else
		not_ok "$desc" "exit $rc, wanted 0 and the BTF written: $(cat "$d/last.err")"; fi
}

# refused DESC GRAPH ELF INPUT WHAT [ARGS...]: exit 1, no output, and one
# line "btfpipe: ELF: error: ..." naming the graph, the INPUT it was made
# from and WHAT (a fixed string).
refused() {
	local desc=$1 g=$2 elf=$3 input=$4 what=$5 rc msg
	shift 5
	rm -f "$d/out.btf"
	"$E" "$@" --elf "$elf" -o "$d/out.btf" "$g" >"$d/last.out" 2>"$d/last.err"
	rc=$?
	msg=$(cat "$d/last.err")
	if [ "$rc" = 1 ] && [ "$(wc -l <"$d/last.err")" = 1 ] && [[ $msg == "btfpipe: $elf: error: "* ]] &&
		[[ $msg == *"the graph $g was made from $input"* ]] && [[ $msg == *"$what"* ]] && [ ! -e "$d/out.btf" ]; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc, wanted 1 and one line naming $elf, $g, $input and '$what'$([ -e "$d/out.btf" ] && echo '; out.btf written'): $msg"
	fi
}

build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p'; }

# ---- programs with build ids ----
# p1: the sample (gcc); p2: the merge fixture (clang-19); p1x and p1y: the
# sample again, the same bytes but for the build id the linker was given.
if ! out=$(cd "$T_TOP" &&
	"$GCC" -O2 -g $PM -Wl,--build-id=sha1 -o "$d/p1" tests/fixtures/sample/*.c 2>&1 &&
	"$CLANG" -O1 -g $PM -Wl,--build-id=sha1 -o "$d/p2" tests/fixtures/merge/*.c 2>&1 &&
	"$GCC" -O2 -g $PM -Wl,--build-id=0x0123456789abcdef -o "$d/p1x" tests/fixtures/sample/*.c 2>&1 &&
	"$GCC" -O2 -g $PM -Wl,--build-id=0xfedcba9876543210 -o "$d/p1y" tests/fixtures/sample/*.c 2>&1); then
	not_ok "build the programs" "$out"
	test_done
fi
graph "$d/p1.graph" "$d/p1" && graph "$d/p1x.graph" "$d/p1x" || test_done
id1=$(build_id "$d/p1") id2=$(build_id "$d/p2")
if [ -n "$id1" ] && [ -n "$id2" ] && [ "$id1" != "$id2" ] && [ "$(build_id "$d/p1y")" = fedcba9876543210 ]; then
	ok "construction: p1, p2 and p1y have build ids, p1's and p2's differ"
else
	not_ok "construction: p1, p2 and p1y have build ids" "p1 '$id1', p2 '$id2', p1y '$(build_id "$d/p1y")'"
fi

accepted "the program the graph was made from" "$d/p1.graph" "$d/p1"
cp "$d/out.btf" "$d/p1.btf"
refused "another program (its build id): refused" "$d/p1.graph" "$d/p2" p1 "build id $id2, but the graph $d/p1.graph was made from p1, build id $id1"
refused "the same program rebuilt with another build id: refused" "$d/p1x.graph" "$d/p1y" p1x "build id fedcba9876543210"
# Refused before the cache answers, and with every output.
mkdir -p "$d/cache"
accepted "with --cache: the right pair (stored)" "$d/p1.graph" "$d/p1" --cache "$d/cache"
refused "with --cache: another program is still refused" "$d/p1.graph" "$d/p2" p1 "build id" --cache "$d/cache"
rm -f "$d/copy.elf"
"$E" --elf "$d/p2" --elf-out "$d/copy.elf" "$d/p1.graph" 2>"$d/last.err"
rc=$?
if [ "$rc" = 1 ] && [ ! -e "$d/copy.elf" ]; then ok "--elf-out: refused, nothing written"; else
	not_ok "--elf-out: refused, nothing written" "exit $rc: $(cat "$d/last.err")"; fi
"$E" --elf "$d/p2" --explain f1 "$d/p1.graph" >"$d/last.out" 2>"$d/last.err"
rc=$?
[ "$rc" = 1 ] && ok "--explain: refused" || not_ok "--explain: refused" "exit $rc: $(cat "$d/last.err")"

# The same program without its build id note: the units decide, and agree.
objcopy --remove-section=.note.gnu.build-id "$d/p1" "$d/p1.noid"
if [ -z "$(build_id "$d/p1.noid")" ]; then ok "construction: p1.noid has no build id"; else
	not_ok "construction: p1.noid has no build id" "$(build_id "$d/p1.noid")"; fi
accepted "the program without its build id note: accepted" "$d/p1.graph" "$d/p1.noid"
check_same "... and the BTF is the program's" "$d/p1.btf" "$d/out.btf"
graph "$d/p1.noid.graph" "$d/p1.noid" &&
	accepted "a graph of the program without its build id, --elf the program: accepted" "$d/p1.noid.graph" "$d/p1"
refused "a graph of the program without its build id, --elf another program: refused by the units" \
	"$d/p1.noid.graph" "$d/p2" p1.noid "p1.noid had no build id to compare"
# Without its DWARF (strip -g keeps the build id): the build ids decide.
strip -g -o "$d/p1.nodebug" "$d/p1" && strip -g -o "$d/p2.nodebug" "$d/p2"
accepted "the program stripped of its DWARF (same build id): accepted" "$d/p1.graph" "$d/p1.nodebug"
refused "another program stripped of its DWARF: refused by build id" "$d/p1.graph" "$d/p2.nodebug" p1 "build id $id2"

# ---- programs without build ids ----
if ! out=$(cd "$T_TOP" &&
	"$GCC" -O2 -g $PM -Wl,--build-id=none -o "$d/n1" tests/fixtures/sample/*.c 2>&1 &&
	"$CLANG" -O1 -g $PM -Wl,--build-id=none -o "$d/n2" tests/fixtures/merge/*.c 2>&1); then
	not_ok "build the programs without build ids" "$out"
	test_done
fi
if graph "$d/n1.graph" "$d/n1"; then
	accepted "no build id: the program the graph was made from" "$d/n1.graph" "$d/n1"
	refused "no build id: another program, other units: refused" "$d/n1.graph" "$d/n2" n1 "neither has a build id"
	refused "no build id in the graph's input, --elf with one: refused by the units" "$d/n1.graph" "$d/p2" n1 \
		"n1 had no build id to compare"
	refused "a graph with a build id, --elf without: refused by the units" "$d/p1.graph" "$d/n2" p1 \
		"$d/n2 has no build id to compare"
fi

# ---- relocatable objects (no build id): units joined by ld -r ----
cat >"$d/u1.c" <<'EOF'
struct one { int a; long b; };
struct one one_var;
int one_f(struct one *p) { return p->a + (int)p->b; }
EOF
cat >"$d/u2.c" <<'EOF'
struct two { char name[32]; struct two *next; unsigned flags; };
struct two two_var;
int two_f(struct two *p) { int n = 0; for (; p; p = p->next) n += p->flags; return n; }
EOF
cat >"$d/u3.c" <<'EOF'
enum three { T_A, T_B, T_C };
enum three three_var;
int three_f(enum three t) { return t == T_B; }
EOF
# objs LABEL LD CC FLAGS...: LABEL.u12.o (u1, u2), LABEL.u21.o, LABEL.u123.o,
# and LABEL.again.u12.o (compiled and linked again).
objs() {
	local l=$1 ld=$2 cc=$3 u
	shift 3
	for u in u1 u2 u3; do
		"$cc" "$@" -O1 -c -o "$d/$l.$u.o" "$d/$u.c" || return 1
		"$cc" "$@" -O1 -c -o "$d/$l.again.$u.o" "$d/$u.c" || return 1
	done
	$ld -r -o "$d/$l.u12.o" "$d/$l.u1.o" "$d/$l.u2.o" &&
		$ld -r -o "$d/$l.again.u12.o" "$d/$l.again.u1.o" "$d/$l.again.u2.o" &&
		$ld -r -o "$d/$l.u21.o" "$d/$l.u2.o" "$d/$l.u1.o" &&
		$ld -r -o "$d/$l.u123.o" "$d/$l.u1.o" "$d/$l.u2.o" "$d/$l.u3.o"
}
# units_at OBJ: the unit offsets readelf sees, on one line.
units_at() { readelf --debug-dump=info "$1" 2>/dev/null | sed -n 's/^ *Compilation Unit @ offset \(0x[0-9a-f]*\|0\):.*/\1/p' | tr '\n' ' '; }
n_obj=0
for v in "gcc -gdwarf-5:$GCC -g -gdwarf-5" "gcc -gdwarf-4:$GCC -g -gdwarf-4" "gcc -gdwarf64:$GCC -g -gdwarf64" \
	"clang-19 -gdwarf-5:$CLANG -g -gdwarf-5" "s390x (big-endian):$CLANG --target=s390x-linux-gnu -g"; do
	label=${v%%:*} cmd=(${v#*:}) l=o$((++n_obj))
	ld=ld
	[[ $label == s390x* ]] && ld=ld.lld-19
	if ! have "${cmd[0]}" || ! have "$ld" || ! out=$(objs "$l" "$ld" "${cmd[@]}" 2>&1); then
		skip "$label objects" "cannot build them here: ${out:-no ${cmd[0]} or $ld}"
		continue
	fi
	o="$d/$l"
	a=$(units_at "$o.u12.o") b=$(units_at "$o.u21.o") c=$(units_at "$o.u123.o")
	read -ra b_at <<<"$b"
	if [ -z "$(build_id "$o.u12.o")" ] && [ "$(echo $a | wc -w)" = 2 ] && [ "$(echo $c | wc -w)" = 3 ] && [ "$a" != "$b" ]; then
		ok "$label: construction: no build id; units at $a / $b / $c"
	else
		not_ok "$label: construction: no build id, 2 units in u12 at other offsets than u21's, 3 in u123" \
			"build id '$(build_id "$o.u12.o")'; u12 $a; u21 $b; u123 $c"
		continue
	fi
	graph "$o.u12.graph" "$o.u12.o" || continue
	accepted "$label: the object the graph was made from" "$o.u12.graph" "$o.u12.o"
	accepted "$label: the same objects, compiled and linked again" "$o.u12.graph" "$o.again.u12.o"
	refused "$label: an object of one more unit: refused" "$o.u12.graph" "$o.u123.o" "$l.u12.o" \
		"3 units in .debug_info, but the graph $o.u12.graph was made from $l.u12.o, which had 2"
	refused "$label: the units in another order: refused" "$o.u12.graph" "$o.u21.o" "$l.u12.o" \
		".debug_info unit 1 starts at offset ${b_at[1]:-?}"
	graph "$o.u123.graph" "$o.u123.o" &&
		refused "$label: an object of one unit less: refused" "$o.u123.graph" "$o.u12.o" "$l.u123.o" \
			"2 units in .debug_info, but the graph $o.u123.graph was made from $l.u123.o, which had 3"
done
x86=$d/o1 be=$d/o5
if [ -s "$be.u12.o" ]; then
	refused "an object for another machine: refused" "$x86.u12.graph" "$be.u12.o" o1.u12.o "an ELF for e_machine 22 (64-bit, big-endian)"
else
	skip "an object for another machine" "no s390x objects"
fi

# --lang-exclude leaves the CUs' records out, never the CUs: still checked.
if "$M" -q --lang-exclude 1,2,12,29 -o "$d/lx.graph" "$x86.u12.o.cus" 2>"$d/lx.err" &&
	"$M" --dump "$d/lx.graph" | grep -q '^btfpipe-graph v3 inputs=1 cus=2 nodes=0 '; then
	accepted "merged with every C CU's language excluded: the object" "$d/lx.graph" "$x86.u12.o"
	refused "merged with every C CU's language excluded: an object of one more unit: refused" "$d/lx.graph" \
		"$x86.u123.o" o1.u12.o "3 units in .debug_info"
else
	not_ok "merge with --lang-exclude of C: 2 CUs, no nodes" "$(cat "$d/lx.err"; "$M" --dump "$d/lx.graph" | head -2)"
fi

# ---- nothing to compare: accepted ----
"$GCC" -O1 -c -o "$d/nodwarf.o" "$d/u3.c"
accepted "an object without DWARF and without build id (as t0730's): not checked" "$x86.u12.graph" "$d/nodwarf.o"
if objcopy --compress-debug-sections=zlib-gabi "$x86.u12.o" "$d/zlib.u12.o" 2>"$d/z.err"; then
	accepted "the object with its .debug_info compressed: not checked" "$x86.u12.graph" "$d/zlib.u12.o"
else
	skip "compressed .debug_info" "objcopy: $(cat "$d/z.err")"
fi
# A graph of several inputs (objects merged): any ELF.
if graph "$d/two.graph" "$x86.u1.o" "$x86.u2.o"; then
	accepted "a graph of two inputs, --elf another program: not checked" "$d/two.graph" "$d/p2"
	accepted "a graph of two inputs, --elf the objects linked: not checked" "$d/two.graph" "$x86.u123.o"
fi

# ---- dwz -m, without build ids: the alternate file's units are passed over ----
if have dwz && (cd "$T_TOP" &&
	"$GCC" -O2 -g $PM -Wl,--build-id=none -o "$d/z1" tests/fixtures/sample/*.c &&
	"$GCC" -O1 -g $PM -Wl,--build-id=none -o "$d/z2" tests/fixtures/sample/*.c) 2>"$d/dwz.err" &&
	(cd "$d" && dwz -m common.dwz -M common.dwz z1 z2) 2>>"$d/dwz.err" && graph "$d/z1.graph" "$d/z1"; then
	if "$X" --dump "$d/z1.cus" | grep -q '^cu [0-9]* off=0x40000000'; then
		ok "dwz: construction: z1's graph has units of the alternate file"
	else
		not_ok "dwz: construction: z1's graph has units of the alternate file" "$("$X" --dump "$d/z1.cus" | grep '^cu ')"
	fi
	accepted "dwz: the program the graph was made from" "$d/z1.graph" "$d/z1"
	refused "dwz: the other program: refused" "$d/z1.graph" "$d/z2" z1 "neither has a build id"
else
	skip "dwz -m" "no dwz, or it failed: $(cat "$d/dwz.err" 2>/dev/null)"
fi
test_done
