#!/usr/bin/env bash
# tests/deb/run.sh (make check-deb): the Debian package as a user gets it.
#
#  1. installs what the package build needs (dpkg-dev, debhelper, lintian,
#     fakeroot, debian/control's Build-Depends) with apt-get: needs root;
#  2. builds the package with dpkg-buildpackage -us -uc -b from a clean git
#     clone of HEAD in tests/out/deb/src (what is not committed is not in
#     it); the .deb lands in tests/out/deb/;
#  3. lintian on it (an E: line fails; every line is shown), and its files:
#     exactly the layout of the Makefile's install target;
#  4. installs it (apt-get install ./btfpipe_*.deb) and checks that what it
#     installed names only what it installed (tests/deb/cites.sh: links,
#     man pages, --help), that the installed btfpipe, btfpipe-pahole and
#     /usr/lib/btfpipe/pipeline.sh (also through a link to it elsewhere)
#     write the same BTF bytes as the clone's own static build (make
#     programs) on a small program, answer --version as they should, and
#     that btfpipe-diff and btfpipe-archive run from /usr/bin;
#  5. CHECK_DEB_KERNEL=1 (the default): when all of the above passed, a
#     kernel built with PAHOLE=btfpipe-pahole from /usr/bin (Linux 6.1 from
#     Debian's linux-source-6.1; tinyconfig, 64-bit, BPF_SYSCALL, DWARF 5,
#     DEBUG_INFO_BTF and one module, CRC_CCITT=m): its vmlinux and the
#     module have .BTF, and bpftool reads both. The build tree is kept in
#     tests/out/deb-kbuild/ (a later run relinks vmlinux and the module,
#     which redoes every BTF step, and compiles nothing else). The tree of
#     tests/out/kbuild/src (make check-kbuild's) is used when it is there.
#     CHECK_DEB_KERNEL=0 leaves this out (a skip); =always runs it even
#     after a failure.
#  6. removes the package again (apt-get remove), on any exit.
# The last line is "N passed, N failed, N skipped"; the exit is non-zero on
# a failure.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
T_NAME=deb
. "$(dirname "$0")/../lib.sh"
. "$T_TOP/tests/deb/cites.sh"
export LC_ALL=C DEBIAN_FRONTEND=noninteractive
unset BTFPIPE_BIN BTFPIPE_CACHE_DIR
kernel=${CHECK_DEB_KERNEL:-1}
D=$T_OUT
SRC=$D/src
KB=$T_TOP/tests/out/deb-kbuild

tally() {
	local p f s
	p=$(grep -c '^pass$' "$T_RESULTS"); f=$(grep -c '^fail$' "$T_RESULTS"); s=$(grep -c '^skip$' "$T_RESULTS")
	rm -f "$T_RESULTS"
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
}
failed() { grep -q '^fail$' "$T_RESULTS"; }
# stop DESC [WHY]: a failure after which nothing else can be checked.
stop() { not_ok "$@"; tally; exit 1; }
# secs SINCE: the seconds since SINCE ($SECONDS then).
secs() { echo $((SECONDS - $1)); }

[ "$(id -u)" -eq 0 ] || stop "check-deb runs as root" "it installs packages (apt-get) and the package it builds"

# 1-2. The clone and the build.
t0=$SECONDS
git clone -q --no-hardlinks "$T_TOP" "$SRC" || stop "git clone of HEAD"
head=$(git -C "$SRC" rev-parse --short=12 HEAD)
echo "check-deb: HEAD $head, cloned in $SRC"
[ -f "$SRC/debian/control" ] || stop "debian/control is committed" "none in HEAD's clone"
apt_need check-deb dpkg-dev debhelper lintian fakeroot gcc make man-db bpftool binutils ||
	stop "install the package build's tools"
if ! (cd "$SRC" && dpkg-checkbuilddeps) >/dev/null 2>&1; then
	echo "check-deb: installing debian/control's Build-Depends"
	apt-get build-dep -y -qq --no-install-recommends "$SRC" >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get build-dep -y -qq --no-install-recommends "$SRC" >/dev/null; } ||
		stop "install debian/control's Build-Depends"
