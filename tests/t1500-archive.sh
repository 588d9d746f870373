#!/usr/bin/env bash
# t1500-archive: tools/btfpipe-archive, many kernels in one batch, on small
# stand-ins (the sample fixture as a vmlinux, bare and inside a Debian -dbg
# style .deb built here with dpkg-deb):
#  (a) the BTFHub layout: OUTDIR/debian/12/x86_64/KERNEL.btf for the package
#      (release from its ~deb12 version), the --distro/--release one for
#      the bare vmlinux; the bytes pipeline.sh gives with the same flags;
#  (b) manifest.json parses and names every kernel: its input and output
#      hash (XXH128), type count (libbpf's), times; a broken package is recorded as failed with
#      its reason, the others still made, and the exit code is 1;
#  (c) resumable: a second run makes nothing again (outputs untouched); an
#      output removed is made again alone;
#  (d) --job-list: each line run on its own, under make -j2, gives the same
#      bytes and manifest as the batch; @FILE lists inputs;
#  (e) --modules, on a generated kernel and two modules (tests/gen/
#      kmod-pair.py) in a package, streamed, and as a directory: each
#      module's split BTF over the kernel's, the bytes pipeline.sh gives,
#      named as /sys/kernel/btf names them; a broken module fails its
#      kernel with its name, the rest still made;
#  (f) --xz: KERNEL.btf.tar.xz holding the same BTF, the same bytes twice;
#  (g) the job list under GNU parallel and --makefile under make -j2: the
#      batch's bytes;
#  (h) killed: batches SIGKILLed at staggered moments and rerun give the
#      uninterrupted batch's tree, with no temp left;
#  (i) a list line INPUT<TAB>FLAGS encodes that kernel with its own flags,
#      in the batch and in the job list;
#  (j) an Ubuntu .ddeb (linux-image-unsigned-...-dbgsym) goes under ubuntu/;
#  (k) a vmlinux that does not convert: recorded failed, the manifest still
#      valid JSON with numbers where numbers go;
#  (l) an OUTDIR with a space, a quote and a tab, the job list (with --modules:
#      tar's command) run by /bin/sh, which is dash;
#  (m) two inputs that would share an output are refused;
#  (n) the manifest line takes no record of another job (other flags);
#  (o) --modules on a package cut short after its vmlinux: the kernel fails
#      with "reading the package failed", not ok with modules missing;
#  (p) a temp dir a killed job left after its record was written goes when
#      the job runs again, even with nothing left to make.
. "$(dirname "$0")/lib.sh"

A=$T_BIN/btfpipe-archive
[ -x "$A" ] || A=$T_TOP/tools/btfpipe-archive
export BTFPIPE_BIN=$T_BIN
D=$T_OUT
build_fixture gcc -O2 5 "$D" sample || { not_ok "build sample"; test_done; }
cp "$D/sample" "$D/vmlinux-1.0-bare"
# A -dbg package as Debian lays it out: files before and after the vmlinux.
p=$D/pkg
mkdir -p "$p/DEBIAN" "$p/usr/lib/debug/boot" "$p/usr/lib/debug/lib/modules/1.0-test-amd64" "$p/usr/share/doc/x"
cat >"$p/DEBIAN/control" <<C
Package: linux-image-1.0-test-amd64-dbg
Version: 1.0-1~deb12u1
Architecture: amd64
Maintainer: btfpipe tests <tests@invalid>
Description: a stand-in for a kernel debug package
C
cp "$D/sample" "$p/usr/lib/debug/boot/vmlinux-1.0-test-amd64"
head -c 100000 /dev/urandom >"$p/usr/lib/debug/lib/modules/1.0-test-amd64/a.ko"
echo doc >"$p/usr/share/doc/x/README"
dpkg-deb -Zxz --build "$p" "$D/test-dbg.deb" >/dev/null 2>&1 || { not_ok "build the .deb"; test_done; }
# (Not a cut copy of test-dbg.deb: that would be the same kernel, one output
# for two inputs, which a batch refuses: (m).)
head -c 3000 /dev/urandom >"$D/broken-dbg.deb"

O=$D/out
"$A" -j 2 --cache "$D/cache" --distro local --release lab -o "$O" "$D/test-dbg.deb" "$D/vmlinux-1.0-bare" \
	"$D/broken-dbg.deb" >"$D/run1.out" 2>"$D/run1.err"
