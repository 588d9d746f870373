#!/usr/bin/env bash
# t1410-kbuild-example: the two ways a kernel build uses btfpipe with the
# extracted-CU cache (docs/kernel-builds.md), on a fake vmlinux (the
# sample fixture plus one file the test changes) and two fake modules
# (relocatable objects, one sharing types.h with the vmlinux).
#
# (b) tests/kbuild/Makefile calls the stages itself: its BTF is byte for byte
#     pipeline.sh's, a second make does nothing, a changed module reruns only
#     that module's three stages, a relinked vmlinux reruns its own three and
#     every module's emit but no module's extract or merge, and the relinked
#     vmlinux's unchanged CUs come from the cache.
# (a) pipeline.sh as PAHOLE with BTFPIPE_CACHE_DIR in the environment: the
#     first run fills the cache, the second hits it, and the BTF is the same
#     with and without the cache.
# Every make and pipeline.sh run has BTFPIPE_CACHE_VERIFY=1: each cache hit is
# also extracted afresh and the stage fails if the two differ.
. "$(dirname "$0")/lib.sh"

P="$T_TOP/pipeline.sh"
MK="$T_TOP/tests/kbuild/Makefile"
export BTFPIPE_BIN="$T_BIN"
# The caches are the test's own: nothing from the caller's environment.
unset BTFPIPE_CACHE_DIR BTFPIPE_CACHE_READONLY BTFPIPE_CACHE_MAX_SIZE
export BTFPIPE_CACHE_VERIFY=1

if ! have make; then
	skip "the kbuild example" "make is not installed"
	test_done
fi

K="$T_OUT/k"       # the fake kernel tree: sources, objects, vmlinux, modules
B="$K/out"         # the Makefile's OUT
mkdir -p "$K/vsrc"
cp "$T_TOP"/tests/fixtures/sample/*.c "$T_TOP"/tests/fixtures/sample/types.h "$K/vsrc/"

# extra.c: the vmlinux CU that changes later; every other CU stays the same.
cat >"$K/vsrc/extra.c" <<'EOF'
struct extra_stat {
	long calls;
	int last;
};
struct extra_stat extra_stats;

__attribute__((noinline)) int extra_count(int v)
{
	extra_stats.calls++;
	extra_stats.last = v;
	return (int)extra_stats.calls;
}
EOF
# m1.c: a module using vmlinux's struct point and struct flags (types.h).
write_m1() {
	cat >"$K/m1.c" <<EOF
#include "types.h"

struct m1_state {
	struct point where;
	struct flags fl;
	int count;$1
};
struct m1_state m1_state;

__attribute__((noinline)) int m1_move(struct m1_state *s, const struct point *to)
{
	s->where = *to;
	return ++s->count;
}
EOF
}
write_m1 ""
# m2.c: a module with only its own types.
cat >"$K/m2.c" <<'EOF'
struct m2_ring {
	unsigned int head, tail;
	void *slots[16];
};
struct m2_dev {
	const char *name;
	struct m2_ring rx, tx;
};
struct m2_dev m2_dev;

__attribute__((noinline)) unsigned int m2_pending(const struct m2_dev *d)
{
	return d->rx.head - d->rx.tail;
}
EOF

# Objects one by one, as a kernel build makes them: relinking after one file
# changed leaves every other object, and so its CU, as it was.
cc_obj() { (cd "$K" && gcc -O2 -g -I vsrc -c -o "$2" "$1"); }
link_vmlinux() { (cd "$K" && gcc -o vmlinux vsrc/*.o); }
build_inputs() {
	for c in "$K"/vsrc/*.c; do cc_obj "vsrc/${c##*/}" "vsrc/$(basename "$c" .c).o" || return 1; done
	link_vmlinux && cc_obj m1.c m1.o && cc_obj m2.c m2.o
}
if ! build_inputs 2>"$T_OUT/build.err"; then
	not_ok "build the fake vmlinux and modules" "$(cat "$T_OUT/build.err")"
	test_done
fi
ok "build the fake vmlinux and modules"

