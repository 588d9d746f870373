#!/usr/bin/env bash
# tests/kernel/vs132.sh (make check-132): btfpipe against pahole 1.32 (the
# newest, from Debian unstable: tests/kernel/sid.sh), Debian 12's pahole
# 1.24 and pahole master (../shared/anchors), on real kernels: Debian
# unstable's newest 7.x cloud vmlinux with a spread of its modules, Debian
# 12's 6.12 and 6.1 cloud vmlinux (6.1 with modules), and any kernel named
# on the command line.
#
#   tests/kernel/vs132.sh [LABEL=VMLINUX[:MODULE_DIR] ...]
#
# Every tool gets the same command line, 7.x's scripts/Makefile.btf flags
# (pahole 1.24, which has no --btf_features, the legacy ones its kernels
# pass it); modules are split BTF over each tool's own vmlinux BTF.
# Checked against pahole 1.32, for each vmlinux:
#  - every type but FUNCs is the same (btfcmp, arrays as written: 1.32
#    nests multi-dimensional arrays, as we do);
#  - every decl tag on a function is the same (the kfunc tags above all);
#  - no FUNC only we write; each FUNC only 1.32 writes is a clone (or a
#    clang DW_CC_nocall function) our rule 6 skips (funcs.c: one split
#    hot/cold, where 1.32 reads no address, or one passed a by-value
#    aggregate's field in a register piece, which 1.32 takes for the
#    aggregate), and each function whose parameter names
#    differ was split hot/cold (a NAME[.clone].cold symbol; rule 5, t1016);
#  - libbpf's dedup removes nothing from ours, and the running kernel
#    loads it;
# and for each module: the same types as 1.32's but for what 1.32's split
# BTF repeats of its base (btfcmp --drop-base-repeats), libbpf parses it
# over our base, its dedup removes nothing. pahole 1.24 and master are
# compared too (types, FUNCs), for the table only. The table is printed and
# kept in tests/out/vs132/table.md. VS132_MODULES (default 24): how many
# modules of each module directory, spread over its sorted list.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
T_NAME=vs132
. "$(dirname "$0")/../lib.sh"
export LC_ALL=C
O=$T_OUT
BTFCMP="$T_TOP/tools/btfcmp.py"
DIFF="$T_TOP/tools/btfpipe-diff"
OURS="$T_BIN/btfpipe-pahole"
FLAGS=(-j2 --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs
	--btf_features=attributes --lang_exclude=rust)
FLAGS124=(-j2 --btf_gen_floats)
nmods=${VS132_MODULES:-24}

p132=$("$T_TOP/tests/kernel/sid.sh" pahole) || { not_ok "fetch pahole 1.32 (tests/kernel/sid.sh pahole)"; p132=; }
master=
pahole_master "pahole master" && master=$T_PAHOLE_MASTER
p124=$(command -v pahole || true)

inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
	if d7=$("$T_TOP/tests/kernel/sid.sh" dbg); then
		v=$(ls "$d7"/boot/vmlinux-* | head -1)
		inputs+=("$(basename "$v" | sed 's/^vmlinux-//')=$v:$(ls -d "$d7"/lib/modules/*/kernel)")
	else
		not_ok "fetch Debian unstable's 7.x -dbg package (tests/kernel/sid.sh dbg)"
	fi
	v=$(ls "$T_TOP"/tests/out/kfuncs-dl/vmlinux-6.12.* 2>/dev/null | sort -V | tail -1)
	[ -n "$v" ] && inputs+=("$(basename "$v" | sed 's/^vmlinux-//')=$v") ||
		skip "Debian's 6.12 vmlinux" "not downloaded: make check-kfuncs fetches it"
	if v=$("$T_TOP/tests/kernel/dbg.sh"); then
		r=${v##*/vmlinux-}
		inputs+=("$r=$v:/usr/lib/debug/lib/modules/$r/kernel")
	else
		skip "Debian's 6.1 vmlinux" "tests/kernel/dbg.sh failed"
	fi
fi
[ -n "$p132" ] || { echo "$(grep -c '^pass' "$T_RESULTS") passed, 1 failed, 0 skipped"; exit 1; }

# tagpairs BTF: "TAG FUNC" per decl tag on a whole function, sorted.
tagpairs() {
	bpftool btf dump file "$1" | awk '/^\[[0-9]+\] FUNC /{ id = substr($1, 2, length($1) - 2); n = $3; gsub("\047", "", n); name[id] = n }
		/^\[[0-9]+\] DECL_TAG .* component_idx=-1/ { t = $3; gsub("\047", "", t)
			for (i = 1; i <= NF; i++) if ($i ~ /^type_id=/) { split($i, a, "="); tid[NR] = a[2]; tag[NR] = t } }
		END { for (r in tid) print tag[r], name[tid[r]] }' | sort
}
# funcdiff A B: "only-A only-B names" from btfpipe-diff's func lines.
funcdiff() {
	"$DIFF" "$1" "$2" >"$3" 2>&1
	echo "$(grep -c '^- func ' "$3") $(grep -c '^+ func ' "$3") $(grep -c '^~ func ' "$3")"
}
# other WHO PAHOLE VMLINUX DIR FLAGS...: pahole 1.24 or master's cell,
# "types equal / FUNC only ours / only theirs".
other() {
	local who=$1 p=$2 v=$3 d=$4; shift 4
	[ -n "$p" ] || { echo "-"; return; }
	if ! "$p" -J "$@" --btf_encode_detached="$d/$who.btf" "$v" >"$d/$who.log" 2>&1; then
		echo "fails: $(tail -1 "$d/$who.log" | cut -c1-40)"
		return
	fi
	local n f
	n=$("$BTFCMP" -q --flatten-arrays "$d/$who.btf" "$d/ours.btf" 2>&1 | sed -n 's/^btfcmp: \([0-9]*\) differences.*/\1/p')
	read -r f b _ <<<"$(funcdiff "$d/$who.btf" "$d/ours.btf" "$d/$who.diff")"
	echo "${n:-0} type diffs, FUNC $b/$f"
}

printf '| kernel | types equal | fn tags ours/1.32 | FUNC only ours/only 1.32 | names differ | modules: types equal | ours/1.32 module types | vs 1.24 | vs master |\n' >"$O/table.md"
printf '|---|---|---|---|---|---|---|---|---|\n' >>"$O/table.md"
for spec in "${inputs[@]}"; do
	label=${spec%%=*}
	rest=${spec#*=}
	v=${rest%%:*}
	moddir=
	[ "$rest" != "$v" ] && moddir=${rest#*:}
	d=$O/$label
	mkdir -p "$d"
	if ! "$OURS" -J "${FLAGS[@]}" --btf_encode_detached="$d/ours.btf" "$v" 2>"$d/ours.err"; then
		not_ok "$label: btfpipe encodes the vmlinux" "$(cat "$d/ours.err")"
		continue
	fi
	"$T_BIN/dwarf-extract" -o "$d/v.cus" "$v" 2>/dev/null && "$T_BIN/dedup-merge" -o "$d/v.graph" "$d/v.cus" 2>/dev/null &&
		"$T_BIN/btf-emit" --features encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs,attributes \
			--elf "$v" --skip-report "$d/skips" -o "$d/native.btf" "$d/v.graph" 2>/dev/null
	if ! "$p132" -J "${FLAGS[@]}" --btf_encode_detached="$d/p132.btf" "$v" >"$d/p132.log" 2>&1; then
		not_ok "$label: pahole 1.32 encodes the vmlinux" "$(tail -3 "$d/p132.log")"
		continue
	fi
	# Types.
	# Less pahole's placeholder for clang's DW_ATE_unsigned_24 (a DW_OP_convert
	# base type nothing refers to), which we leave out (t1110, the skip report).
	"$BTFCMP" --width 0 "$d/p132.btf" "$d/ours.btf" >"$d/types.cmp" 2>&1
	if grep -q '^btfcmp: ' "$d/types.cmp" &&
		! grep -Ev "^  (only-in-A int '__SANITIZED_FAKE_INT__' .*|count INT A=([0-9]+) B=[0-9]+)\$" "$d/types.cmp" | grep -q '^  '; then
		ok "$label: every type but FUNCs is pahole 1.32's"
		teq=yes
	else
		not_ok "$label: every type but FUNCs is pahole 1.32's" "$(tail -20 "$d/types.cmp")"
		teq="no ($(sed -n 's/^btfcmp: \([0-9]*\) differences.*/\1/p' "$d/types.cmp"))"
	fi
	# Tags.
	tagpairs "$d/ours.btf" >"$d/tags.ours"
	tagpairs "$d/p132.btf" >"$d/tags.p132"
	check_same "$label: the same $(wc -l <"$d/tags.p132") decl tags on functions as 1.32" "$d/tags.p132" "$d/tags.ours"
	# FUNCs: only the known pahole errors.
	read -r only132 onlyours names <<<"$(funcdiff "$d/p132.btf" "$d/ours.btf" "$d/funcs.diff")"
	[ "$onlyours" = 0 ] && ok "$label: no FUNC only btfpipe writes" ||
		not_ok "$label: no FUNC only btfpipe writes" "$(grep '^+ func' "$d/funcs.diff" | head -20)"
	nm "$v" 2>/dev/null | awk '$3 ~ /\.cold$/ { print $3 }' | sort -u >"$d/cold"
	unexplained=""
	ncold=0
	while read -r f; do
		grep -q "^func $f: optimized parameters: " "$d/skips" ||
			unexplained+="$f (only 1.32)"$'\n'
		grep -qE "^${f//./\\.}\.(isra|constprop)\.[0-9]+(\.[a-z]+\.[0-9]+)*\.cold\$" "$d/cold" && ncold=$((ncold + 1))
	done < <(sed -n 's/^- func \(.*\)$/\1/p' "$d/funcs.diff")
	while read -r f; do
		grep -qE "^${f//./\\.}(\.[a-z]+\.[0-9]+)*\.cold\$" "$d/cold" || unexplained+="$f (names)"$'\n'
	done < <(sed -n 's/^~ func \([^:]*\):.*/\1/p' "$d/funcs.diff")
	[ -z "$unexplained" ] &&
		ok "$label: the $only132 FUNCs only 1.32 writes are clones or DW_CC_nocall functions rule 6 skips ($ncold split hot/cold, where 1.32 reads no address; the rest are passed a by-value aggregate's field in a register), the $names with other names are split hot/cold" ||
		not_ok "$label: every FUNC difference is a function rule 6 skips, or a name of a hot/cold split function" "$unexplained"
	check "$label: libbpf's dedup removes nothing from ours" "$T_BIN/tools/btfcheck" --dedup "$d/ours.btf"
	check "$label: the running kernel loads ours" sh -c "'$T_BIN/tools/btfcheck' --load '$d/ours.btf'; [ \$? -eq 0 ] || [ \$? -eq 77 ]"
	# Compressed debug sections (CONFIG_DEBUG_INFO_COMPRESSED_ZSTD, zlib):
	# the first kernel's vmlinux again, compressed by objcopy: the same bytes.
	if [ -z "${zdone:-}" ]; then
		zdone=1
		for z in zstd zlib-gabi; do
			objcopy --compress-debug-sections=$z "$v" "$d/v.$z" 2>"$d/v.$z.err" &&
				"$OURS" -J "${FLAGS[@]}" --btf_encode_detached="$d/ours.$z.btf" "$d/v.$z" 2>>"$d/v.$z.err" &&
				cmp -s "$d/ours.btf" "$d/ours.$z.btf" &&
				ok "$label: debug sections compressed with $z: the same BTF bytes ($(stat -c %s "$d/v.$z") of $(stat -L -c %s "$v") bytes)" ||
				not_ok "$label: debug sections compressed with $z: the same BTF bytes" "$(tail -3 "$d/v.$z.err")"
			rm -f "$d/v.$z"
		done
	fi
	c124=$(other p124 "$p124" "$v" "$d" "${FLAGS124[@]}")
	cmaster=$(other master "$master" "$v" "$d" "${FLAGS[@]}")
	# Modules: a spread, each over each tool's own base.
	meq="-"
	msizes="-"
	if [ -n "$moddir" ]; then
		mapfile -t all < <(find "$moddir" -name '*.ko' | sort)
		step=$(( ${#all[@]} / nmods ))
		[ "$step" -ge 1 ] || step=1
		good=0 tried=0 ours_n=0 theirs_n=0
		for ((i = 0; i < ${#all[@]} && tried < nmods; i += step)); do
			m=${all[$i]}
			n=$(basename "$m" .ko)
			tried=$((tried + 1))
			"$OURS" -J "${FLAGS[@]}" --btf_base "$d/ours.btf" --btf_encode_detached="$d/$n.ours.btf" "$m" 2>"$d/$n.err" &&
				"$p132" -J "${FLAGS[@]}" --btf_base "$d/p132.btf" --btf_encode_detached="$d/$n.p132.btf" "$m" >>"$d/$n.err" 2>&1 ||
				{ not_ok "$label: $n: both encode it" "$(cat "$d/$n.err")"; continue; }
			if out=$("$BTFCMP" --drop-base-repeats --ignore-kind-counts ALL --width 0 --base-a "$d/p132.btf" \
				--base-b "$d/ours.btf" "$d/$n.p132.btf" "$d/$n.ours.btf" 2>&1) &&
				"$T_BIN/tools/btfcheck" --base "$d/ours.btf" --dedup "$d/$n.ours.btf" >"$d/$n.check" 2>&1; then
				good=$((good + 1))
			else
				not_ok "$label: $n: 1.32's types less its base repeats, and libbpf's dedup removes nothing" \
					"$(tail -12 <<<"$out"; cat "$d/$n.check")"
			fi
			if [ "$tried" = 1 ] && [ -z "${zmod:-}" ]; then # a module compressed too, the first time
				zmod=1
				objcopy --compress-debug-sections=zstd "$m" "$d/$n.zst.ko" 2>"$d/$n.zst.err" &&
					"$OURS" -J "${FLAGS[@]}" --btf_base "$d/ours.btf" --btf_encode_detached="$d/$n.zst.btf" "$d/$n.zst.ko" 2>>"$d/$n.zst.err" &&
					cmp -s "$d/$n.ours.btf" "$d/$n.zst.btf" &&
					ok "$label: $n with zstd debug sections: the same split BTF bytes" ||
					not_ok "$label: $n with zstd debug sections: the same split BTF bytes" "$(tail -3 "$d/$n.zst.err")"
			fi
			ours_n=$((ours_n + $(bpftool -B "$d/ours.btf" btf dump file "$d/$n.ours.btf" | grep -c '^\[')))
			theirs_n=$((theirs_n + $(bpftool -B "$d/p132.btf" btf dump file "$d/$n.p132.btf" | grep -c '^\[')))
		done
		[ "$good" = "$tried" ] && ok "$label: $tried modules: 1.32's types (less its repeats of the base), libbpf parses and dedups ours"
		meq="$good/$tried"
		msizes="$ours_n/$theirs_n"
	fi
	printf '| %s | %s | %s/%s | %s/%s | %s | %s | %s | %s | %s |\n' "$label" "$teq" "$(wc -l <"$d/tags.ours")" \
		"$(wc -l <"$d/tags.p132")" "$onlyours" "$only132" "$names" "$meq" "$msizes" "$c124" "$cmaster" >>"$O/table.md"
done
echo "== btfpipe against pahole 1.32 (sid: $("$T_TOP/tests/kernel/sid.sh" versions | head -1)); 1.24 and master: type differences, FUNC only ours/only theirs"
cat "$O/table.md"
p=$(grep -c '^pass' "$T_RESULTS"); f=$(grep -c '^fail' "$T_RESULTS"); s=$(grep -c '^skip' "$T_RESULTS")
rm -f "$T_RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