rc=$?
[ $rc -eq 1 ] && ok "(b) a broken package: exit 1" || not_ok "(b) a broken package: exit 1" "exit $rc: $(cat "$D/run1.err")"
# (With --distro/--release given, the package's own say comes second.)
pk=$O/local/lab/x86_64/1.0-test-amd64.btf
bare=$O/local/lab/x86_64/1.0-bare.btf
[ -s "$pk" ] && ok "(a) the package's BTF at local/lab/x86_64/1.0-test-amd64.btf" || not_ok "(a) the package's BTF" "$(find "$O" -name '*.btf')"
[ -s "$bare" ] && ok "(a) the bare vmlinux's at local/lab/x86_64/1.0-bare.btf" || not_ok "(a) the bare vmlinux's BTF" "$(find "$O" -name '*.btf')"
"$T_TOP/pipeline.sh" --btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized \
	--btf_encode_detached="$D/direct.btf" "$D/sample"
check_same "(a) the package's BTF = pipeline.sh's with BTFHub's flags" "$pk" "$D/direct.btf"
check_same "(a) the bare vmlinux's too" "$bare" "$D/direct.btf"
# Without --distro/--release: the package's own.
check "(a) the package alone" "$A" -o "$D/own" "$D/test-dbg.deb"
[ -s "$D/own/debian/12/x86_64/1.0-test-amd64.btf" ] && ok "(a) debian/12/x86_64 from the package's control fields" ||
	not_ok "(a) debian/12/x86_64 from the package" "$(find "$D/own" -name '*.btf')"

# (b)
if T_BIN=$T_BIN python3 - "$O" >"$D/m.txt" 2>&1 <<'PY'
import json, os, subprocess, sys
o = sys.argv[1]
xxh = lambda p: subprocess.run(["xxhsum", "-H2", p], stdout=subprocess.PIPE, check=True).stdout.split()[0].decode()[:32]
m = json.load(open(os.path.join(o, "manifest.json")))
ks = m["kernels"]
assert len(ks) == 3, f"{len(ks)} kernels"
st = sorted(k["status"] for k in ks)
assert st == ["failed", "ok", "ok"], st
for k in ks:
    if k["status"] == "ok":
        p = os.path.join(o, k["output"])
        h = xxh(p)
        assert h == k["output_hash"], (p, h, k["output_hash"])
        assert k["types"] > 10 and k["wall_s"] >= 0 and k["cpu_s"] >= 0, k
        # btf-emit's type count is libbpf's
        n = subprocess.run([os.environ["T_BIN"] + "/tools/btfcheck", p], stdout=subprocess.PIPE).stdout.split()[1]
        assert int(n) == k["types"], (n, k["types"])
        ih = xxh(k["input"])
        assert ih == k["input_hash"], k
    else:
        assert "broken" in k["input"] and k["reason"], k
        print("reason:", k["reason"])
PY
then ok "(b) manifest.json: 3 kernels, hashes and counts right, the broken one with its reason ($(sed -n 's/^reason: //p' "$D/m.txt"))"
else not_ok "(b) manifest.json" "$(cat "$D/m.txt")"; fi

# (c)
before=$(stat -c %Y.%i "$pk" "$bare")
sleep 1
"$A" -j 2 --cache "$D/cache" --distro local --release lab -o "$O" "$D/test-dbg.deb" "$D/vmlinux-1.0-bare" >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && ok "(c) rerun (the broken package left out): exit 0" || not_ok "(c) rerun: exit 0" "exit $rc"
[ "$(stat -c %Y.%i "$pk" "$bare")" = "$before" ] && ok "(c) rerun: both outputs untouched" ||
	not_ok "(c) rerun: both outputs untouched" "$before -> $(stat -c %Y.%i "$pk" "$bare")"
rm -f "$bare"
"$A" --distro local --release lab -o "$O" "$D/test-dbg.deb" "$D/vmlinux-1.0-bare" >/dev/null 2>&1
[ -s "$bare" ] && [ "$(stat -c %Y.%i "$pk")" = "$(head -1 <<<"$before")" ] && ok "(c) an output removed is made again, alone" ||
	not_ok "(c) an output removed is made again, alone"
ls "$O/.jobs" | grep -q tmp && not_ok "(c) no temp left in .jobs" "$(ls "$O/.jobs")" || ok "(c) no temp left in .jobs"

