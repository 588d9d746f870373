#!/usr/bin/env bash
# tests/kernel/dbg.sh: make sure Debian's cloud vmlinux with its DWARF is
# installed (linux-image-cloud-amd64-dbg, about 283 MB: the vmlinux and its
# modules under /usr/lib/debug), installing it as root when it is missing,
# and print the newest one's path. make check-kernel and make bench's
# targets run it first: their inputs are a download, not part of make test.
# Without root, and without the package, it prints the apt-get line and
# fails (exit 1).
set -u
have() { ls /usr/lib/debug/boot/vmlinux-*-cloud-amd64 >/dev/null 2>&1; }
if ! have; then
	pkg=linux-image-cloud-amd64-dbg
	if [ "$(id -u)" -ne 0 ]; then
		echo "btfpipe: $pkg is not installed and this is not root; run: apt-get install $pkg" >&2
		exit 1
	fi
	echo "installing $pkg (about 283 MB)..." >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq "$pkg" >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y -qq "$pkg" >/dev/null; } ||
		{ echo "btfpipe: apt-get install $pkg failed" >&2; exit 1; }
	have || { echo "btfpipe: $pkg installed no /usr/lib/debug/boot/vmlinux-*-cloud-amd64" >&2; exit 1; }
fi
printf '%s\n' /usr/lib/debug/boot/vmlinux-*-cloud-amd64 | sort -V | tail -1