# kmake LOG MAKE-ARGS...: the example Makefile as a kernel build would run it,
# the cache outside OUT (so OUT's directory must be made by the Makefile).
# The caller's MAKEFLAGS (a make -s around this test) would hide the recipes
# this test reads; each extract prints its cache counts (--cache-stats).
kmake() {
	local log=$1; shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -f "$MK" \
		BTFPIPE_BIN="$T_BIN" VMLINUX="$K/vmlinux" MODULES="$K/m1.o $K/m2.o" OUT="$B" \
		CACHE="$K/cache" STAGE_JOBS=1 EXTRACT_FLAGS=--cache-stats "$@" >"$log.out" 2>"$log.err"
}
# ran LOG: the outputs the stages wrote in that make run (each recipe's -o),
# by file name, sorted, on one line.
ran() { sed -n 's/^.* -o \([^ ]*\) .*$/\1/p' "$1.out" | sed 's,.*/,,' | sort | paste -sd' '; }
# same DESC GOT WANT: two strings must be equal.
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', wanted '$3'"; fi; }
# fp FILE...: inode and mtime; a stage that rewrites a file (rename into
# place) changes both, so an equal fingerprint means "not rebuilt".
fp() { stat -c '%n %i %.9Y' "$@"; }
# run_counts LOG: "HITS MISSES" of each extract in that make run, one a line:
# its CUs' line, or, when the whole .cus of an unchanged .o was reused and no
# CU was looked at, its stage-output line (an extract that missed prints both,
# CUs first).
run_counts() {
	awk '/: this run: / {
		match($0, /this run: [0-9]+ hits, [0-9]+ misses/)
		split(substr($0, RSTART + 10, RLENGTH - 10), f, /[ ,]+/)
		if ($0 ~ /\(extracted CUs\)/) { print f[1], f[3]; cu = 1 }
		else if (cu) cu = 0
		else print f[1], f[3]
	}' "$1.err"
}
# all_runs DIR: "HITS MISSES" over every run that used the cache DIR.
all_runs() { "$T_BIN/dwarf-extract" --cache "$1" --cache-stats 2>&1 |
	sed -n 's/^cache .*(extracted CUs): all runs: \([0-9]*\) hits, \([0-9]*\) misses,.*/\1 \2/p'; }
# out_hits DIR: the hits of every run on DIR's stage outputs (the stages'
# memos and btfpipe-pahole's whole runs share the kind out-v1).
out_hits() { sed -n 's/^hits //p' "$1/out-v1/stats" 2>/dev/null || echo 0; }
ncus() { "$T_BIN/dwarf-extract" --dump "$1" | sed -n '1s/.* cus=\([0-9]*\).*/\1/p'; }
# ref DIR: pipeline.sh per input, without a cache: what the Makefile must match.
# --features default: the Makefile's btf-emit runs with its own default, pahole's
# "default" set, where the driver's default is what pahole -J encodes bare.
ref() {
	"$P" -j1 --features default --keep "$1" -o "$1/vmlinux.btf" "$K/vmlinux" &&
	"$P" -j1 --features default --keep "$1" --btf-base "$1/vmlinux.btf" -o "$1/m1.o.btf" "$K/m1.o" &&
	"$P" -j1 --features default --keep "$1" --btf-base "$1/vmlinux.btf" -o "$1/m2.o.btf" "$K/m2.o"
}
# same_as_ref WHEN DIR: the Makefile's three BTF files are pipeline.sh's.
same_as_ref() {
	local f
	for f in vmlinux.btf m1.o.btf m2.o.btf; do
		check_same "$1: make's $f is pipeline.sh's" "$2/$f" "$B/$f"
	done
}
all_outputs="m1.o.btf m1.o.cus m1.o.graph m2.o.btf m2.o.cus m2.o.graph vmlinux.btf vmlinux.cus vmlinux.graph"

# --- (b) the Makefile ---------------------------------------------------------

# First build with make -j2: a missing dependency would show as a stage
# starting before its input exists.
# -Otarget: each recipe's stderr in one piece, so run_counts pairs each
# extract's two count lines (at -j2 without it, two extracts' lines mix).
check_exit "(b) first build (make -j2)" 0 kmake "$T_OUT/m1" -j2 -Otarget
same "(b) first build: every stage ran once per input" "$(ran "$T_OUT/m1")" "$all_outputs"
same "(b) first build: one extract per input, none hit an empty cache" \
	"$(run_counts "$T_OUT/m1" | awk '{ n++; h += $1 } END { print n + 0, h + 0 }')" "3 0"
check "(b) libbpf reads vmlinux.btf" "$T_BIN/tools/btfcheck" "$B/vmlinux.btf"
for m in m1.o m2.o; do
	check "(b) libbpf reads $m.btf as split BTF over vmlinux.btf, dedup removes nothing" \
		"$T_BIN/tools/btfcheck" --base "$B/vmlinux.btf" --dedup "$B/$m.btf"
