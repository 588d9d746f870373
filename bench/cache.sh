#!/usr/bin/env bash
# bench/cache.sh (make bench-cache; also run by make bench): the cache
# directory (format/CU-CACHE.md) in the two places a kernel developer meets it.
#
# modset: BENCH_MODSET (120) of the dbg package's modules, split BTF over the
#   vmlinux's own .BTF, one module after the other as kbuild's modfinal runs
#   them. The whole set's wall and CPU time for: pahole; btfpipe without a
#   cache; btfpipe with a cold (empty) cache, which stores; btfpipe warm (every
#   module unchanged since the cold run); btfpipe warm over a new base (the
#   vmlinux BTF changed: each module's extract and merge hit, its emit runs);
#   warm through pipeline.sh and warm calling the three stages (what a
#   Makefile like tests/kbuild/Makefile runs). Every btfpipe output equals the
#   uncached one (cmp), else FAIL.
# vmlinux: the vmlinux through pipeline.sh as PAHOLE (-j2
#   --btf_gen_floats --btf_encode_detached), cold (no cache) and warm (a
#   cache filled by one earlier run: the whole run's BTF found by
#   btfpipe-pahole, no stage started), and warm through the stages' own
#   caches (pipeline.sh --cache: every CU, the .graph and the BTF from the
#   cache); against pahole 1.24 -J -j2 and pahole master -J -j2 (when built).
#   Every btfpipe BTF equals the uncached one (cmp).
# relink: a generated program (tests/gen/many-cus.sh, BENCH_RELINK_CUS = 400
#   units) built from .o files; its CUs go into a cache; one unit changes; the
#   program is rebuilt and relinked; then dwarf-extract on it cold (no cache)
#   and warm (the cache from before the change, copied fresh for every run),
#   with the hit rate, and a cmp of the two .cus.
#
# Interleaved runs, medians of BENCH_RUNS (3). Wall time from the shell's
# clock around the set (a set of 120 module runs is far above time(1)'s
# resolution); CPU from /usr/bin/time over the same loop (children's user +
# sys). Report on stdout and in bench/results/cache-latest.md.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_BIN:-$top/bin}
pahole=${BENCH_PAHOLE:-/usr/bin/pahole}
runs=${BENCH_RUNS:-3}
nmods=${BENCH_MODSET:-120}
ncus=${BENCH_RELINK_CUS:-400}
scenarios=${BENCH_CACHE_SCENARIOS:-modset vmlinux relink}
master=${BENCH_PAHOLE_MASTER:-}
[ -z "$master" ] && [ -x "$top/tests/out/shared/anchors/bin/pahole" ] && master=$top/tests/out/shared/anchors/bin/pahole
W=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe-bench-cache.XXXXXX") || exit 3
trap 'rm -rf "$W"' EXIT
mkdir -p "$top/bench/results"
failed=0
. "$top/bench/lib.sh"
want() { case " $scenarios " in *" $1 "*) return 0 ;; esac; return 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.3f\n", a / b }'; }

# timed NAME SCENARIO MODE CMD...: run CMD (a shell loop) under time(1);
# record "SCENARIO MODE WALL CPU" in $W/samples.
timed() {
	local name=$1 sc=$2 mode=$3 t0 t1 u s rc; shift 3
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$W/$name.time" "$@" >"$W/$name.out" 2>"$W/$name.err"
	rc=$?
	t1=$(date +%s.%N)
	read -r u s < <(tail -1 "$W/$name.time")
	echo "$sc $mode $(awk -v a="$t0" -v b="$t1" -v u="$u" -v s="$s" 'BEGIN { printf "%.3f %.2f", b - a, u + s }')" >>"$W/samples"
	[ $rc -eq 0 ] || fail "$sc $mode exited $rc: $(tail -3 "$W/$name.err")"
	return $rc
}
med() { awk -v s="$1" -v m="$2" -v f="$3" '$1 == s && $2 == m { print $f }' "$W/samples" | median; }

