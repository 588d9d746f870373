#!/usr/bin/env bash
# tests/kbuild/run.sh (make check-kbuild): real kernels built with
# PAHOLE=pipeline.sh, booted, and checked against pahole. Installs what it
# needs from Debian's archive and takes minutes per kernel, so it is not part
# of `make test`.
#
# Builds (KBUILD_BUILDS, default all six, in this order), each by
# tests/kbuild/kernel.sh from Debian's linux-source packages into
# tests/out/kbuild/NAME (kept: a second run rebuilds what changed):
#   6.1-gcc    Linux 6.1, gcc (its scripts pass pahole's legacy flags)
#   6.12-gcc   Linux 6.12, gcc (scripts/Makefile.btf passes --btf_features=...)
#   6.12-gcc-pm  6.12-gcc's build tree copied and linked again with pahole
#              master as PAHOLE (../shared/anchors): the same kernel, another
#              vmlinux BTF (other ids, flat arrays, other functions); booted
#              by extmod_reloc only
#   6.12-thin  Linux 6.12, clang-19 thin LTO (LLVM=-19 LLVM_IAS=1)
#   extmod     tests/kbuild/extmod, an out-of-tree module, built with make M=
#              against 6.12-gcc (Makefile.btf adds --btf_features=distilled_base),
#              then, as built, relocated onto another kernel's vmlinux BTF
#              (KBUILD_RELOC_TO, default 6.12-gcc-pm): by libbpf 1.8 and,
#              booted in qemu, by that kernel at insmod (extmod_reloc)
#   6.1-thin   Linux 6.1, clang-19 thin LTO: clang's 3-byte DW_OP_convert base
#              types and DIEs referred to across CUs (issue 28's kernel)
#   7.2-gcc    Linux 7.x from Debian unstable (tests/kernel/sid.sh; the series
#              in its name), gcc, through 7.x's own scripts/gen-btf.sh and
#              resolve_btfids, with sched_ext (SCX_OPTS below): the kernel's
#              tools/sched_ext scx_simple is built against it and must attach
#              and schedule in qemu; compared with pahole 1.32 (vs132.sh) and
#              master, not 1.24 (7.x's Makefile.btf wants 1.26 or later)
#   7.2-thin   the same with clang-19 thin LTO
# For each kernel:
#  - it builds with PAHOLE=pipeline.sh;
#  - pahole 1.32 (tests/kernel/vs132.sh) on the vmlinux BTF step's input and
#    every module: types, decl tags, FUNCs (its table in summary.md too); the vmlinux BTF and every module's
#    split BTF parse with libbpf and btf__dedup() removes nothing; the running
#    kernel here loads the vmlinux BTF;
#  - it boots in qemu (tests/kbuild/boot.sh): the kernel checks the vmlinux
#    BTF, then every module's at insmod (all must load), and a BPF fentry
#    program whose arguments the verifier types from our BTF, CO-RE-relocated
#    by libbpf against /sys/kernel/btf/vmlinux, must load and run;
#  - Debian's pahole 1.24 then does the build's BTF steps again on the very
#    files the build gave pipeline.sh (the kernel's calls are logged: the
#    vmlinux the link made for BTF, each module; their .BTF taken out), with
#    the flags the kernel's scripts pass 1.24, the modules over pahole's own
#    vmlinux BTF; the vmlinux and every module must describe the same types
#    as pahole's, but for the rows of EXPECTED. (A second build with pahole
#    would recompile everything: the kernel's command lines hold O=.) FUNCs
#    are counted and their differences listed (their rules are pahole
#    1.27's here, 1.24's there: stages/btf-emit/funcs.c); pahole master too,
#    where ../shared/anchors has its source;
#  - the times compared are those of both tools replayed alone, one call
#    after another, on copies of the same files: during the build the
#    kernel's make runs module steps two at a time beside other jobs, which
#    pahole's replay does not have (the in-build times are printed too);
#  - for KBUILD_CACHE_BUILDS (default 6.12-gcc): one .c file touched and the
#    kernel relinked twice with BTFPIPE_CACHE_DIR, from an empty cache (cold)
#    and then warm: the BTF steps' times.
# The table of all builds is printed at the end and kept in
# tests/out/kbuild/summary.md.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
T_NAME=kbuild-run
. "$(dirname "$0")/../lib.sh"
export LC_ALL=C
BTFCMP="$T_TOP/tools/btfcmp.py"
BTFCHECK="$T_BIN/tools/btfcheck"
K="$T_TOP/tests/out/kbuild"
mkdir -p "$K"
builds=${KBUILD_BUILDS:-6.1-gcc 6.12-gcc 6.12-gcc-pm 6.12-thin extmod 6.1-thin 7.2-gcc 7.2-thin}
# sched_ext and what tools/sched_ext needs of a kernel: its Kconfig's
# mandatory options, cgroup scheduling (the schedulers' struct_ops have the
# cgroup callbacks only with EXT_GROUP_SCHED) and NET (libbpf probes global
# data with a socket filter program: without NET it creates no .data/.bss
# map and the scheduler's programs refer to none, "fd N is not pointing to
# valid bpf_map").
SCX_OPTS="BPF_JIT_ALWAYS_ON SCHED_CLASS_EXT KALLSYMS_ALL CGROUPS CGROUP_SCHED EXT_GROUP_SCHED NET"
cache_builds=${KBUILD_CACHE_BUILDS:-6.12-gcc}
# The kernel extmod_reloc loads the out-of-tree module into: a 6.12 build
# other than 6.12-gcc, listed before extmod in KBUILD_BUILDS (or kept from
# an earlier run). Not 6.12-thin: clang names base types otherwise ('long'
# for gcc's 'long int'), and relocation matches them by name.
reloc_to=${KBUILD_RELOC_TO:-6.12-gcc-pm}
anchors=$(cd "$T_TOP/.." && pwd)/shared/anchors
P="$T_TOP/pipeline.sh"
export BTFPIPE_BIN="$T_BIN"