done
if have bpftool; then
	bpftool -B "$B/vmlinux.btf" btf dump file "$B/m1.o.btf" >"$T_OUT/m1.dump" 2>&1
	check_grep "(b) m1.o.btf has the module's own struct" "STRUCT 'm1_state' " "$T_OUT/m1.dump"
	if grep -q "STRUCT 'point' " "$T_OUT/m1.dump"; then
		not_ok "(b) m1.o.btf refers to vmlinux's struct point, does not repeat it"
	else ok "(b) m1.o.btf refers to vmlinux's struct point, does not repeat it"; fi
else
	skip "(b) split BTF contents" "bpftool is not installed"
fi

check "(b) pipeline.sh per input, no cache (the reference)" ref "$T_OUT/ref1"
same_as_ref "(b) first build" "$T_OUT/ref1"
check_same "(b) first build: vmlinux.cus is pipeline.sh's" "$T_OUT/ref1/vmlinux.cus" "$B/vmlinux.cus"

# Nothing changed: nothing to do.
check_exit "(b) up to date: make -q says so" 0 kmake "$T_OUT/q1" -q
check_exit "(b) second make" 0 kmake "$T_OUT/m2"
same "(b) second make runs no stage" "$(ran "$T_OUT/m2")" ""
check_grep "(b) second make: nothing to be done" "Nothing to be done" "$T_OUT/m2.out"
# The inputs are the build's business: a source newer than its object, or a
# vmlinux.o newer than vmlinux, must not make the Makefile rebuild them (as
# make's built-in rules would, with cc and no -g).
touch "$K/m2.c" "$K/vmlinux.o"
check_exit "(b) newer m2.c and vmlinux.o: still up to date" 0 kmake "$T_OUT/q1b" -q
check_exit "(b) newer m2.c and vmlinux.o: make" 0 kmake "$T_OUT/m2b"
check_grep "(b) newer m2.c and vmlinux.o: nothing to be done" "Nothing to be done" "$T_OUT/m2b.out"
rm -f "$K/vmlinux.o"

# A module touched, its contents the same: its three stages rerun, its CU
# comes from the cache, and every output is what it was.
cp "$B/m2.o.cus" "$T_OUT/m2.o.cus.before"
cp "$B/m2.o.btf" "$T_OUT/m2.o.btf.before"
touch "$K/m2.o"
check_exit "(b) m2.o touched: make -q sees work" 1 kmake "$T_OUT/q2" -q
check_exit "(b) m2.o touched: make" 0 kmake "$T_OUT/m3"
same "(b) m2.o touched: only m2.o's stages rerun" "$(ran "$T_OUT/m3")" "m2.o.btf m2.o.cus m2.o.graph"
same "(b) m2.o touched: its .cus is a cache hit, no miss" "$(run_counts "$T_OUT/m3")" "1 0"
check_same "(b) m2.o touched: the same .cus" "$T_OUT/m2.o.cus.before" "$B/m2.o.cus"
check_same "(b) m2.o touched: the same BTF" "$T_OUT/m2.o.btf.before" "$B/m2.o.btf"

# A module changed (a new member, recompiled): only its chain reruns.
fp "$B"/vmlinux.* "$B"/m2.o.* >"$T_OUT/fp.before-m1"
write_m1 "
	long m1_added;"
if cc_obj m1.c m1.o 2>"$T_OUT/build.err"; then ok "(b) m1.c changed and recompiled"
else not_ok "(b) m1.c changed and recompiled" "$(cat "$T_OUT/build.err")"; fi
check_exit "(b) m1.o changed: make -q sees work" 1 kmake "$T_OUT/q3" -q
check_exit "(b) m1.o changed: make" 0 kmake "$T_OUT/m4"
same "(b) m1.o changed: only m1.o's stages rerun" "$(ran "$T_OUT/m4")" "m1.o.btf m1.o.cus m1.o.graph"
same "(b) m1.o changed: its CU is a miss (new DWARF)" "$(run_counts "$T_OUT/m4")" "0 1"
fp "$B"/vmlinux.* "$B"/m2.o.* >"$T_OUT/fp.after-m1"
check_same "(b) m1.o changed: vmlinux's and m2.o's outputs untouched (inode, mtime)" \
	"$T_OUT/fp.before-m1" "$T_OUT/fp.after-m1"
