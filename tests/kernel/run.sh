#!/usr/bin/env bash
# tests/kernel/run.sh (make check-kernel): btfpipe on a real kernel, Debian's
# cloud-amd64 vmlinux, against pahole (Debian's dwarves) and the running
# kernel. Installs linux-image-cloud-amd64-dbg if missing (a 283 MB download),
# so it is not part of `make test`.
#
# Checks: extraction at -j1, -j2 and -j8 gives the same bytes (and so do the
# merge and the BTF) and covers every unit; the DIE reader gives what libdw
# alone gives (--libdw-only);
# the pipeline's BTF loads into the kernel, libbpf's dedup removes nothing from
# it, and it describes the same types and functions as serial
# `pahole -J --btf_gen_floats` (tools/btfcmp.py, arrays flattened since
# pahole flattens multi-dimensional arrays and we nest them).
# Prints wall time, CPU time and peak RSS next to pahole's, from the same run.
# BTFPIPE_VMLINUX=PATH uses another vmlinux.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
. "$(dirname "$0")/../lib.sh"

if [ -z "${BTFPIPE_VMLINUX:-}" ]; then
	BTFPIPE_VMLINUX=$("$T_TOP/tests/kernel/dbg.sh") || exit 1
fi
V=$BTFPIPE_VMLINUX
echo "vmlinux: $V ($(stat -c %s "$V") bytes)"
O=$T_OUT

# measure NAME CMD...: run CMD under /usr/bin/time; record "NAME wall cpu rss".
measure() {
	local name=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$O/time.$name" "$@" >"$O/out.$name" 2>"$O/err.$name"
	local rc=$?
	read -r wall user sys rss <"$O/time.$name"
	printf '%-28s wall %6.2f s  cpu %6.2f s  rss %5d MiB  (exit %d)\n' "$name" "$wall" \
		"$(awk -v a="$user" -v b="$sys" 'BEGIN { print a + b }')" $((rss / 1024)) $rc | tee -a "$O/measured"
	return $rc
}

: >"$O/measured"
echo "== measurements (this machine, this run)"
if have pahole; then
	measure "pahole -J (serial)" pahole -J --btf_gen_floats --btf_encode_detached="$O/pahole.btf" "$V" ||
		not_ok "pahole ran" "$(cat "$O/err.pahole -J (serial)")"
else
	skip "pahole comparison" "pahole not installed (make deps)"
fi
measure "dwarf-extract -j1" "$T_BIN/dwarf-extract" -j1 -o "$O/v1.cus" "$V" || not_ok "extract -j1" "$(cat "$O/err.dwarf-extract -j1")"
measure "dwarf-extract -j2" "$T_BIN/dwarf-extract" -j2 -o "$O/v2.cus" "$V" || not_ok "extract -j2" "$(cat "$O/err.dwarf-extract -j2")"
measure "dedup-merge -j2" "$T_BIN/dedup-merge" -j2 -o "$O/v.graph" "$O/v2.cus" || not_ok "merge" "$(cat "$O/err.dedup-merge -j2")"
measure "btf-emit" "$T_BIN/btf-emit" --elf "$V" -o "$O/v.btf" "$O/v.graph" || not_ok "emit" "$(cat "$O/err.btf-emit")"
measure "pipeline.sh -j2 (all)" "$T_TOP/pipeline.sh" --features default -j2 --keep "$O/keep" -o "$O/p.btf" "$V" || not_ok "pipeline" "$(cat "$O/err.pipeline.sh -j2 (all)")"
measure "pipeline.sh -j1 (all)" "$T_TOP/pipeline.sh" --features default -j1 -o "$O/p1.btf" "$V" || not_ok "pipeline -j1"

echo "== checks"
check_same "extract: -j1 and -j2 give the same .cus" "$O/v1.cus" "$O/v2.cus"
units=$(python3 "$T_TOP/tests/kernel/count_units.py" "$V")
cus=$("$T_BIN/dwarf-extract" --dump "$O/v2.cus" | grep -c '^cu ')
if [ "$units" = "$cus" ]; then ok "extract: the dump shows every unit ($cus)"; else
	not_ok "extract: the dump shows every unit" "$cus in the dump, $units in .debug_info"; fi
check_same "pipeline: -j1 and -j2 give the same BTF" "$O/p.btf" "$O/p1.btf"
"$T_BIN/dwarf-extract" -j2 -q --libdw-only -o "$O/v-libdw.cus" "$V" 2>"$O/err.libdw" ||
	not_ok "extract --libdw-only" "$(cat "$O/err.libdw")"