# EXPECTED: type differences against pahole, "GLOB<TAB>ERE<TAB>WHY"; GLOB
# matches "BUILD:vmlinux" or "BUILD:MODULE" (pahole 1.24) or
# "BUILD:vmlinux@master" (pahole master); ERE a whole btfcmp line.
TAB=$'\t'
EXPECTED="\
*-thin:vmlinux*${TAB}^only-in-B int '__SANITIZED_FAKE_INT__' size=4 .*${TAB}pahole's placeholder for clang's DW_ATE_unsigned_24, a DW_OP_convert type no type refers to: we leave it out (skip report)
*-thin:vmlinux*${TAB}^count INT A=([0-9]+) B=[0-9]+\$${TAB}the placeholder above
6.12-*:vmlinux*${TAB}^count CONST A=([0-9]+) B=[0-9]+\$${TAB}a CONST that only the prototypes of functions whose selection differs refer to (FUNC and FUNC_PROTO counts are not compared; funcs.diff lists the functions, e.g. ZSTD_DCtx_refDDict(..., const ZSTD_DDict *), which pahole 1.24 and master leave out)
7.*:vmlinux*${TAB}^count CONST A=([0-9]+) B=[0-9]+\$${TAB}a CONST that only the prototypes of functions whose selection differs refer to (FUNC and FUNC_PROTO counts are not compared; funcs.diff lists the functions, e.g. ZSTD_DCtx_refDDict(..., const ZSTD_DDict *), which pahole 1.24 and master leave out)"

need_pkgs() {
	apt_need check-kbuild "$@" && return 0
	[ "$(id -u)" -eq 0 ] || return 1
	# linux-source-6.12 is in bookworm-security today, and in bookworm-backports.
	if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
		echo "check-kbuild: adding bookworm-backports to apt's sources (/etc/apt/sources.list.d/bookworm-backports.sources)"
		printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" \
			"Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
			>/etc/apt/sources.list.d/bookworm-backports.sources
		apt-get update -qq
	fi
	apt_need check-kbuild "$@"
}

# source_tree VERSION: the unpacked linux-source-VERSION tree (unpacked once);
# 7.x from Debian unstable, by tests/kernel/sid.sh.
source_tree() {
	local v=$1 d="$K/src/linux-source-$1"
	case $v in 7.*) BTFPIPE_SID_KERNEL=$v "$T_TOP/tests/kernel/sid.sh" source; return ;; esac
	if [ ! -f "$d/Makefile" ]; then
		need_pkgs "linux-source-$v" >&2 || return 1
		rm -rf "$d" && mkdir -p "$K/src"
		tar -C "$K/src" -xf "/usr/src/linux-source-$v.tar.xz" || return 1
	fi
	echo "$d"
}

