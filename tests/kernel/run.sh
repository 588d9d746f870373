#!/usr/bin/env bash
# tests/kernel/run.sh (make check-kernel): btfpipe on a real kernel, Debian's
# cloud-amd64 vmlinux, against pahole (Debian's dwarves) and the running
# kernel. Installs linux-image-cloud-amd64-dbg if missing (a 283 MB download),
# so it is not part of `make test`.
#
# Checks: extraction at -j1 and -j2 gives the same bytes and covers every unit;
# the pipeline's BTF loads into the kernel, libbpf's dedup removes nothing from
# it, and it describes the same types and functions as serial
# `pahole -J --btf_gen_floats` (tests/tools/btfcmp.py, arrays flattened since
# pahole flattens multi-dimensional arrays and we nest them).
# Prints wall time, CPU time and peak RSS next to pahole's, from the same run.
# BTFPIPE_VMLINUX=PATH uses another vmlinux.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
. "$(dirname "$0")/../lib.sh"

if [ -z "${BTFPIPE_VMLINUX:-}" ]; then
	if ! ls /usr/lib/debug/boot/vmlinux-*-cloud-amd64 >/dev/null 2>&1; then
		echo "installing linux-image-cloud-amd64-dbg (about 283 MB)..."
		if [ "$(id -u)" -ne 0 ]; then
			echo "btfpipe: check-kernel: error: not root; run: apt-get install linux-image-cloud-amd64-dbg" >&2
			exit 1
		fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-image-cloud-amd64-dbg >/dev/null ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-image-cloud-amd64-dbg >/dev/null; }
	fi
	BTFPIPE_VMLINUX=$(ls /usr/lib/debug/boot/vmlinux-*-cloud-amd64 | sort -V | tail -1)
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
measure "pipeline.sh -j2 (all)" "$T_TOP/pipeline.sh" -j2 --keep "$O/keep" -o "$O/p.btf" "$V" || not_ok "pipeline" "$(cat "$O/err.pipeline.sh -j2 (all)")"
measure "pipeline.sh -j1 (all)" "$T_TOP/pipeline.sh" -j1 -o "$O/p1.btf" "$V" || not_ok "pipeline -j1"

echo "== checks"
check_same "extract: -j1 and -j2 give the same .cus" "$O/v1.cus" "$O/v2.cus"
units=$(python3 "$T_TOP/tests/kernel/count_units.py" "$V")
cus=$("$T_BIN/dwarf-extract" --dump "$O/v2.cus" | grep -c '^cu ')
if [ "$units" = "$cus" ]; then ok "extract: the dump shows every unit ($cus)"; else
	not_ok "extract: the dump shows every unit" "$cus in the dump, $units in .debug_info"; fi
check_same "pipeline: -j1 and -j2 give the same BTF" "$O/p.btf" "$O/p1.btf"
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
if [ -s "$O/pahole.btf" ]; then
	python3 "$T_TOP/tests/tools/btfcmp.py" --funcs --flatten-arrays --width 0 \
		--ignore-kind-counts ARRAY "$O/pahole.btf" "$O/v.btf" >"$O/cmp" 2>&1
	echo "types and functions vs pahole: $(tail -1 "$O/cmp")"
	# Every difference must be one of these, each explained; anything else fails.
	python3 - "$O/cmp" >"$O/cmp-unexplained" <<'PY'
import re, sys
lines = [l.strip() for l in open(sys.argv[1]) if l.startswith("  ")]
expected = [
    # pahole 1.24 drops the per-CPU variable at offset 0 of .data..percpu
    # (its address is 0); pahole master and btfpipe describe it.
    (r"count VAR A=(\d+) B=(\d+)", lambda m: int(m[2]) - int(m[1]) == 1),
    (r"only-in-B var fixed_percpu_data linkage=global struct fixed_percpu_data$", None),
    # ... so the DATASEC differs by exactly that entry.
    (r"only-in-([AB]) datasec \.data\.\.percpu .*", "datasec"),
    # pahole flattens multi-dimensional arrays before deduplicating, so
    # const char x[1][32] and const char y[32] become one type there; nested
    # they stay two. Only CONST nodes above such arrays differ in number.
    (r"count CONST A=(\d+) B=(\d+)", lambda m: 0 < int(m[2]) - int(m[1]) <= 8),
    (r"only-in-B const\(\[0\]\(const\(int 'char'\)\)\)$", None),
]
datasec = {}
for line in lines:
    for pat, cond in expected:
        m = re.match(pat, line)
        if not m:
            continue
        if cond == "datasec":
            datasec[m[1]] = line.split(" datasec ", 1)[1]
        elif cond is not None and not cond(m):
            continue
        break
    else:
        print(line)
if datasec:
    a = datasec.get("A", "")
    b = re.sub(r"fixed_percpu_data@0\+\d+, ", "", datasec.get("B", ""))
    if a.replace("only-in-A ", "") != b:
        print("datasec differs by more than fixed_percpu_data")
PY
	if [ ! -s "$O/cmp-unexplained" ] && grep -q '^btfcmp: ' "$O/cmp"; then
		ok "types and functions equal to pahole 1.24 serial, but for the listed, explained differences"
	else
		not_ok "types and functions equal to pahole 1.24 serial" "$(head -40 "$O/cmp-unexplained")"
	fi
	grep -E '^(STRUCT|UNION|ENUM|FUNC|FUNC_PROTO|VAR) ' "$O/cmp" | sed 's/^/    /'
fi
echo "== measured"
cat "$O/measured"
p=$(grep -c '^pass$' "$T_RESULTS"); f=$(grep -c '^fail$' "$T_RESULTS"); s=$(grep -c '^skip$' "$T_RESULTS")
rm -f "$T_RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
