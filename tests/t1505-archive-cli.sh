#!/usr/bin/env bash
# t1505-archive-cli: tools/btfpipe-archive's command line and what a user
# sees, on the sample fixture as a vmlinux (t1500 checks the archive's bytes):
#  (a) --flags: a bare word that is not a preset (btfhub, kernel) is refused,
#      exit 2 naming the presets, on the command line and on an @FILE line
#      (named LIST:LINE); unknown pahole options too; nothing is made;
#  (b) the manifest keeps every kernel written into OUTDIR: two runs with
#      other inputs, then the job list's manifest line, list both; one whose
#      output was removed drops out; SIGKILLs at random points never leave
#      it half written;
#  (c) a missing input is named by its full path with the system's reason,
#      the others still made; a missing @FILE is a usage error;
#  (d) distro and release from a package's control fields (a .deb named by
#      its Maintainer and version, an unpacked package's DEBIAN/control) or
#      a vmlinux's version banner; a warning naming the kernel where none
#      says, and none where --distro/--release say;
#  (e) a summary line ends every batch; a line per kernel (ok, skipped,
#      FAILED) with BTFPIPE_PROGRESS=1 and on a terminal (script(1)), none
#      with BTFPIPE_PROGRESS=0;
#  (f) SIGINT (to the process group, as ^C sends it), SIGTERM and SIGHUP (to
#      the script alone) stop the running job and every process under it,
#      which get to clean up (a stand-in driver that sleeps and removes its
#      temp dir on the signal), and leave no temp in OUTDIR, its .jobs or
#      TMPDIR; a rerun completes; SIGPIPE on --job-list | head -1, and a
#      refused command line, leave nothing;
#  (g) --help and the man page: every option, exit status, environment, the
#      man page's EXAMPLES; neither cites a file that is not installed.
# T_ARCHIVE runs another btfpipe-archive (git show REV:tools/btfpipe-archive
# beside a link to pipeline.sh), T_ARCHIVE_MAN reads another man page: to
# see which checks an old one fails.
. "$(dirname "$0")/lib.sh"

A=${T_ARCHIVE:-$T_BIN/btfpipe-archive}
[ -x "$A" ] || A=$T_TOP/tools/btfpipe-archive
export BTFPIPE_BIN=$T_BIN
unset BTFPIPE_CACHE_DIR BTFPIPE_PROGRESS
D=$T_OUT
build_fixture gcc -O2 5 "$D" sample || { not_ok "build sample"; test_done; }
cp "$D/sample" "$D/vmlinux-1.0-bare"
cp "$D/sample" "$D/vmlinux-2.0-other"
"$T_TOP/pipeline.sh" --btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized \
	--btf_encode_detached="$D/direct.btf" "$D/sample"

# valid_json FILE: python3 reads FILE as JSON.
valid_json() { python3 -m json.tool "$1" >/dev/null 2>&1; }
# temps DIR...: the temp files and directories a run may leave, one a line.
temps() { find "$@" \( -name '*.tmp*' -o -name '*.old.*' -o -name 'tmp.*' -o -name 'btfpipe.*' -o -name 'slow.*' \) 2>/dev/null; }

# (a)
check_exit "(a) --flags bogus: refused, exit 2" 2 "$A" --flags bogus --distro d --release r -o "$D/fa" "$D/vmlinux-1.0-bare"
check_grep "(a) ... naming the presets" "bogus.*btfhub.*kernel" "$T_OUT/last.err"
[ ! -e "$D/fa" ] && ok "(a) ... and nothing made (no OUTDIR)" || not_ok "(a) ... and nothing made" "$(find "$D/fa" | head)"
printf '%s\n%s\tkernal\n' "$D/vmlinux-1.0-bare" "$D/vmlinux-2.0-other" >"$D/fa.list"
check_exit "(a) an @FILE line INPUT<TAB>kernal: refused, exit 2" 2 "$A" --distro d --release r -o "$D/fa" @"$D/fa.list"
check_grep "(a) ... naming the list's line and the presets" "fa\.list:2: .*kernal.*btfhub.*kernel" "$T_OUT/last.err"
[ ! -e "$D/fa" ] && ok "(a) ... and nothing made" || not_ok "(a) ... and nothing made" "$(find "$D/fa" | head)"
check_exit "(a) --flags with an unknown pahole option: refused, exit 2" 2 "$A" --flags "--btf_gen_floats --no_such_option" \
	--distro d --release r -o "$D/fa" "$D/vmlinux-1.0-bare"