if have bpftool; then
	check_grep "(b) m1.o changed: the new member is in m1.o.btf" "'m1_added' " \
		<(bpftool -B "$B/vmlinux.btf" btf dump file "$B/m1.o.btf" 2>&1)
else
	skip "(b) m1.o changed: the new member is in m1.o.btf" "bpftool is not installed"
fi
check "(b) m1.o changed: the reference again" ref "$T_OUT/ref2"
same_as_ref "(b) m1.o changed" "$T_OUT/ref2"

# vmlinux relinked after one of its files changed: vmlinux's chain reruns,
# every module's emit too (its base changed), no module's extract or merge;
# vmlinux's other CUs come from the cache.
n_old=$(ncus "$B/vmlinux.cus")
fp "$B"/m1.o.cus "$B"/m1.o.graph "$B"/m2.o.cus "$B"/m2.o.graph >"$T_OUT/fp.before-v"
cat >>"$K/vsrc/extra.c" <<'EOF'

struct extra_more {
	struct extra_stat stat;
	unsigned int flags;
};
struct extra_more extra_more_g;

__attribute__((noinline)) unsigned int extra_more_flags(const struct extra_more *m)
{
	return m->flags + (unsigned int)m->stat.last;
}
EOF
if cc_obj vsrc/extra.c vsrc/extra.o 2>"$T_OUT/build.err" && link_vmlinux 2>>"$T_OUT/build.err"; then
	ok "(b) extra.c changed, vmlinux relinked"
else not_ok "(b) extra.c changed, vmlinux relinked" "$(cat "$T_OUT/build.err")"; fi
check_exit "(b) vmlinux relinked: make" 0 kmake "$T_OUT/m5"
same "(b) vmlinux relinked: its chain and the modules' emits rerun, nothing else" \
	"$(ran "$T_OUT/m5")" "m1.o.btf m2.o.btf vmlinux.btf vmlinux.cus vmlinux.graph"
fp "$B"/m1.o.cus "$B"/m1.o.graph "$B"/m2.o.cus "$B"/m2.o.graph >"$T_OUT/fp.after-v"
check_same "(b) vmlinux relinked: the modules' .cus and .graph untouched (inode, mtime)" \
	"$T_OUT/fp.before-v" "$T_OUT/fp.after-v"
# Only extra.c's CU is new; the other n_old - 1 hit (n_old counts extra.c).
case "$n_old" in
[1-9]*) same "(b) vmlinux relinked: unchanged CUs hit the cache, only extra.c's misses" \
	"$(run_counts "$T_OUT/m5")" "$((n_old - 1)) 1" ;;
*) not_ok "(b) vmlinux relinked: count the old vmlinux's CUs" "got '$n_old'" ;;
esac
check "(b) vmlinux relinked: libbpf reads the new vmlinux.btf" "$T_BIN/tools/btfcheck" "$B/vmlinux.btf"
if have bpftool; then
	check_grep "(b) vmlinux relinked: the new function is in vmlinux.btf" "FUNC 'extra_more_flags' " \
		<(bpftool btf dump file "$B/vmlinux.btf" 2>&1)
else
	skip "(b) vmlinux relinked: the new function is in vmlinux.btf" "bpftool is not installed"
fi
check "(b) vmlinux relinked: the reference again" ref "$T_OUT/ref3"
same_as_ref "(b) vmlinux relinked" "$T_OUT/ref3"
check_exit "(b) vmlinux relinked: up to date afterwards" 0 kmake "$T_OUT/q4" -q

