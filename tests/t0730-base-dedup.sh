#!/usr/bin/env bash
# t0730-base-dedup: split BTF keeps only what the base lacks, found by our
# own matcher (stages/btf-emit/base_dedup.c) instead of libbpf's btf__dedup(),
# which hashes the whole base on every module.
#  (a) a struct the base has (holder), and everything on the way to it, comes
#      from the base;
#  (b) our definition of a struct the base only declares (opaque) stays ours,
#      while the base's struct that points to it (holder) is still the base's;
#  (c) our declaration of a struct the base defines (later) is the base's;
#  (d) our definition of an enum the base only declares (mood, a GCC
#      extension) stays ours, with its values;
#  (e) libbpf's own btf__dedup() finds nothing more to take from our output
#      (btfcheck --dedup), and libbpf parses it over the base;
#  (f) what it describes equals what --libbpf-dedup gives (btfcmp --funcs),
#      but for struct holder and the typedef visit_fn that points to it,
#      which libbpf writes again: where we beat it;
#  (g) -j1 and -j2 builds of the module give the same bytes;
#  (h) a hostile base (name offsets outside its strings) is survived;
#  (i) an anonymous union the base has twice but for a typedef member's name
#      (each tracepoint's union { event; handler; } in a vmlinux) is the
#      base's second one; one the base lacks stays ours;
#  (j) a base that is not BTF is refused with what it is instead: an ELF
#      without .BTF, a text file (libbpf says ENOENT and its code 4001);
#  (k) a base that names a type by a second copy of a string, and another by
#      the tail of a longer string (libbpf writes neither, BTF allows both):
#      the same types are the base's as with the plain base;
#  (l) with a cache, where the base's half of the matching is made once and
#      read back (base_index.c), every module above is the same bytes as
#      without one, when the index is made and when it is read;
#  (m) a base in the other byte order, which base_view.c leaves to libbpf:
#      the module is encoded over it, libbpf parses the result over it, and
#      libbpf's dedup took the base's types (the bytes of (f)'s
#      --libbpf-dedup output, in the base's byte order);
#  (n) a big-endian module (s390x) over our little-endian base: its split
#      BTF is big-endian, the base's types are still the base's, and libbpf
#      reads it over the base;
#  (o) a module with nothing to encode (its one function has no symbol in
#      --elf), with and without --libbpf-dedup: an empty split BTF, exit 0
#      (libbpf's btf__add_btf() of no types said ENOMEM: exit 4).
. "$(dirname "$0")/lib.sh"

BTFCMP="$T_TOP/tools/btfcmp.py"
BTFCHECK="$T_BIN/tools/btfcheck"
[ -x "$BTFCHECK" ] || BTFCHECK="$T_TOP/bin/tools/btfcheck"
if ! have bpftool || ! have python3 || [ ! -x "$BTFCHECK" ]; then
	skip "base dedup" "bpftool, python3 or btfcheck missing"
	test_done
fi

D=$T_OUT
cat >"$D/common.h" <<'EOF'
struct opaque;
struct later;
enum mood;
struct holder { struct opaque *o; struct later *l; enum mood *m; long n; };
typedef int (*visit_fn)(struct holder *h, int depth);
struct raw_map { void *fn; int n; };
typedef void (*tp_a)(int);
typedef void (*tp_b)(int);
EOF
cat >"$D/base.c" <<'EOF'
#include "common.h"
struct later { int when; };
struct holder base_holder;
struct later base_later;
visit_fn base_visit;
union { struct raw_map event; tp_a handler; } base_map_a;
union { struct raw_map event; tp_b handler; } base_map_b;
int main(void) { return base_holder.n + base_later.when > 0; }
EOF
cat >"$D/mod.c" <<'EOF'
#include "common.h"
struct opaque { int secret; char pad[12]; };
enum mood { CALM, CROSS = 7 };
struct mod_state { struct holder *h; struct opaque own; enum mood mood; struct later *l; };
struct mod_state mod_state;
typedef void (*tp_c)(int);
union { struct raw_map event; tp_b handler; } mod_map_b;
union { struct raw_map event; tp_c handler; } mod_map_c;
int mod_visit(struct holder *h, int depth) { return h->n + depth + mod_state.own.secret; }
visit_fn mod_visitor = mod_visit;
int mod_calm(struct opaque *o) { return o->secret == CALM; }
EOF
if ! out=$("$GCC" -g -O1 -o "$D/base" "$D/base.c" 2>&1) || ! out=$("$GCC" -g -O1 -c -o "$D/mod.o" "$D/mod.c" 2>&1); then
	not_ok "base dedup: fixtures build" "$out"
	test_done