check_grep "(a) ... naming it" "no_such_option" "$T_OUT/last.err"
check_exit "(a) --flags kernel is a preset" 0 "$A" --flags kernel --distro d --release r --job-list -o "$D/fa" "$D/vmlinux-1.0-bare"
check_exit "(a) --flags '-j --btf_features=default' is pahole options" 0 "$A" --flags "-j --btf_features=default" \
	--distro d --release r --job-list -o "$D/fa" "$D/vmlinux-1.0-bare"

# (b)
O=$D/fb
"$A" --distro d --release r -o "$O" "$D/vmlinux-1.0-bare" >/dev/null 2>&1
"$A" --distro d --release r -o "$O" "$D/vmlinux-2.0-other" >/dev/null 2>"$D/fb.err"
rc=$?
# kernels MANIFEST: the manifest's kernels, "STATUS OUTPUT" sorted, each
# output's hash checked.
kernels() {
	python3 - "$1" <<'PY'
import json, os, subprocess, sys
m = json.load(open(sys.argv[1]))
o = os.path.dirname(sys.argv[1])
for k in m["kernels"]:
    if k["status"] == "ok":
        h = subprocess.run(["xxhsum", "-H2", os.path.join(o, k["output"])], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout.split()[0].decode()[:32]
        assert h == k["output_hash"], (k["output"], h, k["output_hash"])
    print(k["status"], k.get("output", k["input"]))
PY
}
want=$'ok d/r/x86_64/1.0-bare.btf\nok d/r/x86_64/2.0-other.btf'
got=$(kernels "$O/manifest.json" 2>&1)
[ $rc -eq 0 ] && [ "$got" = "$want" ] && ok "(b) a second run with another kernel: the manifest lists both" ||
	not_ok "(b) a second run with another kernel: the manifest lists both" "exit $rc; got: $got"
"$A" --distro d --release r --job-list -o "$O" "$D/vmlinux-2.0-other" | tail -1 | sh >/dev/null 2>&1
got=$(kernels "$O/manifest.json" 2>&1)
[ "$got" = "$want" ] && ok "(b) the job list's manifest line, for one kernel: still both" ||
	not_ok "(b) the job list's manifest line: still both" "$got"
rm "$O/d/r/x86_64/1.0-bare.btf"
"$A" --distro d --release r -o "$O" "$D/vmlinux-2.0-other" >/dev/null 2>&1
got=$(kernels "$O/manifest.json" 2>&1)
[ "$got" = "ok d/r/x86_64/2.0-other.btf" ] && ok "(b) a kernel whose output was removed drops out" ||
	not_ok "(b) a kernel whose output was removed drops out" "$got"
"$A" --distro d --release r -o "$O" "$D/vmlinux-1.0-bare" >/dev/null 2>&1
# Many records of earlier runs (each with an output of its own), so that
# writing the manifest takes long enough for a kill to fall in it.
r=$(cat "$O/.jobs/$(printf '%s' "$D/vmlinux-1.0-bare" | xxhsum -H2 | cut -c1-16).json")
for i in $(seq 200); do
	ln "$O/d/r/x86_64/1.0-bare.btf" "$O/d/r/x86_64/old-$i.btf"
	printf '%s\n' "$r" | sed "s|vmlinux-1.0-bare\"|vmlinux-old-$i\"|; s|1.0-bare.btf|old-$i.btf|" >"$O/.jobs/old$i.json"
done
"$A" --distro d --release r --job-list -o "$O" "$D/vmlinux-1.0-bare" "$D/vmlinux-2.0-other" | tail -1 >"$D/fb.manifest"
t0=$(date +%s%N)
sh "$D/fb.manifest" >/dev/null 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['kernels']))" "$O/manifest.json" 2>&1)
[ "$n" = 202 ] && ok "(b) 200 kernels of earlier runs and 2 of this one: 202 in the manifest ($ms ms to write)" ||
	not_ok "(b) 202 kernels in the manifest" "$n"