# (d)
printf '%s\n' "$D/test-dbg.deb" "$D/vmlinux-1.0-bare" >"$D/list"
"$A" --cache "$D/cache2" --distro local --release lab --job-list -o "$D/jl" @"$D/list" >"$D/jobs" ||
	not_ok "(d) --job-list"
n=$(grep -c . "$D/jobs")
[ "$n" = 3 ] && ok "(d) --job-list: one line per kernel and the manifest's" || not_ok "(d) --job-list: 3 lines" "$(cat "$D/jobs")"
{
	echo "all: manifest"
	i=0
	while IFS= read -r l; do
		case $l in *" --manifest "*) echo "manifest: $(seq -f 'j%g' 1 $i | tr '\n' ' ')"; printf '\t%s\n' "$l" ;;
		*) i=$((i + 1)); echo "j$i:"; printf '\t%s\n' "$l" ;; esac
	done <"$D/jobs"
	echo ".PHONY: all manifest $(seq -f 'j%g' 1 $i | tr '\n' ' ')"
} >"$D/Makefile.jobs"
check "(d) make -j2 runs the job list" make -s -j2 -f "$D/Makefile.jobs"
check_same "(d) make -j2: the package's BTF" "$D/jl/local/lab/x86_64/1.0-test-amd64.btf" "$pk"
check_same "(d) make -j2: the bare vmlinux's" "$D/jl/local/lab/x86_64/1.0-bare.btf" "$bare"
python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['kernels']; assert len(k)==2 and all(x['status']=='ok' for x in k)" \
	"$D/jl/manifest.json" && ok "(d) make -j2: the manifest names both" || not_ok "(d) make -j2: the manifest" "$(cat "$D/jl/manifest.json")"
# (e)
G=$D/gen
python3 "$T_TOP/tests/gen/kmod-pair.py" "$G" 300 >/dev/null || not_ok "(e) generate a kernel and a module"
for f in base base2 mod; do gcc -O2 -gdwarf-5 -c -o "$G/$f.o" "$G/$f.c" || not_ok "(e) build $f.o"; done
k=$D/kpkg
mkdir -p "$k/DEBIAN" "$k/usr/lib/debug/boot" "$k/usr/lib/debug/lib/modules/2.0-gen-amd64/kernel/x"
sed 's/1.0-test-amd64/2.0-gen-amd64/; s/1.0-1~deb12u1/2.0-1~deb12u1/' "$p/DEBIAN/control" >"$k/DEBIAN/control"
cp "$G/base.o" "$k/usr/lib/debug/boot/vmlinux-2.0-gen-amd64"
cp "$G/mod.o" "$k/usr/lib/debug/lib/modules/2.0-gen-amd64/kernel/x/mod.ko"
cp "$G/mod.o" "$k/usr/lib/debug/lib/modules/2.0-gen-amd64/kernel/x/other-mod.ko"
dpkg-deb -Zxz --build "$k" "$D/gen-dbg.deb" >/dev/null 2>&1 || not_ok "(e) build the package with modules"
"$T_TOP/pipeline.sh" --btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized \
	--btf_encode_detached="$D/gen.btf" "$G/base.o"
"$T_TOP/pipeline.sh" --btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized \
	--btf_base "$D/gen.btf" --btf_encode_detached="$D/genmod.btf" "$G/mod.o"
check "(e) --modules from the package" "$A" --modules --cache "$D/cache3" -o "$D/mo" "$D/gen-dbg.deb"
md=$D/mo/debian/12/x86_64
check_same "(e) the kernel's BTF" "$md/2.0-gen-amd64.btf" "$D/gen.btf"
check_same "(e) mod.ko's split BTF over it" "$md/2.0-gen-amd64.modules/mod.btf" "$D/genmod.btf"
check_same "(e) other-mod.ko's, named other_mod as the kernel names it" "$md/2.0-gen-amd64.modules/other_mod.btf" "$D/genmod.btf"
check "(e) libbpf reads mod.btf over the kernel's BTF" "$T_BIN/tools/btfcheck" --base "$md/2.0-gen-amd64.btf" "$md/2.0-gen-amd64.modules/mod.btf"
python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['kernels'][0]; assert k['status']=='ok' and k['modules']==2 and k['modules_failed']==0 and k['modules_output'].endswith('2.0-gen-amd64.modules'), k" \
	"$D/mo/manifest.json" && ok "(e) the manifest: 2 modules, none failed" || not_ok "(e) the manifest counts the modules" "$(cat "$D/mo/manifest.json")"