check_same "extract: the DIE reader gives the .cus libdw alone gives" "$O/v2.cus" "$O/v-libdw.cus"
# More threads than CPUs: the order of work changes most, the bytes must not.
"$T_TOP/pipeline.sh" --features default -j8 -q --keep "$O/keep8" -o "$O/p8.btf" "$V" 2>"$O/err.p8" || not_ok "pipeline -j8" "$(cat "$O/err.p8")"
check_same "extract: -j8 gives the same .cus as -j2" "$O/keep8/$(basename "$V").cus" "$O/keep/$(basename "$V").cus"
check_same "merge: -j8 gives the same .graph as -j2" "$O/keep8/$(basename "$V").graph" "$O/keep/$(basename "$V").graph"
check_same "pipeline: -j8 gives the same BTF as -j1" "$O/p8.btf" "$O/p1.btf"
check_same "pipeline: same BTF as the stages run by hand" "$O/p.btf" "$O/v.btf"
"$T_BIN/tools/btfcheck" --dedup "$O/v.btf" >"$O/btfcheck" 2>&1
rc=$?
cat "$O/btfcheck"
[ $rc -eq 0 ] && ok "libbpf parses it and btf__dedup removes nothing" || not_ok "libbpf dedup check" "$(tail -2 "$O/btfcheck")"
"$T_BIN/tools/btfcheck" --load "$O/v.btf" >"$O/load" 2>&1
rc=$?
case $rc in
0) ok "the running kernel loads it ($(uname -r))" ;;
77) skip "kernel load" "$(tail -1 "$O/load")" ;;
*) not_ok "the running kernel loads it" "$(tail -20 "$O/load")" ;;
esac
"$T_BIN/btf-emit" --elf "$V" --skip-report "$O/skips" -o "$O/v-again.btf" "$O/v.graph" >/dev/null 2>&1
check_same "emit: the same BTF every run" "$O/v.btf" "$O/v-again.btf"
echo "skip report, functions by reason:"
sed -n 's/^func [^:]*: \(.*\) (CU .*/\1/p' "$O/skips" | sort | uniq -c | sort -rn | sed 's/^/    /'
if [ -s "$O/pahole.btf" ]; then
	python3 "$T_TOP/tools/btfcmp.py" --flatten-arrays --width 0 "$O/pahole.btf" "$O/v.btf" >"$O/cmp-types" 2>&1
	python3 "$T_TOP/tools/btfcmp.py" --funcs --flatten-arrays --width 0 "$O/pahole.btf" "$O/v.btf" >"$O/cmp" 2>&1
	echo "types vs pahole 1.24: $(tail -1 "$O/cmp-types")"
	echo "types and functions vs pahole 1.24: $(tail -1 "$O/cmp")"
	# Every difference must have a documented cause (tests/kernel/explain.py).
	if python3 "$T_TOP/tests/kernel/explain.py" --types "$O/cmp-types" --funcs "$O/cmp" \
		--skips "$O/skips" --elf "$V" >"$O/explained"; then
		ok "every difference from pahole 1.24 (types, functions, variables) has a documented cause"
	else
		not_ok "every difference from pahole 1.24 has a documented cause" "$(grep UNEXPLAINED "$O/explained" | head -20)"
	fi
	sed 's/^/    /' "$O/explained"
	echo "counts (pahole 1.24 serial / btfpipe / the vmlinux's embedded .BTF):"
	for k in STRUCT UNION ENUM ENUM64 TYPEDEF FUNC FUNC_PROTO VAR DATASEC; do
		a=$(bpftool btf dump file "$O/pahole.btf" | grep -c "^\[[0-9]*\] $k ")
		b=$(bpftool btf dump file "$O/v.btf" | grep -c "^\[[0-9]*\] $k ")
		c=$(bpftool btf dump file "$V" | grep -c "^\[[0-9]*\] $k ")
		printf '    %-11s %7d %7d %7d\n' "$k" "$a" "$b" "$c"
	done
fi

# The three debugging questions, answered on the real kernel.
fn=$(sed -n 's/^func \([^:]*\): inconsistent prototype.*/\1/p' "$O/skips" | head -1)
if [ -n "$fn" ]; then
	"$T_BIN/btf-emit" --elf "$V" --explain "$fn" "$O/v.graph" >"$O/explain" 2>&1
	if grep -q 'decision: skipped: inconsistent prototype' "$O/explain" && grep -q '^ DWARF descriptions' "$O/explain"; then
		ok "explain: $fn, skipped for an inconsistent prototype, with its DWARF descriptions"
	else
		not_ok "explain: $fn" "$(head -20 "$O/explain")"
	fi
	sed 's/^/    /' "$O/explain" | head -12
fi
"$T_BIN/dedup-merge" -j1 -o "$O/v1.graph" "$O/v2.cus"
if "$T_TOP/tools/btfpipe-diff" -q "$O/v1.graph" "$O/v.graph" >"$O/diff-same" 2>&1; then
	ok "diff: the -j1 and -j2 graphs are equal (exit 0)"
