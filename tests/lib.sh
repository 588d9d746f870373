# tests/lib.sh: the shared library of btfpipe's shell tests (sourced, never run).
#
# Each tests/tNNNN-*.sh sources this file and reports each check with ok,
# not_ok or skip. Counts go to "$T_RESULTS" (one word a line), which run.sh
# adds up. A script ends with test_done (also where it stops early on
# purpose, after a skip or a not_ok that leaves nothing to check): run.sh
# counts a script that exits without reaching test_done, or exits non-zero,
# as a failure, so an early exit can never pass silently.

set -u
T_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T_BIN="${T_BIN:-$T_TOP/bin}"
T_NAME=${T_NAME:-$(basename "$0" .sh)}
T_OUT="${T_OUT_ROOT:-$T_TOP/tests/out}/$T_NAME"
T_RESULTS="${T_RESULTS:-/dev/null}"
rm -rf "$T_OUT" && mkdir -p "$T_OUT"
# Each test's own TMPDIR: what a run leaves there (pipeline.sh's directory
# after a SIGKILL, or after bash itself ran out of memory) stays in
# tests/out, not in /tmp, and test_done says how much was left.
export TMPDIR="$T_OUT/.tmp"
mkdir -p "$TMPDIR"
# Inputs that are slow to make and the same for every variant (generated
# programs, built once and kept between runs: tests/gen/build-lto.sh).
T_SHARED="${T_SHARED:-$T_TOP/tests/out/shared}"

# -j N means N threads in the tests, however small the fixture: else the
# stages would run small inputs on one thread (pool_threads_for()) and the
# threaded paths would go untested. t0400 checks the default without it.
export BTFPIPE_JOBS_EXACT=1

: "${CLANG:=clang-19}"
: "${GCC:=gcc}"

