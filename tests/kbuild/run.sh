#!/usr/bin/env bash
# tests/kbuild/run.sh (make check-kbuild): real kernels built with
# PAHOLE=pipeline.sh, checked against pahole on the same files. Installs
# what it needs from Debian's archive and takes minutes per kernel, so it is
# not part of `make test`.
#
# Builds (KBUILD_BUILDS, default all), each by tests/kbuild/kernel.sh from
# Debian's linux-source package into tests/out/kbuild/NAME:
#   6.1-thin   Linux 6.1, clang-19 thin LTO (LLVM=-19 LLVM_IAS=1), DWARF 5:
#              CUs refer to DIEs in other CUs, and clang emits 3-byte base
#              types for DW_OP_convert that BTF has no INT for
# For each: the build succeeds; the vmlinux's .BTF and every module's split
# .BTF parse with libbpf and btf__dedup() removes nothing; the running kernel
# loads the vmlinux BTF; the vmlinux BTF's types equal pahole 1.24's and
# pahole master's on the same vmlinux (master when ../shared/anchors has
# it, built by its build.sh) but for EXPECTED; its FUNCs are counted
# against master's, the differences listed (funcs.c says the rules).
# The BTF steps' wall times (the kernel's calls of pipeline.sh) and pahole's
# on the vmlinux are printed.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
. "$(dirname "$0")/../lib.sh"
export LC_ALL=C
BTFCMP="$T_TOP/tests/tools/btfcmp.py"
BTFCHECK="$T_BIN/tools/btfcheck"
K="$T_TOP/tests/out/kbuild"
mkdir -p "$K"
builds=${KBUILD_BUILDS:-6.1-thin}
anchors=$(cd "$T_TOP/.." && pwd)/shared/anchors

# EXPECTED: type differences against pahole on the vmlinux, "GLOB<TAB>ERE<TAB>WHY".
TAB=$'\t'
EXPECTED="\
*-thin${TAB}^only-in-B int '__SANITIZED_FAKE_INT__' size=4 .*${TAB}pahole's placeholder for clang's DW_ATE_unsigned_24, a DW_OP_convert type no type refers to: we leave it out (skip report)
*-thin${TAB}^count INT A=([0-9]+) B=[0-9]+\$${TAB}the placeholder above"

need_pkgs() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=" $p"
	done
	[ -z "$missing" ] && return 0
	echo "check-kbuild: installing:$missing"
	[ "$(id -u)" -eq 0 ] || { echo "check-kbuild: not root; run: apt-get install$missing" >&2; return 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null; }
}

# source VERSION: the unpacked linux-source-VERSION tree (unpacked once).
source_tree() {
	local v=$1 d="$K/src/linux-source-$1"
	if [ ! -f "$d/Makefile" ]; then
		need_pkgs "linux-source-$v" >&2 || return 1
		rm -rf "$d" && mkdir -p "$K/src"
		tar -C "$K/src" -xf "/usr/src/linux-source-$v.tar.xz" || return 1
	fi
	echo "$d"
}

# compare_types LABEL OURS THEIRS WHO: btfcmp's type differences, each one
# a row of EXPECTED for LABEL.
compare_types() {
	local label=$1 a=$2 b=$3 who=$4 line ere why unexplained="" n
	"$BTFCMP" --flatten-arrays --ignore-kind-counts ARRAY,FUNC,FUNC_PROTO --width 0 "$a" "$b" >"$O/cmp.$who" 2>&1
	expected_rows "$label" >"$O/expected"
	while IFS= read -r line; do
		local hit=0
		while IFS=$TAB read -r ere why; do [[ $line =~ $ere ]] && hit=1 && break; done <"$O/expected"
		[ "$hit" = 1 ] || unexplained+="$line"$'\n'
	done < <(sed -n 's/^  \(only-in-.*\|count .*\)$/\1/p' "$O/cmp.$who")
	n=$(sed -n 's/^  \(only-in-.*\|count .*\)$/\1/p' "$O/cmp.$who" | grep -c .)
	if [ -z "$unexplained" ]; then ok "$label: the vmlinux's types equal $who's ($n listed differences)"
	else not_ok "$label: the vmlinux's types equal $who's" "$unexplained"; fi
}