fi
check "our pipeline encodes the base" "$T_TOP/pipeline.sh" -q -o "$D/base.btf" "$D/base"
for j in 1 2; do
	"$T_BIN/dwarf-extract" -q -j$j -o "$D/mod$j.cus" "$D/mod.o" && "$T_BIN/dedup-merge" -q -j$j -o "$D/mod$j.graph" "$D/mod$j.cus" &&
		"$T_BIN/btf-emit" --btf-base "$D/base.btf" --elf "$D/mod.o" -o "$D/mod$j.btf" "$D/mod$j.graph" ||
		not_ok "module -j$j: extract, merge, emit over the base" "rc $?"
done
check_same "(g) the module's split BTF is the same bytes at -j1 and -j2" "$D/mod1.btf" "$D/mod2.btf"
"$T_BIN/btf-emit" --libbpf-dedup --btf-base "$D/base.btf" --elf "$D/mod.o" -o "$D/lib.btf" "$D/mod1.graph" ||
	not_ok "--libbpf-dedup encodes the module" "rc $?"

bpftool -B "$D/base.btf" btf dump file "$D/mod1.btf" >"$D/mod.txt" 2>&1 || not_ok "bpftool reads the split BTF" "$(cat "$D/mod.txt")"
no_line() { # no_line DESC PATTERN
	if grep -Eq -- "$2" "$D/mod.txt"; then not_ok "$1" "$(cat "$D/mod.txt")"; else ok "$1"; fi
}
no_line "(a) struct holder comes from the base" "STRUCT 'holder'"
no_line "(a) the typedef visit_fn comes from the base" "TYPEDEF 'visit_fn'"
check_grep "(b) our struct opaque (which the base only declares) stays ours" "^\[[0-9]+\] STRUCT 'opaque' size=16 vlen=2" "$D/mod.txt"
no_line "(b) ... and no FWD opaque is written" "FWD 'opaque'"
no_line "(c) our declaration of struct later is the base's definition" "'later'"
check_grep "(d) our enum mood (the base only declares it) stays ours, with its values" "^\[[0-9]+\] ENUM 'mood' .*vlen=2" "$D/mod.txt"
check_grep "(b) struct mod_state is ours, holding our struct opaque" "STRUCT 'mod_state'" "$D/mod.txt"
n=$(grep -c "UNION '(anon)'" "$D/mod.txt")
if [ "$n" = 1 ] && grep -A2 "UNION '(anon)'" "$D/mod.txt" | grep -q "'handler' type_id=" &&
	grep -q "TYPEDEF 'tp_c'" "$D/mod.txt" && ! grep -q "TYPEDEF 'tp_b'" "$D/mod.txt"; then
	ok "(i) of two anonymous unions the base has but for a typedef's name, ours is the second; one it lacks stays ours"
else
	not_ok "(i) of two anonymous unions the base has but for a typedef's name, ours is the second; one it lacks stays ours" \
		"$n anonymous unions: $(cat "$D/mod.txt")"
fi
check "(e) libbpf parses it over the base and btf__dedup() removes nothing more" \
	"$BTFCHECK" --base "$D/base.btf" --dedup "$D/mod1.btf"
# (f) libbpf (and so pahole) writes struct holder again: comparing it with
# the base's, it meets our struct opaque where the base has a declaration,
# and takes the pair for different at its first encounter, and so writes the
# typedef visit_fn that points to holder again too. We take the base's holder
# and visit_fn, which are the same C types; everything else is the same.
bpftool -B "$D/base.btf" btf dump file "$D/lib.btf" >"$D/lib.txt" 2>&1
check_grep "(f) reference: libbpf's dedup writes struct holder again" "STRUCT 'holder'" "$D/lib.txt"
out=$(python3 "$BTFCMP" --funcs --width 0 --ignore-kind-counts ALL --base-a "$D/base.btf" --base-b "$D/base.btf" \
	"$D/mod1.btf" "$D/lib.btf" 2>&1 | grep '^  only-in')
