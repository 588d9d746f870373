#!/usr/bin/env bash
# t0710-btf-oracles: what libbpf and the running kernel say about our BTF,
# and the whole chain's determinism.
#
# For gcc and clang-19, -O0 and -O2, DWARF 4 and 5, the sample fixture goes
# through dwarf-extract, dedup-merge and btf-emit --elf. Then
# bin/tools/btfcheck (tests/tools/btfcheck.c) is asked three things:
#   - libbpf parses the BTF (btf__parse);
#   - btf__dedup() removes nothing: we promise fully deduplicated output, and
#     a type libbpf can still merge is a type dedup-merge should have merged;
#   - the kernel's BTF checker accepts it (btf__load_into_kernel). When the
#     kernel refuses bpf() itself (no privilege, no BPF), btfcheck exits 77 and
#     the check is a skip with that reason; any other refusal is a failure.
# Determinism of the chain: the .cus extracted at -j1 and -j2 merged at -j1
# and -j2 give byte-identical .graph files, and btf-emit run twice on the
# same graph gives byte-identical BTF (t0400 covers dwarf-extract alone).
. "$(dirname "$0")/lib.sh"

BTFCHECK="$T_TOP/bin/tools/btfcheck"

if [ ! -x "$BTFCHECK" ]; then
	# btfcheck is a test tool built into bin/ only (Makefile), also for the
	# bin-asan variant: without it nothing here can be asked.
	not_ok "btfcheck is built" "$BTFCHECK is missing: run make"
	test_done
fi

for cc in "$GCC" "$CLANG"; do
	for opt in -O0 -O2; do
		for dw in 4 5; do
			label="$(basename "$cc")$opt-dwarf$dw"
			dir="$T_OUT/$label"
			build_sample "$cc" "$opt" "$dw" "$dir" "$label" "BTF oracles" || continue
			elf="$dir/sample"

			# Two chains, -j1 and -j2 throughout, and a second emit.
			if ! out=$("$T_BIN/dwarf-extract" -j 1 -o "$dir/j1.cus" "$elf" 2>&1 &&
				"$T_BIN/dwarf-extract" -j 2 -o "$dir/j2.cus" "$elf" 2>&1 &&
				"$T_BIN/dedup-merge" -j 1 -o "$dir/j1.graph" "$dir/j1.cus" 2>&1 &&
				"$T_BIN/dedup-merge" -j 2 -o "$dir/j2.graph" "$dir/j2.cus" 2>&1 &&
				"$T_BIN/btf-emit" --elf "$elf" -o "$dir/a.btf" "$dir/j1.graph" 2>&1 &&
				"$T_BIN/btf-emit" --elf "$elf" -o "$dir/b.btf" "$dir/j1.graph" 2>&1 &&
				"$T_BIN/btf-emit" --elf "$elf" -o "$dir/j2.btf" "$dir/j2.graph" 2>&1); then
				not_ok "$label: the chain runs at -j1 and -j2" "$out"
				continue
			fi
			ok "$label: the chain runs at -j1 and -j2"
			check_same "$label: merge at -j1 and -j2 gives the same .graph bytes" "$dir/j1.graph" "$dir/j2.graph"
			check_same "$label: emit twice gives the same BTF bytes" "$dir/a.btf" "$dir/b.btf"
			check_same "$label: the -j2 chain gives the same BTF bytes as -j1" "$dir/a.btf" "$dir/j2.btf"

			check "$label: libbpf parses our BTF" "$BTFCHECK" "$dir/a.btf"
			if out=$("$BTFCHECK" --dedup "$dir/a.btf" 2>&1); then
				ok "$label: btf__dedup removes nothing ($(grep '^dedup' <<<"$out"))"
			else
				not_ok "$label: btf__dedup removes nothing" "$out"
			fi
			out=$("$BTFCHECK" --load "$dir/a.btf" 2>&1)
			case $? in
			0) ok "$label: the kernel accepts our BTF" ;;
			77) skip "$label: the kernel accepts our BTF" "$(grep '^load' <<<"$out")" ;;
			*) not_ok "$label: the kernel accepts our BTF" "$out" ;;
			esac
		done
	done
done
test_done
