#!/usr/bin/env bash
# tests/gen/build-lto.sh DIR FILES STRUCTS SEED FLAVOUR...: generate the
# program of tests/gen/lto-prog.py (FILES files, STRUCTS structs, SEED) into
# DIR/src and build it, -O2 -g, once per FLAVOUR into DIR/FLAVOUR:
#   thin         clang-19 -flto=thin -fuse-ld=lld-19
#   full         clang-19 -flto -fuse-ld=lld-19
#   gcc-lto      gcc -flto --param lto-min-partition=100 (link-time partitions
#                of 100 instructions: a small program is cut into as many as
#                a program 30 times its size, and the partitions' CUs refer
#                to each other's DIEs as a big program's do)
#   nolto-clang  clang-19 -fuse-ld=lld-19 (what thin and full are compared with)
#   nolto-gcc    gcc (what gcc-lto is compared with)
# A build whose DIR/FLAVOUR.stamp names the same generator, compiler and
# arguments is kept: the sources are a pure function of the arguments, so the
# test variants (bin, bin-asan) and reruns share one build of a big program.
# CLANG, GCC and LLD name the tools (default clang-19, gcc, lld-19); jobs for
# the link-time back ends: LTO_JOBS (default: the number of CPUs).
set -eu
[ $# -ge 5 ] || { echo "usage: build-lto.sh DIR FILES STRUCTS SEED FLAVOUR..." >&2; exit 2; }
dir=$1 files=$2 structs=$3 seed=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
: "${CLANG:=clang-19}" "${GCC:=gcc}" "${LLD:=lld-19}" "${LTO_JOBS:=$(nproc)}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
gen_id="$(cksum <"$here/lto-prog.py" | cut -d' ' -f1) $files $structs $seed"
if [ "$(cat "$dir/src.stamp" 2>/dev/null)" != "$gen_id" ]; then
	rm -rf "$dir/src" "$dir"/*.stamp
	python3 "$here/lto-prog.py" --files "$files" --structs "$structs" --seed "$seed" "$dir"
	echo "$gen_id" >"$dir/src.stamp"
fi
for fl in "$@"; do
	case $fl in
	thin) cc=$CLANG flags="-flto=thin -fuse-ld=$LLD -Wl,--thinlto-jobs=$LTO_JOBS" ;;
	full) cc=$CLANG flags="-flto -fuse-ld=$LLD" ;;
	gcc-lto) cc=$GCC flags="-flto=$LTO_JOBS --param lto-min-partition=100" ;;
	nolto-clang) cc=$CLANG flags="-fuse-ld=$LLD" ;;
	nolto-gcc) cc=$GCC flags="" ;;
	*) echo "build-lto.sh: unknown flavour '$fl'" >&2; exit 2 ;;
	esac
	id="$gen_id $("$cc" --version | head -1) $flags"
	[ "$(cat "$dir/$fl.stamp" 2>/dev/null)" = "$id" ] && [ -x "$dir/$fl" ] && continue
	rm -f "$dir/$fl" "$dir/$fl.stamp"
	# shellcheck disable=SC2086 # flags is a word list
	(cd "$dir/src" && "$cc" -O2 -g $flags -fdebug-prefix-map="$dir/src"=/lto \
		-o "$dir/$fl.tmp" f[0-9]*.c main.c)
	mv "$dir/$fl.tmp" "$dir/$fl"
	echo "$id" >"$dir/$fl.stamp"
done