# apt_need WHO PKG...: install those of the packages not installed, with
# apt-get (updating its lists once when they cannot be had), saying so as
# WHO. Returns non-zero when they could not be installed; not root, after
# printing the apt-get line to run.
apt_need() {
	local who=$1 missing="" p
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=" $p"
	done
	[ -z "$missing" ] && return 0
	echo "$who: installing:$missing"
	[ "$(id -u)" -eq 0 ] || { echo "$who: not root; run: apt-get install$missing" >&2; return 1; }
	# shellcheck disable=SC2086 # a list of names
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 && return 0
	apt-get update -qq || return 1
	# shellcheck disable=SC2086 # a list of names
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

ok()     { echo "ok: $1"; echo pass >>"$T_RESULTS"; }
not_ok() { echo "FAIL: $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed -n '1,40p' | sed 's/^/    /'; echo fail >>"$T_RESULTS"; }
skip()   { echo "skip: $1 ($2)"; echo skip >>"$T_RESULTS"; }
# A test that calls what it does not have (a helper another test defines, a
# typo) fails: bash would print "command not found" and go on, and the check
# that call made would pass over in silence. (A program that may be missing
# is asked for first: have, apt_need.)
command_not_found_handle() { not_ok "$T_NAME: command not found: $1 (the test's own mistake)"; return 127; }
# test_done: the script reached its end (run.sh's $T_DONE); exits 0.
test_done() {
	local left
	left=$(find "$T_OUT/.tmp" -mindepth 1 -maxdepth 1 -name 'btfpipe.*' 2>/dev/null | wc -l)
	[ "$left" = 0 ] || echo "info: $T_NAME: $left btfpipe.* temp directories left in its TMPDIR ($T_OUT/.tmp)"
	[ -n "${T_DONE:-}" ] && echo "$T_NAME" >"$T_DONE"
	exit 0
}

# check DESC CMD...: the command must exit 0.
check() {
	local desc=$1; shift
	local out
	if out=$("$@" 2>&1); then ok "$desc"; else not_ok "$desc" "$out"; fi
}

# check_exit DESC CODE CMD...: the command must exit with exactly CODE.
# Its stderr is kept in $T_OUT/last.err for the caller to inspect.
check_exit() {
	local desc=$1 want=$2; shift 2
	"$@" >"$T_OUT/last.out" 2>"$T_OUT/last.err"
	local got=$?
	if [ "$got" -eq "$want" ]; then ok "$desc"; else
		not_ok "$desc" "exit $got, wanted $want: $(cat "$T_OUT/last.err")"; fi
}

# check_grep DESC PATTERN FILE: FILE must contain a line matching PATTERN (ERE).
check_grep() {
	if grep -Eq -- "$2" "$3"; then ok "$1"; else
		not_ok "$1" "no line matches /$2/ in $3: $(head -c 2000 "$3")"; fi
}

# check_same DESC A B: the two files must be byte-identical.
check_same() {
	if cmp -s "$2" "$3"; then ok "$1"; else
		not_ok "$1" "$(cmp "$2" "$3" 2>&1)"; fi
}

# check_tool TOOL MIN PASS BAD DESC [WHY]: runs $T_BIN/tools/TOOL (a checker
# program of tests/tools/). It must exit 0 and print at least MIN lines
# starting with PASS and none starting with BAD. DESC may use $n (the
# number of PASS lines); WHY is said on failure, before the output.
check_tool() {
	local tool="$T_BIN/tools/$1" min=$2 pass=$3 bad=$4 desc=$5 why=${6:-} out rc n
	if [ ! -x "$tool" ]; then
		not_ok "$1 is built" "$tool missing"
		return
	fi
	out=$("$tool" 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c "^$pass")
	desc=${desc//\$n/$n}
	if [ "$rc" -eq 0 ] && [ "$n" -ge "$min" ] && ! printf '%s\n' "$out" | grep -q "^$bad"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc$why: $(printf '%s\n' "$out" | grep -v "^$pass" | head -n 20)"
	fi
}

# check_loads DESC FILE [BASE]: the running kernel's BTF checker accepts FILE
# (btfcheck --load): ok, or a skip where this kernel refuses bpf() itself
# (btfcheck's exit 77), else a failure with btfcheck's words.
check_loads() {
	local out rc
	out=$("$T_BIN/tools/btfcheck" ${3:+--base "$3"} --load "$2" 2>&1)
	rc=$?
	case $rc in
	0) ok "$1" ;;
	77) skip "$1" "$(printf '%s\n' "$out" | tail -1)" ;;
	*) not_ok "$1" "$out" ;;
	esac
}

# expected_rows, btfcmp_lines, unexplained: matching btfcmp's differences
# against $EXPECTED rows (tests/expected.sh, which bench scripts source too).
. "$T_TOP/tests/expected.sh"

# check_differences LABEL FILE DESC LEGEND: the checks of a comparison with
# an oracle (btfcmp's output FILE): every difference line is one that
# $EXPECTED lists for LABEL ("LABEL: DESC"; LEGEND says which side is A and
# which B), and every row listed for LABEL is seen.
check_differences() {
	local label=$1 file=$2 desc=$3 legend=$4 left ere why
	left=$(unexplained "$label" "$file")
	if [ -z "$left" ]; then
		ok "$label: $desc ($(btfcmp_lines "$file" | grep -c .) difference lines, all listed)"
	else
		not_ok "$label: $desc" "unexplained ($legend):"$'\n'"$left"
	fi
	while IFS=$'\t' read -r ere why; do
		[ -n "$ere" ] || continue
		if btfcmp_lines "$file" | grep -Eq -- "$ere"; then
			ok "$label: expected difference seen: $why"
		else
			not_ok "$label: expected difference seen: $why" "no difference line matches /$ere/"
		fi
	done < <(expected_rows "$label")
}

# build_sample CC OPT DWARF DIR LABEL WHAT: the sample fixture built into DIR
# for the checks of variant LABEL; else false after saying why ("LABEL:
# WHAT" skipped when CC is missing, a failure when it does not build).
build_sample() {
	local out
	if ! have "$1"; then
		skip "$5: $6" "compiler $1 not found"
		return 1
	fi
	if ! out=$(build_fixture "$1" "$2" "$3" "$4" sample 2>&1); then
		not_ok "$5: build sample" "$out"
		return 1
	fi
}

