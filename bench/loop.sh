#!/usr/bin/env bash
# bench/loop.sh (make bench-loop): the edit-compile loop as kbuild runs it.
#
# A kernel tree built by tests/kbuild/kernel.sh (make check-kbuild keeps
# them in tests/out/kbuild; LOOP_BUILD names one, default 7.2-gcc) is made
# again after each of three edits, with PAHOLE=pipeline.sh and a warm
# BTFPIPE_CACHE_DIR, as a kernel engineer's `make` would:
#   (a) code only: a function's body in a vmlinux file (LOOP_VMLINUX_FILE,
#       default kernel/sys.c) changes;
#   (b) a struct that one vmlinux file uses changes (a member renamed);
#   (c) code only, in a module's file (LOOP_MODULE_FILE, default
#       fs/mbcache.c).
# Before them a priming edit adds the function and struct and is built, not
# measured, so that the cache holds the tree as the loop starts.
#
# Every BTF step kbuild runs in a scenario is timed as it runs (wall, user
# and system CPU, bin/tools/measure), its input copied before and its output
# after. Then, on those same inputs, one at a time: pahole 1.32 (Debian
# unstable's, tests/kernel/sid.sh) with the kernel's arguments, timed the
# same way; ours again with the cache as the build found it (a copy taken
# before the build, the steps in the order kbuild started them, each input
# under the name kbuild gave it: the merge's memo keys that name); and ours
# without a cache, whose bytes the in-build output must equal.
#
# Two comparisons, both printed: ours as it ran in the build against
# pahole replayed, and ours replayed against pahole replayed. The first is
# what the person at the keyboard waited for, but pays for kbuild's other
# jobs running beside the step while pahole's replay does not; the second
# runs both tools one step at a time on a quiet machine, the same
# conditions for each, and is the ratio of the tools. The table: per
# scenario the steps kbuild ran, the summed wall and CPU of each, their
# ratios, and whether every output (in the build and replayed) equals the
# cold run's. The edits are undone at the end (the source tree is
# shared with other builds), which makes the next build of the tree
# recompile those two files.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${LOOP_BUILD:-7.2-gcc}
O="$top/tests/out/kbuild/$build"
W="$top/tests/out/bench-loop/$build"
vfile=${LOOP_VMLINUX_FILE:-kernel/sys.c}
mfile=${LOOP_MODULE_FILE:-fs/mbcache.c}
P="$top/pipeline.sh"
M="$top/bin/tools/measure" # time(1) to the microsecond (bench/measure.c)
fail() { echo "bench-loop: FAIL: $*" >&2; exit 1; }

[ -f "$O/.config" ] && [ -e "$O/vmlinux" ] ||
	fail "no built tree in $O: run make check-kbuild (KBUILD_BUILDS=$build) first"
src=$(readlink -f "$O/source") && [ -f "$src/Makefile" ] || fail "$O/source: no kernel source tree"
[ -f "$src/$vfile" ] && [ -f "$src/$mfile" ] || fail "$src: no $vfile or $mfile"
PAHOLE132=$("$top/tests/kernel/sid.sh" pahole) || fail "no pahole 1.32 (tests/kernel/sid.sh pahole)"
mk=()
grep -q '^CONFIG_CC_IS_CLANG=y' "$O/.config" && mk=(LLVM=-19 LLVM_IAS=1)
rm -rf "$W" && mkdir -p "$W"
C="$W/cache"

