#!/usr/bin/env bash
# bench/archive.sh (make bench-archive): btfpipe-archive against pahole run
# as BTFHub runs it, on a series of real Debian kernels (downloads ~2.6 GB
# once, into BENCH_ARCHIVE_DL).
#
# Kernels (BENCH_ARCHIVE_PKGS, else picked from apt's lists, newest first):
# three ABIs of the 6.1 cloud-amd64 flavour, two 6.12 cloud-amd64 ones, one
# arm64 and one s390x (big-endian), each a -dbg package.
#
# Two measurements, each pahole then btfpipe on the same inputs:
#  vmlinux   the unpacked vmlinux files (unpacked once, not timed): pahole
#            1.24 as BTFHub runs it, serial per kernel, as many kernels at
#            once as there are CPUs (xargs -P); btfpipe-archive, one kernel
#            after the other in the series' order, -j NCPU, one cache that
#            starts empty: a later kernel of a series reuses the earlier
#            ones' CUs.
#  packages  from the .deb files: pahole after the same streamed unpacking
#            btfpipe-archive does (dpkg-deb | tar --occurrence to the
#            vmlinux, then pahole on it), as many at once as CPUs;
#            btfpipe-archive on the .debs with a new empty cache; then its
#            job list under GNU parallel (-j NCPU, one thread each).
# Then a batch SIGKILLed part way and rerun: the same tree as the
# uninterrupted batch (else FAIL).
#
# Per kernel: CPU and peak RSS of each side, cache hits, and whether the
# types equal pahole 1.24's (tools/btfcmp.py --flatten-arrays; every
# difference must be a row of EXPECTED below, with the reason, else FAIL)
# and whether libbpf's dedup removes nothing from ours (else FAIL).
# pahole 1.24 knows only --btf_gen_floats of BTFHub's flags; btfpipe gets all
# three (the archive's btfhub preset), so the function sets differ and FUNC,
# FUNC_PROTO counts are not compared. With pahole master built
# (tests/out/shared/anchors/bin/pahole, or BENCH_PAHOLE_MASTER), the types
# are also compared with its output under BTFHub's whole flag set.
# Report on stdout and in bench/results/archive-latest.md.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_BIN:-$top/bin}
pahole=${BENCH_PAHOLE:-/usr/bin/pahole}
master=${BENCH_PAHOLE_MASTER:-}
for m in "$top/tests/out/shared/anchors/bin/pahole" "$top/tests/out/anchors/bin/pahole"; do
	[ -z "$master" ] && [ -x "$m" ] && master=$m
done
dl=${BENCH_ARCHIVE_DL:-$top/tests/out/archive-dl}
ncpu=$(nproc)
A=$bin/btfpipe-archive
BTFCMP=$top/tools/btfcmp.py
W=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe-bench-archive.XXXXXX") || exit 3
trap 'rm -rf "$W"' EXIT
mkdir -p "$top/bench/results" "$dl"
failed=0
. "$top/bench/lib.sh"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f\n", b - a }'; }

# EXPECTED: "GLOB<TAB>ERE<TAB>WHY": a btfcmp difference line (ERE, whole line)
# that is explained for the kernels matching GLOB ("KERNEL" for pahole 1.24,
# "KERNEL@master" for pahole master).
TAB=$'\t'
EXPECTED="\
*${TAB}^count CONST A=[0-9]+ B=[0-9]+\$${TAB}CONSTs over multi-dimensional arrays: pahole flattens arrays before its dedup, so const char[1][32] and const char[32] become one type (tests/kernel/explain.py)
*${TAB}^only-in-B const\\(\\[0\\]\\(const\\(int 'char'\\)\\)\\)\$${TAB}the same: a const over a nested array with a 0 dimension, one pahole's flattening merged away
*-arm64*${TAB}^only-in-A \\*\\(\\*\\(fwd struct gic_chip_data\\)\\)\$${TAB}pahole keeps struct gic_chip_pm's fwd (its CU order made libbpf merge the definition's copy into the fwd's); we have the definition (irq-gic.c's, which includes the header): both are libbpf fixed points
*-arm64*${TAB}^only-in-A fwd struct gic_chip_data\$${TAB}the same fwd
*-arm64*${TAB}^only-in-[AB] struct gic_chip_pm size=24 .*\$${TAB}the same: gic_chip_pm with the fwd (pahole) or the definition (ours)
*-arm64*${TAB}^count (PTR|FWD) A=[0-9]+ B=[0-9]+\$${TAB}the same: pahole's fwd and its pointers
*-amd64${TAB}^only-in-B var fixed_percpu_data linkage=global struct fixed_percpu_data\$${TAB}at offset 0 of .data..percpu, which pahole 1.24 drops (master encodes it; tests/kernel/explain.py)
*-amd64${TAB}^count VAR A=([0-9]+) B=[0-9]+\$${TAB}the same variable
*-amd64${TAB}^only-in-[AB] datasec \.data\.\.percpu .*\$${TAB}the same variable in the DATASEC (make check-kernel checks it is the only difference)"

