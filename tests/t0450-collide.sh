#!/usr/bin/env bash
# t0450-collide: every hash table's slow path gives the same answers.
#
# bin-collide/ is built with HASH_FORCE_COLLIDE (make COLLIDE=1): every 64-bit
# hash is the same value, so each lookup walks every entry and equality is
# decided by the full comparison alone (string bytes, type keys, signatures).
# Its .cus, .graph and BTF must be byte-identical to the normal build's. If a
# comparison were wrong, distinct types would merge (or equal ones would not)
# and the bytes would differ.
. "$(dirname "$0")/lib.sh"

C="$T_TOP/bin-collide"
if [ ! -x "$C/dwarf-extract" ]; then
	not_ok "bin-collide is built" "run: make COLLIDE=1 all (make test does)"
	test_done
fi

pipeline() { # BIN_DIR ELF OUTPREFIX
	"$1/dwarf-extract" -j2 -o "$3.cus" "$2" &&
		"$1/dedup-merge" -j2 -o "$3.graph" "$3.cus" &&
		"$1/btf-emit" --elf "$2" -o "$3.btf" "$3.graph"
}

for cc in gcc "$CLANG"; do
	if ! have "$cc"; then
		skip "$cc: collide build agrees" "$cc not installed"
		continue
	fi
	build_fixture "$cc" -O2 5 "$T_OUT/$cc" sample || { not_ok "$cc: build sample"; continue; }
	elf="$T_OUT/$cc/sample"
	check "$cc: normal pipeline" pipeline "$T_BIN" "$elf" "$T_OUT/$cc/n"
	check "$cc: collide pipeline" pipeline "$C" "$elf" "$T_OUT/$cc/c"
	for ext in cus graph btf; do
		check_same "$cc: .$ext identical with every hash colliding" "$T_OUT/$cc/n.$ext" "$T_OUT/$cc/c.$ext"
	done
	# The test must be able to fail: the graph has many distinct nodes of
	# the same kind, which a broken comparison would merge.
	n=$("$T_BIN/dedup-merge" --dump "$T_OUT/$cc/n.graph" | grep -c '^#[0-9]* struct ')
	if [ "$n" -ge 15 ]; then ok "$cc: graph has $n distinct structs"; else
		not_ok "$cc: graph has $n distinct structs, expected at least 15"; fi
done
test_done