check "(e) --modules from the unpacked directory" "$A" --modules --distro debian --release 12 -o "$D/mdir" "$k/usr/lib/debug"
check_same "(e) directory: the kernel's BTF" "$D/mdir/debian/12/x86_64/2.0-gen-amd64.btf" "$D/gen.btf"
check_same "(e) directory: mod.btf" "$D/mdir/debian/12/x86_64/2.0-gen-amd64.modules/mod.btf" "$D/genmod.btf"
head -c 2000 "$G/mod.o" >"$k/usr/lib/debug/lib/modules/2.0-gen-amd64/kernel/x/bad.ko"
dpkg-deb -Zxz --build "$k" "$D/genbad-dbg.deb" >/dev/null 2>&1
"$A" --modules -o "$D/mbad" "$D/genbad-dbg.deb" >/dev/null 2>"$D/mbad.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'bad: ' "$D/mbad.err" && ok "(e) a broken module: exit 1, named ($(head -1 "$D/mbad.err" | cut -c1-150))" ||
	not_ok "(e) a broken module: exit 1, named" "exit $rc: $(cat "$D/mbad.err")"
[ -s "$D/mbad/debian/12/x86_64/2.0-gen-amd64.modules/mod.btf" ] && ok "(e) a broken module: the others still made" ||
	not_ok "(e) a broken module: the others still made" "$(find "$D/mbad" -type f)"
rm "$k/usr/lib/debug/lib/modules/2.0-gen-amd64/kernel/x/bad.ko"

# (f)
check "(f) --xz" "$A" --xz --modules -o "$D/xz" "$D/gen-dbg.deb"
xd=$D/xz/debian/12/x86_64
tar -xOJf "$xd/2.0-gen-amd64.btf.tar.xz" 2.0-gen-amd64.btf >"$D/xz.btf" 2>/dev/null
check_same "(f) KERNEL.btf.tar.xz holds the kernel's BTF as KERNEL.btf" "$D/xz.btf" "$D/gen.btf"
tar -xOJf "$xd/2.0-gen-amd64.modules.tar.xz" 2.0-gen-amd64.modules/mod.btf >"$D/xzmod.btf" 2>/dev/null
check_same "(f) KERNEL.modules.tar.xz holds mod.btf" "$D/xzmod.btf" "$D/genmod.btf"
check "(f) again, into another directory" "$A" --xz --modules -o "$D/xz2" "$D/gen-dbg.deb"
check_same "(f) the same tar.xz bytes twice" "$D/xz2/debian/12/x86_64/2.0-gen-amd64.btf.tar.xz" "$xd/2.0-gen-amd64.btf.tar.xz"
check_same "(f) the same modules tar.xz bytes twice" "$D/xz2/debian/12/x86_64/2.0-gen-amd64.modules.tar.xz" \
	"$xd/2.0-gen-amd64.modules.tar.xz"

# tree DIR: every output file of an archive with its hash (not the records
# or the manifest, which hold times).
tree() { (cd "$1" && find . -path ./.jobs -prune -o -type f ! -name manifest.json -print0 | LC_ALL=C sort -z | xargs -0r sha256sum); }
cp "$G/base2.o" "$D/vmlinux-2.1-other"
B="$D/gen-dbg.deb $D/vmlinux-2.1-other $D/vmlinux-1.0-bare"
# shellcheck disable=SC2086
"$A" --modules --distro local --release lab -o "$D/ref" $B >/dev/null 2>&1 || not_ok "(g) the reference batch"
tree "$D/ref" >"$D/ref.tree"

# (g)
# shellcheck disable=SC2086
"$A" --modules --distro local --release lab --job-list -o "$D/par" $B >"$D/par.jobs"
if have parallel; then
	head -n -1 "$D/par.jobs" | parallel --will-cite -j2 >/dev/null 2>&1 && tail -1 "$D/par.jobs" | sh
	rc=$?
	[ $rc -eq 0 ] && ok "(g) GNU parallel -j2 runs the job list" || not_ok "(g) GNU parallel -j2 runs the job list" "exit $rc"
	tree "$D/par" >"$D/par.tree"
	check_same "(g) GNU parallel: the batch's tree" "$D/par.tree" "$D/ref.tree"
else
	skip "(g) GNU parallel runs the job list" "parallel is not installed (make deps)"