need_pkgs flex bison bc libssl-dev libelf-dev cpio || exit 1
master=""
if [ -x "$anchors/build.sh" ]; then
	if [ ! -x "$K/anchors/bin/pahole" ]; then
		need_pkgs cmake zlib1g-dev && bash "$anchors/build.sh" "$K/anchors" >"$K/anchors.log" 2>&1 ||
			echo "info: building pahole master failed: $(tail -3 "$K/anchors.log")"
	fi
	[ -x "$K/anchors/bin/pahole" ] && master="$K/anchors/bin/pahole"
else
	skip "pahole master comparisons" "$anchors is missing"
fi

for b in $builds; do
	case $b in
	6.1-thin) ver=6.1 tc=clang-thin ;;
	*) not_ok "build $b" "unknown build name (KBUILD_BUILDS)"; continue ;;
	esac
	O="$K/$b"
	if ! src=$(source_tree "$ver"); then
		not_ok "$b: linux-source-$ver" "cannot install or unpack it"
		continue
	fi
	t0=$(date +%s)
	if ! BTFPIPE_BIN="$T_BIN" "$T_TOP/tests/kbuild/kernel.sh" "$src" "$O" "$tc" "$T_TOP/pipeline.sh" >"$K/$b.log" 2>&1; then
		not_ok "$b: the kernel builds with PAHOLE=pipeline.sh" "$(grep -v '^#\|^$' "$K/$b.log" | tail -20)"
		continue
	fi
	ok "$b: $(tail -1 "$K/$b.log" | sed 's/^kernel.sh: //') in $(($(date +%s) - t0)) s, with PAHOLE=pipeline.sh"
	v="$O/vmlinux"
	echo "info: $b: BTF steps (ms): $(tr '\n' ' ' <"$O/btf-times")"
	check "$b: libbpf parses the vmlinux BTF and btf__dedup removes nothing" "$BTFCHECK" --dedup "$v"
	check_loads "$b: the running kernel loads the vmlinux BTF" "$v"
	nmod=0 badmod=""
	while IFS= read -r m; do
		nmod=$((nmod + 1))
		out=$("$BTFCHECK" --base "$v" --dedup "$m" 2>&1) || badmod+="$m: $(echo "$out" | tail -1)"$'\n'
	done < <(find "$O" -name '*.ko' | sort)
	if [ -z "$badmod" ]; then ok "$b: all $nmod modules' split BTF parse and btf__dedup removes nothing"
	else not_ok "$b: every module's split BTF parses and btf__dedup removes nothing" "$badmod"; fi
	t0=$(date +%s%N)
	pahole -J -j --btf_gen_floats --lang_exclude=rust --btf_encode_detached="$O/pahole.btf" "$v" >"$O/pahole.out" 2>&1
	rc=$?
	echo "info: $b: pahole $(pahole --version) -j on the vmlinux: $((($(date +%s%N) - t0) / 1000000)) ms, exit $rc"
	compare_types "$b" "$v" "$O/pahole.btf" "pahole $(pahole --version)"
	if [ -n "$master" ]; then
		t0=$(date +%s%N)
		"$master" -J -j --btf_gen_floats --lang_exclude=rust --skip_encoding_btf_inconsistent_proto \
			--btf_gen_optimized --btf_encode_detached="$O/master.btf" "$v" >"$O/master.out" 2>&1
		echo "info: $b: pahole master -j on the vmlinux: $((($(date +%s%N) - t0) / 1000000)) ms"
		compare_types "$b" "$v" "$O/master.btf" "pahole master"
		"$BTFCMP" --funcs --flatten-arrays --width 0 "$v" "$O/master.btf" 2>&1 |
			sed -n 's/^  \(only-in-. func .*\)$/\1/p' >"$O/funcs.diff"
		nf=$("$BTFCHECK" "$v" | sed -n 's/^kind FUNC //p')
		nm=$("$BTFCHECK" "$O/master.btf" | sed -n 's/^kind FUNC //p')
		echo "info: $b: FUNCs: ours $nf, pahole master $nm; $(grep -c . "$O/funcs.diff") differ:"
		sed 's/^/info:   /' "$O/funcs.diff"
	fi
done
p=$(grep -c '^pass$' "$T_RESULTS"); f=$(grep -c '^fail$' "$T_RESULTS"); s=$(grep -c '^skip$' "$T_RESULTS")
rm -f "$T_RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