bad=0 kills=0
for i in $(seq 10); do
	set -m
	sh "$D/fb.manifest" >/dev/null 2>&1 &
	pid=$!
	set +m
	sleep "$(awk -v s="$RANDOM" -v ms="$ms" 'BEGIN { srand(s); printf "%.3f", rand() * ms * 1.2 / 1000 }')"
	kill -KILL -- -"$pid" 2>/dev/null && kills=$((kills + 1))
	wait "$pid" 2>/dev/null
	[ ! -e "$O/manifest.json" ] || valid_json "$O/manifest.json" || bad=$((bad + 1))
done
[ $bad -eq 0 ] && ok "(b) $kills SIGKILLs while the manifest is written: it is valid JSON each time" ||
	not_ok "(b) SIGKILLs while the manifest is written: it stays valid JSON" "$bad of 10 invalid"
sh "$D/fb.manifest" >/dev/null 2>&1
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['kernels']))" "$O/manifest.json" 2>&1)
left=$(temps "$O")
[ "$n" = 202 ] && [ -z "$left" ] && ok "(b) then a whole run: 202 kernels, no temp left" ||
	not_ok "(b) after the kills, a whole run: 202 kernels, no temp left" "$n; $left"

# (c)
check_exit "(c) a missing input: exit 1" 1 "$A" --distro d --release r -o "$D/fc" /nonexistent/dir/vmlinux-foo "$D/vmlinux-1.0-bare"
check_grep "(c) ... named by its full path, with the system's reason" \
	"^btfpipe-archive: error: /nonexistent/dir/vmlinux-foo: No such file or directory$" "$T_OUT/last.err"
[ -s "$D/fc/d/r/x86_64/1.0-bare.btf" ] && ok "(c) ... the other kernel still made" || not_ok "(c) ... the other kernel still made"
python3 -c "
import json, sys
k = [k for k in json.load(open(sys.argv[1]))['kernels'] if k['status'] == 'failed']
assert len(k) == 1 and k[0]['input'] == '/nonexistent/dir/vmlinux-foo' and k[0]['reason'] == 'No such file or directory', k" \
	"$D/fc/manifest.json" 2>"$D/fc.py" && ok "(c) ... and so in the manifest" || not_ok "(c) ... and so in the manifest" "$(cat "$D/fc.py")"
(cd "$D" && "$A" --distro d --release r -o fc2 nodir/vmlinux-bar) >/dev/null 2>"$D/fc2.err"
check_grep "(c) a relative path in a missing directory: named from /" \
	"^btfpipe-archive: error: $D/nodir/vmlinux-bar: No such file or directory$" "$D/fc2.err"
check_exit "(c) a missing @FILE: exit 2" 2 "$A" -o "$D/fc3" @/nonexistent/list
check_grep "(c) ... named, with the reason" "^btfpipe-archive: error: /nonexistent/list: No such file or directory" "$T_OUT/last.err"

# (d)
# deb NAME PACKAGE VERSION MAINTAINER KERNEL: a -dbg package of the sample.
deb() {
	local p=$D/pk/$1
	mkdir -p "$p/DEBIAN" "$p/usr/lib/debug/boot"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: %s\nDescription: a stand-in\n' "$2" "$3" "$4" >"$p/DEBIAN/control"
	cp "$D/sample" "$p/usr/lib/debug/boot/vmlinux-$5"
	dpkg-deb -Zxz --build "$p" "$D/$1" >/dev/null 2>&1 || not_ok "(d) build $1"
}
# banner NAME TEXT: the sample with TEXT, a kernel's version banner, in it.
banner() { { cat "$D/sample"; printf '%s\n\0' "$1"; } >"$D/$2"; }
deb deb-by-maint.deb linux-image-6.1.0-18-amd64-dbg 6.1.76-1 "Debian Kernel Team <debian-kernel@lists.debian.org>" 6.1.0-18-amd64
deb ub-hwe.deb linux-image-unsigned-6.5.0-14-generic-dbgsym 6.5.0-14.14~22.04.1 "Ubuntu Kernel Team <kernel-team@lists.ubuntu.com>" 6.5.0-14-generic
deb ub-ga.ddeb linux-image-unsigned-5.15.0-91-generic-dbgsym 5.15.0-91.101 "Ubuntu Kernel Team <kernel-team@lists.ubuntu.com>" 5.15.0-91-generic
deb deb-unpacked.deb linux-image-6.12.9-amd64-dbg 6.12.9-1 "Debian Kernel Team <debian-kernel@lists.debian.org>" 6.12.9-amd64
dpkg-deb -R "$D/deb-unpacked.deb" "$D/unpacked"
banner "Linux version 6.1.0-20-cloud-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.85-1 (2024-04-11)" \
	vmlinux-6.1.0-20-cloud-amd64
