#!/bin/bash
# libbpf18.sh DEST: libbpf 1.8 from ../shared/anchors (or $BTFPIPE_ANCHORS)
# built into DEST/libbpf, and tests/tools/btf18_check.c linked against it
# as DEST/btf18-check, once (a lock serializes tests that ask at once).
# Prints the tool's path. Exit 77 when the anchors are not there, so that a
# test that needs this oracle counts itself skipped; 1 when a build failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
anchors=${BTFPIPE_ANCHORS:-$(cd "$top/.." && pwd)/shared/anchors}
src=$anchors/libbpf-f7081a6
dest=$1
[ -d "$src/src" ] || { echo "libbpf 1.8 source not found in $anchors" >&2; exit 77; }
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9
tool=$dest/btf18-check
if [ ! -x "$tool" ] || [ "$tool" -ot "$here/btf18_check.c" ]; then
	if [ ! -f "$dest/libbpf/lib/libbpf.a" ]; then
		work=$(mktemp -d) || exit 1
		cp -a "$src" "$work/libbpf" &&
			make -s -C "$work/libbpf/src" -j"$(nproc)" BUILD_STATIC_ONLY=1 OBJDIR="$work/obj" \
				DESTDIR="$dest/libbpf" PREFIX= LIBDIR=/lib INCLUDEDIR=/include install >"$dest/build.log" 2>&1
		rc=$?
		rm -rf "$work"
		[ $rc -eq 0 ] || { echo "building libbpf 1.8 failed: $dest/build.log" >&2; exit 1; }
	fi
	cc -O1 -g -I"$dest/libbpf/include" -o "$tool.tmp" "$here/btf18_check.c" "$dest/libbpf/lib/libbpf.a" -lelf -lz &&
		mv "$tool.tmp" "$tool" || { echo "building btf18-check failed" >&2; exit 1; }
fi
echo "$tool"