# types_eq LABEL CMP WHO: sets EQ to "yes (N explained)" when btfcmp's output
# CMP has no difference that a row of EXPECTED for LABEL does not explain
# (tests/expected.sh), else to "NO" after a FAIL naming them.
. "$top/tests/expected.sh"
types_eq() {
	local unexp
	EQ=NO
	if ! grep -q '^btfcmp: [0-9]* differences' "$2"; then
		fail "$1: btfcmp could not compare ours with $3: $(tail -2 "$2")"
	elif unexp=$(unexplained "$1" "$2") && [ -z "$unexp" ]; then
		EQ="yes ($(sed -n 's/^btfcmp: \([0-9]*\) differences.*/\1/p' "$2") explained)"
	else
		fail "$1: type differences from $3 no row explains:"
		note "$unexp"
	fi
}

# --- The packages -------------------------------------------------------
pick() { # PATTERN N: the N newest package names matching PATTERN
	apt-cache search -n "$1" 2>/dev/null | cut -d' ' -f1 | grep -E "$1" | sort -Vr | head -n "$2"
}
if [ -n "${BENCH_ARCHIVE_PKGS:-}" ]; then
	pkgs=$BENCH_ARCHIVE_PKGS
else
	for a in arm64 s390x; do
		dpkg --print-foreign-architectures | grep -qx $a && continue
		[ "$(id -u)" -eq 0 ] || { note "bench-archive: needs root to add the $a architecture"; exit 1; }
		dpkg --add-architecture $a && updated=0
	done
	[ "${updated:-1}" = 0 ] && apt-get update -qq
	pkgs="$(pick '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-dbg$' 3 | sort -V)