banner "Linux version 6.8.0-40-generic (buildd@lcy02-amd64-075) (x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #40~22.04.3-Ubuntu SMP PREEMPT_DYNAMIC Tue Jul 30 17:30:19 UTC 2" \
	vmlinux-6.8.0-40-generic
banner "Linux version 6.5.6-300.fc39.x86_64 (mockbuild@bkernel01.iad2.fedoraproject.org) (gcc (GCC) 13.2.1 20230918 (Red Hat 13.2.1-3), GNU ld version 2.40-13.fc39) #1 SMP PREEMPT_DYNAMIC Fri Oct  6 19:57:21 UTC 2023" \
	vmlinux-6.5.6-300.fc39.x86_64
"$A" -o "$D/fd" "$D/deb-by-maint.deb" "$D/ub-hwe.deb" "$D/ub-ga.ddeb" "$D/unpacked" "$D/vmlinux-6.1.0-20-cloud-amd64" \
	"$D/vmlinux-6.8.0-40-generic" "$D/vmlinux-6.5.6-300.fc39.x86_64" "$D/vmlinux-1.0-bare" >/dev/null 2>"$D/fd.err"
rc=$?
[ $rc -eq 0 ] && ok "(d) a batch of packages and vmlinux files without --distro/--release: exit 0" ||
	not_ok "(d) a batch without --distro/--release: exit 0" "exit $rc: $(cat "$D/fd.err")"
while IFS='|' read -r what where; do
	[ -s "$D/fd/$where" ] && ok "(d) $what: $where" || not_ok "(d) $what: $where" "$(cd "$D/fd" && find . -name '*.btf')"