fi
# shellcheck disable=SC2086
"$A" --modules --distro local --release lab --makefile -o "$D/mk" $B >"$D/jobs.mk"
check "(g) make -j2 -f the --makefile" make -s -j2 -f "$D/jobs.mk"
tree "$D/mk" >"$D/mk.tree"
check_same "(g) --makefile: the batch's tree" "$D/mk.tree" "$D/ref.tree"

# (h)
kills=0
for ms in 50 150 300 500 800 1200; do
	# The whole batch, as a job engine or the OOM killer of its cgroup
	# ends it: the script, its job's subshell, tar, the stages under it,
	# all in the process group set -m gives it.
	set -m
	# shellcheck disable=SC2086
	"$A" --modules --cache "$D/kcache" --distro local --release lab -o "$D/killed" $B >/dev/null 2>&1 &
	pid=$!
	set +m
	sleep "$(awk -v m=$ms 'BEGIN { print m / 1000 }')"
	kill -KILL -- -"$pid" 2>/dev/null && kills=$((kills + 1))
	wait "$pid" 2>/dev/null
done
# shellcheck disable=SC2086
"$A" --modules --cache "$D/kcache" --distro local --release lab -o "$D/killed" $B >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && ok "(h) the rerun after $kills kills: exit 0" || not_ok "(h) the rerun after the kills: exit 0" "exit $rc"
tree "$D/killed" >"$D/killed.tree"
check_same "(h) killed and rerun: the uninterrupted batch's tree" "$D/killed.tree" "$D/ref.tree"
left=$(find "$D/killed" -name '*.tmp*' -o -name '*.old.*' -o -name 'tmp.*')
[ -z "$left" ] && ok "(h) no temp left after the rerun" || not_ok "(h) no temp left after the rerun" "$left"
# (i)
printf '%s\n%s\t%s\n' "$D/vmlinux-1.0-bare" "$D/vmlinux-2.1-other" kernel >"$D/flist"
check "(i) a list with per-kernel flags" "$A" --distro local --release lab -o "$D/fl" @"$D/flist"
"$T_TOP/pipeline.sh" -j --btf_features=default --btf_encode_detached="$D/kflags.btf" "$D/vmlinux-2.1-other"
check_same "(i) the kernel with 'kernel' flags: pipeline.sh's BTF with pahole 1.32's defaults" \
	"$D/fl/local/lab/x86_64/2.1-other.btf" "$D/kflags.btf"
check_same "(i) the other with the batch's (BTFHub's)" "$D/fl/local/lab/x86_64/1.0-bare.btf" "$D/direct.btf"
grep -q -- '"flags": "-j --btf_features=default"' "$D/fl/manifest.json" && ok "(i) the manifest names its flags" ||
	not_ok "(i) the manifest names its flags" "$(cat "$D/fl/manifest.json")"
"$A" --distro local --release lab --job-list -o "$D/fl2" @"$D/flist" >"$D/fl.jobs"
[ "$(grep -- ' --one ' "$D/fl.jobs" | grep -c -- "--flags 'kernel' ")" = 1 ] &&
	[ "$(grep -- ' --one ' "$D/fl.jobs" | grep -c -- "--flags 'btfhub' ")" = 1 ] &&
	ok "(i) the job list: each line with its kernel's flags" || not_ok "(i) the job list's flags" "$(cat "$D/fl.jobs")"

# (j)
u=$D/upkg
cp -r "$p" "$u"
sed -i 's/^Package: .*/Package: linux-image-unsigned-1.0-7-generic-dbgsym/; s/^Version: .*/Version: 1.0-7.8/' "$u/DEBIAN/control"
mv "$u/usr/lib/debug/boot/vmlinux-1.0-test-amd64" "$u/usr/lib/debug/boot/vmlinux-1.0-7-generic"
dpkg-deb -Zxz --build "$u" "$D/ub.ddeb" >/dev/null 2>&1 || not_ok "(j) build the .ddeb"
check "(j) an Ubuntu .ddeb" "$A" -o "$D/ub" "$D/ub.ddeb"
check_same "(j) at ubuntu/unknown/x86_64/1.0-7-generic.btf (no release in an Ubuntu version)" \
	"$D/ub/ubuntu/unknown/x86_64/1.0-7-generic.btf" "$D/direct.btf"