# The wrapper kbuild calls as PAHOLE: each call's input copied, then ours
# timed, then its output copied, into a step directory of its own,
# $W/steps/N/{args,in,out,time} (kbuild runs module steps side by side:
# mkdir claims N).
cat >"$W/pahole-loop" <<WRAPPER
#!/usr/bin/env bash
case " \$* " in *" --version "* | *" --supported_btf_features "*) exec "$P" "\$@" ;; esac
mkdir -p "$W/steps"
n=0
until mkdir "$W/steps/\$n" 2>/dev/null; do n=\$((n + 1)); done
d="$W/steps/\$n"
in=\${@: -1} out=\$in
for a in "\$@"; do case \$a in --btf_encode_detached=*) out=\${a#*=} ;; esac; done
cp "\$in" "\$d/in"
printf '%s\n' "\$*" >"\$d/args"
"$M" "\$d/time" "$P" "\$@"
rc=\$?
cp "\$out" "\$d/out" 2>/dev/null
exit \$rc
WRAPPER
chmod +x "$W/pahole-loop"

# The marker block at the end of each file: the function's body (CODE),
# the struct's member (TYPE; vmlinux file only), the module's function's
# body (MODCODE).
orig_v=$(cat "$src/$vfile") orig_m=$(cat "$src/$mfile")
restore() {
	put "$src/$vfile" "$orig_v"
	put "$src/$mfile" "$orig_m"
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# put FILE TEXT: FILE's content made TEXT, written only when it differs (a
# rewrite with the same bytes would still make kbuild compile it again).
put() {
	[ "$(cat "$1")" = "$2" ] || printf '%s\n' "$2" >"$1"
}
edit() { # edit CODE TYPE MODCODE
	put "$src/$vfile" "$orig_v
/* bench/loop.sh */
static noinline __used int btfpipe_loop_code(int x) { return x * $1 + 1; }
struct btfpipe_loop_s { int a; long b$2; };
static __used struct btfpipe_loop_s btfpipe_loop_var;"
	put "$src/$mfile" "$orig_m
/* bench/loop.sh */
static noinline __used int btfpipe_loop_mod(int x) { return x * $3 + 1; }"
}
kmake() { # kmake LOG: the tree made again, as kernel.sh makes it
	rm -rf "$W/steps"
	KBUILD_BUILD_VERSION=1 BTFPIPE_CACHE_DIR="$C" make -C "$src" O="$O" "${mk[@]}" PAHOLE="$W/pahole-loop" \
		-j"$(nproc)" >"$1" 2>&1 || fail "make: $(tail -5 "$1")"
}

# warm D CACHE: ours on step directory D's input again, with CACHE as the
# cache, in a scratch tree ($W/replay) where the input has the name kbuild
# gave it and ./vmlinux is the tree's; timed into D/warm.time. Prints
# "equal" when it wrote the in-build output's bytes.
warm() {
	local d=$1 cache=$2 args name out="" a R="$W/replay"
	read -r -a args <"$d/args"
	name=${args[${#args[@]}-1]}
	rm -rf "$R" && mkdir -p "$R/$(dirname "$name")" && ln -s "$O/vmlinux" "$R/vmlinux" &&
		cp "$d/in" "$R/$name" || fail "warm replay of $d: cannot stage $name"
	for a in "${args[@]}"; do case $a in --btf_encode_detached=*) out=${a#*=} ;; esac; done
	sync # (the copies' dirty pages are not this step's to write back)
	(cd "$R" && BTFPIPE_CACHE_DIR="$cache" "$M" "$d/warm.time" "$P" "${args[@]}") >"$d/warm.log" 2>&1 ||
		fail "ours warm on $d: $(tail -3 "$d/warm.log")"
	same_btf "$d" "$R/${out:-$name}" "$out"
	rm -rf "$R"
}

# same_btf D FILE DETACHED: "equal" when FILE holds the BTF the build wrote
# for step D (D/out), else "differ". DETACHED empty: both are ELF files
# that -J wrote .BTF into, and only those sections are compared.
same_btf() {
	local d=$1 f=$2 r=differ
	if [ -n "$3" ]; then
		cmp -s "$d/out" "$f" && r=equal
	else
		objcopy --dump-section .BTF="$d/a.btf" "$d/out" "$d/junk" 2>/dev/null &&
			objcopy --dump-section .BTF="$d/b.btf" "$f" "$d/junk" 2>/dev/null &&
			cmp -s "$d/a.btf" "$d/b.btf" && r=equal
		rm -f "$d/junk"
	fi
	echo $r
}

# replay D: pahole 1.32 and ours without a cache on step directory D's
# input, as the kernel called it (run in the tree: --btf_base ./vmlinux).
# Prints "equal" when ours cold wrote the in-build output's bytes.
replay() {
	local d=$1 args a x tool detached=""
	read -r -a args <"$d/args"
	for a in "${args[@]}"; do case $a in --btf_encode_detached=*) detached=1 ;; esac; done
	for tool in pahole ours; do
		cp "$d/in" "$d/$tool.in"
		local a2=()
		for x in "${args[@]:0:${#args[@]}-1}"; do
			case $x in --btf_encode_detached=*) a2+=("--btf_encode_detached=$d/$tool.out") ;; *) a2+=("$x") ;; esac
		done
		sync # as in warm(): each tool starts with nothing to write back
		if [ $tool = pahole ]; then
			(cd "$O" && "$M" "$d/pahole.time" "$PAHOLE132" "${a2[@]}" "$d/$tool.in") \
				>"$d/pahole.log" 2>&1 || fail "pahole 1.32 on $d: $(tail -3 "$d/pahole.log")"
		else
			(cd "$O" && env -u BTFPIPE_CACHE_DIR "$P" "${a2[@]}" "$d/$tool.in") >"$d/ours.log" 2>&1 ||
				fail "ours cold on $d: $(tail -3 "$d/ours.log")"
		fi
		[ -n "$detached" ] || mv "$d/$tool.in" "$d/$tool.out"
		rm -f "$d/$tool.in"
	done
	same_btf "$d" "$d/ours.out" "$detached"
	rm -f "$d/in" "$d/pahole.out" # (big: a vmlinux each)
}

# total FIELD FILE...: summed wall (1) or CPU (2: user + system) of time files.
total() {
	local f=$1
	shift
	cat "$@" | awk -v f="$f" '{ s += (f == 1 ? $1 : $2 + $3) } END { printf "%.3f", s }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

echo "bench-loop: $build ($src), PAHOLE=pipeline.sh with a cache; pahole 1.32: $PAHOLE132"
edit 0 0 0
kmake "$W/prime.log"
echo "bench-loop: primed ($(ls "$W/steps" 2>/dev/null | wc -l) BTF steps)"
table="| scenario | BTF steps kbuild ran | in the build: wall s, ours / pahole 1.32 | ratio | CPU s, ours / pahole 1.32 | ratio | replayed: wall s, ours / pahole 1.32 | ratio | CPU s, ours / pahole 1.32 | ratio | bytes equal to a cold run |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
unequal=""
for sc in a b c; do
	case $sc in
	a) edit 1 0 0; what="(a) code-only edit in $vfile" ;;
	b) edit 1 1 0; what="(b) a struct one file uses changes ($vfile)" ;;
	c) edit 1 1 1; what="(c) code-only edit in a module ($mfile)" ;;
	esac
	# The cache as this build finds it, for the warm replay (a copy: the
	# build's own stores must not reach it).
	rm -rf "$W/cache.before" && cp -a "$C" "$W/cache.before" || fail "cannot copy the cache"
	kmake "$W/$sc.log"
	[ -d "$W/steps" ] || fail "$what: kbuild ran no BTF step"
	# In the order kbuild started them (mkdir numbered them so).
	mapfile -t steps < <(ls "$W/steps" | sort -n | sed "s|^|$W/steps/|")
	n=${#steps[@]} nv=0 eq=0
	for d in "${steps[@]}"; do
		case $(awk '{ print $NF }' "$d/args") in *.ko) ;; *) nv=$((nv + 1)) ;; esac
		w=$(warm "$d" "$W/cache.before")
		[ "$(replay "$d")" = equal ] && [ "$w" = equal ] && eq=$((eq + 1))
	done
	rm -rf "$W/cache.before"
	ow=$(total 1 "$W"/steps/*/time) oc=$(total 2 "$W"/steps/*/time)
	rw=$(total 1 "$W"/steps/*/warm.time) rc=$(total 2 "$W"/steps/*/warm.time)
	pw=$(total 1 "$W"/steps/*/pahole.time) pc=$(total 2 "$W"/steps/*/pahole.time)
	row="| $what | $n ($nv vmlinux, $((n - nv)) modules) | $ow / $pw | $(ratio "$ow" "$pw")x | $oc / $pc | $(ratio "$oc" "$pc")x | $rw / $pw | $(ratio "$rw" "$pw")x | $rc / $pc | $(ratio "$rc" "$pc")x | $eq of $n |"
	echo "$row"
	table+=$'\n'"$row"
	# (A replay that failed printed its FAIL from a subshell, which could
	# not end the bench: its step counts as not equal here.)
	[ "$eq" = "$n" ] || unequal+=" $what: $((n - eq)) of $n steps;"
	mv "$W/steps" "$W/steps.$sc"
done
printf '%s\n' "$table" >"$W/loop.md"
echo
cat "$W/loop.md"
[ -z "$unequal" ] || fail "outputs not equal to a cold run's (or a replay failed):$unequal see $W/steps.*"