# ---- modset ----
vmlinux=${BENCH_VMLINUX:-$(printf '%s\n' /usr/lib/debug/boot/vmlinux-*-cloud-amd64 | sort -V | tail -1)}
modset() {
	local rel moddir base="$W/base.btf" base2="$W/base2.btf" r
	rel=${vmlinux##*/vmlinux-}
	moddir=${BENCH_MODDIR:-/usr/lib/debug/lib/modules/$rel/kernel}
	[ -d "$moddir" ] || { note "SKIP modset: no $moddir"; return; }
	objcopy -O binary --only-section=.BTF "$vmlinux" "$base" 2>/dev/null && [ -s "$base" ] ||
		{ note "SKIP modset: no .BTF in $vmlinux"; return; }
	# Every ninth module in path order: spread over sizes and subsystems,
	# the same set on every machine with the same package.
	find "$moddir" -name '*.ko' | sort | awk 'NR % 9 == 0' | head -n "$nmods" >"$W/mods"
	local n
	n=$(wc -l <"$W/mods")
	[ "$n" -gt 0 ] || { note "SKIP modset: no modules"; return; }
	echo "modset $n modules, $(du -ch $(cat "$W/mods") | tail -1 | cut -f1) of .ko" >>"$W/facts"
	# The "new base": the same vmlinux encoded by btfpipe instead of pahole
	# (other bytes, the same kernel), as after an incremental vmlinux build.
	"$top/pipeline.sh" --features default -q -o "$base2" "$vmlinux" || { fail "modset: new base"; return; }
	mkdir -p "$W/o"
	cat >"$W/loop.sh" <<'EOF'
# loop.sh MODE BIN TOP BASE CACHE OUTDIR PAHOLE < mods
mode=$1 bin=$2 top=$3 base=$4 cache=$5 out=$6 pahole=$7
while read -r m; do
	n=${m##*/}
	case $mode in
	pahole) "$pahole" -J --btf_gen_floats --btf_base "$base" --btf_encode_detached="$out/$n.btf" "$m" ;;
	pipe) "$top/pipeline.sh" --features default -j1 -q --btf-base "$base" -o "$out/$n.btf" "$m" ;;
	pipe-cache) "$top/pipeline.sh" --features default -j1 -q --cache "$cache" --btf-base "$base" -o "$out/$n.btf" "$m" ;;
	stages-cache)
		"$bin/dwarf-extract" -j1 -q --cache "$cache" -o "$out/$n.cus" "$m" &&
		"$bin/dedup-merge" -j1 -q --cache "$cache" -o "$out/$n.graph" "$out/$n.cus" &&
		"$bin/btf-emit" --cache "$cache" --elf "$m" --btf-base "$base" -o "$out/$n.btf" "$out/$n.graph" ;;
	esac || { echo "failed: $m" >&2; exit 1; }