# (k)
mkdir -p "$D/nod" && cp /bin/true "$D/nod/vmlinux-9.9-nodwarf"
"$A" --distro local --release lab -o "$D/nod/out" "$D/nod/vmlinux-9.9-nodwarf" >/dev/null 2>"$D/nod.err"
rc=$?
[ $rc -eq 1 ] && ok "(k) a vmlinux without DWARF: exit 1" || not_ok "(k) a vmlinux without DWARF: exit 1" "exit $rc"
python3 -c "
import json, sys
k = json.load(open(sys.argv[1]))['kernels'][0]
assert k['status'] == 'failed' and 'encoding failed' in k['reason'], k
assert all(isinstance(k[f], (int, float)) for f in ('wall_s', 'cpu_s', 'peak_rss_kb', 'job_wall_s')), k
print(k['reason'][:120])" "$D/nod/out/manifest.json" >"$D/nod.py" 2>&1 &&
	ok "(k) recorded failed, the manifest valid JSON ($(cat "$D/nod.py"))" || not_ok "(k) the manifest after a failed conversion" "$(cat "$D/nod.py")"

# (l)
# (A tab: bash's printf %q would write $'\t', which dash does not read.)
Q="$D/out dir 'q'"$'\t'"t"
"$A" --modules --distro local --release lab --job-list -o "$Q" "$D/gen-dbg.deb" >"$D/q.jobs"
check "(l) the job list, run by /bin/sh" sh "$D/q.jobs"
check_same "(l) the kernel's BTF under the odd OUTDIR" "$Q/local/lab/x86_64/2.0-gen-amd64.btf" "$D/gen.btf"
check_same "(l) mod.btf, through tar's command" "$Q/local/lab/x86_64/2.0-gen-amd64.modules/mod.btf" "$D/genmod.btf"

# (m)
mkdir -p "$D/m1" "$D/m2" && cp "$D/sample" "$D/m1/vmlinux" && cp "$D/sample" "$D/m2/vmlinux"
check_exit "(m) two files named vmlinux: one output, refused (exit 2)" 2 "$A" --distro d --release r -o "$D/mm" "$D/m1/vmlinux" "$D/m2/vmlinux"
check_grep "(m) ... naming both" 'm1/vmlinux and .*m2/vmlinux would both be d/r/x86_64/vmlinux.btf' "$T_OUT/last.err"

# (n)
"$A" --flags kernel --distro local --release lab --job-list -o "$D/jl" @"$D/list" | tail -1 >"$D/other.manifest"
sh "$D/other.manifest" 2>/dev/null
rc=$?
python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['kernels']; assert len(k)==2 and all(x['status']=='failed' and 'no record of this job' in x['reason'] for x in k), k" \
	"$D/jl/manifest.json" 2>"$D/n.err" && [ $rc -eq 1 ] && ok "(n) a manifest for other flags takes no record: both failed, exit 1" ||
	not_ok "(n) a manifest for other flags takes no record" "exit $rc: $(cat "$D/n.err")"
# (o)
sz=$(stat -c %s "$D/gen-dbg.deb")
head -c $((sz * 9 / 10)) "$D/gen-dbg.deb" >"$D/cut-dbg.deb"
"$A" --modules -o "$D/cut" "$D/cut-dbg.deb" >/dev/null 2>"$D/cut.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'reading the package failed\|no ./usr/lib/debug/boot' "$D/cut.err" &&
	ok "(o) a package cut short: exit 1, $(cut -c1-120 "$D/cut.err" | head -1)" || not_ok "(o) a package cut short: exit 1, said" "exit $rc: $(cat "$D/cut.err")"
grep -q '"status": "ok"' "$D/cut/.jobs/"*.json 2>/dev/null && not_ok "(o) ... and not recorded ok" || ok "(o) ... and not recorded ok"

# (p)
k1=$(printf '%s' "$D/vmlinux-1.0-bare" | xxhsum -H2 | cut -c1-16)
mkdir -p "$O/.jobs/tmp.$k1.stale" && touch "$O/.jobs/tmp.$k1.stale/k.btf"
"$A" --distro local --release lab -o "$O" "$D/vmlinux-1.0-bare" >/dev/null 2>&1
[ ! -e "$O/.jobs/tmp.$k1.stale" ] && ok "(p) a stale temp dir goes when its job runs again, nothing to make" ||
	not_ok "(p) a stale temp dir goes when its job runs again" "$(ls "$O/.jobs")"
test_done
