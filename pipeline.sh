#!/usr/bin/env bash
# pipeline.sh: DWARF to BTF the way a kernel build chains the stages.
#
#   ./pipeline.sh [-j N] [--keep DIR] [--from cus|graph] [-v] -o OUT.btf ELF
#
#   dwarf-extract ELF        -> DIR/NAME.cus    (per-CU records)
#   dedup-merge NAME.cus     -> DIR/NAME.graph  (deduplicated type graph)
#   btf-emit --elf ELF       -> OUT.btf         (raw BTF)
#
# --keep DIR keeps the checkpoints (else they live in a temp dir that is
# removed); --from cus|graph reruns from a kept checkpoint. The first stage
# that fails stops the pipeline: its message is printed and its exit code
# returned (see README "Exit codes"); nothing of the failed stage is left.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${BTFPIPE_BIN:-$here/bin}
jobs="" keep="" from="" out="" verbose=0

usage() {
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
}
die_usage() {
	echo "btfpipe: pipeline.sh: error: $1 (see --help)" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-j) [ $# -ge 2 ] || die_usage "-j needs a number"; jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	--keep) [ $# -ge 2 ] || die_usage "--keep needs a directory"; keep=$2; shift 2 ;;
	--from) [ $# -ge 2 ] || die_usage "--from needs cus or graph"; from=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || die_usage "-o needs a file"; out=$2; shift 2 ;;
	-v) verbose=1; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) die_usage "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || die_usage "need exactly one input ELF"
[ -n "$out" ] || die_usage "need -o OUT.btf"
case "$from" in ""|cus|graph) ;; *) die_usage "--from takes cus or graph" ;; esac
[ -z "$from" ] || [ -n "$keep" ] || die_usage "--from needs --keep DIR (where the checkpoints are)"
case "$jobs" in ""|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) ;; *) die_usage "-j wants a number" ;; esac
elf=$1
name=$(basename "$elf")
jflag=()
[ -n "$jobs" ] && jflag=(-j "$jobs")

if [ -n "$keep" ]; then
	mkdir -p "$keep" || exit 3
	dir=$keep
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe.XXXXXX") || exit 3
	trap 'rm -rf "$dir"' EXIT
fi
cus="$dir/$name.cus"
graph="$dir/$name.graph"

run() {
	[ "$verbose" -eq 1 ] && echo "+ $*" >&2
	"$@"
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "btfpipe: pipeline.sh: stage $(basename "$1") failed (exit $rc)" >&2
		exit $rc
	fi
}

if [ -z "$from" ]; then
	run "$bin/dwarf-extract" "${jflag[@]}" -o "$cus" "$elf"
fi
if [ -z "$from" ] || [ "$from" = cus ]; then
	run "$bin/dedup-merge" "${jflag[@]}" -o "$graph" "$cus"
fi
run "$bin/btf-emit" --elf "$elf" -o "$out" "$graph"