# A clean build with the cache kept: every stage runs, no CU is extracted
# again, the same bytes come out.
mkdir -p "$T_OUT/before-clean"
cp "$B"/*.btf "$T_OUT/before-clean/"
check_exit "(b) make clean" 0 kmake "$T_OUT/c1" clean
left=$(cd "$B" && ls -A)
same "(b) make clean removes the outputs" "$left" ""
check_exit "(b) build after make clean" 0 kmake "$T_OUT/m6"
same "(b) after make clean: every stage ran" "$(ran "$T_OUT/m6")" "$all_outputs"
same "(b) after make clean: three extracts, not one cache miss" \
	"$(run_counts "$T_OUT/m6" | awk '{ n++; m += $2 } END { print n + 0, m + 0 }')" "3 0"
for f in vmlinux.btf m1.o.btf m2.o.btf; do
	check_same "(b) after make clean: the same $f" "$T_OUT/before-clean/$f" "$B/$f"
done

# The stage binaries are prerequisites: a new dedup-merge reruns every merge
# and emit, no extract. On private copies (same bytes: the cache key holds
# the binary's hash, not its path, so the copies still hit).
mkdir -p "$K/bin"
cp "$T_BIN/dwarf-extract" "$T_BIN/dedup-merge" "$T_BIN/btf-emit" "$K/bin/"
check_exit "(b) stages from new copies" 0 kmake "$T_OUT/m7" BTFPIPE_BIN="$K/bin"
same "(b) stages from new copies: everything reruns" "$(ran "$T_OUT/m7")" "$all_outputs"
same "(b) stages from new copies: the same dwarf-extract bytes hit the cache" \
	"$(run_counts "$T_OUT/m7" | awk '{ n++; m += $2 } END { print n + 0, m + 0 }')" "3 0"
touch "$K/bin/dedup-merge"
check_exit "(b) dedup-merge rebuilt: make" 0 kmake "$T_OUT/m8" BTFPIPE_BIN="$K/bin"
same "(b) dedup-merge rebuilt: every merge and emit reruns, no extract" "$(ran "$T_OUT/m8")" \
	"m1.o.btf m1.o.graph m2.o.btf m2.o.graph vmlinux.btf vmlinux.graph"
for f in vmlinux.btf m1.o.btf m2.o.btf; do
	check_same "(b) dedup-merge rebuilt: the same $f" "$T_OUT/before-clean/$f" "$B/$f"
done

# Without BTFPIPE_BIN, from another directory, the Makefile finds the stages
# in the bin/ of the checkout it lives in.
if [ -x "$T_TOP/bin/dwarf-extract" ]; then
	env -u BTFPIPE_BIN -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n --no-print-directory -C "$T_OUT" -f "$MK" \
		VMLINUX="$K/vmlinux" OUT="$T_OUT/default-bin" >"$T_OUT/n.out" 2>&1
	check_grep "(b) BTFPIPE_BIN defaults to the checkout's bin/" "^$T_TOP/bin/dwarf-extract .* -o $T_OUT/default-bin/vmlinux.cus " "$T_OUT/n.out"
else
	skip "(b) BTFPIPE_BIN defaults to the checkout's bin/" "$T_TOP/bin is not built"
fi

# --- (a) pipeline.sh as PAHOLE, the cache from the environment ---------------

# The flags Debian 6.12's scripts/Makefile.btf gives pahole 1.27 and up.
KFLAGS=(-j1 "--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs")
CA="$T_OUT/cache-a"
A="$T_OUT/a"
mkdir -p "$A"
check "(a) vmlinux, no cache" "$P" "${KFLAGS[@]}" --btf_encode_detached="$A/nocache.btf" "$K/vmlinux"
check "(a) vmlinux, BTFPIPE_CACHE_DIR, first run" \
	env BTFPIPE_CACHE_DIR="$CA" "$P" "${KFLAGS[@]}" --btf_encode_detached="$A/run1.btf" "$K/vmlinux"
n=$(ncus "$B/vmlinux.cus")
entries=$(find "$CA/cu-v1" -type f 2>/dev/null | grep -cE '/[0-9a-f]{32}$')
same "(a) first run: one cache entry per vmlinux CU" "$entries" "$n"
same "(a) first run: no hit, a miss per CU" "$(all_runs "$CA")" "0 $n"
# The second run: its inputs unchanged, btfpipe-pahole finds the whole
# run's BTF and starts no stage (one more hit on the stage outputs, and
# no extraction: the CU counts stay).
h0=$(out_hits "$CA")
check "(a) vmlinux, BTFPIPE_CACHE_DIR, second run" \
	env BTFPIPE_CACHE_DIR="$CA" "$P" "${KFLAGS[@]}" --btf_encode_detached="$A/run2.btf" "$K/vmlinux"
same "(a) second run: the whole run from the cache, no stage ran" "$(all_runs "$CA") $(($(out_hits "$CA") - h0))" "0 $n 1"
# BTFPIPE_STATS (a side output) turns the whole-run memo off: the stages
# run, and the cache reaches them through the environment.
check "(a) vmlinux, BTFPIPE_CACHE_DIR, third run, BTFPIPE_STATS=1" \
	env BTFPIPE_CACHE_DIR="$CA" BTFPIPE_STATS=1 "$P" "${KFLAGS[@]}" --btf_encode_detached="$A/run3.btf" "$K/vmlinux"
same "(a) third run: every CU hit" "$(all_runs "$CA")" "$n $n"
check_same "(a) vmlinux: every cached run gives the same BTF" "$A/run1.btf" "$A/run2.btf"
check_same "(a) vmlinux: ... the stages' caches too" "$A/run1.btf" "$A/run3.btf"
check_same "(a) vmlinux: the cache changes nothing" "$A/nocache.btf" "$A/run2.btf"
check_same "(a) vmlinux: as PAHOLE with the kernel's features, the BTF is the Makefile's" \
	"$B/vmlinux.btf" "$A/run2.btf"

# A module: split BTF over the vmlinux BTF, --btf_base as Makefile.modfinal.
check "(a) module, no cache" "$P" "${KFLAGS[@]}" --btf_base "$A/nocache.btf" \
	--btf_encode_detached="$A/m1-nocache.btf" "$K/m1.o"
counts=()
for r in 1 2; do
	h0=$(out_hits "$CA")
	check "(a) module, BTFPIPE_CACHE_DIR, run $r" env BTFPIPE_CACHE_DIR="$CA" "$P" "${KFLAGS[@]}" \
		--btf_base "$A/run2.btf" --btf_encode_detached="$A/m1-run$r.btf" "$K/m1.o"
	counts[r]="$(all_runs "$CA") $(($(out_hits "$CA") - h0))"
done
same "(a) module: first run a miss, second the whole run from the cache" "${counts[1]} / ${counts[2]}" \
	"$n $((n + 1)) 0 / $n $((n + 1)) 1"
check_same "(a) module: both cached runs give the same BTF" "$A/m1-run1.btf" "$A/m1-run2.btf"
check_same "(a) module: the cache changes nothing" "$A/m1-nocache.btf" "$A/m1-run2.btf"
check_same "(a) module: the BTF is the Makefile's" "$B/m1.o.btf" "$A/m1-run2.btf"
# -J: the whole run's BTF written into a fresh copy of the object, as the
# stages write it (the memo holds the BTF, not the ELF).
for r in 1 2; do
	cp "$K/m1.o" "$A/m1-j$r.o"
	chmod 600 "$A/m1-j$r.o"
	h0=$(out_hits "$CA")
	check "(a) module -J, BTFPIPE_CACHE_DIR, run $r" env BTFPIPE_CACHE_DIR="$CA" "$P" "${KFLAGS[@]}" \
		--btf_base "$A/run2.btf" -J "$A/m1-j$r.o"
	counts[r]=$(($(out_hits "$CA") - h0))
done
same "(a) module -J: the second run from the cache" "${counts[2]}" 1
check_same "(a) module -J: the object from the cache is the stages' object" "$A/m1-j1.o" "$A/m1-j2.o"
same "(a) module -J: the object keeps its mode" "$(stat -c %a "$A/m1-j2.o")" 600
objcopy --dump-section .BTF="$A/m1-j2.btf" "$A/m1-j2.o" "$A/m1-j2.copy"
check_same "(a) module -J: its .BTF is the detached BTF" "$A/m1-run1.btf" "$A/m1-j2.btf"
# A kernel relink runs -J again on the .ko it wrote before (Makefile.modfinal
# relinks no unchanged module, it only reruns its BTF step): the old .BTF
# gives its place to the new one, so the same BTF gives the same file (it
# grew by one .BTF per run before, and no cache key matched the next run).
cp "$A/m1-j2.o" "$A/m1-again.o"
check "(a) module -J again on its own output" "$P" "${KFLAGS[@]}" --btf_base "$A/run2.btf" -J "$A/m1-again.o"
check_same "(a) module -J again: the same file, not one grown by another .BTF" "$A/m1-j2.o" "$A/m1-again.o"
for r in 1 2; do
	h0=$(out_hits "$CA")
	check "(a) module -J in place, BTFPIPE_CACHE_DIR, run $r" env BTFPIPE_CACHE_DIR="$CA" "$P" "${KFLAGS[@]}" \
		--btf_base "$A/run2.btf" -J "$A/m1-again.o"
	counts[r]=$(($(out_hits "$CA") - h0))
done
# The first reads an object with a .BTF in it, which m1.o had not: a miss.
same "(a) module -J in place: the first run a miss, the second from the cache" "${counts[1]} ${counts[2]}" "0 1"
check_same "(a) module -J in place: still the same file" "$A/m1-j2.o" "$A/m1-again.o"
test_done