else
	not_ok "diff: the -j1 and -j2 graphs are equal" "$(cat "$O/diff-same")"
fi
"$T_BIN/btf-emit" --elf "$V" --features +global_var -o "$O/v-global.btf" "$O/v.graph"
"$T_TOP/tools/btfpipe-diff" "$O/v.btf" "$O/v-global.btf" >"$O/diff-global" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^+ datasec \.data$' "$O/diff-global"; then
	ok "diff: +global_var adds the .data DATASEC ($(tail -1 "$O/diff-global"))"
else
	not_ok "diff: +global_var against default" "exit $rc: $(tail -5 "$O/diff-global")"
fi
"$T_BIN/dedup-merge" --provenance --dump "$O/v.graph" >"$O/prov"
line=$(grep -A400 '^#[0-9]* struct "task_struct" ' "$O/prov" | grep -m1 'from:')
case "$line" in *"from: "[0-9]*" CUs: "*kernel/fork.c*) ok "provenance: struct task_struct lists its CUs, kernel/fork.c among them" ;;
*) not_ok "provenance: struct task_struct lists its CUs" "${line:0:300}" ;; esac
echo "    ${line:0:200}..."

# Modules: split BTF over our vmlinux BTF, against the .BTF Debian shipped in
# each module (pahole 1.24 over the embedded vmlinux BTF), and pahole's time.
mods=$(find /usr/lib/debug/lib/modules/*/kernel -name '*.ko' 2>/dev/null | sort)
nmods=$(echo "$mods" | grep -c .)
if [ "${nmods:-0}" -lt 20 ]; then
	skip "modules" "fewer than 20 modules in the dbg package"
else
	step=$((nmods / 25))
	sel=$(echo "$mods" | awk -v s="$step" 'NR % s == 1' | head -25)
	mkdir -p "$O/mod"
	python3 "$T_TOP/tools/btfcmp.py" --flatten-arrays --list --width 0 "$O/v.btf" >"$O/base.list" 2>&1
	tot_ours=0 tot_pahole=0 typeok=0 ntried=0 fexpl=0 funex=0
	: >"$O/mod/times"
	for ko in $sel; do
		m=$(basename "$ko" .ko)
		ntried=$((ntried + 1))
		s0=$(date +%s%N)
		if ! "$T_TOP/pipeline.sh" --features default -j2 --btf-base "$O/v.btf" -o "$O/mod/$m.btf" "$ko" 2>"$O/mod/$m.err"; then
			not_ok "module $m: pipeline" "$(cat "$O/mod/$m.err")"
			continue
		fi
		s1=$(date +%s%N)
		pahole -J --btf_gen_floats --btf_base "$V" --btf_encode_detached="$O/mod/$m.pahole.btf" "$ko" >/dev/null 2>&1
		s2=$(date +%s%N)
		to=$(( (s1 - s0) / 1000000 )) tp=$(( (s2 - s1) / 1000000 ))
		tot_ours=$((tot_ours + to)) tot_pahole=$((tot_pahole + tp))
		echo "$m $to $tp" >>"$O/mod/times"
		if ! "$T_BIN/tools/btfcheck" --base "$O/v.btf" --dedup "$O/mod/$m.btf" >"$O/mod/$m.check" 2>&1; then
			not_ok "module $m: libbpf parses it over our vmlinux BTF, dedup removes nothing" "$(tail -2 "$O/mod/$m.check")"
			continue
		fi
		python3 "$T_TOP/tools/btfcmp.py" --flatten-arrays --width 0 --base-a "$V" --base-b "$O/v.btf" \
			"$ko" "$O/mod/$m.btf" >"$O/mod/$m.types" 2>&1
		python3 "$T_TOP/tools/btfcmp.py" --funcs --flatten-arrays --width 0 --base-a "$V" --base-b "$O/v.btf" \
			"$ko" "$O/mod/$m.btf" >"$O/mod/$m.funcs" 2>&1
		# Equal, but where pahole 1.24 repeats a type the base already has
		# (libbpf's dedup in one pass: a struct pointing at a fwd the base
		# defines does not match the base's until that fwd is resolved);
		# btf-emit dedups until stable and refers to the base's type.
		if python3 - "$O/mod/$m.types" "$O/base.list" >"$O/mod/$m.unexplained" <<'PY'
import re, sys
lines = [l.strip() for l in open(sys.argv[1]) if l.startswith("  ")]
base = {l.strip().split(" ", 1)[1] for l in open(sys.argv[2]) if " " in l.strip()}
dup = 0
rest = []
for l in lines:
    m = re.match(r"only-in-A (\S+) (.*)$", l)
    if m and m[1] in ("struct", "union", "enum", "typedef") and (m[1] + " " + m[2]) in base:
        dup += 1
        continue
    rest.append(l)
for l in rest:
    if dup and (l.startswith("count ") or l.startswith("only-in-A ")):
        continue  # the repeated type's own pointers and counts
    print(l)
PY
		then
			if [ -s "$O/mod/$m.unexplained" ]; then
				not_ok "module $m: types equal to the .BTF Debian shipped" "$(head -20 "$O/mod/$m.unexplained")"
			else
				typeok=$((typeok + 1))
				grep -q '^  only-in-A ' "$O/mod/$m.types" &&
					echo "module $m: Debian's .BTF repeats types of the base (pahole 1.24's one-pass dedup); ours refers to the base's"
			fi
		else
			not_ok "module $m: compare" "$(cat "$O/mod/$m.unexplained")"
		fi
		fd=$(grep -c '^  only-in-[AB] func ' "$O/mod/$m.funcs")
		fexpl=$((fexpl + fd))
	done
	[ "$typeok" -eq "$ntried" ] && ok "modules: $typeok of $ntried encoded as split BTF, parsed by libbpf over our vmlinux BTF, types equal to Debian's shipped .BTF"
	echo "modules: $fexpl FUNC lines differ from Debian's .BTF in all (function rules of current pahole vs 1.24; see each $O/mod/*.funcs)"
	echo "modules: btfpipe ${tot_ours} ms, pahole 1.24 ${tot_pahole} ms for $ntried modules (ratio $(awk -v a=$tot_ours -v b=$tot_pahole 'BEGIN { printf "%.2f", a / b }'))" | tee -a "$O/measured"
fi
echo "== the cache (format/CU-CACHE.md) on the real vmlinux and modules"
C="$O/cache"
rm -rf "$C"
measure "extract -j2, cold cache (stores)" "$T_BIN/dwarf-extract" -j2 -q --cache "$C" --cache-stats -o "$O/vc1.cus" "$V" ||
	not_ok "extract with a cold cache" "$(cat "$O/err.extract -j2, cold cache (stores)")"
check_same "cache: a cold cache gives the uncached .cus" "$O/v2.cus" "$O/vc1.cus"
measure "extract -j2, warm cache" "$T_BIN/dwarf-extract" -j2 -q --cache "$C" --cache-stats -o "$O/vc2.cus" "$V" ||
	not_ok "extract with a warm cache"
check_same "cache: a warm cache gives the uncached .cus" "$O/v2.cus" "$O/vc2.cus"
hits=$(sed -n 's/.*(extracted CUs): this run: \([0-9]*\) hits.*/\1/p' "$O/err.extract -j2, warm cache")
[ "$hits" = "$cus" ] && ok "cache: every one of the $cus units hits" ||
	not_ok "cache: every unit hits" "$hits hits of $cus: $(cat "$O/err.extract -j2, warm cache")"
BTFPIPE_CACHE_VERIFY=1 "$T_BIN/dwarf-extract" -j2 -q --cache "$C" -o "$O/vc3.cus" "$V" 2>"$O/err.verify"
check_same "cache: --cache-verify extracts every hit again and agrees" "$O/v2.cus" "$O/vc3.cus"
"$T_BIN/dwarf-extract" -j8 -q --cache "$C" -o "$O/vc8.cus" "$V"
check_same "cache: -j8 from the cache, same bytes" "$O/v2.cus" "$O/vc8.cus"
# Modules through pipeline.sh, as a kernel build runs them after vmlinux changed.
cm=0 cbad=0
for m in $(echo "$mods" | awk 'NR % 50 == 0'); do
	n=$(basename "$m")
	"$T_TOP/pipeline.sh" --features default -j1 -q --btf-base "$O/v.btf" -o "$O/mc.$n.plain.btf" "$m" &&
	"$T_TOP/pipeline.sh" --features default -j1 -q --cache "$C" --btf-base "$O/v.btf" -o "$O/mc.$n.cold.btf" "$m" &&
	BTFPIPE_CACHE_VERIFY=1 "$T_TOP/pipeline.sh" --features default -j1 -q --cache "$C" --btf-base "$O/v.btf" -o "$O/mc.$n.warm.btf" "$m" || cbad=$((cbad + 1))
	cmp -s "$O/mc.$n.plain.btf" "$O/mc.$n.cold.btf" && cmp -s "$O/mc.$n.plain.btf" "$O/mc.$n.warm.btf" || cbad=$((cbad + 1))
	cm=$((cm + 1))
done
[ "$cm" -gt 0 ] && [ "$cbad" -eq 0 ] && ok "cache: $cm modules, cold and warm cache give the uncached split BTF" ||
	not_ok "cache: modules through the cache" "$cbad of $cm differ or failed"

echo "== measured"
cat "$O/measured"
p=$(grep -c '^pass$' "$T_RESULTS"); f=$(grep -c '^fail$' "$T_RESULTS"); s=$(grep -c '^skip$' "$T_RESULTS")
rm -f "$T_RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
