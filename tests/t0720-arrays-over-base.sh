#!/usr/bin/env bash
# t0720-arrays-over-base: split BTF over a base written by pahole.
#
# pahole flattens int m[3][4][5] into one ARRAY of 60; we keep it nested. A
# module's struct that holds such an array then never equals the base's, and
# nor does anything that points to it: against Debian's own vmlinux BTF,
# sch_fq.ko came out 32 times pahole's size, re-describing struct module,
# task_struct and the rest. btf-emit --arrays auto (the default) writes arrays
# the way the base does; --arrays nested / flat force one form.
#  (a) no base, --arrays flat: struct matrix's member m is one ARRAY [60];
#      auto and nested: [3] of [4] of [5];
#  (b) over a pahole base: auto and flat reuse the base's struct matrix (no
#      STRUCT 'matrix' in the split part, as pahole's own split BTF), nested
#      writes it again (the failure auto avoids);
#  (c) over our own (nested) base: auto reuses the base's struct matrix too;
#  (d) every split BTF loads in libbpf over its base (bpftool dump).
. "$(dirname "$0")/lib.sh"

if ! have bpftool || ! have pahole; then
	skip "arrays over a base" "bpftool or pahole missing"
	test_done
fi

D=$T_OUT
cat >"$D/common.h" <<'EOF'
struct point { int x, y; };
struct matrix { int m[3][4][5]; struct point grid[2][3]; };
struct holder { struct matrix *mx; long n; };
EOF
cat >"$D/base.c" <<'EOF'
#include "common.h"
struct holder base_holder;
int main(void) { return base_holder.n > 0; }
EOF
cat >"$D/mod.c" <<'EOF'
#include "common.h"
struct mod_own { struct holder *h; char tag[2][8]; };
struct mod_own mod_state;
int mod_use(struct holder *h) { return h->n + mod_state.tag[1][2]; }
EOF
if ! out=$("$GCC" -g -O1 -o "$D/base" "$D/base.c" 2>&1) || ! out=$("$GCC" -g -O1 -c -o "$D/mod.o" "$D/mod.c" 2>&1); then
	not_ok "arrays over a base: fixtures build" "$out"
	test_done
fi
pahole -J --btf_gen_floats --btf_encode_detached="$D/pahole-base.btf" "$D/base" >/dev/null 2>&1 ||
	not_ok "pahole encodes the base" "$(pahole -J --btf_encode_detached="$D/pahole-base.btf" "$D/base" 2>&1)"
check "our pipeline encodes the base" "$T_TOP/pipeline.sh" -q -o "$D/our-base.btf" "$D/base"
"$T_BIN/dwarf-extract" -q -o "$D/mod.cus" "$D/mod.o" && "$T_BIN/dedup-merge" -q -o "$D/mod.graph" "$D/mod.cus" ||
	not_ok "module extract and merge" "rc $?"