done <<'ROWS'
a .deb whose Maintainer and version say Debian 6.1|debian/12/x86_64/6.1.0-18-amd64.btf
a .deb (not .ddeb) whose Maintainer says Ubuntu, version ~22.04|ubuntu/22.04/x86_64/6.5.0-14-generic.btf
an Ubuntu .ddeb whose version does not say the release|ubuntu/unknown/x86_64/5.15.0-91-generic.btf
a package unpacked by dpkg-deb -R (its DEBIAN/control)|debian/13/x86_64/6.12.9-amd64.btf
a vmlinux with Debian's banner (6.1.85-1)|debian/12/x86_64/6.1.0-20-cloud-amd64.btf
a vmlinux with an Ubuntu HWE banner (#40~22.04.3-Ubuntu)|ubuntu/22.04/x86_64/6.8.0-40-generic.btf
a vmlinux with Fedora's banner (fc39)|fedora/39/x86_64/6.5.6-300.fc39.x86_64.btf
a bare vmlinux|unknown/unknown/x86_64/1.0-bare.btf
ROWS
check_same "(d) a vmlinux with a banner: the same BTF" "$D/fd/debian/12/x86_64/6.1.0-20-cloud-amd64.btf" "$D/direct.btf"
check_grep "(d) a warning names the bare vmlinux's kernel, where it goes, and --distro/--release" \
	"^btfpipe-archive: warning: .*vmlinux-1.0-bare: .*1.0-bare.* unknown/unknown/.*--distro" "$D/fd.err"
check_grep "(d) a warning for the Ubuntu kernel whose release is not known" "warning: .*ub-ga.ddeb: .*ubuntu/unknown/.*release" "$D/fd.err"
n=$(grep -c warning "$D/fd.err")
[ "$n" = 2 ] && ok "(d) no warning for the others" || not_ok "(d) two warnings, no more" "$(cat "$D/fd.err")"
"$A" --distro d --release r -o "$D/fd2" "$D/vmlinux-1.0-bare" >/dev/null 2>"$D/fd2.err"
grep -q warning "$D/fd2.err" && not_ok "(d) no warning with --distro/--release" "$(cat "$D/fd2.err")" ||
	ok "(d) no warning with --distro/--release"

# (e)
O=$D/fe
"$A" --distro d --release r -o "$O" "$D/vmlinux-1.0-bare" /nonexistent/vmlinux-9 >/dev/null 2>"$D/fe1.err"
check_grep "(e) a summary line, off a terminal too" \
	"^btfpipe-archive: 1 done, 0 skipped, 1 failed in [0-9]+\.[0-9] s$" "$D/fe1.err"
grep -q '^\[' "$D/fe1.err" && not_ok "(e) no line per kernel off a terminal" "$(cat "$D/fe1.err")" ||
	ok "(e) no line per kernel off a terminal"
BTFPIPE_PROGRESS=1 "$A" --distro d --release r -o "$O" "$D/vmlinux-2.0-other" "$D/vmlinux-1.0-bare" /nonexistent/vmlinux-9 \
	>/dev/null 2>"$D/fe2.err"
check_grep "(e) BTFPIPE_PROGRESS=1: [1/3] ...: ok TIME" '^\[1/3\] d/r/x86_64/2\.0-other: ok [0-9]+\.[0-9] s$' "$D/fe2.err"
check_grep "(e) ... [2/3] ...: skipped (up to date)" '^\[2/3\] d/r/x86_64/1\.0-bare: skipped \(up to date\)$' "$D/fe2.err"
check_grep "(e) ... [3/3] ...: FAILED: the reason" '^\[3/3\] /nonexistent/vmlinux-9: FAILED: No such file or directory$' "$D/fe2.err"
check_grep "(e) ... and the summary" '^btfpipe-archive: 1 done, 1 skipped, 1 failed in [0-9]+\.[0-9] s$' "$D/fe2.err"
if have script; then
	rm -f "$O/d/r/x86_64/2.0-other.btf"
	script -qec "$(printf '%q ' "$A" --distro d --release r -o "$O" "$D/vmlinux-2.0-other" "$D/vmlinux-1.0-bare")" /dev/null \
		</dev/null 2>&1 | tr '\r' '\n' >"$D/fe3.out"
	check_grep "(e) on a terminal: [1/2] ...: ok TIME" '\[1/2\] d/r/x86_64/2\.0-other: ok [0-9]+\.[0-9] s' "$D/fe3.out"
	check_grep "(e) ... [2/2] ...: skipped" '\[2/2\] d/r/x86_64/1\.0-bare: skipped' "$D/fe3.out"
	check_grep "(e) ... and the summary" 'btfpipe-archive: 1 done, 1 skipped, 0 failed in' "$D/fe3.out"
	BTFPIPE_PROGRESS=0 script -qec "$(printf '%q ' "$A" --distro d --release r -o "$O" "$D/vmlinux-1.0-bare")" /dev/null \
		</dev/null 2>&1 | tr '\r' '\n' >"$D/fe4.out"
	grep -q '\[1/1\]' "$D/fe4.out" && not_ok "(e) BTFPIPE_PROGRESS=0 on a terminal: no line per kernel" "$(cat "$D/fe4.out")" ||
		ok "(e) BTFPIPE_PROGRESS=0 on a terminal: no line per kernel"
else
	skip "(e) a line per kernel on a terminal" "script (util-linux) is not installed"
fi

# (f)
# A stand-in driver: as btfpipe does, a temp dir in TMPDIR that it removes
# on SIGINT, SIGTERM or SIGHUP (taking its time: the script must wait for
# it), a pid file to see it ended; it sleeps before it runs the real one.
S=$D/slow
mkdir -p "$S"
cat >"$S/btfpipe" <<'SH'
#!/bin/bash
case " $* " in *" --version "*) exec -a pipeline.sh "$T_REAL" "$@" ;; esac
d=$(mktemp -d "${TMPDIR:-/tmp}/slow.XXXXXX")
echo $$ >>"$T_PIDS"
trap 'sleep 0.3; rm -rf "$d"; exit 143' INT TERM HUP
sleep 30 &
echo $! >>"$T_PIDS"
wait $!
rm -rf "$d"
exec -a pipeline.sh "$T_REAL" "$@"
SH
chmod +x "$S/btfpipe"
export T_REAL=$T_BIN/btfpipe T_PIDS=$D/slow.pids
# alive PIDFILE: the pids in PIDFILE still running.
alive() {
	local p
	for p in $(cat "$1" 2>/dev/null); do
		[ -d "/proc/$p" ] && [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] && printf '%s ' "$p"
	done
}
for c in "INT group 130" "TERM pid 143" "HUP pid 129"; do
	read -r sig to want <<<"$c"
	O=$D/ff-$sig T=$D/tmpdir-$sig
	mkdir -p "$T"
	: >"$T_PIDS"
	# (set -m: the run in a process group of its own, as a shell started
	# from a terminal runs it, and with SIGINT not ignored.)
	set -m
	TMPDIR=$T BTFPIPE_BIN=$S "$A" --distro d --release r -o "$O" "$D/vmlinux-1.0-bare" "$D/vmlinux-2.0-other" \
		>/dev/null 2>"$D/ff-$sig.err" &
	pid=$!
	set +m
	# (The braces: bash's "Hangup" when it sees the job end goes to null.)
	{
		for i in $(seq 100); do [ -n "$(find "$T" -name 'slow.*')" ] && break; sleep 0.1; done
		if [ "$to" = group ]; then kill -"$sig" -- -"$pid"; else kill -"$sig" "$pid"; fi
		for i in $(seq 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
		if [ -d "/proc/$pid" ]; then
			kill -KILL -- -"$pid" 2>/dev/null
			not_ok "(f) SIG$sig to the $to: the run ends" "still running 10 s later"
		fi
		wait "$pid"
		rc=$?
	} 2>/dev/null
	[ $rc -eq "$want" ] && ok "(f) SIG$sig to the $to: exit $want" || not_ok "(f) SIG$sig to the $to: exit $want" "exit $rc: $(cat "$D/ff-$sig.err")"
	left=$(alive "$T_PIDS")
	[ -z "$left" ] && ok "(f) ... every process of the job ended" || not_ok "(f) ... every process of the job ended" "$(ps -o pid,args -p "$(echo $left | tr ' ' ,)")"
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$left" ] || kill -KILL $left 2>/dev/null
	# (An old script, killed, leaves its job running: gone before the rerun.)
	for i in $(seq 50); do [ -z "$(alive "$T_PIDS")" ] && ! pgrep -f -- "-o $O " >/dev/null && break; sleep 0.1; done
	left=$(temps "$O" "$T")
	[ -z "$left" ] && ok "(f) ... no temp left in OUTDIR, its .jobs or TMPDIR" || not_ok "(f) ... no temp left" "$left"
	TMPDIR=$T "$A" --distro d --release r -o "$O" "$D/vmlinux-1.0-bare" "$D/vmlinux-2.0-other" >/dev/null 2>&1
	rc=$?
	left=$(temps "$O" "$T")
	[ $rc -eq 0 ] && [ -s "$O/d/r/x86_64/2.0-other.btf" ] && valid_json "$O/manifest.json" && [ -z "$left" ] &&
		ok "(f) ... a rerun completes, nothing left" || not_ok "(f) ... a rerun completes" "exit $rc; $left"
done
# SIGPIPE: a job list longer than a pipe holds (64 KiB), read by head -1.
L=$D/a-directory-with-a-name-long-enough-that-the-job-list-is-more-than-a-pipe-holds-with-not-so-many-kernels-in-it
L=$L/$(basename "$L")
mkdir -p "$L"
for i in $(seq 150); do ln -sf "$D/sample" "$L/vmlinux-$i"; done
T=$D/tmpdir-pipe
mkdir -p "$T"
TMPDIR=$T "$A" --distro d --release r --job-list -o "$D/fp" "$L"/vmlinux-* 2>"$D/fp.err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc -eq 141 ] && ok "(f) --job-list | head -1: SIGPIPE, exit 141" || not_ok "(f) --job-list | head -1: SIGPIPE, exit 141" "exit $rc: $(cat "$D/fp.err")"
[ ! -e "$D/fp" ] && [ -z "$(ls -A "$T")" ] && ok "(f) ... nothing made, nothing left in TMPDIR" ||
	not_ok "(f) ... nothing made, nothing left in TMPDIR" "$(find "$D/fp" "$T" | head)"
n=$(TMPDIR=$T "$A" --distro d --release r --job-list -o "$D/fp" "$L"/vmlinux-* 2>/dev/null | wc -l)
[ "$n" = 151 ] && ok "(f) ... run again to its end: 151 lines" || not_ok "(f) ... run again to its end: 151 lines" "$n lines"
mkdir -p "$D/m1" "$D/m2" && cp "$D/sample" "$D/m1/vmlinux" && cp "$D/sample" "$D/m2/vmlinux"
TMPDIR=$T "$A" --distro d --release r -o "$D/fm" "$D/m1/vmlinux" "$D/m2/vmlinux" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e "$D/fm" ] && [ -z "$(ls -A "$T")" ] && ok "(f) a refused batch (two inputs, one output): exit 2, nothing made" ||
	not_ok "(f) a refused batch (two inputs, one output): exit 2, nothing made" "exit $rc; $(find "$D/fm" "$T" 2>/dev/null | head)"

