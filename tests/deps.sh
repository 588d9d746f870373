#!/usr/bin/env bash
# tests/deps.sh (make deps): install what btfpipe needs on Debian 12.
# Build: libdw-dev libelf-dev libbpf-dev libxxhash-dev libbz2-dev (the static
# link: libdw's libbz2.a) pkg-config gcc make.
# Tests: clang-19 lld-19 llvm-19 (fixtures, LTO), libclang-rt-19-dev (libFuzzer), dwarves (pahole) and bpftool
# (reference outputs), python3 (test scripts), dwz and binutils (dwz-compressed
# DWARF, readelf/objcopy/nm in tests), strace (t1310 kills stages at exact
# system calls), time (/usr/bin/time: make bench, make check-kernel),
# parallel (GNU parallel runs btfpipe-archive's job list in t1500) and gdb
# (t1340 prints the backtrace of a stage's core, should one crash).
# Bench: gnuplot-nox (bench/scale.sh's plot).
# Run: xxhash (xxhsum: btfpipe-archive's input and output hashes).
# Without root it prints the exact apt-get line and fails.
set -eu
pkgs="libdw-dev libelf-dev libbpf-dev libxxhash-dev libbz2-dev libzstd-dev zlib1g-dev pkg-config gcc make
      clang-19 libclang-rt-19-dev lld-19 llvm-19 dwarves bpftool python3 dwz binutils man-db strace time
      parallel xxhash gnuplot-nox gdb"
missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
if [ -z "$missing" ]; then
	echo "deps: everything is installed"
	exit 0
fi
line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing:$missing" >&2
	echo "deps: as root, run: apt-get update && $line" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