done
EOF
	# compare MODE DIR REFDIR: every module's BTF equals the reference's.
	compare() {
		local bad=0 m nm
		while read -r m; do
			nm=${m##*/}
			cmp -s "$2/$nm.btf" "$3/$nm.btf" || bad=$((bad + 1))
		done <"$W/mods"
		[ $bad -eq 0 ] || fail "modset $1: $bad modules' BTF differ from the uncached run's"
	}
	mkdir -p "$W/ref" "$W/ref2"
	bash "$W/loop.sh" pipe "$bin" "$top" "$base" - "$W/ref" - <"$W/mods" || { fail "modset: reference run"; return; }
	bash "$W/loop.sh" pipe "$bin" "$top" "$base2" - "$W/ref2" - <"$W/mods" || { fail "modset: reference run, new base"; return; }
	for ((r = 1; r <= runs; r++)); do
		local c="$W/cache.$r" o="$W/o/$r"
		mkdir -p "$o"/{ph,nc,cold,warm,stw,nb}
		timed "ms.ph.$r" modset pahole bash "$W/loop.sh" pahole "$bin" "$top" "$base" - "$o/ph" "$pahole" <"$W/mods"
		timed "ms.nc.$r" modset "btfpipe, no cache" bash "$W/loop.sh" pipe "$bin" "$top" "$base" - "$o/nc" - <"$W/mods"
		timed "ms.cold.$r" modset "btfpipe, cold cache" bash "$W/loop.sh" pipe-cache "$bin" "$top" "$base" "$c" "$o/cold" - <"$W/mods"
		timed "ms.warm.$r" modset "btfpipe, warm cache" bash "$W/loop.sh" pipe-cache "$bin" "$top" "$base" "$c" "$o/warm" - <"$W/mods"
		timed "ms.stw.$r" modset "btfpipe, warm cache, stages" bash "$W/loop.sh" stages-cache "$bin" "$top" "$base" "$c" "$o/stw" - <"$W/mods"
		timed "ms.nb.$r" modset "btfpipe, warm cache, new base" bash "$W/loop.sh" pipe-cache "$bin" "$top" "$base2" "$c" "$o/nb" - <"$W/mods"
		compare "no cache run $r" "$o/nc" "$W/ref"
		compare "cold cache run $r" "$o/cold" "$W/ref"
		compare "warm cache run $r" "$o/warm" "$W/ref"
		compare "warm cache, stages, run $r" "$o/stw" "$W/ref"
		compare "warm cache, new base, run $r" "$o/nb" "$W/ref2"
		echo "bench: modset run $r/$runs done" >&2
		[ "$r" -eq 1 ] && du -sh "$c" | cut -f1 >"$W/cachesize"
		rm -rf "$o"
		[ "$r" -lt "$runs" ] && rm -rf "$c"
	done
	command -v bpftool >/dev/null && { bpftool -B "$base" btf dump file "$W/ref/$(head -1 "$W/mods" | sed 's,.*/,,').btf" >/dev/null 2>&1 ||
		fail "modset: bpftool cannot parse the first module's BTF"; }
}

# ---- vmlinux ----
vmwarm() {
	local c="$W/vcache" o="$W/v" r
	# pahole mode's features for --btf_gen_floats (legacy set + float), for
	# the run through the stages' own caches.
	local feats=var,float,decl_tag,type_tag,enum64
	mkdir -p "$o"
	"$top/pipeline.sh" -j2 --btf_gen_floats --btf_encode_detached="$o/ref.btf" "$vmlinux" ||
		{ fail "vmlinux: reference run"; return; }
	BTFPIPE_CACHE_DIR="$c" "$top/pipeline.sh" -j2 --btf_gen_floats --btf_encode_detached="$o/fill.btf" "$vmlinux" ||
		{ fail "vmlinux: filling the cache"; return; }
	echo "vmlinux ${vmlinux##*/}, $(($(stat -c %s "$vmlinux") >> 20)) MiB" >>"$W/facts"
	for ((r = 1; r <= runs; r++)); do
		timed "vm.ph.$r" vmlinux "pahole 1.24" "$pahole" -J -j2 --btf_gen_floats --btf_encode_detached="$o/ph.btf" "$vmlinux"
		[ -n "$master" ] && timed "vm.pm.$r" vmlinux "pahole master" "$master" -J -j2 --btf_features=default \
			--btf_encode_detached="$o/pm.btf" "$vmlinux"
		timed "vm.cold.$r" vmlinux "btfpipe, no cache" "$top/pipeline.sh" -j2 --btf_gen_floats \
			--btf_encode_detached="$o/cold.btf" "$vmlinux"
		timed "vm.warm.$r" vmlinux "btfpipe, warm cache" env BTFPIPE_CACHE_DIR="$c" "$top/pipeline.sh" -j2 \
			--btf_gen_floats --btf_encode_detached="$o/warm.btf" "$vmlinux"
		# (-v: the driver answers no run from its memo, so this row stays
		# the stages' own caches; the commands it prints go to the .err)
		timed "vm.stw.$r" vmlinux "btfpipe, warm cache, stages" "$top/pipeline.sh" -j2 -q -v --cache "$c" \
			--features "$feats" -o "$o/stw.btf" "$vmlinux"
		for f in cold warm stw; do
			cmp -s "$o/ref.btf" "$o/$f.btf" || fail "vmlinux run $r: $f's BTF differs from the uncached one"
		done
		echo "bench: vmlinux run $r/$runs done" >&2
	done
}

