#!/bin/sh
# pipeline.sh: the name a kernel Makefile gives as PAHOLE (and the design's
# name for the chain of stages). It is btfpipe under another name: every
# option, both command lines (pahole's and ours), is the driver's; see
# man btfpipe or bin/btfpipe --help. Run under this name, --version answers
# as pahole does (v1.NN), as the kernel's scripts/pahole-version.sh needs.
#
# The driver is $BTFPIPE_BIN/btfpipe when that is set (the tests run each
# build variant so), else beside this script (installed: /usr/lib/btfpipe
# has a link to it), else in bin/ (a checkout), through any symlink to it.
#
# POSIX sh, not bash: kbuild starts this once per module, and a bash start
# is most of what a module whose BTF is cached costs. sh's exec cannot set
# the driver's argv[0], so BTFPIPE_AS names the program the driver runs as.
p=$0
[ -L "$p" ] && p=$(readlink -f -- "$p")
case $p in */*) d=${p%/*} ;; *) d=. ;; esac
for b in ${BTFPIPE_BIN:+"$BTFPIPE_BIN/btfpipe"} "$d/btfpipe" "$d/bin/btfpipe"; do
	[ -x "$b" ] && BTFPIPE_AS=pipeline.sh exec "$b" "$@"
done
echo "btfpipe: pipeline.sh: error: no btfpipe beside $p or in $d/bin (run make)" >&2
exit 2
