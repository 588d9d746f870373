#!/usr/bin/env bash
# t1010-true-signature: the opt-in feature true_signature writes a function
# that rule 6 of btf-emit/funcs.c skips (optimized parameters where the ABI
# changed) with the signature its code has: the clone's symbol name and only
# the parameters still passed. Without the feature it stays skipped.
. "$(dirname "$0")/lib.sh"

FIX="$T_TOP/tests/fixtures/funcsel"
for cc in gcc "$CLANG"; do
	if ! have "$cc"; then skip "$cc: true_signature" "$cc not installed"; continue; fi
	src="$FIX/clone.c" fn=fs_clone
	[ "$cc" = gcc ] || { src="$FIX/nocall.c"; fn=fs_nocall; }
	d="$T_OUT/$cc"
	mkdir -p "$d"
	# The object alone: its symbol table has the clone (gcc) or the
	# DW_CC_nocall function (clang), as in a kernel module.
	if ! out=$(cd "$T_TOP" && "$cc" -O2 -gdwarf-5 -fdebug-prefix-map="$T_TOP"=/btfpipe -c -o "$d/f.o" "$src" 2>&1); then
		not_ok "$cc: build" "$out"
		continue
	fi
	"$T_BIN/dwarf-extract" -o "$d/p.cus" "$d/f.o" && "$T_BIN/dedup-merge" -o "$d/p.graph" "$d/p.cus" ||
		{ not_ok "$cc: extract and merge"; continue; }
	check "$cc: default features" "$T_BIN/btf-emit" --elf "$d/f.o" -o "$d/def.btf" "$d/p.graph"
	check "$cc: +true_signature" "$T_BIN/btf-emit" --elf "$d/f.o" --features +true_signature -o "$d/ts.btf" "$d/p.graph"
	bpftool btf dump file "$d/def.btf" >"$d/def.txt"
	bpftool btf dump file "$d/ts.btf" >"$d/ts.txt"
	if grep -q "FUNC '$fn" "$d/def.txt"; then not_ok "$cc: default: $fn is skipped" "$(grep "FUNC '$fn" "$d/def.txt")"
	else ok "$cc: default: $fn is skipped"; fi
	line=$(grep "FUNC '$fn" "$d/ts.txt")
	if [ -z "$line" ]; then not_ok "$cc: true_signature: $fn is encoded"; continue; fi
	ok "$cc: true_signature: encoded as ${line#*FUNC }"
	if [ "$cc" = gcc ]; then
		case "$line" in *"FUNC '$fn."*) ok "gcc: under the clone's symbol name" ;;
		*) not_ok "gcc: under the clone's symbol name" "$line" ;; esac
	fi
	proto=$(echo "$line" | sed -n 's/.*type_id=\([0-9]*\).*/\1/p')
	vlen=$(grep "^\[$proto\] FUNC_PROTO" "$d/ts.txt" | sed -n 's/.*vlen=\([0-9]*\).*/\1/p')
	[ "$vlen" = 1 ] && ok "$cc: the unused parameter is gone (vlen 1)" || not_ok "$cc: the unused parameter is gone" "vlen=$vlen"
	check "$cc: the kernel accepts it" sh -c "'$T_BIN/tools/btfcheck' --load '$d/ts.btf'; [ \$? -eq 0 ] || [ \$? -eq 77 ]"
done
test_done