# libbpf18 WHAT: the libbpf 1.8 oracle, tests/tools/btf18_check.c built
# against libbpf from ../shared/anchors (tests/tools/libbpf18.sh, once into
# T_SHARED), in T_BTF18; else false after counting WHAT skipped (no
# anchors) or failed (the build failed).
libbpf18() {
	local out rc
	out=$("$T_TOP/tests/tools/libbpf18.sh" "$T_SHARED/libbpf18" 2>&1)
	rc=$?
	case $rc in
	0) T_BTF18=$out; return 0 ;;
	77) skip "$1" "$out" ;;
	*) not_ok "$1: build libbpf 1.8" "$out" ;;
	esac
	return 1
}

# pahole_master WHAT: pahole's master branch (../shared/anchors/build.sh,
# once into T_SHARED, a minute or two) in T_PAHOLE_MASTER; else false after
# counting WHAT skipped (no anchors) or failed (the build failed).
pahole_master() {
	local anchors=${BTFPIPE_ANCHORS:-$(cd "$T_TOP/.." && pwd)/shared/anchors} dest=$T_SHARED/anchors
	if [ ! -x "$anchors/build.sh" ]; then
		skip "$1" "pahole master's source not found in $anchors"
		return 1
	fi
	mkdir -p "$dest"
	(
		flock 9
		[ -x "$dest/bin/pahole" ] || "$anchors/build.sh" "$dest" >"$dest/build.log" 2>&1
	) 9>"$dest/.lock"
	if [ ! -x "$dest/bin/pahole" ]; then
		not_ok "$1: build pahole master" "$(tail -5 "$dest/build.log")"
		return 1
	fi
	T_PAHOLE_MASTER=$dest/bin/pahole
}

# have TOOL: true when TOOL is on PATH.
have() { command -v "$1" >/dev/null 2>&1; }

# build_fixture CC OPT DWARF DIR NAME: compile tests/fixtures/NAME/*.c into DIR/NAME
# with -g and the given compiler, optimisation level and DWARF version.
build_fixture() {
	local cc=$1 opt=$2 dw=$3 dir=$4 name=$5
	mkdir -p "$dir"
	# The prefix map makes DW_AT_comp_dir and file names independent of
	# where the checkout lives, so golden dumps hold on any clone.
	(cd "$T_TOP" && "$cc" "$opt" "-gdwarf-$dw" -fno-omit-frame-pointer \
		-fdebug-prefix-map="$T_TOP"=/btfpipe -o "$dir/$name" tests/fixtures/"$name"/*.c)
}

# many_refs REF: the 120-unit program of tests/gen/many-cus.sh built into
# $T_OUT/in (its path in $MANY_ELF), and each stage's uninterrupted output
# in REF: many.cus, many.graph, many.btf (-o) and many.elf (--elf-out), as
# the robustness tests (t1340-t1360) compare against. Else a failure, and
# the test ends.
many_refs() {
	local ref=$1 out
	if ! out=$(bash "$T_TOP/tests/gen/many-cus.sh" "$T_OUT/in" 120 "$GCC" 2>&1); then
		not_ok "generate and build the 120-unit program" "$out"
		test_done
	fi
	MANY_ELF="$T_OUT/in/many-$(basename "$GCC")"
	mkdir -p "$ref"
	if ! out=$("$T_BIN/dwarf-extract" -j2 -q -o "$ref/many.cus" "$MANY_ELF" 2>&1 &&
		"$T_BIN/dedup-merge" -j2 -q -o "$ref/many.graph" "$ref/many.cus" 2>&1 &&
		"$T_BIN/btf-emit" -j2 -q --elf "$MANY_ELF" -o "$ref/many.btf" "$ref/many.graph" 2>&1 &&
		"$T_BIN/btf-emit" -j2 -q --elf "$MANY_ELF" --elf-out "$ref/many.elf" "$ref/many.graph" 2>&1); then
		not_ok "uninterrupted reference runs of the 120-unit program" "$out"
		test_done
	fi
}
