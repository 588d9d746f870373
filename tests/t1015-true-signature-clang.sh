#!/usr/bin/env bash
# t1015-true-signature-clang: true_signature on clang's DW_CC_nocall
# functions, whose parameters clang passes as the ABI's register slots say
# (funcs.c, funcs__true_sig_params(), after pahole's
# function__analyze_parameter_locations()); and GCC's .constprop clone.
# Each fixture of tests/fixtures/truesig (clang-19 -O2, x86_64) must give
# the signature below (tests/tools/btf_funcs.py over bpftool), and pahole
# master's where it has one:
#  agg_field   a 16-byte struct of which one field is live: p__lo, its type
#  agg_second  the second field: p__hi (a leading empty DW_OP_piece)
#  in_memory   a 24-byte union passed in memory (DW_OP_fbreg): kept
#  unused_mid  an unused int between used ones: dropped
#  many_regs   nine ints, one unused: the ones on the stack kept
#  gcc_clone   GCC's ts_clone.constprop.0 without its constant: encoded with
#              the registers it has, where pahole master leaves it out
# Without true_signature none of them is encoded; pahole master then writes
# agg_field's and agg_second's source signature, wrongly (checked).
. "$(dirname "$0")/lib.sh"

if [ "$(uname -m)" != x86_64 ]; then skip "true signatures" "the expected registers are x86_64's"; test_done; fi
D=$T_OUT
FUNCS="python3 $T_TOP/tests/tools/btf_funcs.py"
expect() {
	case $1 in
	agg_field) echo "ts_agg(p__lo:long, q:struct ts_pair, n:int) -> long" ;;
	agg_second) echo "ts_agg2(p__hi:long, q:struct ts_pair2, n:int) -> long" ;;
	in_memory) echo "ts_mem(u:union ts_big, k:int) -> long" ;;
	unused_mid) echo "ts_mid(a:int, c:int) -> int" ;;
	many_regs) echo "ts_many(a:int, b:int, c:int, e:int, f:int, g:int, h:int, i:int) -> int" ;;
	gcc_clone) echo "ts_clone.constprop.0(a:*struct ts_obj, d:*struct ts_obj) -> *char" ;;
	esac
}
pm=""
for t in agg_field agg_second in_memory unused_mid many_regs gcc_clone; do
	cc=$CLANG
	[ $t = gcc_clone ] && cc=gcc
	if ! have "$cc"; then skip "$t" "$cc not installed"; continue; fi
	(cd "$T_TOP" && "$cc" -O2 -gdwarf-5 -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$D/$t" "tests/fixtures/truesig/$t.c") ||
		{ not_ok "$t: build"; continue; }
	cp "$D/$t" "$D/$t.ts"
	cp "$D/$t" "$D/$t.def"
	check "$t: encode +true_signature" "$T_TOP/pipeline.sh" -J --btf_features=+true_signature "$D/$t.ts"
	check "$t: encode default" "$T_TOP/pipeline.sh" -J --btf_features=default "$D/$t.def"
	want=$(expect $t)
	got=$($FUNCS "$D/$t.ts" "${want%%(*}")
	[ "$got" = "$want" ] && ok "$t: $want" || not_ok "$t: $want" "got: $got"
	got=$($FUNCS "$D/$t.def" "${want%%(*}")
	[ -z "$got" ] && ok "$t: without true_signature it is left out" || not_ok "$t: left out without true_signature" "$got"
	check "$t: libbpf's dedup removes nothing" "$T_BIN/tools/btfcheck" --dedup "$D/$t.ts"
	# pahole master, where it can be built
	if [ -z "$pm" ]; then pahole_master "true signatures: pahole master" && pm=$T_PAHOLE_MASTER || pm=none; fi
	[ "$pm" = none ] && continue
	cp "$D/$t" "$D/$t.pm"
	"$pm" -J --btf_features=+true_signature "$D/$t.pm" >/dev/null 2>&1 || { not_ok "$t: pahole master encodes it"; continue; }
	theirs=$($FUNCS "$D/$t.pm" "${want%%(*}")
	if [ $t = gcc_clone ]; then
		[ -z "$theirs" ] && ok "$t: pahole master leaves the clone out (we write its true signature)" ||
			not_ok "$t: pahole master leaves the clone out" "it now writes: $theirs (update this test)"
	else
		[ "$theirs" = "$want" ] && ok "$t: pahole master writes the same" || not_ok "$t: pahole master writes the same" "$theirs"
	fi
	# Without true_signature pahole (master and 1.32) takes the one register
	# of p that the code gets for all of p, and writes the source signature:
	# wrong, since q then starts a register early (funcs.c rule 6, 6-pieces;
	# 7.2's map_delete_elem under clang thin LTO). We leave it out.
	case $t in agg_field | agg_second)
		cp "$D/$t" "$D/$t.pmd"
		"$pm" -J --btf_features=default "$D/$t.pmd" >/dev/null 2>&1
		theirs=$($FUNCS "$D/$t.pmd" "${want%%(*}")
		[ -n "$theirs" ] && ok "$t: pahole master is wrong without true_signature: $theirs, though p arrives in one register" ||
			not_ok "$t: pahole master writes the source signature without true_signature (its known error)" \
				"it now leaves it out: follow it (funcs.c rule 6)"
		;;
	esac
done
test_done