# dump FILE [BASE]: bpftool's text of FILE's own types.
dump() {
	if [ $# -gt 1 ]; then bpftool -B "$2" btf dump file "$1"; else bpftool btf dump file "$1"; fi
}
# member_chain DUMP STRUCT MEMBER: the ARRAY chain of a member, as "[3][4][5]".
member_chain() {
	python3 - "$@" <<'EOF'
import re, sys
text, struct, member = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
types, cur = {}, None
for line in text.splitlines():
    m = re.match(r"^\[(\d+)\] (\w+) '([^']*)'(.*)", line)
    if m:
        cur = int(m.group(1)); types[cur] = (m.group(2), m.group(3), m.group(4), [])
    elif cur is not None:
        f = re.match(r"^\s+'([^']*)' type_id=(\d+)", line)
        if f: types[cur][3].append((f.group(1), int(f.group(2))))
sid = next(i for i, t in types.items() if t[0] == 'STRUCT' and t[1] == struct)
t = dict(types[sid][3])[member]
out = ''
while types.get(t, ('',))[0] == 'ARRAY':
    out += '[%s]' % re.search(r'nr_elems=(\d+)', types[t][2]).group(1)
    t = int(re.search(r' type_id=(\d+)', types[t][2]).group(1))
print(out)
EOF
}

# (a) without a base
for mode in auto nested flat; do
	"$T_BIN/btf-emit" --arrays $mode -o "$D/nobase-$mode.btf" "$D/mod.graph" &&
		dump "$D/nobase-$mode.btf" >"$D/nobase-$mode.txt" ||
		not_ok "(a) --arrays $mode without a base" "rc $?"
done
want_nested="[3][4][5]" want_flat="[60]"
for mode in auto nested flat; do
	want=$want_nested
	[ $mode = flat ] && want=$want_flat
	got=$(member_chain "$D/nobase-$mode.txt" matrix m 2>&1)
	if [ "$got" = "$want" ]; then ok "(a) no base, --arrays $mode: matrix.m is $want"
	else not_ok "(a) no base, --arrays $mode: matrix.m is $want" "got: $got"; fi
done
got=$(member_chain "$D/nobase-flat.txt" mod_own tag 2>&1)
[ "$got" = "[16]" ] && ok "(a) --arrays flat: char tag[2][8] is [16]" || not_ok "(a) --arrays flat: char tag[2][8] is [16]" "got: $got"

# (b), (c) over a base
pahole --btf_base "$D/pahole-base.btf" --btf_encode_detached="$D/pahole-split.btf" "$D/mod.o" >/dev/null 2>&1
if dump "$D/pahole-split.btf" "$D/pahole-base.btf" >"$D/pahole-split.txt" 2>&1 &&
	! grep -q "STRUCT 'matrix'" "$D/pahole-split.txt"; then
	ok "(b) reference: pahole's split BTF reuses the base's struct matrix"
else
	not_ok "(b) reference: pahole's split BTF reuses the base's struct matrix" "$(cat "$D/pahole-split.txt")"
fi
split() { # split BASE MODE NAME
	"$T_BIN/btf-emit" --btf-base "$1" --arrays "$2" -o "$D/$3.btf" "$D/mod.graph" 2>"$D/$3.err" &&
		dump "$D/$3.btf" "$1" >"$D/$3.txt" 2>>"$D/$3.err"
}
for mode in auto flat nested; do
	if ! split "$D/pahole-base.btf" $mode over-pahole-$mode; then
		not_ok "(d) split BTF over pahole's base, --arrays $mode, loads" "$(cat "$D/over-pahole-$mode.err")"
		continue
	fi
	ok "(d) split BTF over pahole's base, --arrays $mode, loads"
	if [ $mode = nested ]; then
		check_grep "(b) over pahole's base, --arrays nested: struct matrix is written again" \
			"STRUCT 'matrix'" "$D/over-pahole-$mode.txt"
	elif grep -q "STRUCT 'matrix'\|STRUCT 'holder'" "$D/over-pahole-$mode.txt"; then
		not_ok "(b) over pahole's base, --arrays $mode: struct matrix and holder come from the base" \
			"$(cat "$D/over-pahole-$mode.txt")"
	else
		ok "(b) over pahole's base, --arrays $mode: struct matrix and holder come from the base"
	fi
done
check_grep "(b) over pahole's base, auto: the module's own char tag[2][8] is flat like the base's arrays" \
	"ARRAY '\(anon\)' type_id=[0-9]+ index_type_id=[0-9]+ nr_elems=16" "$D/over-pahole-auto.txt"
if split "$D/our-base.btf" auto over-ours-auto; then
	ok "(d) split BTF over our base loads"
	if grep -q "STRUCT 'matrix'\|STRUCT 'holder'" "$D/over-ours-auto.txt"; then
		not_ok "(c) over our nested base, auto: struct matrix and holder come from the base" \
			"$(cat "$D/over-ours-auto.txt")"
	else
		ok "(c) over our nested base, auto: struct matrix and holder come from the base"
	fi
else
	not_ok "(d) split BTF over our base loads" "$(cat "$D/over-ours-auto.err")"
fi
check_exit "--arrays with a wrong word is a usage error" 2 "$T_BIN/btf-emit" --arrays sideways -o "$D/x.btf" "$D/mod.graph"
check_grep "and the message names the word" "sideways" "$T_OUT/last.err"
test_done
