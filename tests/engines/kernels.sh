#!/usr/bin/env bash
# tests/engines/kernels.sh DIR: the five kernels the engine checks convert,
# as Debian -dbg packages, one path a line: two ABIs of one 6.1 cloud-amd64
# series (the later one reuses the earlier's CUs from the shared cache),
# the newest 6.12 cloud-amd64, the newest 6.1 cloud-arm64 and the newest
# 6.1 s390x (big-endian). BTFPIPE_ENGINE_DEBS (paths, space-separated)
# names others instead.
#
# Fetched with apt's state kept in DIR/apt (its own lists, with arm64 and
# s390x added there, not to dpkg), so the system's apt and dpkg are left as
# they were; a .deb already in DIR, in /var/cache/apt/archives or in
# tests/out/kfuncs-dl is used as it is. Exit 1 naming the package when one
# cannot be had.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: kernels.sh DIR}
if [ -n "${BTFPIPE_ENGINE_DEBS:-}" ]; then
	printf '%s\n' $BTFPIPE_ENGINE_DEBS
	exit 0
fi
mkdir -p "$dir/deb"
err() { echo "btfpipe: kernels.sh: error: $*" >&2; exit 1; }
. "$top/tests/kernel/apt_private.sh"
apt_private "$dir" "amd64 arm64 s390x" "bookworm main" "bookworm-security main" || err "$APT_ERR"
newest() { # ERE N: the N newest package names matching ERE
	apt-cache "${APT[@]}" pkgnames linux-image- 2>/dev/null | grep -E "$1" | sort -V | tail -n "$2"
}
fetch() { # PACKAGE[:ARCH]: its .deb's path
	local p=${1%%:*} deb d
	for d in "$dir/deb" /var/cache/apt/archives "$top/tests/out/kfuncs-dl"; do
		deb=$(ls "$d/${p}_"*.deb 2>/dev/null | sort -V | tail -1)
		[ -n "$deb" ] && { echo "$deb"; return 0; }
	done
	(cd "$dir/deb" && apt-get "${APT[@]}" download "$1" >/dev/null 2>"$dir/apt/download.err") ||
		err "apt-get download $1 failed: $(tail -1 "$dir/apt/download.err")"
	deb=$(ls "$dir/deb/${p}_"*.deb 2>/dev/null | sort -V | tail -1)
	[ -n "$deb" ] || err "no .deb for $1 in $dir/deb"
	echo "$deb"
}
pkgs="$(newest '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-dbg$' 2)
$(newest '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-dbg$' 1)
$(newest '^linux-image-6\.1\.0-[0-9]+-cloud-arm64-dbg$' 1 | sed 's/$/:arm64/')
$(newest '^linux-image-6\.1\.0-[0-9]+-s390x-dbg$' 1 | sed 's/$/:s390x/')"
[ "$(echo "$pkgs" | grep -c .)" = 5 ] || err "apt's lists name fewer than five kernels: $(echo $pkgs)"
for p in $pkgs; do
	fetch "$p" || exit 1
done