# (g)
# entries FILE WORD...: the WORDs that no line of FILE starts (an option's
# or a variable's entry: "  -o OUTDIR ...", "  -h, --help ...").
entries() {
	local f=$1 w miss=""
	shift
	for w in "$@"; do grep -qE -- "^ +(-h, |--distro NAME, )?$w( |,|$)" "$f" || miss+=" $w"; done
	printf '%s' "$miss"
}
"$A" --help >"$D/help" 2>&1
rc=$?
miss=$(entries "$D/help" -o -j --cache --flags --modules --xz --distro --release --job-list --makefile --help \
	BTFPIPE_CACHE_DIR BTFPIPE_BIN BTFPIPE_PROGRESS TMPDIR)
grep -q '^Exit status' "$D/help" || miss+=" (Exit status)"
[ $rc -eq 0 ] && [ -z "$miss" ] && ok "(g) --help: exit 0, every option, the environment, the exit status" ||
	not_ok "(g) --help: every option, the environment, the exit status" "exit $rc; missing:$miss"
last=$(grep . "$D/help" | tail -1)
[[ $last == *. ]] && ok "(g) --help ends with a whole sentence" || not_ok "(g) --help ends with a whole sentence" "$last"
M=${T_ARCHIVE_MAN:-$T_TOP/man/btfpipe-archive.1}
miss=""
for s in SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS" ENVIRONMENT "SEE ALSO"; do
	grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}$" "$M" || miss+=" $s"
