#!/bin/bash
# Usage: pipeline.sh [-j N] [--keep DIR] [--from cus|graph] [-v] [-q] [--stats[=json]] [--features LIST]
#                    [--btf-base BASE] [--lang-exclude rust] [--cache DIR] (-o OUT.btf | --elf-out FILE) ELF
#        pipeline.sh PAHOLE-OPTIONS...   (a stand-in for pahole -J in kernel builds: runs bin/btfpipe-pahole;
#                                         see README "In a kernel build")
#
# DWARF to BTF the way a kernel build chains the stages:
#
#   dwarf-extract ELF        -> DIR/NAME.cus    (per-CU records)
#   dedup-merge NAME.cus     -> DIR/NAME.graph  (deduplicated type graph)
#   btf-emit --elf ELF       -> OUT.btf         (raw BTF)
#
# --keep DIR keeps the checkpoints (else they live in a temp dir that is
# removed); --from cus|graph reruns from a kept checkpoint. The first stage
# that fails stops the pipeline: its message is printed and its exit code
# returned (see README "Exit codes"); nothing of the failed stage is left.
# --cache DIR (or BTFPIPE_CACHE_DIR in the environment, which also reaches a
# pipeline.sh run as PAHOLE) reuses extracted CUs, and each stage's whole
# output when its inputs did not change (format/CU-CACHE.md).
# BTFPIPE_STATS=1 in the environment is --stats, in either form.
set -u
# (No dirname or subshell: this runs once per module in a kernel build.)
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
# Installed, the stages sit beside this script; in a checkout, in bin/.
if [ -x "$here/dwarf-extract" ]; then bin=${BTFPIPE_BIN:-$here}; else bin=${BTFPIPE_BIN:-$here/bin}; fi
jobs="" keep="" from="" out="" cache="" verbose=0 features="" base="" elfout="" langx="" stats="" quiet=0

usage() {
	sed -n '2,/^# pipeline.sh run as PAHOLE/p' "$0" | sed 's/^# \{0,1\}//'
}
die_usage() {
	echo "btfpipe: pipeline.sh: error: $1 (see --help)" >&2
	exit 2
}

features_given=0
# pahole's command line: bin/btfpipe-pahole reads it and runs the stages
# itself, without this shell (stages/btfpipe-pahole/main.c).
case " $* " in
*" -J "*|*" --btf_encode"*|*" --version "*|*" --supported_btf_features "*|*" --btf_features"*|*" --lang_exclude"*|*" --btf_base"*|*" --skip_encoding_btf"*|*" --btf_gen_"*)
	BTFPIPE_BIN=$bin exec "$bin/btfpipe-pahole" "$@" ;;
esac

while [ $# -gt 0 ]; do
	case "$1" in
	-j) [ $# -ge 2 ] || die_usage "-j needs a number"; jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	--keep) [ $# -ge 2 ] || die_usage "--keep needs a directory"; keep=$2; shift 2 ;;
	--from) [ $# -ge 2 ] || die_usage "--from needs cus or graph"; from=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || die_usage "-o needs a file"; out=$2; shift 2 ;;
	--elf-out) [ $# -ge 2 ] || die_usage "--elf-out needs a file"; elfout=$2; shift 2 ;;
	--features) [ $# -ge 2 ] || die_usage "--features needs a list"; features=$2; features_given=1; shift 2 ;;
	--btf-base) [ $# -ge 2 ] || die_usage "--btf-base needs a file"; base=$2; shift 2 ;;
	--lang-exclude) [ $# -ge 2 ] || die_usage "--lang-exclude needs a list"; langx=$2; shift 2 ;;
	--cache) [ $# -ge 2 ] || die_usage "--cache needs a directory"; cache=$2; shift 2 ;;
	-v) verbose=1; shift ;;
	-q|--quiet) quiet=1; shift ;;
	--stats) stats=text; shift ;;
	--stats=*) stats=${1#--stats=}; shift
		case "$stats" in text|json) ;; *) die_usage "--stats takes text or json" ;; esac ;;
	-h|--help) usage; exit 0 ;;
	-*) die_usage "unknown option $1" ;;
	*) break ;;
	esac