# ---- relink ----
relink() {
	local g="$W/gen" d="$W/gen/gcc" r f
	"$top/tests/gen/many-cus.sh" "$g" "$ncus" - >/dev/null || { fail "relink: generator"; return; }
	mkdir -p "$d"
	build() {
		local f o
		for f in "$g"/src/*.c; do
			o="$d/$(basename "$f" .c).o"
			[ "$o" -nt "$f" ] && continue
			gcc -O2 -g -c -o "$o" "$f" || return 1
		done
		gcc -o "$d/prog" "$d"/*.o
	}
	build || { fail "relink: build"; return; }
	"$bin/dwarf-extract" -q --cache "$W/rcache" -o "$W/r0.cus" "$d/prog" || { fail "relink: first extract"; return; }
	sed -i '0,/^{/s//{\n\tvolatile int relink_probe = 7; (void)relink_probe;/' "$g/src/u017.c"
	touch -d '+1 sec' "$g/src/u017.c"
	build || { fail "relink: rebuild"; return; }
	echo "relink $ncus units + main.c, gcc -O2 -g, $(stat -c %s "$d/prog") bytes; u017.c changed" >>"$W/facts"
	for ((r = 1; r <= runs; r++)); do
		rm -rf "$W/rc"
		cp -a "$W/rcache" "$W/rc"
		timed "rl.cold.$r" relink "extract, no cache" "$bin/dwarf-extract" -j1 -q -o "$W/rcold.cus" "$d/prog"
		timed "rl.warm.$r" relink "extract, warm cache" "$bin/dwarf-extract" -j1 -q --cache "$W/rc" --cache-stats -o "$W/rwarm.cus" "$d/prog"
		cmp -s "$W/rcold.cus" "$W/rwarm.cus" || fail "relink run $r: the warm .cus differs from the uncached one"
		sed -n 's/.*(extracted CUs): this run: \([0-9]*\) hits, \([0-9]*\) misses.*/\1 \2/p' "$W/rl.warm.$r.err" >"$W/hitrate"
	done
}

want modset && { if [ -n "$vmlinux" ] && [ -e "$vmlinux" ]; then modset; else note "SKIP modset: no vmlinux (apt-get install linux-image-cloud-amd64-dbg)"; fi; }
want vmlinux && { if [ -n "$vmlinux" ] && [ -e "$vmlinux" ]; then vmwarm; else note "SKIP vmlinux: no vmlinux"; fi; }
want relink && relink

# ---- report ----
report() {
	echo "## The cache: warm vs cold vs pahole ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "$(nproc) CPUs, btfpipe $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?'), pahole $("$pahole" --version 2>/dev/null)." \
		"Medians of $runs interleaved runs; times for the whole set (wall = elapsed, CPU = user + sys of every process)."
	[ -e "$W/facts" ] && sed 's/^/- /' "$W/facts"
	echo
	if grep -q '^modset' "$W/samples" 2>/dev/null; then
		local ph_w ph_c nc_w nc_c m w c
		ph_w=$(med modset pahole 3) ph_c=$(med modset pahole 4)
		nc_w=$(awk '$1 == "modset" && $0 ~ /no cache/ { print $(NF - 1) }' "$W/samples" | median)
		nc_c=$(awk '$1 == "modset" && $0 ~ /no cache/ { print $NF }' "$W/samples" | median)
		echo "| modset | wall s | CPU s | wall vs btfpipe no cache | wall vs pahole |"
		echo "|---|---:|---:|---:|---:|"
		for m in "pahole" "btfpipe, no cache" "btfpipe, cold cache" "btfpipe, warm cache" \
			"btfpipe, warm cache, stages" "btfpipe, warm cache, new base"; do
			w=$(awk -v m="$m" '$1 == "modset" { k = $2; for (i = 3; i <= NF - 2; i++) k = k " " $i; if (k == m) print $(NF - 1) }' "$W/samples" | median)
			c=$(awk -v m="$m" '$1 == "modset" { k = $2; for (i = 3; i <= NF - 2; i++) k = k " " $i; if (k == m) print $NF }' "$W/samples" | median)
			echo "| $m | $w | $c | $(ratio "$w" "$nc_w") | $(ratio "$w" "$ph_w") |"
		done
		echo
		echo "Cache size after the cold run: $(cat "$W/cachesize" 2>/dev/null || echo '?')."
		echo
	fi
	if grep -q '^vmlinux' "$W/samples" 2>/dev/null; then
		local ph_w pm_w m w c
		ph_w=$(awk '$1 == "vmlinux" && $2 == "pahole" && $3 == "1.24" { print $(NF - 1) }' "$W/samples" | median)
		pm_w=$(awk '$1 == "vmlinux" && $2 == "pahole" && $3 == "master" { print $(NF - 1) }' "$W/samples" | median)
		echo "| vmlinux, -j2 | wall s | CPU s | wall vs pahole 1.24 | wall vs pahole master |"
		echo "|---|---:|---:|---:|---:|"
		for m in "pahole 1.24" "pahole master" "btfpipe, no cache" "btfpipe, warm cache" "btfpipe, warm cache, stages"; do
			w=$(awk -v m="$m" '$1 == "vmlinux" { k = $2; for (i = 3; i <= NF - 2; i++) k = k " " $i; if (k == m) print $(NF - 1) }' "$W/samples" | median)
			c=$(awk -v m="$m" '$1 == "vmlinux" { k = $2; for (i = 3; i <= NF - 2; i++) k = k " " $i; if (k == m) print $NF }' "$W/samples" | median)
			[ "$w" = "-" ] && continue
			echo "| $m | $w | $c | $(ratio "$w" "$ph_w") | $(ratio "$w" "$pm_w") |"
		done
		echo
	fi
	if grep -q '^relink' "$W/samples" 2>/dev/null; then
		local cw cc ww wc h m
		cw=$(awk '$1 == "relink" && $0 ~ /no cache/ { print $(NF - 1) }' "$W/samples" | median)
		cc=$(awk '$1 == "relink" && $0 ~ /no cache/ { print $NF }' "$W/samples" | median)
		ww=$(awk '$1 == "relink" && $0 ~ /warm/ { print $(NF - 1) }' "$W/samples" | median)
		wc=$(awk '$1 == "relink" && $0 ~ /warm/ { print $NF }' "$W/samples" | median)
		read -r h m <"$W/hitrate"
		echo "| relink (dwarf-extract -j1) | wall s | CPU s | wall vs cold |"
		echo "|---|---:|---:|---:|"
		echo "| cold (no cache) | $cw | $cc | 1.000 |"
		echo "| warm (cache from before the change) | $ww | $wc | $(ratio "$ww" "$cw") |"
		echo
		echo "Hit rate: $h of $((h + m)) CUs ($m miss$([ "$m" = 1 ] || echo es): the changed file's)."
		echo
	fi
	[ -e "$W/notes" ] && { echo; sed 's/^/    /' "$W/notes"; }
}
report | tee "$top/bench/results/cache-latest.md"
[ $failed -eq 0 ]