done
[ -z "$miss" ] && ok "(g) the man page has OPTIONS, EXAMPLES, EXIT STATUS, ENVIRONMENT" || not_ok "(g) the man page's sections" "missing:$miss"
if have man; then
	LC_ALL=C MANWIDTH=1000 man -l "$M" >"$D/man.txt" 2>"$D/man.err"
	miss=$(entries "$D/man.txt" -o -j --cache --flags --modules --xz --distro --release --job-list --makefile --help \
		BTFPIPE_CACHE_DIR BTFPIPE_BIN BTFPIPE_PROGRESS TMPDIR)
	[ -z "$miss" ] && [ ! -s "$D/man.err" ] && ok "(g) the man page renders and describes every option and variable" ||
		not_ok "(g) the man page describes every option and variable" "missing:$miss $(cat "$D/man.err")"
	bad=$(grep -o -E '(README(\.md)?|[A-Za-z0-9_/-]+\.md|(docs|format|tests|tools)/[A-Za-z0-9_./-]+)' "$D/man.txt" |
		grep -v '^/usr/share/doc/btfpipe/' | sort -u)
	[ -z "$bad" ] && ok "(g) the man page cites no file of the source tree" || not_ok "(g) the man page cites no file of the source tree" "$bad"
else
	skip "(g) the man page renders and describes every option" "man is not installed"
fi
test_done
