#!/usr/bin/env bash
# t1030-attributes: the feature attributes (pahole 1.30's) on the arena
# kfuncs of tests/fixtures/arena: each pointer flagged KF_ARENA_RET, _ARG1
# or _ARG2 becomes PTR -> TYPE_TAG address_space(1), kind_flag 1 ->
# pointee, one such chain per pointee, shared.
#  (a) libbpf 1.8 (../shared/anchors) reads the tags as attributes where
#      the flags say, and nowhere else;
#  (b) Debian's libbpf dedup removes nothing, and the running kernel loads
#      it (kernels since 6.15 accept kind_flag on tags);
#  (c) a flagged slot that is not a pointer is left untagged with a warning
#      (pahole master fails the whole encode there: checked in (e));
#  (d) without attributes, or with it but without decl_tag_kfuncs (pahole
#      needs both), there is no attribute; without decl_tag, no bpf_kfunc
#      tag but the attributes, as pahole; -j1 and -j2 write the same bytes;
#  (e) pahole master, on the fixture without the bad slot, describes the
#      same types (btf18-check --dump); on the fixture with it, fails.
. "$(dirname "$0")/lib.sh"

BTFCHECK="$T_BIN/tools/btfcheck"
[ -x "$BTFCHECK" ] || BTFCHECK="$T_TOP/bin/tools/btfcheck"
D=$T_OUT
src=$T_TOP/tests/fixtures/arena/arena.c
gcc -O2 -gdwarf-5 -c -o "$D/arena.o" "$src" && gcc -DFA_NO_BAD -O2 -gdwarf-5 -c -o "$D/nobad.o" "$src" ||
	{ not_ok "build the arena fixture"; test_done; }
emit() { # OUT OBJ FEATURES [-jN]
	"$T_BIN/dwarf-extract" -o "$D/$1.cus" "$2" && "$T_BIN/dedup-merge" -o "$D/$1.graph" "$D/$1.cus" &&
		"$T_BIN/btf-emit" ${4:-} --elf "$2" --features "$3" -o "$D/$1.btf" "$D/$1.graph" 2>"$D/$1.err"
}
check "attributes: encode" emit attr "$D/arena.o" default,attributes
check "attributes -j2: encode" emit attr2 "$D/arena.o" default,attributes -j2
check_same "attributes: -j1 and -j2 write the same bytes" "$D/attr.btf" "$D/attr2.btf"
check "no attributes: encode" emit plain "$D/arena.o" default
check "attributes without decl_tag_kfuncs: encode" emit nokf "$D/arena.o" \
	encode_force,var,float,decl_tag,type_tag,enum64,attributes
check "decl_tag_kfuncs without decl_tag: encode" emit nodt "$D/arena.o" encode_force,var,decl_tag_kfuncs,attributes
check_grep "(c) the int flagged arena is named in a warning" "kfunc fa_bad: argument 1 is flagged arena but is not a pointer" "$D/attr.err"

# (b)
if have bpftool; then
	n=$(bpftool btf dump file "$D/attr.btf" | grep -c "TYPE_TAG 'address_space(1)'")
	[ "$n" = 2 ] && ok "two attribute tags (void and struct fa_obj), shared" || not_ok "two attribute tags" "$n"
	n=$(bpftool btf dump file "$D/plain.btf" | grep -c "TYPE_TAG")
	[ "$n" = 0 ] && ok "(d) none without the feature" || not_ok "(d) none without the feature" "$n"
	n=$(bpftool btf dump file "$D/nokf.btf" | grep -c "TYPE_TAG")
	[ "$n" = 0 ] && ok "(d) none without decl_tag_kfuncs" || not_ok "(d) none without decl_tag_kfuncs" "$n"
	# pahole tags kfuncs only with decl_tag on too; the attributes need not.
	n=$(bpftool btf dump file "$D/nodt.btf" | grep -c "DECL_TAG 'bpf_kfunc'")
	[ "$n" = 0 ] && ok "(d) no bpf_kfunc tag without decl_tag, as pahole" || not_ok "(d) no bpf_kfunc tag without decl_tag" "$n"
	n=$(bpftool btf dump file "$D/nodt.btf" | grep -c "TYPE_TAG 'address_space(1)'")
	[ "$n" = 2 ] && ok "(d) the attributes without decl_tag, as pahole" || not_ok "(d) the attributes without decl_tag" "$n"
fi
check "libbpf 1.1's dedup removes nothing" "$BTFCHECK" --dedup "$D/attr.btf"
"$BTFCHECK" --load "$D/attr.btf" >"$D/load.txt" 2>&1
case $? in
0) ok "the running kernel loads the attributes" ;;
77) skip "kernel load" "no bpf() here" ;;
*) if grep -q "Invalid btf_info kind_flag" "$D/load.txt"; then skip "kernel load" "this kernel predates kind_flag tags"
   else not_ok "the running kernel loads the attributes" "$(cat "$D/load.txt")"; fi ;;
esac

# (a)
libbpf18 "attributes: libbpf 1.8 oracle" || test_done
"$T_BTF18" --dump "$D/attr.btf" >"$D/attr.18" || not_ok "libbpf 1.8 parses it"
A='tag/attr(address_space(1))'
for want in \
	"func fa_alloc linkage 0 fn(map:*void, addr:*$A void, cnt:unsigned int/4) -> *$A void" \
	"func fa_touch linkage 0 fn(p:*$A void, n:long int/8) -> int/4" \
	"func fa_get linkage 0 fn(o:*$A struct fa_obj/16) -> *$A struct fa_obj/16" \
	"func fa_other linkage 0 fn(p:*void, n:long int/8) -> int/4" \
	"func fa_bad linkage 0 fn(x:int/4) -> int/4" \
	"func fa_plain linkage 0 fn(x:int/4) -> int/4"; do
	grep -qxF "$want" "$D/attr.18" && ok "(a) ${want%% fn(*}: ${want#* fn}" || not_ok "(a) $want" "$(grep "${want%% fn(*}" "$D/attr.18")"
done
n=$(grep -c "address_space" "$D/attr.18")
[ "$n" = 3 ] && ok "(a) no other function has an attribute" || not_ok "(a) no other function has an attribute" "$(grep address_space "$D/attr.18")"

# (e)
pahole_master "attributes: pahole master" || test_done
check "pahole master: the fixture without the bad slot" "$T_PAHOLE_MASTER" --btf_features=default,attributes \
	--btf_encode_detached="$D/pm.btf" "$D/nobad.o"
check "ours: the same" emit nobad "$D/nobad.o" default,attributes
"$T_BTF18" --dump "$D/pm.btf" | grep -v '^types' >"$D/pm.18"
"$T_BTF18" --dump "$D/nobad.btf" | grep -v '^types' >"$D/nobad.18"
check_same "(e) the types pahole master describes, ours too" "$D/pm.18" "$D/nobad.18"
if "$T_PAHOLE_MASTER" --btf_features=default,attributes --btf_encode_detached="$D/pm-bad.btf" "$D/arena.o" \
	>"$D/pm-bad.txt" 2>&1; then
	not_ok "(e) pahole master fails on the bad slot (we encode it)" "it did not: update t1030 and funcs' comment"
else
	ok "(e) pahole master fails on the bad slot (we encode it)"
fi
test_done