$(pick '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-dbg$' 2 | sort -V)
$(pick '^linux-image-6\.1\.0-[0-9]+-arm64-dbg$' 1 | sed 's/$/:arm64/')
$(pick '^linux-image-6\.1\.0-[0-9]+-s390x-dbg$' 1 | sed 's/$/:s390x/')"
fi
debs=() names=()
for p in $pkgs; do
	n=${p%%:*}
	f=$(ls "$dl/${n}_"*.deb 2>/dev/null | head -1)
	if [ -z "$f" ]; then
		note "bench-archive: downloading $p"
		(cd "$dl" && apt-get download "$p" >/dev/null 2>&1) || { fail "cannot download $p"; continue; }
		f=$(ls "$dl/${n}_"*.deb 2>/dev/null | head -1)
	fi
	[ -n "$f" ] || { fail "no .deb for $p"; continue; }
	debs+=("$f")
	k=${n#linux-image-}
	names+=("${k%-dbg}")
done
[ ${#debs[@]} -gt 0 ] || { note "bench-archive: no kernels"; exit 1; }
# The unpacked vmlinux files (once; not timed).
mkdir -p "$dl/vmlinux"
vmls=()
for i in "${!debs[@]}"; do
	v=$dl/vmlinux/vmlinux-${names[$i]}
	if [ ! -s "$v" ]; then
		dpkg-deb --fsys-tarfile "${debs[$i]}" 2>/dev/null | tar -xO --occurrence --wildcards './usr/lib/debug/boot/vmlinux-*' >"$v.tmp" &&
			mv "$v.tmp" "$v" || fail "cannot unpack ${debs[$i]}"
	fi
	vmls+=("$v")
done
note "bench-archive: ${#vmls[@]} kernels: ${names[*]}"

# --- pahole side ----------------------------------------------------------
# pahole_batch DIR PAHOLE FLAGS FROM_DEB: every kernel into DIR/KERNEL.btf,
# NCPU at once; per kernel DIR/KERNEL.time ("wall user sys rss"); the batch's
# wall in DIR/wall, its CPU in DIR/cpu.
pahole_batch() {
	local d=$1 ph=$2 flags=$3 deb=$4 t0 i
	mkdir -p "$d"
	for i in "${!names[@]}"; do
		if [ "$deb" = 1 ]; then printf '%s %s\n' "${names[$i]}" "${debs[$i]}"; else printf '%s %s\n' "${names[$i]}" "${vmls[$i]}"; fi
	done >"$d/list"
	cat >"$d/one.sh" <<EOF
#!/bin/bash
k=\$1 in=\$2 v=\$2
if [ "$deb" = 1 ]; then
	v=$d/\$k.vmlinux
	dpkg-deb --fsys-tarfile "\$in" 2>/dev/null | tar -xO --occurrence --wildcards './usr/lib/debug/boot/vmlinux-*' >"\$v"
fi
/usr/bin/time -f '%e %U %S %M' -o "$d/\$k.time" $ph $flags --btf_encode_detached="$d/\$k.btf" "\$v" >"$d/\$k.log" 2>&1
[ "$deb" = 1 ] && rm -f "\$v"
exit 0
EOF
	chmod +x "$d/one.sh"
	t0=$(now)
	/usr/bin/time -f '%U %S' -o "$d/cpu.t" xargs -P "$ncpu" -L 1 "$d/one.sh" <"$d/list"
	since "$t0" >"$d/wall"
	awk '{ print $1 + $2 }' "$d/cpu.t" >"$d/cpu"
}

# ours_batch DIR INPUT...: btfpipe-archive over the inputs, with a new cache.
ours_batch() {
	local d=$1 t0; shift
	t0=$(now)
	/usr/bin/time -f '%U %S %M' -o "$d.cpu.t" "$A" -j "$ncpu" --cache "$d.cache" --distro d --release r -o "$d" "$@" \
		>"$d.log" 2>&1 || fail "btfpipe-archive: $(tail -3 "$d.log")"
	since "$t0" >"$d.wall"
	awk '{ print $1 + $2 }' "$d.cpu.t" >"$d.cpu"
}

# field DIR KERNEL NAME: a number from OURS' manifest record of KERNEL.
field() {
	python3 -c "import json,sys
for k in json.load(open(sys.argv[1] + '/manifest.json'))['kernels']:
    if k['kernel'] == sys.argv[2]: print(k.get(sys.argv[3], 0))" "$1" "$2" "$3"
}

note "bench-archive: vmlinux: pahole 1.24 ($pahole), -P $ncpu"
pahole_batch "$W/p124" "$pahole" "--btf_gen_floats" 0
note "bench-archive: vmlinux: btfpipe-archive -j $ncpu, kernels in series"
ours_batch "$W/ours" "${vmls[@]}"
if [ -n "$master" ]; then
	note "bench-archive: vmlinux: pahole master ($master), BTFHub's flags, -P $ncpu"
	pahole_batch "$W/pmaster" "$master" "--btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized" 0
	# pahole master (on libbpf 1.8) writes a 32-byte header even without
	# a kind layout; libbpf 1.1 refuses that header in BTF of the other
	# byte order (s390x here). Its last 8 bytes are then 0: cut to 24.
	for f in "$W"/pmaster/*.btf; do
		python3 - "$f" <<'PY'
import struct, sys
p = sys.argv[1]
b = open(p, "rb").read()
e = "<" if b[:2] == b"\x9f\xeb" else ">"
if struct.unpack_from(e + "I", b, 4)[0] == 32 and b[24:32] == bytes(8):
    open(p, "wb").write(b[:4] + struct.pack(e + "I", 24) + b[8:24] + b[32:])
PY
	done
fi

# --- per kernel -------------------------------------------------------------
{
	echo "| kernel | arch | pahole 1.24 CPU s | peak RSS MB | btfpipe CPU s | peak RSS MB | CPU ratio | RSS ratio | CUs from the cache | types = pahole 1.24 | = pahole master | libbpf dedup removes |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"
} >"$W/kernels.md"
for i in "${!names[@]}"; do
	k=${names[$i]}
	# (time(1)'s last line: a failed run has "Command exited ..." first.)
	read -r pw pu ps prss < <(tail -1 "$W/p124/$k.time" 2>/dev/null) || { pw=0 pu=0 ps=0 prss=0; }
	pcpu=$(awk -v a="$pu" -v b="$ps" 'BEGIN { print a + b }')
	out=$(find "$W/ours" -name "$k.btf" | head -1)
	ocpu=$(field "$W/ours" "$k" cpu_s) orss=$(field "$W/ours" "$k" peak_rss_kb)
	hits=$(field "$W/ours" "$k" cache_hits) miss=$(field "$W/ours" "$k" cache_misses)
	unc=$(field "$W/ours" "$k" cache_uncacheable)
	arch=$(field "$W/ours" "$k" arch)
	eq="-" eqm="-" dd="-"
	if [ -s "$W/p124/$k.btf" ] && [ -n "$out" ]; then
		python3 "$BTFCMP" --flatten-arrays "$W/p124/$k.btf" "$out" >"$W/$k.cmp" 2>&1
		types_eq "$k" "$W/$k.cmp" "pahole 1.24"
		eq=$EQ
		dd=$("$bin/tools/btfcheck" --dedup "$out" 2>&1 | sed -n 's/^dedup \([0-9]*\) -> \([0-9]*\)$/\1 \2/p' |
			awk '{ print $1 - $2 }')
		[ "$dd" = 0 ] || fail "$k: libbpf's dedup removes ${dd:-?} types from ours"
	else
		fail "$k: no BTF from one side"
	fi
	if [ -n "$master" ] && [ -s "$W/pmaster/$k.btf" ] && [ -n "$out" ]; then
		python3 "$BTFCMP" --flatten-arrays "$W/pmaster/$k.btf" "$out" >"$W/$k.mcmp" 2>&1
		types_eq "$k@master" "$W/$k.mcmp" "pahole master"
		eqm=$EQ
	fi
	printf '| %s | %s | %.2f | %d | %.2f | %d | %s | %s | %s of %s | %s | %s | %s |\n' "$k" "$arch" "$pcpu" $((prss / 1024)) \
		"$ocpu" $((${orss:-0} / 1024)) "$(ratio "$ocpu" "$pcpu")" "$(ratio "${orss:-0}" "$prss")" "$hits" \
		"$((hits + miss + unc))$([ "${unc:-0}" -gt 0 ] && echo " ($unc uncacheable)")" "$eq" "$eqm" "$dd" >>"$W/kernels.md"
done
prss_max=$(cat "$W"/p124/*.time | awk '$4 > m { m = $4 } END { print m + 0 }')
orss_max=$(awk '{ print $3 }' "$W/ours.cpu.t")
pcpu1=$(cat "$W"/p124/*.time | awk '{ s += $2 + $3; n++ } END { printf "%.2f", s / n }')

# --- packages -------------------------------------------------------------
note "bench-archive: packages: pahole 1.24 after the same streamed unpacking, -P $ncpu"
pahole_batch "$W/pdeb" "$pahole" "--btf_gen_floats" 1
note "bench-archive: packages: btfpipe-archive -j $ncpu on the .debs"
ours_batch "$W/odeb" "${debs[@]}"
note "bench-archive: packages: the job list under GNU parallel -j $ncpu (one thread each)"
if command -v parallel >/dev/null; then
	"$A" -j 1 --cache "$W/par.cache" --distro d --release r --job-list -o "$W/par" "${debs[@]}" >"$W/par.jobs"
	t0=$(now)
	/usr/bin/time -f '%U %S' -o "$W/par.cpu.t" sh -c "head -n -1 '$W/par.jobs' | parallel --will-cite -j $ncpu && tail -1 '$W/par.jobs' | sh" \
		>"$W/par.log" 2>&1 || fail "the job list under GNU parallel: $(tail -3 "$W/par.log")"
	since "$t0" >"$W/par.wall"
	awk '{ print $1 + $2 }' "$W/par.cpu.t" >"$W/par.cpu"
else
	note "bench-archive: GNU parallel is not installed (make deps): no job-list run"
fi
tree() { (cd "$1" && find . -path ./.jobs -prune -o -type f ! -name manifest.json -print0 | LC_ALL=C sort -z | xargs -0r sha256sum); }
tree "$W/odeb" >"$W/odeb.tree"
if [ -f "$W/par.wall" ]; then
	tree "$W/par" >"$W/par.tree"
	cmp -s "$W/par.tree" "$W/odeb.tree" && par_same=yes || { par_same=NO; fail "the GNU parallel run's tree differs from the batch's"; }
fi
# The vmlinux and the package runs give the same BTF.
for i in "${!names[@]}"; do
	a=$(find "$W/ours" -name "${names[$i]}.btf" | head -1) b=$(find "$W/odeb" -name "${names[$i]}.btf" | head -1)
	cmp -s "$a" "$b" || fail "${names[$i]}: the package's BTF differs from the unpacked vmlinux's"
done

# --- killed ----------------------------------------------------------------
kill_at=$(awk -v w="$(cat "$W/odeb.wall")" 'BEGIN { printf "%.1f", w * 0.4 }')
note "bench-archive: a batch SIGKILLed after ${kill_at} s, then rerun"
"$A" -j "$ncpu" --cache "$W/kill.cache" --distro d --release r -o "$W/kill" "${debs[@]}" >/dev/null 2>&1 &
kpid=$!
sleep "$kill_at"
pkill -KILL -P "$kpid"; kill -KILL "$kpid"; wait "$kpid" 2>/dev/null
pkill -KILL -f "$W/kill" 2>/dev/null
done_before=$(find "$W/kill" -name '*.btf' -path '*/r/*' | wc -l)
"$A" -j "$ncpu" --cache "$W/kill.cache" --distro d --release r -o "$W/kill" "${debs[@]}" >"$W/kill.log" 2>&1 || fail "the rerun after the kill failed"
tree "$W/kill" >"$W/kill.tree"
cmp -s "$W/kill.tree" "$W/odeb.tree" && kill_same=yes || { kill_same=NO; fail "killed and rerun: the tree differs"; }
left=$(find "$W/kill" -name '*.tmp*' -o -name '*.old.*' -o -name 'tmp.*' | wc -l)
[ "$left" = 0 ] || fail "killed and rerun: $left temp files left"

# --- report -----------------------------------------------------------------
{
	echo "# bench-archive: $(date -u +%Y-%m-%d), $ncpu CPUs, $(uname -m)"
	echo
	echo "pahole 1.24: \`$pahole --btf_gen_floats\` (BTFHub's flags that 1.24 knows), $ncpu kernels at once."
	echo "btfpipe: \`btfpipe-archive -j $ncpu --cache NEW\` (BTFHub's flags), kernels one after another in this order."
	[ -n "$master" ] && echo "pahole master: \`$master\` with BTFHub's three flags (types only)."
	echo
	echo "## From the unpacked vmlinux files"
	echo
	cat "$W/kernels.md"
	echo
	echo "| all ${#names[@]} kernels | pahole 1.24 | btfpipe | ratio |"
	echo "|---|---:|---:|---:|"
	echo "| wall s | $(cat "$W/p124/wall") | $(cat "$W/ours.wall") | $(ratio "$(cat "$W/ours.wall")" "$(cat "$W/p124/wall")") |"
	echo "| CPU s | $(cat "$W/p124/cpu") | $(cat "$W/ours.cpu") | $(ratio "$(cat "$W/ours.cpu")" "$(cat "$W/p124/cpu")") |"
	echo "| peak RSS MB | $((prss_max / 1024)) | $((orss_max / 1024)) | $(ratio "$orss_max" "$prss_max") |"
	echo
	echo "One pahole run's CPU, the mean over these kernels: $pcpu1 s."
	echo
	echo "## From the packages (the same streamed unpacking on both sides)"
	echo
	echo "| run | wall s | CPU s | CPU ratio to pahole |"
	echo "|---|---:|---:|---:|"
	echo "| pahole 1.24, $ncpu at once | $(cat "$W/pdeb/wall") | $(cat "$W/pdeb/cpu") | 1 |"
	echo "| btfpipe-archive -j $ncpu | $(cat "$W/odeb.wall") | $(cat "$W/odeb.cpu") | $(ratio "$(cat "$W/odeb.cpu")" "$(cat "$W/pdeb/cpu")") |"
	[ -f "$W/par.wall" ] && echo "| its job list, GNU parallel -j $ncpu | $(cat "$W/par.wall") | $(cat "$W/par.cpu") | $(ratio "$(cat "$W/par.cpu")" "$(cat "$W/pdeb/cpu")") |"
	echo
	[ -f "$W/par.wall" ] && echo "GNU parallel's tree = the batch's: $par_same."
	echo "Killed after ${kill_at} s ($done_before of ${#names[@]} kernels done), rerun: the same tree: $kill_same; temp files left: $left."
	echo
	[ "$failed" -eq 0 ] && echo "No failures." || { echo "Failures:"; grep '^FAIL' "$W/notes"; }
} | tee "$top/bench/results/archive-latest.md"
exit $failed
