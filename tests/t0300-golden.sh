#!/usr/bin/env bash
# t0300-golden: the `dwarf-extract --dump` text of the sample fixture must
# match a reviewed golden file, line for line.
#
# t0200 checks what the program says about itself (sizes, offsets); this test
# pins down everything else the dump shows (every record, reference, flag,
# address, parameter location), so any change in extraction shows up as a
# diff that someone must read and either fix or bless.
#
# Configurations: gcc -O0 DWARF 5, clang-19 -O0 DWARF 5, gcc -O2 DWARF 4 (the
# DW_AT_bit_offset bitfield path, location lists, abstract instances).
# Golden files: tests/golden/sample-<cc>-<opt>-dwarf<N>.dump.
#
# To regenerate after an intended change:
#     UPDATE_GOLDEN=1 ./tests/run.sh t0300
# then READ the diff (git diff tests/golden) before committing: a golden is a
# statement that its content is right. Update mode reports each rewrite as a
# skip, never as a pass.
#
# The goldens depend on the toolchain that built the fixture (code layout,
# addresses, producer strings, build ids). tests/golden/TOOLCHAIN records the
# versions they were made with; on a different compiler or linker the
# comparison is skipped with the reason shown, not failed and not passed.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
GOLDEN="$T_TOP/tests/golden"
UPDATE=${UPDATE_GOLDEN:-0}

# toolchain_line CC: the version line recorded for CC in TOOLCHAIN.
toolchain_line() {
	echo "$(basename "$1"): $("$1" --version 2>/dev/null | head -n 1)"
}
ld_line() {
	echo "ld: $(ld --version 2>/dev/null | head -n 1)"
}

if [ "$UPDATE" = 1 ]; then
	mkdir -p "$GOLDEN"
	{
		echo "# Versions the sample-*.dump goldens were made with (tests/t0300-golden.sh)."
		have "$GCC" && toolchain_line "$GCC"
		have "$CLANG" && toolchain_line "$CLANG"
		ld_line
	} >"$GOLDEN/TOOLCHAIN"
fi

# toolchain_matches CC: true when CC and ld are the versions in TOOLCHAIN;
# otherwise prints why not.
toolchain_matches() {
	local want
	for want in "$(toolchain_line "$1")" "$(ld_line)"; do
		if ! grep -qxF -- "$want" "$GOLDEN/TOOLCHAIN" 2>/dev/null; then
			echo "goldens were made with: $(grep -v '^#' "$GOLDEN/TOOLCHAIN" 2>/dev/null |
				tr '\n' ';') here: $want; rerun with UPDATE_GOLDEN=1 and review"
			return 1
		fi
	done
}

for cfg in "$GCC -O0 5" "$CLANG -O0 5" "$GCC -O2 4"; do
	# shellcheck disable=SC2086 # split "cc opt dwarf" into three words
	set -- $cfg
	cc=$1 opt=$2 dw=$3
	name="sample-$(basename "$cc")-${opt#-}-dwarf$dw"
	label="$(basename "$cc") $opt dwarf$dw"
	golden="$GOLDEN/$name.dump"
	if ! have "$cc"; then
		skip "$label: golden dump" "compiler $cc not found"
		continue
	fi
	dir="$T_OUT/$name"
	if ! out=$(build_fixture "$cc" "$opt" "$dw" "$dir" sample 2>&1); then
		not_ok "$label: build sample" "$out"
		continue
	fi
	check_exit "$label: extract" 0 "$EXTRACT" -o "$dir/sample.cus" "$dir/sample"
	check_exit "$label: dump" 0 "$EXTRACT" --dump "$dir/sample.cus"
	cp "$T_OUT/last.out" "$dir/sample.dump"
	# A dump with no records cannot be a golden (guards update mode too).
	if grep -q '^  #0 ' "$dir/sample.dump"; then ok "$label: dump has records"; else
		not_ok "$label: dump has records" "$(head -c 2000 "$dir/sample.dump")"
		continue
	fi

	if [ "$UPDATE" = 1 ]; then
		cp "$dir/sample.dump" "$golden"
		skip "$label: compare with $name.dump" "UPDATE_GOLDEN=1: rewrote it, review it with git diff"
		continue
	fi
	if [ ! -f "$golden" ]; then
		not_ok "$label: golden $name.dump exists" \
			"no $golden; create it with UPDATE_GOLDEN=1 ./tests/run.sh t0300 and review it"
		continue
	fi
	if ! why=$(toolchain_matches "$cc"); then
		skip "$label: compare with $name.dump" "$why"
		continue
	fi
	if d=$(diff -u "$golden" "$dir/sample.dump"); then
		ok "$label: dump matches $name.dump"
	else
		not_ok "$label: dump matches $name.dump" "$d"
	fi
done
test_done
