#!/usr/bin/env bash
# tests/kbuild/boot.sh KERNEL_OUT WORK [EXTRA.ko...]: boot a kernel that
# tests/kbuild/kernel.sh built, in qemu, with an initramfs that loads every
# module of the build (and the EXTRA ones) and then a BPF program that needs
# the vmlinux BTF. The guest's console goes to WORK/console.log; the lines
# the host reads are the GUEST-* and BPF-* lines of tests/kbuild/guest/init
# and loader.c. Exit 0 only when the guest finished, every module loaded and
# the program ran; else 1, with the reason on stderr.
#
# The kernel validates vmlinux's BTF at boot and each module's split BTF at
# insmod (and refuses the module when it is bad); the verifier types the
# fentry program's arguments from vmlinux's BTF; libbpf relocates its field
# accesses against /sys/kernel/btf/vmlinux. The program is compiled against
# bpftool's C dump of the same BTF, so clang reads our types back too.
# qemu runs under TCG (KVM with -cpu host aborts on the machines here):
# BOOT_ACCEL=kvm to try KVM. BOOT_TIMEOUT (default 300) seconds at most.
# BOOT_SCX=FILE: a static sched_ext scheduler the guest runs; it must attach
# (sched_ext's state "enabled") and count dispatches while the guest works.
set -u
[ $# -ge 2 ] || { echo "usage: boot.sh KERNEL_OUT WORK [EXTRA.ko...]" >&2; exit 2; }
kout=$(cd "$1" && pwd)
work=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
: "${CLANG:=clang-19}"
fail() { echo "boot.sh: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
work=$(cd "$work" && pwd)

# The BPF program and its static loader, against this kernel's BTF.
bpftool btf dump file "$kout/vmlinux" format c >"$work/vmlinux.h" 2>"$work/bpftool.err" ||
	fail "bpftool cannot dump the vmlinux BTF as C: $(tail -2 "$work/bpftool.err")"
"$CLANG" -target bpf -D__TARGET_ARCH_x86 -O2 -g -I"$work" -c "$here/guest/probe.bpf.c" \
	-o "$work/probe.bpf.o" 2>"$work/clang.err" ||
	fail "clang cannot compile the BPF program against bpftool's dump of our BTF: $(head -5 "$work/clang.err")"
bpftool gen skeleton "$work/probe.bpf.o" name probe >"$work/probe.skel.h" 2>"$work/skel.err" ||
	fail "bpftool gen skeleton: $(tail -2 "$work/skel.err")"
gcc -static -O2 -I"$work" -o "$work/loader" "$here/guest/loader.c" -lbpf -lelf -lz -lzstd 2>"$work/gcc.err" ||
	fail "the static loader does not link: $(tail -5 "$work/gcc.err")"

# The initramfs: busybox, init, the loader, the modules in load order.
r="$work/root"
mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/tmp" "$r/modules"
cp /bin/busybox "$r/bin/busybox" || fail "no /bin/busybox (busybox-static)"
for a in sh mount insmod uname wc ls tr sed dmesg grep head tail reboot cat sleep kill; do ln -s busybox "$r/bin/$a"; done
cp "$here/guest/init" "$r/init"
# BOOT_SCX: a static sched_ext scheduler (tools/sched_ext's scx_simple, from
# run.sh) that init attaches, gives work, and detaches again.
if [ -n "${BOOT_SCX:-}" ]; then
	cp "$BOOT_SCX" "$r/scx" || fail "cannot copy BOOT_SCX $BOOT_SCX"
	echo "${BOOT_SCX_ARGS:-}" >"$r/scx.args"
fi
cp "$work/loader" "$r/loader"
mknod -m 600 "$r/dev/console" c 5 1 2>/dev/null || true
# Load order: each module after those its modinfo depends on.
# Names as modinfo's "depends" gives them: a file's "-" is a module's "_".
declare -A path=() seen=()
mods=()
while IFS= read -r ko; do
	n=$(basename "$ko" .ko)
	n=${n//-/_}
	path[$n]=$ko
	mods+=("$n")
done < <({ find "$kout" -name '*.ko' | sort; for e in "$@"; do echo "$e"; done; })
: >"$r/modules.order"
visit() {
	local n=$1 d
	[ -n "${seen[$n]:-}" ] && return
	seen[$n]=1
	for d in $(modinfo -F depends "${path[$n]}" 2>/dev/null | tr ',' ' '); do
		[ -n "${path[$d]:-}" ] && visit "$d"
	done
	cp "${path[$n]}" "$r/modules/$n.ko"
	echo "$n.ko" >>"$r/modules.order"
}
for n in "${mods[@]}"; do visit "$n"; done
nmods=$(grep -c . "$r/modules.order")
(cd "$r" && find . | cpio -o -H newc --quiet) >"$work/initramfs.cpio" || fail "cpio failed"

accel=(-accel tcg)
[ "${BOOT_ACCEL:-tcg}" = kvm ] && [ -w /dev/kvm ] && accel=(-accel kvm)
timeout "${BOOT_TIMEOUT:-300}" qemu-system-x86_64 "${accel[@]}" -m 512 -smp 1 -nographic -no-reboot \
	-kernel "$kout/arch/x86/boot/bzImage" -initrd "$work/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 rdinit=/init loglevel=4" </dev/null >"$work/console.log" 2>&1
qrc=$?
tr -d '\r' <"$work/console.log" >"$work/console.txt"
grep -q '^GUEST-DONE' "$work/console.txt" ||
	fail "the guest did not finish (qemu exit $qrc): $(tail -15 "$work/console.txt")"
loaded=$(sed -n 's/^GUEST-MODULES loaded=\([0-9]*\) failed=\([0-9]*\)$/\1 \2/p' "$work/console.txt")
read -r nl nf <<<"${loaded:-0 -1}"
if [ "$nf" != 0 ] || [ "$nl" != "$nmods" ]; then
	fail "modules: $nl of $nmods loaded, $nf failed: $(grep -E '^GUEST-MODULE-FAIL' "$work/console.txt" | head -5)
$(sed -n '/^GUEST-DMESG-BEGIN/,/^GUEST-DMESG-END/p' "$work/console.txt")"
fi
grep -q '^BPF-OK' "$work/console.txt" ||
	fail "the BPF program: $(grep -E '^BPF-|libbpf' "$work/console.txt" | head -10)
$(sed -n '/^GUEST-DMESG-BEGIN/,/^GUEST-DMESG-END/p' "$work/console.txt")"
scx=""
if [ -n "${BOOT_SCX:-}" ]; then
	# Attached (state enabled, our ops), then scheduling: its counters moved.
	grep -Eq '^GUEST-SCX state=enabled ops=simple' "$work/console.txt" &&
		grep -Eq '^GUEST-SCX-OUT local=[0-9]+ global=[0-9]*[1-9]' "$work/console.txt" ||
		fail "the sched_ext scheduler: $(grep -E '^GUEST-SCX' "$work/console.txt" | head -20)
$(sed -n '/^GUEST-DMESG-BEGIN/,/^GUEST-DMESG-END/p' "$work/console.txt")"
	scx="; sched_ext $(basename "$BOOT_SCX"): $(grep -m1 '^GUEST-SCX state=' "$work/console.txt" | sed 's/^GUEST-SCX //'), $(grep '^GUEST-SCX-OUT local=' "$work/console.txt" | tail -1 | sed 's/^GUEST-SCX-OUT //')"
fi
echo "booted $(sed -n 's/.*GUEST-BOOTED //p' "$work/console.txt"): $nl modules loaded; $(grep '^BPF-OK' "$work/console.txt" | sed 's/^BPF-OK //')$scx"