fi
t0=$SECONDS
if (cd "$SRC" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$D/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($(secs $t0) s)"
else
	stop "dpkg-buildpackage -us -uc -b" "$(tail -30 "$D/build.log")"
fi
deb=$(ls "$D"/btfpipe_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || stop "the .deb is in tests/out/deb" "$(ls "$D")"
# Warnings that -Werror does not stop (the linker's, dpkg-shlibdeps').
if grep -E -i '(^|: )warning:' "$D/build.log" >"$D/build.warnings"; then
	not_ok "the package build warns of nothing" "$(head -20 "$D/build.warnings")"
else
	ok "the package build warns of nothing"
fi

# 3. lintian, the files.
lintian --pedantic --display-info "$D"/btfpipe_*.changes >"$D/lintian.out" 2>&1
sed 's/^/    lintian: /' "$D/lintian.out"
if grep -q '^E:' "$D/lintian.out"; then not_ok "lintian: no error" "$(grep '^E:' "$D/lintian.out")"; else
	ok "lintian: no error ($(grep -c '^W:' "$D/lintian.out") warnings, $(grep -c '^[IP]:' "$D/lintian.out") notes)"; fi
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print p }' | sort >"$D/files"
{
	install_layout "$SRC" .gz
	echo /usr/share/doc/btfpipe/copyright
	echo /usr/share/doc/btfpipe/changelog.Debian.gz
	echo /usr/share/lintian/overrides/btfpipe
} | sort >"$D/files.want"
if cmp -s "$D/files" "$D/files.want"; then ok "the package holds exactly the install layout ($(wc -l <"$D/files") files)"; else
	not_ok "the package holds exactly the install layout" "$(diff "$D/files.want" "$D/files" | grep '^[<>]' | sed 's/^</missing:/; s/^>/extra:/')"; fi
for l in "/usr/bin/btfpipe-pahole -> btfpipe" "/usr/lib/btfpipe/btfpipe -> ../../bin/btfpipe"; do
	if dpkg-deb -c "$deb" | grep -q -- "\.${l}\$"; then ok "a relative link: $l"; else not_ok "a relative link: $l" "$(dpkg-deb -c "$deb" | grep -- "${l%% *}")"; fi
done
if ldd "$SRC"/build/dyn/bin/dwarf-extract | grep -q 'libdw\.so'; then ok "the stages are linked against the shared libdw (STATIC=0)"; else
	not_ok "the stages are linked against the shared libdw (STATIC=0)" "$(ldd "$SRC"/build/dyn/bin/dwarf-extract 2>&1)"; fi

# 4. Installed.
before=$(dpkg-query -W -f='${Status} ${Version}' btfpipe 2>/dev/null | grep '^install ok installed' || true)
[ -z "$before" ] || echo "check-deb: note: btfpipe ${before##* } was installed before; it is replaced, and removed at the end"
remove_pkg() {
	if dpkg-query -W -f='${Status}' btfpipe 2>/dev/null | grep -q 'install ok installed'; then
		apt-get remove -y -qq btfpipe >/dev/null 2>&1 || echo "check-deb: error: apt-get remove btfpipe failed" >&2
	fi
}
trap remove_pkg EXIT
if apt-get install -y -qq "$(cd "${deb%/*}" && pwd)/${deb##*/}" >"$D/install.log" 2>&1; then ok "apt-get install ./${deb##*/}"; else
	stop "apt-get install ./${deb##*/}" "$(tail -20 "$D/install.log")"; fi
dpkg-query -L btfpipe | sort | while IFS= read -r f; do [ -d "$f" ] && [ ! -L "$f" ] || echo "$f"; done >"$D/installed"
check_cites / /usr "$D/installed"

# The clone's own static build (make programs: the project's flags) is what
# the installed programs' output is compared with.
if make -C "$SRC" -s -j"$(nproc)" programs >"$D/static.log" 2>&1; then ok "make programs in the clone (static)"; else
	stop "make programs in the clone (static)" "$(tail -20 "$D/static.log")"; fi
B=$SRC/bin
cat >"$D/prog.c" <<'EOF'
/* check-deb's small program: a few types and functions with DWARF. */
#include <stdio.h>
#include <stdlib.h>
struct point { int x, y; };
enum shape_kind { CIRCLE, SQUARE = 4 };
union value { long l; double d; };
struct shape {
	enum shape_kind kind;
	struct point at;
	union value v;
	unsigned flags : 3;
	struct shape *next;
	int (*area)(const struct shape *);
};
typedef struct shape shape_t;
static int square_area(const struct shape *s) { return s->at.x * s->at.y; }
int counter;
__attribute__((noinline)) int area_of(shape_t *s, int scale) { return s->area(s) * scale + counter++; }
int main(int argc, char **argv)
{
	struct shape s = { SQUARE, { argc, 3 }, { 0 }, 1, NULL, square_area };
	printf("%d\n", area_of(&s, argc > 1 ? atoi(argv[1]) : 2));
	return 0;
}
EOF
gcc -g -O2 -o "$D/prog" "$D/prog.c" || stop "gcc -g -O2 prog.c"
"$B/btfpipe" -o "$D/want.btf" "$D/prog" 2>"$D/want.err" || stop "the clone's bin/btfpipe on prog" "$(cat "$D/want.err")"
"$B/btfpipe-pahole" --btf_encode_detached="$D/want-pahole.btf" "$D/prog" 2>"$D/want.err" ||
	stop "the clone's bin/btfpipe-pahole on prog" "$(cat "$D/want.err")"
ln -sfn /usr/lib/btfpipe/pipeline.sh "$D/pahole-link"
cd "$D" || stop "cd $D"
run_same() { # DESC WANT OUT CMD...: CMD must exit 0 and write OUT, the bytes of WANT
	local desc=$1 want=$2 out=$3 err
	shift 3
	rm -f "$out"
	if ! err=$("$@" 2>&1); then not_ok "$desc" "$err"; elif cmp -s "$want" "$out"; then ok "$desc"; else
		not_ok "$desc" "$(cmp "$want" "$out" 2>&1)"; fi
}
run_same "/usr/bin/btfpipe -o: the clone's static bin/btfpipe's bytes" want.btf got.btf btfpipe -o got.btf prog
run_same "btfpipe-pahole (from PATH): bin/btfpipe-pahole's bytes" want-pahole.btf got-pahole.btf \
	btfpipe-pahole --btf_encode_detached=got-pahole.btf prog
run_same "/usr/lib/btfpipe/pipeline.sh: the same bytes" want-pahole.btf got-pl.btf \
	/usr/lib/btfpipe/pipeline.sh --btf_encode_detached=got-pl.btf prog
run_same "a link to /usr/lib/btfpipe/pipeline.sh elsewhere: the same bytes" want-pahole.btf got-link.btf \
	./pahole-link --btf_encode_detached=got-link.btf prog
# -J: .BTF into the ELF in place, as a kernel's module step does.
cp prog prog-j
if btfpipe-pahole -J prog-j 2>"$D/j.err" && readelf -S prog-j | grep -q ' \.BTF '; then ok "btfpipe-pahole -J adds .BTF"; else
	not_ok "btfpipe-pahole -J adds .BTF" "$(cat "$D/j.err")"; fi
for p in btfpipe-pahole /usr/lib/btfpipe/pipeline.sh ./pahole-link; do
	v=$($p --version 2>&1)
	if [[ $v =~ ^v1\.[0-9]+$ ]]; then ok "$p --version: $v"; else not_ok "$p --version prints v1.NN" "$v"; fi
done
v=$(btfpipe --version 2>&1)
if [[ $v == "btfpipe "*"(commit $head)"* ]]; then ok "btfpipe --version names HEAD: $v"; else
	not_ok "btfpipe --version names HEAD ($head)" "$v"; fi
for s in dwarf-extract dedup-merge btf-emit; do
	check "$s --version" "$s" --version
done
# btfpipe-diff from /usr/bin: the stages' dumps (beside it) and btfcmp.py
# (/usr/share/btfpipe) with bpftool.
mkdir -p keep
btfpipe --keep keep -o keep.btf prog >/dev/null 2>&1
check "btfpipe-diff on two BTF files (btfcmp.py from /usr/share/btfpipe): equal" btfpipe-diff want.btf got.btf
check "btfpipe-diff on .cus (the installed dwarf-extract --dump): equal" btfpipe-diff keep/prog.cus keep/prog.cus
check "btfpipe-diff on .graph (the installed dedup-merge --dump): equal" btfpipe-diff keep/prog.graph keep/prog.graph
# btfpipe-archive from /usr/bin: it must find the driver.
if out=$(btfpipe-archive --distro d --release r -o arch prog 2>&1) && [ -s arch/d/r/x86_64/prog.btf ]; then
	ok "btfpipe-archive runs from /usr/bin"
	btfpipe-pahole --btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized \
		--btf_encode_detached=arch-want.btf prog 2>/dev/null
	check_same "... and writes btfpipe-pahole's BTF (BTFHub's flags)" arch-want.btf arch/d/r/x86_64/prog.btf
else
	not_ok "btfpipe-archive runs from /usr/bin" "$out"
fi

# 5. A kernel.
kernel_build() {
	local src out t0 v ko cfg
	apt_need check-deb flex bison bc linux-source-6.1 || { not_ok "install the kernel build's tools"; return; }
	src=$T_TOP/tests/out/kbuild/src/linux-source-6.1
	if [ ! -f "$src/Makefile" ]; then
		src=$KB/src/linux-source-6.1
		if [ ! -f "$src/Makefile" ]; then
			rm -rf "$KB/src" && mkdir -p "$KB/src" &&
				tar -C "$KB/src" -xf /usr/src/linux-source-6.1.tar.xz || { not_ok "unpack linux-source-6.1"; return; }
		fi
	fi
	v=$(command -v btfpipe-pahole)
	[ "$v" = /usr/bin/btfpipe-pahole ] || { not_ok "btfpipe-pahole is /usr/bin's" "PATH finds $v"; return; }
	out=$KB/6.1
	mkdir -p "$out"
	k() { make -C "$src" O="$out" PAHOLE=btfpipe-pahole "$@"; }
	[ -f "$out/.config" ] || k -s tinyconfig >/dev/null || { not_ok "make tinyconfig"; return; }
	"$src/scripts/config" --file "$out/.config" --enable 64BIT --enable BPF_SYSCALL --enable DEBUG_KERNEL \
		--enable DEBUG_INFO_DWARF5 --enable DEBUG_INFO_BTF --enable MODULES --module CRC_CCITT \
		--disable DEBUG_INFO_NONE --disable DEBUG_INFO_REDUCED --disable DEBUG_INFO_SPLIT
	k -s olddefconfig >/dev/null 2>&1 || { not_ok "make olddefconfig"; return; }
	cfg=""
	for o in CONFIG_DEBUG_INFO_BTF=y CONFIG_DEBUG_INFO_BTF_MODULES=y CONFIG_CRC_CCITT=m CONFIG_PAHOLE_VERSION=132; do
		grep -qx "$o" "$out/.config" || cfg+=" $o"
	done
	if [ -z "$cfg" ]; then ok "the kernel's config: DEBUG_INFO_BTF, BTF_MODULES, CRC_CCITT=m, PAHOLE_VERSION=132 (btfpipe-pahole's)"; else
		not_ok "the kernel's config" "missing:$cfg"; return; fi
	# A kept tree: vmlinux and the module linked again, every BTF step redone.
	rm -f "$out/vmlinux" "$out/lib/crc-ccitt.ko"
	t0=$SECONDS
	if KBUILD_BUILD_VERSION=1 k -s -j"$(nproc)" all >"$D/kernel.log" 2>&1; then
		ok "Linux 6.1 tinyconfig+BTF built with PAHOLE=btfpipe-pahole ($(secs $t0) s)"
	else
		not_ok "Linux 6.1 built with PAHOLE=btfpipe-pahole" "$(tail -30 "$D/kernel.log")"
		return
	fi
	echo "check-deb: kernel build: $(secs $t0) s wall on $(nproc) CPUs"
	ko=$out/lib/crc-ccitt.ko
	for f in "$out/vmlinux" "$ko"; do
		if readelf -S "$f" 2>/dev/null | grep -q ' \.BTF '; then ok "${f#"$out"/} has .BTF"; else not_ok "${f#"$out"/} has .BTF"; fi
	done
	v=$(bpftool btf dump file "$out/vmlinux" 2>&1 | grep -c '^\[')
	if [ "$v" -gt 100 ]; then ok "bpftool reads the vmlinux's BTF ($v types)"; else not_ok "bpftool reads the vmlinux's BTF" "$v"; fi
	v=$(bpftool -B "$out/vmlinux" btf dump file "$ko" 2>&1)
	if grep -q "^\[[0-9]*\] FUNC 'crc_ccitt'" <<<"$v"; then ok "bpftool reads the module's split BTF over the vmlinux's ($(grep -c '^\[' <<<"$v") types)"; else
		not_ok "bpftool reads the module's split BTF over the vmlinux's" "$(head -5 <<<"$v")"; fi
	# The BTF is btfpipe's: the clone's static btfpipe-pahole, on the input
	# of 6.1's BTF step (.tmp_vmlinux.btf) with its flags, gives the same.
	v=$(PAHOLE="$B/btfpipe-pahole" bash "$src/scripts/pahole-flags.sh")
	local flags
	read -r -a flags <<<"$v"
	cp "$out/.tmp_vmlinux.btf" "$D/tmp_vmlinux" &&
		objcopy --remove-section=.BTF "$D/tmp_vmlinux" &&
		"$B/btfpipe-pahole" -J "${flags[@]}" "$D/tmp_vmlinux" &&
		objcopy --dump-section .BTF="$D/want-vmlinux.btf" "$D/tmp_vmlinux" "$D/tmp.o" &&
		objcopy --dump-section .BTF="$D/got-vmlinux.btf" "$out/vmlinux" "$D/tmp.o"
	check_same "the vmlinux's .BTF is the clone's btfpipe-pahole's on the BTF step's input (flags: $v)" \
		"$D/want-vmlinux.btf" "$D/got-vmlinux.btf"
	rm -f "$D/tmp_vmlinux" "$D/tmp.o"
}
case $kernel in
0) skip "a kernel built with the installed btfpipe-pahole" "CHECK_DEB_KERNEL=0" ;;
always) kernel_build ;;
*) if failed; then skip "a kernel built with the installed btfpipe-pahole" "a check above failed (CHECK_DEB_KERNEL=always runs it anyway)"; else
	kernel_build; fi ;;
esac

remove_pkg
trap - EXIT
if dpkg-query -W -f='${Status}' btfpipe 2>/dev/null | grep -q 'install ok installed'; then not_ok "apt-get remove btfpipe"; else
	ok "apt-get remove btfpipe: the package is gone"; fi
tally