want="  only-in-A *(enum mood)
  only-in-B struct holder size=32 {o: *(struct opaque) @0; l: *(struct later) @64; m: *(enum mood) @128; n: int 'long int' @192}
  only-in-B typedef visit_fn = *(fn((anon): *(struct holder), (anon): int 'int') -> int 'int')"
if [ "$out" = "$want" ]; then
	ok "(f) otherwise the same types and functions as with --libbpf-dedup"
else
	not_ok "(f) otherwise the same types and functions as with --libbpf-dedup" "$out"
fi

# (h) A base BTF that libbpf parses although some of its name offsets point
# outside its strings (found by fuzzing base_dedup.c; a NULL name crashed it):
# the module is still encoded, and libbpf parses the result over that base.
HOSTILE="$T_TOP/tests/fuzz/crashes/fuzz_btf_base-764161fffc2ed174feaa573ce7e94203ccf99859"
"$T_BIN/btf-emit" --btf-base "$HOSTILE" -o "$D/hostile.btf" "$D/mod1.graph" >"$D/hostile.err" 2>&1
rc=$?
if [ $rc -eq 0 ] && "$BTFCHECK" --base "$HOSTILE" "$D/hostile.btf" >>"$D/hostile.err" 2>&1; then
	ok "(h) a base with name offsets outside its strings: encoded, and libbpf parses it"
else
	not_ok "(h) a base with name offsets outside its strings: encoded, and libbpf parses it" "exit $rc: $(cat "$D/hostile.err")"
fi

