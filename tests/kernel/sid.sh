#!/usr/bin/env bash
# tests/kernel/sid.sh: fetch what Debian unstable (sid) has and Debian 12
# has not, without touching the system's apt state: pahole 1.32 (run
# through sid's own dynamic loader over sid's libraries), the newest 7.x
# cloud kernel's -dbg package (its vmlinux with DWARF and its modules), and
# linux-source-7.x. Everything lands in DIR (default tests/out/sid), with
# apt's lists in DIR/apt; a second run downloads nothing.
#
#   tests/kernel/sid.sh [--dir DIR] pahole    prints the path of DIR/pahole-1.32, a wrapper
#   tests/kernel/sid.sh [--dir DIR] dbg       prints DIR/dbg-VERSION (boot/vmlinux-*, lib/modules/*)
#   tests/kernel/sid.sh [--dir DIR] source    prints the unpacked linux-source-7.x tree
#   tests/kernel/sid.sh [--dir DIR] versions  prints what each of them is (package versions)
#
# BTFPIPE_SID_KERNEL=7.2 picks a series instead of the newest 7.x.
# Exit 1 with a message naming the package when a download fails; the
# archive's "sid" moves, so the versions used are printed, never assumed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/tests/out/sid
if [ "${1:-}" = --dir ]; then dir=$2; shift 2; fi
what=${1:?usage: sid.sh [--dir DIR] pahole|dbg|source|versions}
mkdir -p "$dir/deb"
err() { echo "btfpipe: sid.sh: error: $*" >&2; exit 1; }
. "$top/tests/kernel/apt_private.sh"
apt_private "$dir" amd64 "sid main" || err "sid: $APT_ERR"
candidate() { apt-cache "${APT[@]}" policy "$1" 2>/dev/null | awk '/Candidate:/{ print $2 }'; }
fetch() { # PACKAGE: the .deb's path in DIR/deb, downloaded once
	local p=$1 v deb
	v=$(candidate "$p")
	[ -n "$v" ] && [ "$v" != "(none)" ] || err "sid has no package $p"
	deb=$(ls "$dir/deb/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -1)
	if [ -z "$deb" ]; then
		(cd "$dir/deb" && apt-get "${APT[@]}" download "$p" >/dev/null 2>"$dir/apt/download.err") ||
			err "apt-get download $p ($v) from sid failed: $(tail -1 "$dir/apt/download.err")"
		deb=$(ls "$dir/deb/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -1)
	fi
	[ -n "$deb" ] || err "no .deb for $p $v in $dir/deb"
	echo "$deb"
}
kernel_pkg() { # the newest (or BTFPIPE_SID_KERNEL's) 7.x cloud -dbg package
	local series=${BTFPIPE_SID_KERNEL:-7}
	apt-cache "${APT[@]}" pkgnames linux-image-"$series" 2>/dev/null |
		grep -E "^linux-image-${series//./\\.}[0-9.]*\+deb[0-9]+-cloud-amd64-dbg\$" | sort -V | tail -1
}

case $what in
pahole)
	w=$dir/pahole-1.32
	if [ ! -x "$w" ]; then
		root=$dir/pahole-root
		rm -rf "$root"
		for p in pahole libdwarves1 libc6 libdw1t64 libelf1t64 libbpf1 zlib1g libzstd1 liblzma5 libbz2-1.0; do
			dpkg-deb -x "$(fetch "$p")" "$root" || err "unpacking $p"
		done
		ver=$(candidate pahole)
		cat >"$w.tmp" <<EOF
#!/bin/sh
# sid's pahole $ver through sid's loader and libraries (tests/kernel/sid.sh).
r=$root
exec "\$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "\$r/usr/lib/x86_64-linux-gnu:\$r/lib/x86_64-linux-gnu" "\$r/usr/bin/pahole" "\$@"
EOF
		chmod +x "$w.tmp"
		"$w.tmp" --version >/dev/null 2>&1 || err "sid's pahole does not run here: $("$w.tmp" --version 2>&1 | tail -1)"
		mv "$w.tmp" "$w"
	fi
	echo "$w"
	;;
dbg)
	pkg=$(kernel_pkg)
	[ -n "$pkg" ] || err "no linux-image-${BTFPIPE_SID_KERNEL:-7}*-cloud-amd64-dbg in sid"
	ver=${pkg#linux-image-}
	ver=${ver%-dbg}
	out=$dir/dbg-$ver
	if [ ! -f "$out/boot/vmlinux-$ver" ]; then
		echo "downloading $pkg from sid..." >&2
		deb=$(fetch "$pkg") || exit 1
		rm -rf "$out.tmp" && mkdir -p "$out.tmp"
		dpkg-deb -x "$deb" "$out.tmp/x" || err "unpacking $deb"
		mv "$out.tmp/x/usr/lib/debug/boot" "$out.tmp/boot" &&
			mv "$out.tmp/x/usr/lib/debug/lib" "$out.tmp/lib" && rm -rf "$out.tmp/x" ||
			err "$deb has no usr/lib/debug/boot or lib"
		rm -rf "$out" && mv "$out.tmp" "$out"
	fi
	echo "$out"
	;;
source)
	pkg=$(apt-cache "${APT[@]}" pkgnames linux-source-"${BTFPIPE_SID_KERNEL:-7}" 2>/dev/null |
		grep -E '^linux-source-[0-9]+\.[0-9]+$' | sort -V | tail -1)
	[ -n "$pkg" ] || err "no linux-source-${BTFPIPE_SID_KERNEL:-7}.* in sid"
	out=$dir/$pkg
	if [ ! -f "$out/Makefile" ]; then
		echo "downloading $pkg from sid..." >&2
		deb=$(fetch "$pkg") || exit 1
		rm -rf "$out.tmp" && mkdir -p "$out.tmp"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$out.tmp" --wildcards './usr/src/linux-source-*.tar.*' ||
			err "no source tarball in $deb"
		tar -xf "$out.tmp"/usr/src/linux-source-*.tar.* -C "$out.tmp" || err "unpacking the source tarball"
		rm -rf "$out" && mv "$out.tmp/$pkg" "$out" && rm -rf "$out.tmp"
	fi
	echo "$out"
	;;
versions)
	echo "pahole $(candidate pahole)"
	p=$(kernel_pkg); echo "$p $(candidate "$p")"
	p=$(apt-cache "${APT[@]}" pkgnames linux-source-7 | sort -V | tail -1); echo "$p $(candidate "$p")"
	;;
*) err "unknown what: $what (pahole, dbg, source, versions)" ;;
esac