# compare_types LABEL OURS THEIRS WHO [BASE_OURS BASE_THEIRS]: btfcmp's type
# differences, each one a row of EXPECTED for LABEL; quiet when equal.
compare_types() {
	local label=$1 a=$2 b=$3 who=$4 unexplained n bases=()
	[ $# -ge 6 ] && bases=(--base-a "$5" --base-b "$6")
	"$BTFCMP" --flatten-arrays --ignore-kind-counts ARRAY,FUNC,FUNC_PROTO --width 0 "${bases[@]}" "$a" "$b" \
		>"$O/cmp.out" 2>&1
	if [ $? -gt 1 ] || ! grep -q '^btfcmp: [0-9]* differences' "$O/cmp.out"; then
		printf '%s: btfcmp could not compare %s with %s:\n%s\n' "$label" "$a" "$b" "$(tail -5 "$O/cmp.out")"
		return 1
	fi
	unexplained=$(unexplained "$label" "$O/cmp.out")
	n=$(btfcmp_lines "$O/cmp.out" | grep -c .)
	if [ -n "$unexplained" ]; then
		printf '%s: types against %s:\n%s\n' "$label" "$who" "$unexplained"
		return 1
	fi
	[ "$n" -eq 0 ] || echo "info: $label: $n listed differences from $who"
	return 0
}

# kinds FILE [BASE]: "KIND=COUNT ..." of the types FILE adds.
kinds() { "$BTFCHECK" ${2:+--base "$2"} "$1" 2>/dev/null | sed -n 's/^kind //p' | awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $1, $2 }'; }

# kfunc_tags FILE [BASE]: the sorted names of the FUNCs that carry a
# "bpf_kfunc" decl tag, and their bpf_fastcall tags.
kfunc_tags() {
	bpftool ${2:+-B "$2"} btf dump file "$1" 2>/dev/null | awk '
		$2 == "FUNC" { name[substr($1, 2, length($1) - 2)] = $3 }
		$2 == "DECL_TAG" && ($3 == "'\''bpf_kfunc'\''" || $3 == "'\''bpf_fastcall'\''") {
			split($4, a, "="); tag[n++] = a[2] " " $3 }
		END { for (i = 0; i < n; i++) { split(tag[i], t, " "); print name[t[1]], t[2] } }' | sort
}

# btf_sums DIR: "SHA256 FILE" of the .BTF section of DIR's vmlinux and modules.
btf_sums() {
	local f t
	t=$(mktemp)
	(cd "$1" && find . -name '*.ko' | sort; echo ./vmlinux) | while IFS= read -r f; do
		: >"$t"
		objcopy --dump-section .BTF="$t" "$1/$f" "$t.o" 2>/dev/null
		echo "$(sha256sum <"$t" | cut -c1-16) $f"
	done
	rm -f "$t" "$t.o"
}

# ms_of FILE PATTERN: the summed milliseconds of btf-times lines whose file matches.
ms_of() { awk -v p="$2" '$1 ~ p { s += $2 } END { print s + 0 }' "$1"; }

need_pkgs flex bison bc libssl-dev libelf-dev cpio busybox-static qemu-system-x86 kmod libzstd-dev zlib1g-dev ||
	exit 1
master=""
if [ -x "$anchors/build.sh" ]; then
	# Built once into tests/out/anchors, shared with make check-pahole-suite.
	A="$T_TOP/tests/out/anchors"
	if [ ! -x "$A/bin/pahole" ]; then
		need_pkgs cmake && bash "$anchors/build.sh" "$A" >"$A.log" 2>&1
	fi
	if [ -x "$A/bin/pahole" ]; then master="$A/bin/pahole"
	else skip "pahole master comparisons" "building it failed: $(tail -3 "$A.log" | tr '\n' ' ')"; fi
else
	skip "pahole master comparisons" "$anchors is missing"
fi

: >"$K/summary.rows"
: >"$K/summary132.rows"
# kernel NAME VERSION TOOLCHAIN: every check of one kernel.
kernel() {
	local b=$1 ver=$2 tc=$3 src t0 v nmod badmod m out
	O="$K/$b"
	if ! src=$(source_tree "$ver"); then
		not_ok "$b: linux-source-$ver" "cannot install or unpack it"
		return
	fi
	local seven=no extra="" scx="" scxran=-
	case $ver in 7.*) seven=yes extra=$SCX_OPTS ;; esac
	t0=$(date +%s)
	if ! KERNEL_EXTRA_YES=$extra "$T_TOP/tests/kbuild/kernel.sh" "$src" "$O" "$tc" "$P" >"$K/$b.log" 2>&1; then
		not_ok "$b: the kernel builds with PAHOLE=pipeline.sh" "$(grep -v '^#\|^$' "$K/$b.log" | tail -20)"
		return
	fi
	ok "$b: $(tail -1 "$K/$b.log" | sed 's/^kernel.sh: //') in $(($(date +%s) - t0)) s, with PAHOLE=pipeline.sh"
	# The build's own BTF calls and times, kept for the replays and the
	# cache relinks (which write btf-times again); a run that rebuilt
	# nothing keeps those of the last one that did.
	local inbuild="in the build"
	if [ "$(cat "$O/btf-steps" 2>/dev/null || echo 0)" -gt 0 ] || [ ! -s "$O/btf-calls.ours" ]; then
		cp "$O/btf-times" "$O/btf-times.ours"
		cp "$O/btf-calls" "$O/btf-calls.ours"
	else
		inbuild="in an earlier run's build (nothing was rebuilt)"
	fi
	v="$O/vmlinux"
	# vb: our vmlinux BTF as the BTF step wrote it. 7.x's gen-btf.sh hands it
	# to resolve_btfids, which sorts it, adds an _impl FUNC for each
	# KF_IMPLICIT_ARGS kfunc and rewrites those kfuncs' prototypes (libbpf's
	# dedup then finds duplicates in the final .BTF, whoever made the step's
	# BTF), and deletes it: it is made again here from the step's input with
	# the kernel's arguments. Without the layout section (7.x's Makefile.btf
	# asks for layout from pahole 1.31), which a kernel older than 7.x
	# refuses (E2BIG), for the running kernel's check.
	# vin: what the tools compared with read, for 7.x the BTF step's own
	# input (.tmp_vmlinux1): resolve_btfids sorts each kfunc set's pairs by
	# BTF id in the final vmlinux's .BTF_ids, so a tool reading that pairs
	# flags with the wrong kfunc (bpf_fastcall moves).
	local vb=$v vbl=$v vin=$v
	if [ $seven = yes ]; then
		local line args
		line=$(grep -v '\.ko$' "$O/btf-calls.ours" | tail -1)
		vin="$O/${line##* }"
		read -r -a args <<<"${line% *}"
		vb="$O/step.btf" vbl="$O/step.nolayout.btf"
		(cd "$O" && "$P" "${args[@]/--btf_encode_detached=*/--btf_encode_detached=$vb}" "${line##* }") >"$O/step.log" 2>&1 &&
			(cd "$O" && "$P" "${args[@]/--btf_features=layout/--btf_features=attributes}" "--btf_encode_detached=$vbl" "${line##* }") >>"$O/step.log" 2>&1 ||
			not_ok "$b: our BTF step again on ${line##* }" "$(tail -5 "$O/step.log")"
		check "$b: libbpf parses the final vmlinux BTF (resolve_btfids' output)" "$BTFCHECK" "$v"
		echo "info: $b: the final vmlinux BTF, dedup: $("$BTFCHECK" --dedup "$v" 2>&1 | sed -n 's/^dedup //p') (resolve_btfids' additions)"
	fi
	check "$b: libbpf parses the vmlinux BTF and btf__dedup removes nothing" "$BTFCHECK" --dedup "$vb"
	check_loads "$b: the running kernel here loads the vmlinux BTF" "$vbl"
	nmod=0 badmod=""
	while IFS= read -r m; do
		nmod=$((nmod + 1))
		out=$("$BTFCHECK" --base "$v" --dedup "$m" 2>&1) || badmod+="$m: $(echo "$out" | tail -1)"$'\n'
	done < <(find "$O" -name '*.ko' | sort)
	if [ "$nmod" -eq 0 ]; then not_ok "$b: the build has modules" "no .ko under $O"
	elif [ -z "$badmod" ]; then ok "$b: all $nmod modules' split BTF parse and btf__dedup removes nothing"
	else not_ok "$b: every module's split BTF parses and btf__dedup removes nothing" "$badmod"; fi
	local booted=no bpf=no
	if [ $seven = yes ]; then
		if scx=$(build_scx "$src" "$O"); then
			ok "$b: tools/sched_ext's scx_simple builds against its BTF (kfuncs: $(scx_kfuncs "$O"))"
			scxran=no
		else
			not_ok "$b: tools/sched_ext's scx_simple builds against its BTF" "$scx"
			scx=""
		fi
	fi
	if out=$(BOOT_SCX=$scx "$T_TOP/tests/kbuild/boot.sh" "$O" "$K/$b-boot" 2>&1); then
		ok "$b: qemu: $out"
		booted=yes bpf=yes
		[ -n "$scx" ] && scxran=yes
	else
		not_ok "$b: qemu boots it, every module loads, the BPF program loads and runs" "$out"
		grep -q '^GUEST-MODULES loaded=[0-9]* failed=0' "$K/$b-boot/console.txt" 2>/dev/null && booted=yes
	fi

	# pahole 1.24 on the very files the build gave pipeline.sh (btf-calls):
	# the vmlinux the link made for BTF, and each module, their .BTF taken
	# out again; the modules over pahole's vmlinux BTF. The flags are those
	# both kernels' scripts pass pahole 1.24 (6.1's pahole-flags.sh and
	# 6.12's Makefile.btf agree for it).
	local Op="$K/$b-pahole" same="no" pflags=(-j --btf_gen_floats --lang_exclude=rust) f tv="" bad="" pv
	pv=$(pahole --version)
	# Every kernel: pahole 1.32 on the vmlinux BTF step's input and every
	# module (tests/kernel/vs132.sh; its table row lands in summary132.rows).
	# 7.x is compared with 1.32 alone.
	local same132=no vin132=$vin line132
	line132=$(grep -v '\.ko$' "$O/btf-calls.ours" | tail -1)
	[ -f "$O/${line132##* }" ] && vin132="$O/${line132##* }"
	if out=$(VS132_MODULES=100 "$T_TOP/tests/kernel/vs132.sh" "$b=$vin132:$O" 2>&1); then
		ok "$b: the vmlinux and every module against pahole 1.32: $(grep -c '^ok' <<<"$out") checks"
		same132=yes
	else
		not_ok "$b: the vmlinux and every module against pahole 1.32 (vs132.sh)" "$(grep -A12 '^FAIL' <<<"$out" | head -40)"
	fi
	grep "^| $b " <<<"$out" | sed "s/^| $b |/| $b | $tc |/; s/ |\$/ | $scxran |/" >>"$K/summary132.rows"
	if [ $seven = yes ]; then
		same=$same132
		pv=1.32
	fi
	rm -rf "$Op" && mkdir -p "$Op"
	: >"$Op/btf-times"
	# pahole_on FILE [BASE]: pahole -J on the copy of FILE, timed; its
	# objcopy is GNU's, as the kernel's LLVM_OBJCOPY=$(OBJCOPY) makes it.
	pahole_on() {
		local f=$1 copy="$Op/${1//\//_}" t0 rc
		objcopy --remove-section=.BTF "$O/$f" "$copy" || return 1
		t0=$(date +%s%N)
		LLVM_OBJCOPY=objcopy pahole -J "${pflags[@]}" ${2:+--btf_base "$2"} "$copy" >>"$Op/pahole.out" 2>&1
		rc=$?
		echo "$f $((($(date +%s%N) - t0) / 1000000))" >>"$Op/btf-times"
		[ $rc -eq 0 ] && "$BTFCHECK" ${2:+--base "$2"} "$copy" >/dev/null 2>&1 ||
			{ echo "pahole $pv failed on $copy (exit $rc): $(tail -3 "$Op/pahole.out")"; return 1; }
	}
	[ $seven = yes ] || while IFS= read -r f; do
		f=${f##* }
		case $f in *.ko) continue ;; esac # after the vmlinux, below
		tv="$Op/${f//\//_}"
		out=$(pahole_on "$f") || { bad+="$out"$'\n'; tv=""; }
	done <"$O/btf-calls.ours"
	if [ $seven = yes ]; then
		: # compared with pahole 1.32 above
	elif [ -n "$tv" ]; then
		while IFS= read -r f; do
			f=${f##* }
			case $f in *.ko) ;; *) continue ;; esac
			if out=$(pahole_on "$f" "$tv"); then
				out=$(O=$O compare_types "$b:$(basename "$f" .ko)" "$O/$f" "$Op/${f//\//_}" pahole "$v" "$tv") ||
					bad+="$out"$'\n'
			else
				bad+="$out"$'\n'
			fi
		done <"$O/btf-calls.ours"
		out=$(O=$O compare_types "$b:vmlinux" "$v" "$tv" "pahole $pv") || bad="$out"$'\n'"$bad"
	elif [ -z "$bad" ]; then
		bad="no vmlinux BTF call in $O/btf-calls.ours"
	fi
	# Ours replayed as pahole was: the kernel's own arguments, a copy of
	# each file without its .BTF, one call after another, the same timer.
	local Or="$K/$b-replay" line args copy t0
	rm -rf "$Or" && mkdir -p "$Or" && : >"$Or/btf-times"
	while IFS= read -r line; do
		f=${line##* }
		copy="$Or/${f//\//_}"
		objcopy --remove-section=.BTF "$O/$f" "$copy" || { bad+="cannot copy $O/$f"$'\n'; continue; }
		read -r -a args <<<"${line% *}" # the kernel's arguments hold no spaces
		t0=$(date +%s%N)
		(cd "$O" && "$P" "${args[@]}" "$copy") >>"$Or/out" 2>&1 ||
			bad+="pipeline.sh replayed on $copy failed: $(tail -3 "$Or/out")"$'\n'
		echo "$f $((($(date +%s%N) - t0) / 1000000))" >>"$Or/btf-times"
	done <"$O/btf-calls.ours"
	if [ $seven = yes ]; then
		[ -z "$bad" ] || not_ok "$b: ours replayed as the kernel called it" "$bad"
	elif [ -z "$bad" ]; then
		ok "$b: the vmlinux and all $nmod modules describe the same types as pahole $pv on the same files"
		same=yes
		echo "info: $b: vmlinux kinds, ours:   $(kinds "$v")"
		echo "info: $b: vmlinux kinds, pahole: $(kinds "$tv")"
		echo "info: $b: BTF steps replayed alone, ms: vmlinux $(ms_of "$Or/btf-times" vmlinux) (pahole $(ms_of "$Op/btf-times" vmlinux)), modules $(ms_of "$Or/btf-times" '[.]ko$') (pahole $(ms_of "$Op/btf-times" '[.]ko$')); $inbuild: vmlinux $(ms_of "$O/btf-times.ours" vmlinux), modules $(ms_of "$O/btf-times.ours" '[.]ko$')"
	else
		not_ok "$b: the vmlinux and every module describe the same types as pahole $pv on the same files" "$bad"
	fi
	# pahole master with the flags the kernel gave pipeline.sh for vmlinux,
	# on the final vmlinux (the same DWARF; its .BTF_ids now filled in).
	local mflags=() a
	for a in $(grep -v '\.ko$' "$O/btf-calls.ours" | tail -1); do
		[ "$a" = -J ] || mflags+=("$a")
	done
	[ ${#mflags[@]} -gt 0 ] && unset 'mflags[${#mflags[@]}-1]'
	if [ -n "$master" ]; then
		rm -f "$O/master.btf"
		if ! "$master" ${mflags[@]+"${mflags[@]}"} --btf_encode_detached="$O/master.btf" "$vin" >"$O/master.out" 2>&1; then
			not_ok "$b: pahole master encodes the vmlinux" "$(tail -5 "$O/master.out")"
		elif out=$(O=$O compare_types "$b:vmlinux@master" "$vb" "$O/master.btf" "pahole master"); then
			ok "$b: the vmlinux's types equal pahole master's on it"
		else
			not_ok "$b: the vmlinux's types equal pahole master's on it" "$out"
		fi
		if [ -s "$O/master.btf" ]; then
			"$BTFCMP" --funcs --flatten-arrays --width 0 "$vb" "$O/master.btf" 2>&1 |
				sed -n 's/^  \(only-in-. func .*\)$/\1/p' >"$O/funcs.diff"
			echo "info: $b: FUNCs ours $("$BTFCHECK" "$vb" | sed -n 's/^kind FUNC //p'), pahole master $("$BTFCHECK" "$O/master.btf" | sed -n 's/^kind FUNC //p'); $(grep -c . "$O/funcs.diff") differ (funcs.diff)"
			# The kfuncs: pahole finds them in .BTF_ids before resolve_btfids
			# has counted the sets; each must carry its bpf_kfunc tag.
			kfunc_tags "$vb" >"$O/kfuncs.ours"
			kfunc_tags "$O/master.btf" >"$O/kfuncs.master"
			local nk
			nk=$(grep -c . "$O/kfuncs.ours")
			if ! cmp -s "$O/kfuncs.ours" "$O/kfuncs.master"; then
				not_ok "$b: the same functions carry bpf_kfunc tags as in pahole master's" \
					"$(diff "$O/kfuncs.ours" "$O/kfuncs.master" | head -10)"
			elif [[ " ${mflags[*]} " == *decl_tag_kfuncs* ]] && [ "$nk" -eq 0 ]; then
				not_ok "$b: the kfuncs carry bpf_kfunc tags" "the kernel asked for decl_tag_kfuncs and none has one"
			else
				ok "$b: the same $nk functions carry bpf_kfunc tags as in pahole master's"
			fi
		fi
	fi

	# A relink after one touched file, the cache cold and then warm: each
	# relink must run every BTF step again and give the same .BTF bytes,
	# vmlinux and modules, as the same relink without a cache (kernel.sh
	# fixes the build number, whose length is the length of linux_banner's
	# array type in the DWARF: #9 and #10 make different BTF).
	local cold="-" warm="-"
	case " $cache_builds " in
	*" $b "*)
		local C="$K/$b-cache" f="$src/init/version.c" why="" run
		rm -rf "$C"
		touch "$f"
		"$T_TOP/tests/kbuild/kernel.sh" "$src" "$O" "$tc" "$P" >"$K/$b-nocache.log" 2>&1 ||
			why+="the relink without a cache failed: $(tail -5 "$K/$b-nocache.log")"$'\n'
		btf_sums "$O" >"$O/btf.sums"
		for run in cold warm; do
			[ -z "$why" ] || break
			touch "$f"
			if ! BTFPIPE_CACHE_DIR=$C "$T_TOP/tests/kbuild/kernel.sh" "$src" "$O" "$tc" "$P" >"$K/$b-$run.log" 2>&1; then
				why+="the $run relink failed: $(tail -5 "$K/$b-$run.log")"$'\n'
				break
			fi
			cp "$O/btf-times" "$O/btf-times.$run"
			[ "$(cat "$O/btf-steps")" -eq $((nmod + 1)) ] ||
				why+="the $run relink made $(cat "$O/btf-steps") BTF steps, not $((nmod + 1))"$'\n'
			btf_sums "$O" | cmp -s - "$O/btf.sums" ||
				why+="the $run relink's .BTF differs from the relink's without a cache: $(btf_sums "$O" | diff - "$O/btf.sums" | head -5)"$'\n'
		done
		if [ -z "$why" ]; then
			cold="$(ms_of "$O/btf-times.cold" vmlinux)+$(ms_of "$O/btf-times.cold" '[.]ko$')"
			warm="$(ms_of "$O/btf-times.warm" vmlinux)+$(ms_of "$O/btf-times.warm" '[.]ko$')"
			ok "$b: relinked after touching init/version.c with BTFPIPE_CACHE_DIR, the same .BTF bytes: BTF steps (vmlinux+modules, ms) cold $cold, warm $warm"
		else
			not_ok "$b: relinks with BTFPIPE_CACHE_DIR, cold and warm, give the same .BTF" "$why"
		fi ;;
	esac
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s |\n' "$b" \
		"$(sed -n 's/^kernel.sh: built \(again \)\{0,1\}\([^ ]*\).*/\2/p' "$K/$b.log")" "$tc" "$nmod" "$booted" "$bpf" "$scxran" "$same ($pv)" \
		"$(ms_of "$K/$b-replay/btf-times" vmlinux 2>/dev/null)" "$(ms_of "$Op/btf-times" vmlinux 2>/dev/null)" \
		"$(ms_of "$K/$b-replay/btf-times" '[.]ko$' 2>/dev/null)" "$(ms_of "$Op/btf-times" '[.]ko$' 2>/dev/null)" \
		"$cold" "$warm" \
		>>"$K/summary.rows"
}

# build_scx SRC KOUT: tools/sched_ext's scx_simple built against the
# kernel in KOUT (its vmlinux.h from our BTF, its libbpf and bpftool from
# SRC), linked static for the initramfs; prints its path, or the reason.
build_scx() {
	local src=$1 kout=$2 d="$2/scx" log="$2/scx.log"
	rm -rf "$d" && mkdir -p "$d"
	if ! make -C "$src/tools/sched_ext" O="$d" CLANG="$CLANG" LLVM_STRIP=llvm-strip-19 VMLINUX_BTF="$kout/vmlinux" \
		-j"$(nproc)" "$d/build/bin/scx_simple" >"$log" 2>&1; then
		grep -E 'error' "$log" | head -10
		return 1
	fi
	gcc -static -o "$d/scx_simple" "$d/build/obj/sched_ext/scx_simple.o" "$d/build/obj/libbpf/libbpf.a" \
		-lelf -lz -lzstd -lpthread >>"$log" 2>&1 || { tail -5 "$log"; return 1; }
	echo "$d/scx_simple"
}

# scx_kfuncs KOUT: the kfuncs scx_simple's BPF object calls (extern FUNCs;
# a ___suffix is libbpf's, stripped when it resolves them).
scx_kfuncs() {
	bpftool btf dump file "$1/scx/build/obj/sched_ext/scx_simple.bpf.linked3.o" 2>/dev/null |
		sed -n "s/^\[[0-9]*\] FUNC '\([^']*\)' .*linkage=extern.*/\1/p" | sort | tr '\n' ' '
}

# extmod: tests/kbuild/extmod against the 6.12-gcc tree, then booted with it.
extmod() {
	local kb="$K/6.12-gcc" d="$K/extmod" src
	O="$K/extmod"
	if [ ! -f "$kb/vmlinux" ] || [ ! -f "$kb/.kernel-sh" ]; then
		not_ok "extmod: build the out-of-tree module" "6.12-gcc is not built (KBUILD_BUILDS must list it first)"
		return
	fi
	src=$(source_tree 6.12) || return
	rm -rf "$d" && mkdir -p "$d" && cp "$T_TOP"/tests/kbuild/extmod/* "$d/"
	# The kernel's wrapper logs into 6.12-gcc's btf-times and btf-calls:
	# this call's lines are moved out, and 6.12-gcc's logs kept as they were.
	local l
	for l in btf-times btf-calls; do cp "$kb/$l" "$kb/$l.keep"; : >"$kb/$l"; done
	make -C "$src" O="$kb" M="$d" PAHOLE="$kb/pahole-timed" modules >"$K/extmod.log" 2>&1
	local rc=$?
	for l in btf-times btf-calls; do mv "$kb/$l" "$d/$l"; mv "$kb/$l.keep" "$kb/$l"; done
	if [ $rc -ne 0 ]; then
		not_ok "extmod: make M=... builds it with PAHOLE=pipeline.sh" "$(tail -20 "$K/extmod.log")"
		return
	fi
	local ko="$d/btfpipe_extmod.ko" ms
	ms=$(ms_of "$d/btf-times" '[.]ko$')
	if grep -q 'btfpipe_extmod\.ko$' "$d/btf-calls"; then
		ok "extmod: make M=... builds it with PAHOLE=pipeline.sh (BTF step $ms ms)"
		echo "info: extmod: the kernel called: $(grep 'btfpipe_extmod\.ko$' "$d/btf-calls" | tail -1)"
	else
		not_ok "extmod: make M=... calls PAHOLE on the module" "no call in $d/btf-calls"
	fi
	# With a distilled base (Makefile.btf asks for distilled_base), .BTF is
	# split BTF over .BTF.base, not over the vmlinux BTF: Debian's libbpf
	# and bpftool, which do not know .BTF.base, read the two sections.
	local bview="$kb/vmlinux" sview="$ko" over="the vmlinux BTF"
	if readelf -SW "$ko" 2>/dev/null | grep -q ' \.BTF\.base '; then
		objcopy --dump-section .BTF="$d/split.btf" --dump-section .BTF.base="$d/dbase.btf" "$ko" "$d/sections.o"
		bview="$d/dbase.btf" sview="$d/split.btf" over="its distilled base"
	fi
	check "extmod: its split BTF parses over $over and btf__dedup removes nothing" \
		"$BTFCHECK" --base "$bview" --dedup "$sview"
	# Its kfunc (6.12's Makefile.btf asks for decl_tag_kfuncs): one
	# DECL_TAG "bpf_kfunc" on the FUNC btfpipe_kfunc_weigh.
	local tagged
	tagged=$(bpftool -B "$bview" btf dump file "$sview" 2>&1 | awk '
		$2 == "FUNC" && $3 == "'\''btfpipe_kfunc_weigh'\''" { f = substr($1, 2, length($1) - 2) }
		$2 == "DECL_TAG" && $3 == "'\''bpf_kfunc'\''" { split($4, a, "="); t[a[2]] = 1 }
		END { print (f != "" && (f in t)) ? "yes" : "no" }')
	if [ "$tagged" = yes ]; then ok "extmod: its kfunc btfpipe_kfunc_weigh carries the bpf_kfunc decl tag"
	else not_ok "extmod: its kfunc btfpipe_kfunc_weigh carries the bpf_kfunc decl tag" \
		"$(bpftool -B "$bview" btf dump file "$sview" 2>&1 | grep -E "btfpipe_kfunc|bpf_kfunc|rror" | head -5)"; fi
	local out booted=no
	if out=$("$T_TOP/tests/kbuild/boot.sh" "$kb" "$K/extmod-boot" "$ko" 2>&1); then
		ok "extmod: qemu: 6.12-gcc with it (its init registers its kfunc set): $out"
		booted=yes
	else
		not_ok "extmod: 6.12-gcc boots and loads it with the others" "$out"
	fi
	# pahole 1.24 on the same module, over its own vmlinux BTF of 6.12-gcc.
	local kp="$K/6.12-gcc-pahole" same=no pv="" pms=""
	pv=$(ls "$kp"/.tmp_vmlinux* 2>/dev/null | grep -v '\.o$' | head -1)
	if [ -n "$pv" ]; then
		objcopy --remove-section=.BTF --remove-section=.BTF.base "$ko" "$K/extmod.pahole.ko"
		local t0
		t0=$(date +%s%N)
		LLVM_OBJCOPY=objcopy pahole -J -j --btf_gen_floats --lang_exclude=rust --btf_base "$pv" "$K/extmod.pahole.ko" \
			>"$K/extmod-pahole.log" 2>&1
		rc=$?
		pms=$((($(date +%s%N) - t0) / 1000000))
		if [ $rc -ne 0 ]; then
			not_ok "extmod: pahole $(pahole --version) encodes the module" "$(tail -5 "$K/extmod-pahole.log")"
		elif [ "$sview" != "$ko" ]; then
			# Distilled: relocated onto the vmlinux BTF by libbpf 1.8, the
			# types it names against pahole's (1.24 writes no kfunc tag).
			if ! libbpf18 "extmod: its types against pahole's (libbpf 1.8 reads .BTF.base)"; then :
			elif out=$(diff <("$T_BTF18" --dump --base "$kb/vmlinux" "$ko" 2>&1 | grep -v '^types \|bpf_kfunc decl_tag') \
				<("$T_BTF18" --dump --base "$pv" "$K/extmod.pahole.ko" 2>&1 | grep -v '^types ')); then
				ok "extmod: its types, relocated onto the vmlinux BTF, equal pahole $(pahole --version)'s on the same module"
				same=yes
			else
				not_ok "extmod: its types, relocated onto the vmlinux BTF, equal pahole's on the same module" "$out"
			fi
		elif out=$(O=$d compare_types "extmod:btfpipe_extmod" "$ko" "$K/extmod.pahole.ko" pahole "$kb/vmlinux" "$pv"); then
			ok "extmod: its types equal pahole $(pahole --version)'s on the same module"
			same=yes
		else
			not_ok "extmod: its types equal pahole's on the same module" "$out"
		fi
	else
		not_ok "extmod: pahole's vmlinux BTF of 6.12-gcc to compare over" "none in $kp (6.12-gcc's pahole step)"
	fi
	printf '| extmod | %s | gcc | 1 | %s | - | - | %s | - | %s / %s | - | - |\n' \
		"$(make -s -C "$src" O="$kb" kernelrelease)" "$booted" "$same" "$ms" "${pms:--}" \
		>>"$K/summary.rows"
	extmod_reloc "$ko" "$pv"
}

# types_of BTF_FILE: its number of types (btfcheck, libbpf 1.1: base BTF).
types_of() { "$BTFCHECK" "$1" 2>/dev/null | sed -n 's/^types //p'; }

# int_names BTF_FILE: the sorted names of the INTs of a BTF file (raw or ELF).
int_names() { bpftool btf dump file "$1" 2>/dev/null | sed -n "s/^\[[0-9]*\] INT '\([^']*\)'.*/\1/p" | sort -u; }

# extmod_reloc KO PAHOLE_VMLINUX: the out-of-tree module, built against
# 6.12-gcc, in a kernel whose vmlinux BTF differs ($reloc_to). Its .BTF is
# split BTF over the distilled base in .BTF.base (distilled_base, which
# 6.12's Makefile.btf asks for with KBUILD_EXTMOD); libbpf 1.8's
# btf__parse_elf_split() (btf18-check --base) and the 6.12 kernel at insmod
# (btf_parse_module -> btf_relocate) map that base onto the vmlinux BTF at
# hand by name (and size, kind, encoding) and renumber the split types
# after it. Relocated anywhere, the module must describe the same types
# (btf18-check --dump, by name, whatever the ids) as over 6.12-gcc's own
# vmlinux BTF. PAHOLE_VMLINUX (pahole 1.24's BTF of 6.12-gcc, when made)
# is a vmlinux BTF that differs from ours by the same compiler's names.
extmod_reloc() {
	local ko=$1 pv=$2 kb="$K/6.12-gcc" kt="$K/$reloc_to" out ref got why="" n
	if readelf -SW "$ko" 2>&1 | grep -q ' \.BTF\.base '; then
		ok "extmod: it has a .BTF.base section (its distilled base)"
	else
		not_ok "extmod: it has a .BTF.base section (Makefile.btf asks for distilled_base)" \
			"its sections: $(readelf -SW "$ko" 2>&1 | grep -i btf)"
	fi
	libbpf18 "extmod: libbpf 1.8 relocates its BTF onto other vmlinux BTF" || T_BTF18=""
	if [ -n "$T_BTF18" ]; then
		# Over its own distilled base, then relocated onto its own vmlinux's
		# BTF (the reference) and onto pahole 1.24's of the same kernel.
		ref=$("$T_BTF18" --dump --base "$kb/vmlinux" "$ko" 2>&1) || why+="onto 6.12-gcc's vmlinux BTF: $ref"$'\n'
		out=$("$T_BTF18" "$ko" 2>&1)
		n=$(sed -n 's/^distilled //p' <<<"$out")
		[ -n "$n" ] || why+="btf18-check finds no distilled base: $out"$'\n'
		if [ -z "$pv" ]; then :
		elif ! got=$("$T_BTF18" --dump --base "$pv" "$ko" 2>&1); then
			why+="onto pahole 1.24's vmlinux BTF of 6.12-gcc: $got"$'\n'
		elif [ -z "$why" ] && [ "$got" != "$ref" ]; then
			why+="relocated onto pahole 1.24's vmlinux BTF, other types: $(diff <(echo "$ref") <(echo "$got") | head -10)"$'\n'
		fi
		local onto="6.12-gcc's vmlinux BTF"
		[ -z "$pv" ] || onto+=" and pahole 1.24's ($(types_of "$pv") types, ours $(types_of "$kb/vmlinux"))"
		if [ -z "$why" ]; then
			ok "extmod: libbpf 1.8 reads its distilled base ($n types) and relocates it onto $onto, the same types"
		else
			not_ok "extmod: libbpf 1.8 reads its distilled base and relocates it onto $onto, the same types" "$why"
		fi
	fi
	if [ ! -f "$kt/vmlinux" ] || [ ! -f "$kt/.kernel-sh" ] || [ ! -f "$kt/arch/x86/boot/bzImage" ]; then
		skip "extmod: loads into $reloc_to" "$reloc_to is not built (KBUILD_BUILDS must list it before extmod)"
		return
	fi
	# The two vmlinux BTFs must differ, else relocating proves nothing.
	local t
	t=$(mktemp -d)
	objcopy --dump-section .BTF="$t/a" "$kb/vmlinux" "$t/a.o" 2>/dev/null
	objcopy --dump-section .BTF="$t/b" "$kt/vmlinux" "$t/b.o" 2>/dev/null
	if [ ! -s "$t/a" ] || [ ! -s "$t/b" ]; then
		not_ok "extmod: 6.12-gcc's and $reloc_to's vmlinux have a .BTF" "$(ls -l "$t")"
	elif cmp -s "$t/a" "$t/b"; then
		not_ok "extmod: 6.12-gcc's and $reloc_to's vmlinux BTF differ" "their .BTF sections are the same bytes"
	else
		ok "extmod: 6.12-gcc's and $reloc_to's vmlinux BTF differ ($(wc -c <"$t/a") and $(wc -c <"$t/b") bytes, $(types_of "$kb/vmlinux") and $(types_of "$kt/vmlinux") types)"
	fi
	# The names its distilled base needs that the other kernel's BTF lacks:
	# relocation matches INTs by name (gcc says 'long int', clang 'long').
	local lacks=""
	objcopy --dump-section .BTF.base="$t/base" "$ko" "$t/c.o" 2>/dev/null &&
		lacks=$(comm -23 <(int_names "$t/base") <(int_names "$kt/vmlinux") | sed "s/.*/'&'/" | tr '\n' ' ')
	rm -rf "$t"
	[ -z "$lacks" ] || lacks="its distilled base has INTs that $reloc_to's vmlinux BTF does not name: $lacks"
	if [ -n "$T_BTF18" ]; then
		if ! got=$("$T_BTF18" --dump --base "$kt/vmlinux" "$ko" 2>&1); then
			not_ok "extmod: libbpf 1.8 relocates its BTF onto $reloc_to's vmlinux BTF" "$got"$'\n'"$lacks"
		elif [ -n "$ref" ] && [ "$got" != "$ref" ]; then
			not_ok "extmod: relocated onto $reloc_to's vmlinux BTF by libbpf 1.8, it describes the same types" \
				"$(diff <(echo "$ref") <(echo "$got") | head -20)"
		else
			ok "extmod: libbpf 1.8 relocates its BTF onto $reloc_to's vmlinux BTF, the same types"
		fi
	fi
	# The kernel checks vermagic before BTF (no MODVERSIONS, no signing here).
	local vm vt
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
	vt=$(modinfo -F vermagic "$(find "$kt" -name '*.ko' | head -1)" 2>/dev/null)
	if [ -n "$vm" ] && [ "$vm" = "$vt" ]; then ok "extmod: its vermagic is $reloc_to's ($vm)"
	else not_ok "extmod: its vermagic is $reloc_to's" "'$vm', $reloc_to's modules '$vt'"; fi
	# Booted: the other kernel insmods it with its own modules; it must load
	# and its BTF be there (the kernel refuses a module whose BTF it cannot
	# relocate or validate: no CONFIG_MODULE_ALLOW_BTF_MISMATCH).
	local name c="$K/extmod-$reloc_to-boot/console.txt" booted=no bpf=no
	name=$(modinfo -F name "$ko" 2>/dev/null)
	if out=$("$T_TOP/tests/kbuild/boot.sh" "$kt" "$K/extmod-$reloc_to-boot" "$ko" 2>&1); then
		bpf=yes
		why=""
		grep -q "^GUEST-BTF-FILES.* ${name:-btfpipe_extmod} " "$c" || why+="no /sys/kernel/btf/$name: $(grep '^GUEST-BTF-FILES' "$c")"$'\n'
		grep -q "${name:-btfpipe_extmod}: loaded" "$c" || why+="its init did not say it loaded"$'\n'
		grep -Eq 'failed to validate module|distilled base|BTF mismatch' "$c" &&
			why+="$(grep -E 'failed to validate module|distilled base|BTF mismatch' "$c" | head -5)"$'\n'
		if [ -z "$why" ]; then
			ok "extmod: qemu: $reloc_to loads it (built against 6.12-gcc) with its BTF relocated, /sys/kernel/btf/$name: $out"
			booted=yes
		else
			not_ok "extmod: qemu: $reloc_to loads it with its BTF relocated" "$why"
		fi
	else
		not_ok "extmod: qemu: $reloc_to loads it (built against 6.12-gcc) with its BTF relocated" "$out"$'\n'"$lacks"
	fi
	printf '| extmod in %s | %s | gcc | 1 | %s | %s | - | - | - | - | - | - |\n' \
		"$reloc_to" "$(cat "$kt/include/config/kernel.release" 2>/dev/null)" "$booted" "$bpf" >>"$K/summary.rows"
}

# 6.12-gcc-pm: 6.12-gcc's objects linked again by pahole master, a kernel
# whose vmlinux BTF is not the one extmod was built against.
kernel_pm() {
	local kb="$K/6.12-gcc" d="$K/6.12-gcc-pm" src t0
	if [ -z "$master" ]; then
		skip "6.12-gcc-pm: 6.12-gcc linked by pahole master" "no pahole master"
		return
	fi
	if [ ! -f "$kb/vmlinux" ] || [ ! -f "$kb/.kernel-sh" ]; then
		not_ok "6.12-gcc-pm: 6.12-gcc's tree to copy" "6.12-gcc is not built (KBUILD_BUILDS must list it first)"
		return
	fi
	src=$(source_tree 6.12) || return
	[ -f "$d/.kernel-sh" ] || cp -a "$kb" "$d" # then kept, built again in place
	t0=$(date +%s)
	if ! "$T_TOP/tests/kbuild/kernel.sh" "$src" "$d" gcc "$master" >"$K/6.12-gcc-pm.log" 2>&1; then
		not_ok "6.12-gcc-pm: 6.12-gcc links again with PAHOLE=pahole master" "$(tail -20 "$K/6.12-gcc-pm.log")"
		return
	fi
	ok "6.12-gcc-pm: 6.12-gcc links again with PAHOLE=pahole master ($(tail -1 "$K/6.12-gcc-pm.log" | sed 's/^kernel.sh: //') in $(($(date +%s) - t0)) s)"
	check "6.12-gcc-pm: libbpf parses its vmlinux BTF" "$BTFCHECK" "$d/vmlinux"
}

for b in $builds; do
	case $b in
	6.12-gcc-pm) kernel_pm ;;
	6.1-gcc) kernel "$b" 6.1 gcc ;;
	6.12-gcc) kernel "$b" 6.12 gcc ;;
	6.12-thin) kernel "$b" 6.12 clang-thin ;;
	6.1-thin) kernel "$b" 6.1 clang-thin ;;
	7.*-gcc) kernel "$b" "${b%-gcc}" gcc ;;
	7.*-thin) kernel "$b" "${b%-thin}" clang-thin ;;
	extmod) extmod ;;
	*) not_ok "build $b" "unknown build name (KBUILD_BUILDS)" ;;
	esac
done
{
	echo "| build | kernel | compiler | modules | all loaded in qemu | BPF program loaded | sched_ext scheduler ran | types = pahole's (which) | vmlinux BTF step ms, ours / pahole (replayed alone) | modules' BTF steps ms, ours / pahole (replayed alone) | relink cold (vmlinux+modules ms, in the build) | relink warm |"
	echo "|---|---|---|---:|---|---|---|---|---:|---:|---:|---:|"
	cat "$K/summary.rows"
	echo
	echo "Against pahole 1.32 (tests/kernel/vs132.sh): the vmlinux BTF step's input and every module"
	echo "| build | compiler | types equal | fn tags ours/1.32 | FUNC only ours/only 1.32 | names differ | modules: types equal | module types ours/1.32 | vs 1.24 | vs master | sched_ext ran |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	cat "$K/summary132.rows"
} >"$K/summary.md"
cat "$K/summary.md"
p=$(grep -c '^pass$' "$T_RESULTS"); f=$(grep -c '^fail$' "$T_RESULTS"); s=$(grep -c '^skip$' "$T_RESULTS")
rm -f "$T_RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