done
# BTFPIPE_STATS=1: --stats (text) where no option can be given, as PAHOLE
# in a kernel build or under btfpipe-archive.
[ -z "$stats" ] && [ "${BTFPIPE_STATS:-0}" != 0 ] && stats=text
[ $# -eq 1 ] || die_usage "need exactly one input ELF"
elf=$1
[ -n "$out" ] || [ -n "$elfout" ] || die_usage "need -o OUT.btf or --elf-out FILE"
case "$from" in ""|cus|graph) ;; *) die_usage "--from takes cus or graph" ;; esac
[ -z "$from" ] || [ -n "$keep" ] || die_usage "--from needs --keep DIR (where the checkpoints are)"
case "$jobs" in ""|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) ;; *) die_usage "-j wants a number" ;; esac
name=${elf##*/} # (basename without a fork: this runs once per module in a kernel build)
jflag=() xflags=()
[ -n "$jobs" ] && jflag=(-j "$jobs")
[ -n "$cache" ] && xflags=(--cache "$cache")

if [ -n "$keep" ]; then
	mkdir -p "$keep" || exit 3
	dir=$keep
else
	# mktemp and rm as bash's loadable builtins when Debian's bash-builtins
	# has them: a fork and exec each was 2 ms of a small module's 40 ms,
	# and a kernel build runs this once per module. Else the commands.
	# (BTFPIPE_BASH_LOADABLES: where the loadables are; tests point it
	# elsewhere to run the fallback.)
	lb=${BTFPIPE_BASH_LOADABLES:-/usr/lib/bash}
	# The traps first: a SIGTERM just after the directory is made must still
	# remove it. A trapped signal waits for the running stage to end (it
	# has the signal too when the whole job is killed), so the directory is
	# removed after the stage's last file, never under it.
	dir=""
	trap '[ -z "$dir" ] || rm -rf "$dir"' EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	if enable -f "$lb/mktemp" mktemp 2>/dev/null && enable -f "$lb/rm" rm 2>/dev/null; then
		# (-v prints the name as well; -q: the message is ours)
		mktemp -q -v dir -d "${TMPDIR:-/tmp}/btfpipe.XXXXXX" >/dev/null || {
			echo "btfpipe: pipeline.sh: error: cannot make a temp directory in ${TMPDIR:-/tmp}" >&2
			exit 3
		}
	else
		dir=$(mktemp -d "${TMPDIR:-/tmp}/btfpipe.XXXXXX") || exit 3
	fi
fi
cus="$dir/$name.cus"
graph="$dir/$name.graph"

# The stages run glibc's malloc in huge pages (common/memtune.h, whose
# MEMTUNE_TUNABLES is this string). Exported here, no stage needs to start
# itself again for it: 3 ms each of a small module's 40. Not under a memory
# limit (ulimit -v or -d), as memtune.h says why.
tun=glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=67108864
if [ "${BTFPIPE_MEMTUNE:-}" != 0 ] && [ "$(ulimit -v)" = unlimited ] && [ "$(ulimit -d)" = unlimited ]; then
	case ":${GLIBC_TUNABLES:-}:" in
	*":$tun:"*) ;;
	*) export GLIBC_TUNABLES="$tun${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}" ;;
	esac
fi

# Each stage's --stats: text goes straight to stderr; json is collected and
# printed as one object {"dwarf-extract": {...}, ...} on stdout at the end.
run() {
	local sflags=()
	[ "$quiet" -eq 1 ] && sflags+=(-q)
	[ -n "$stats" ] && sflags+=("--stats=$stats")
	set -- "$@" "${sflags[@]}"
	[ "$verbose" -eq 1 ] && echo "+ $*" >&2
	if [ "$stats" = json ]; then
		"$@" 2>"$dir/.stage.err"
	else
		"$@"
	fi
	local rc=$?
	if [ "$stats" = json ]; then
		grep -v '^{' "$dir/.stage.err" >&2
		grep '^{' "$dir/.stage.err" >>"$dir/.stats.jsonl"
		rm -f "$dir/.stage.err"
	fi
	if [ $rc -ne 0 ]; then
		echo "btfpipe: pipeline.sh: stage $(basename "$1") failed (exit $rc)" >&2
		exit $rc
	fi
}

if [ -z "$from" ]; then
	run "$bin/dwarf-extract" "${jflag[@]}" "${xflags[@]}" -o "$cus" "$elf"
fi
mflags=() eflags=()
[ -n "$langx" ] && mflags+=(--lang-exclude "$langx")
[ "$features_given" -eq 1 ] && eflags+=(--features "$features")
[ -n "$base" ] && eflags+=(--btf-base "$base")
[ -n "$out" ] && eflags+=(-o "$out")
[ -n "$elfout" ] && eflags+=(--elf-out "$elfout")
if [ -z "$from" ] || [ "$from" = cus ]; then
	run "$bin/dedup-merge" "${jflag[@]}" "${xflags[@]}" "${mflags[@]}" -o "$graph" "$cus"
fi
run "$bin/btf-emit" "${jflag[@]}" --elf "$elf" "${xflags[@]}" "${eflags[@]}" "$graph"
if [ "$stats" = json ]; then
	# {"tool":"X",...} lines -> {"X": {...}, ...}
	sed 's/^{"tool":"\([^"]*\)",/"\1":{/' "$dir/.stats.jsonl" | paste -sd, | sed 's/^/{/; s/$/}/'
	rm -f "$dir/.stats.jsonl"
fi
