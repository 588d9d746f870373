#!/usr/bin/env bash
# t1500-archive: tools/btfpipe-archive, many kernels in one batch, on small
# stand-ins (the sample fixture as a vmlinux, bare and inside a Debian -dbg
# style .deb built here with dpkg-deb):
#  (a) the BTFHub layout: OUTDIR/debian/12/x86_64/KERNEL.btf for the package
#      (release from its ~deb12 version), the --distro/--release one for
#      the bare vmlinux; the bytes pipeline.sh gives with the same flags;
#  (b) manifest.json parses and names every kernel: its input and output
#      hash, type count, times; a broken package is recorded as failed with
#      its reason, the others still made, and the exit code is 1;
#  (c) resumable: a second run makes nothing again (outputs untouched); an
#      output removed is made again alone;
#  (d) --job-list: each line run on its own, under make -j2, gives the same
#      bytes and manifest as the batch; @FILE lists inputs.
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
head -c 3000 "$D/test-dbg.deb" >"$D/broken-dbg.deb"

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
if python3 - "$O" >"$D/m.txt" 2>&1 <<'PY'
import hashlib, json, os, sys
o = sys.argv[1]
m = json.load(open(os.path.join(o, "manifest.json")))
ks = m["kernels"]
assert len(ks) == 3, f"{len(ks)} kernels"
st = sorted(k["status"] for k in ks)
assert st == ["failed", "ok", "ok"], st
for k in ks:
    if k["status"] == "ok":
        p = os.path.join(o, k["output"])
        h = hashlib.sha256(open(p, "rb").read()).hexdigest()[:32]
        assert h == k["output_hash"], (p, h, k["output_hash"])
        assert k["types"] > 10 and k["wall_s"] >= 0 and k["cpu_s"] >= 0, k
        ih = hashlib.sha256(open(k["input"], "rb").read()).hexdigest()[:32]
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
test_done