# (j) Bases that are not BTF: exit 1, and the message says what the file is.
base_refused() { # base_refused DESC FILE WANT
	local out rc
	out=$("$T_BIN/btf-emit" --btf-base "$2" -o "$D/refused.btf" "$D/mod1.graph" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && echo "$out" | grep -q "$3" && [ ! -e "$D/refused.btf" ]; then
		ok "(j) $1: refused, saying \"$3\""
	else
		not_ok "(j) $1: refused, saying \"$3\"" "exit $rc: $out"
	fi
}
base_refused "an ELF without .BTF (the module object)" "$D/mod.o" "an ELF file without a .BTF section"
printf 'not btf\n' >"$D/text.base"
base_refused "a text file" "$D/text.base" "neither raw BTF (magic 0xeB9F) nor an ELF file"

# (k) The base, rewritten: typedef visit_fn's name is a second "visit_fn" at
# the end of the strings, struct holder's the tail of an appended "xholder". The
# module's BTF over it must read the same as over the plain base (bpftool
# prints names, not offsets; the base keeps its type ids).
if python3 - "$D/base.btf" "$D/odd.base" <<'PY'
import struct, sys
raw = bytearray(open(sys.argv[1], 'rb').read())
magic, ver, flags, hlen, toff, tlen, soff, slen = struct.unpack_from('<HBBIIIII', raw, 0)
types, strs = hlen + toff, hlen + soff
extra = {1: 4, 4: 12, 5: 12, 6: 8, 13: 8, 14: 4, 15: 12, 17: 4, 19: 12}
def name(off):
    return raw[strs + off:raw.index(b'\0', strs + off)].decode()
dup, tail = slen, slen + len(b'visit_fn\0') + 1
renamed, p = 0, types
while p < types + tlen:
    noff, info, _ = struct.unpack_from('<III', raw, p)
    kind, vlen = info >> 24 & 0x1f, info & 0xffff
    if (kind, name(noff)) in ((8, 'visit_fn'), (4, 'holder')):
        struct.pack_into('<I', raw, p, dup if kind == 8 else tail)
        renamed += 1
    p += 12 + (extra[kind] * (vlen if kind in (4, 5, 6, 13, 15, 19) else 1) if kind in extra else 0)
if renamed != 2:
    sys.exit('found %d of typedef visit_fn and struct holder' % renamed)
raw += b'visit_fn\0xholder\0'
struct.pack_into('<I', raw, 20, slen + len(b'visit_fn\0xholder\0'))
open(sys.argv[2], 'wb').write(raw)
PY
then
	"$T_BIN/btf-emit" --btf-base "$D/odd.base" --elf "$D/mod.o" -o "$D/odd.btf" "$D/mod1.graph" &&
		bpftool -B "$D/odd.base" btf dump file "$D/odd.btf" >"$D/odd.txt" 2>&1
	check_same "(k) a base naming types by a repeated string and by a string's tail: the same split BTF" \
		"$D/mod.txt" "$D/odd.txt"
else
	not_ok "(k) rewriting the base's names" "python3 failed"
fi

# (l) Each base above through the cache's base index: the first run makes it
# (a miss), the second reads it (a hit); both write what the uncached run
# wrote. --skip-report keeps the whole-output memo from answering instead.
indexed() { # indexed DESC BASE REF ELF-ARGS...
	local desc=$1 base=$2 ref=$3 run h; shift 3
	rm -rf "$D/bicache"
	for run in made read; do
		"$T_BIN/btf-emit" --cache "$D/bicache" --cache-stats --skip-report "$D/bi.skips" --btf-base "$base" "$@" \
			-o "$D/bi.$run.btf" "$D/mod1.graph" 2>"$D/bi.$run.err"
		check_same "(l) $desc, base index $run: the uncached bytes" "$ref" "$D/bi.$run.btf"
	done
	h=$(sed -n 's/.*(base indexes): this run: \([0-9]*\) hits, \([0-9]*\) misses.*/\1 \2/p' "$D/bi.made.err" "$D/bi.read.err" | paste -sd' ')
	if [ "$h" = "0 1 1 0" ]; then ok "(l) $desc: made once (a miss), then read (a hit)"
	else not_ok "(l) $desc: made once (a miss), then read (a hit)" "hits/misses: $h; $(cat "$D/bi.made.err" "$D/bi.read.err")"; fi
}
indexed "the fixture's base" "$D/base.btf" "$D/mod1.btf" --elf "$D/mod.o"
indexed "a hostile base" "$HOSTILE" "$D/hostile.btf"
[ -s "$D/odd.btf" ] && indexed "a base naming types by repeats and tails" "$D/odd.base" "$D/odd.btf" --elf "$D/mod.o"

# (m) The base byte-swapped (every 4-byte field of the header and the types;
# strings stay): read by libbpf, not in place, and still a usable base.
if python3 - "$D/base.btf" "$D/swapped.base" <<'PY'
import struct, sys
raw = bytearray(open(sys.argv[1], 'rb').read())
magic, ver, flags, hlen, toff, tlen, soff, slen = struct.unpack_from('<HBBIIIII', raw, 0)
struct.pack_into('>HBBIIIII', raw, 0, magic, ver, flags, hlen, toff, tlen, soff, slen)
for p in range(hlen + toff, hlen + toff + tlen, 4):
    struct.pack_into('>I', raw, p, struct.unpack_from('<I', raw, p)[0])
open(sys.argv[2], 'wb').write(raw)
PY
then
	"$T_BIN/btf-emit" --btf-base "$D/swapped.base" --elf "$D/mod.o" -o "$D/swapped.btf" "$D/mod1.graph" >"$D/swapped.err" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && "$BTFCHECK" --base "$D/swapped.base" "$D/swapped.btf" >>"$D/swapped.err" 2>&1; then
		ok "(m) a base in the other byte order: encoded, and libbpf parses it over that base"
	else
		not_ok "(m) a base in the other byte order: encoded, and libbpf parses it over that base" "exit $rc: $(cat "$D/swapped.err")"
	fi
	# libbpf writes the split BTF in its base's byte order. Swapped back, it
	# must be --libbpf-dedup's over the plain base: the base's types
	# deduplicated away (before 2026-12-01 nothing was, and every type the
	# base has was written again).
	if out=$(python3 - "$D/swapped.btf" "$D/lib.btf" <<'PY'
import struct, sys
raw = bytearray(open(sys.argv[1], 'rb').read())
want = open(sys.argv[2], 'rb').read()
magic, ver, flags, hlen, toff, tlen, soff, slen = struct.unpack_from('>HBBIIIII', raw, 0)
if magic != 0xeb9f:
    sys.exit("magic %#x: not big-endian BTF" % struct.unpack_from('<H', raw, 0)[0])
struct.pack_into('<HBBIIIII', raw, 0, magic, ver, flags, hlen, toff, tlen, soff, slen)
for p in range(hlen + toff, hlen + toff + tlen, 4):
    struct.pack_into('<I', raw, p, struct.unpack_from('>I', raw, p)[0])
if bytes(raw) != want:
    sys.exit("%d bytes swapped back, %d with --libbpf-dedup over the plain base" % (len(raw), len(want)))
PY
	); then
		ok "(m) over the swapped base, the split BTF is --libbpf-dedup's over the plain base, byte-swapped"
	else
		not_ok "(m) over the swapped base, the split BTF is --libbpf-dedup's over the plain base, byte-swapped" "$out"
	fi
else
	not_ok "(m) byte-swapping the base" "python3 failed"
fi

# (n) A module built for s390x over a base built for this machine, both
# with only what the two targets write alike (int): our matching, then the
# bytes swapped into the module's order.
printf 'struct pt { int x; int y; };\n' >"$D/pt.h"
printf '#include "pt.h"\nstruct pt base_pt;\nint base_f(struct pt *p) { return p->x; }\n' >"$D/ptbase.c"
printf '#include "pt.h"\nstruct mine { struct pt *p; int z; };\nstruct mine mine;\nint mine_f(struct mine *m) { return m->z; }\n' >"$D/be.c"
if have "$CLANG" && "$CLANG" --target=s390x-linux-gnu -g -O1 -c -o "$D/be.o" "$D/be.c" 2>"$D/be.err"; then
	{ "$GCC" -g -O1 -c -o "$D/ptbase.o" "$D/ptbase.c" && "$T_TOP/pipeline.sh" -q -o "$D/ptbase.btf" "$D/ptbase.o" &&
		"$T_BIN/dwarf-extract" -q -o "$D/be.cus" "$D/be.o" && "$T_BIN/dedup-merge" -q -o "$D/be.graph" "$D/be.cus" &&
		"$T_BIN/btf-emit" --btf-base "$D/ptbase.btf" --elf "$D/be.o" -o "$D/be.btf" "$D/be.graph"; } 2>>"$D/be.err" ||
		not_ok "(n) s390x module: base, extract, merge, emit over the base" "$(cat "$D/be.err")"
	magic=$(od -An -tx1 -N2 "$D/be.btf" | tr -d ' ')
	bpftool -B "$D/ptbase.btf" btf dump file "$D/be.btf" >"$D/be.txt" 2>&1
	if [ "$magic" = eb9f ] && grep -q "STRUCT 'mine'" "$D/be.txt" && ! grep -q "STRUCT 'pt'" "$D/be.txt" &&
		"$BTFCHECK" --base "$D/ptbase.btf" "$D/be.btf" >>"$D/be.err" 2>&1; then
		ok "(n) s390x module over our base: big-endian split BTF, struct pt the base's, libbpf reads it"
	else
		not_ok "(n) s390x module over our base: big-endian split BTF, struct pt the base's, libbpf reads it" \
			"magic $magic; $(cat "$D/be.txt" "$D/be.err")"
	fi
else
	skip "(n) s390x module" "$CLANG cannot build for s390x-linux-gnu"
fi

# (o) Nothing to encode: f's DWARF, and an --elf without the symbol f.
printf 'void f(void) {}\n' >"$D/nothing.c"
printf 'int g;\n' >"$D/nosym.c"
if "$GCC" -g -O1 -c -o "$D/nothing.o" "$D/nothing.c" && "$GCC" -O1 -c -o "$D/nosym.o" "$D/nosym.c" &&
	"$T_BIN/dwarf-extract" -q -o "$D/nothing.cus" "$D/nothing.o" &&
	"$T_BIN/dedup-merge" -q -o "$D/nothing.graph" "$D/nothing.cus"; then
	for how in own --libbpf-dedup; do
		args=()
		[ "$how" = own ] || args=("$how")
		"$T_BIN/btf-emit" "${args[@]}" --btf-base "$D/base.btf" --elf "$D/nosym.o" -o "$D/nothing$how.btf" \
			"$D/nothing.graph" >"$D/nothing.err" 2>&1
		rc=$?
		out=$("$BTFCHECK" --base "$D/base.btf" "$D/nothing$how.btf" 2>&1)
		if [ $rc -eq 0 ] && [ "$(echo "$out" | head -n 1)" = "types 0" ]; then
			ok "(o) nothing to encode ($how): exit 0, an empty split BTF libbpf reads"
		else
			not_ok "(o) nothing to encode ($how): exit 0, an empty split BTF libbpf reads" \
				"exit $rc: $(cat "$D/nothing.err") $out"
		fi
	done
else
	not_ok "(o) build and merge the module with nothing to encode" "failed"
fi
test_done
