#!/usr/bin/env bash
# tests/engines/netfs.sh (make check-netfs): one CU cache on a network
# filesystem, shared by 8 writers on several hosts, with its server
# stopped and started again mid-run.
#
# NFS first: the kernel's nfsd exporting a directory and the kernel's NFS
# client mounting it back. When this machine's kernel has neither (no nfs
# or nfsd in /proc/filesystems, and no module to load), that is a skip
# with the reason, and the same checks run on the network filesystem this
# machine can mount: sshfs (FUSE over SFTP), served by sshd in a network
# namespace of its own, the way an NFS server would be another host.
# Checked, with 8 writers (btfpipe -j1, two to four per host, over the
# hosts of tests/engines/hosts.sh's kind) converting the five kernels'
# vmlinux files into the shared cache, twice:
#  1. every output is the same bytes as without a cache; a second round
#     finds every CU (no entry lost), and with --cache-verify (each hit
#     extracted again and compared) no entry is corrupt;
#  2. the server stopped a few seconds into a round and started again
#     later: the writers see errors and go on without the cache (exit 0),
#     every output still the same bytes; the cache is usable after.
. "$(dirname "$0")/lib.sh"
engine_init netfs

[ "$(id -u)" = 0 ] || { skip "netfs" "needs root: it makes network namespaces, mounts and servers"; engine_done; exit; }
engine_kernels || { engine_done; exit 1; }

W=$T_OUT/netfs
mkdir -p "$W/vml" "$W/ref"
# The kernels' vmlinux files, unpacked once (not timed).
V=()
for d in "${E_DEBS[@]}"; do
	k=$(basename "$d" | cut -d_ -f1)
	k=${k#linux-image-}
	v=$E_DL/vmlinux/vmlinux-${k%-dbg}
	mkdir -p "$E_DL/vmlinux"
	if [ ! -s "$v" ]; then
		dpkg-deb --fsys-tarfile "$d" 2>/dev/null | tar -xO --occurrence --wildcards './usr/lib/debug/boot/vmlinux-*' >"$v.tmp" &&
			mv "$v.tmp" "$v" || { not_ok "unpack $d"; engine_done; exit 1; }
	fi
	V+=("$v")
done
# Each kernel's BTF without a cache: what every writer must write.
for v in "${V[@]}"; do
	r=$W/ref/$(basename "$v").btf
	[ -s "$r" ] || "$T_BIN/btfpipe" -j1 --no-cache -o "$r" "$v" 2>"$W/ref.err" ||
		{ not_ok "$(basename "$v"): the reference without a cache" "$(tail -3 "$W/ref.err")"; engine_done; exit 1; }
done

# ---- the filesystem ----
nfs=0
grep -qw nfs /proc/filesystems && grep -qw nfsd /proc/filesystems && nfs=1
if [ $nfs = 0 ] && command -v modprobe >/dev/null && modprobe nfsd 2>/dev/null && modprobe nfs 2>/dev/null; then
	grep -qw nfs /proc/filesystems && grep -qw nfsd /proc/filesystems && nfs=1
fi
if [ $nfs = 0 ]; then
	skip "the cache on NFS" "this kernel ($(uname -r)) has no NFS client or server: /proc/filesystems lists neither nfs nor nfsd, and no module can be loaded; the checks run on sshfs instead"
fi
engine_need sshfs openssh-server openssh-client || { engine_done; exit 1; }
command -v parallel >/dev/null || engine_need parallel || { engine_done; exit 1; }

engine_netfs "$W" || { engine_done; exit 1; }
MNT=$E_MNT EXPORT=$E_EXPORT
# The writers' hosts after the mount: each namespace's copy of the mounts
# holds it.
for k in 1 2 3; do
	netfs_host $k || { not_ok "make host $k" "$(cat "$W/sshd$k.log" 2>/dev/null)"; engine_done; exit 1; }
done

# round NAME [STOP_AT]: 8 writers over hosts 1-3 (GNU parallel over ssh),
# writer i converting kernel i mod 5 with the cache on the mount; each
# writes $W/NAME/wI.btf and its stderr. With STOP_AT, the server's sshd is
# SIGKILLed that many seconds in, and started again 5 seconds later.
round() {
	local name=$1 stop_at=${2:-} i
	rm -rf "$W/$name" && mkdir -p "$W/$name"
	: >"$W/$name.cmds"
	for i in $(seq 0 7); do
		# --stats: no whole-run memo, so every round runs the stages and
		# reads and writes the shared cache.
		printf '/usr/bin/time -f "%%e %%U %%S" -a -o %q %s -j1 --cache %q --cache-stats --stats -o %q %q 2>%q\n' \
			"$W/$name/time" "$T_BIN/btfpipe" "$MNT/cache" "$W/$name/w$i.btf" \
			"${V[$((i % ${#V[@]}))]}" "$W/$name/w$i.err" >>"$W/$name.cmds"
	done
	if [ -n "$stop_at" ]; then
		( sleep "$stop_at"; ip netns pids btfpipe-n9 | xargs -r kill -9; echo stopped >"$W/$name.stopped"
		  sleep 5; netfs_sshd 9 && echo started >>"$W/$name.stopped" ) &
	fi
	printf 'root@10.252.%s.2\n' 1 2 3 | sed 's/^/3\//' >"$W/logins"
	parallel --will-cite --sshloginfile "$W/logins" --ssh "ssh ${SSH_OPTS[*]}" --joblog "$W/$name.joblog" \
		-j 3 <"$W/$name.cmds" >"$W/$name.out" 2>&1
	local rc=$?
	wait
	return $rc
}
# same_outputs NAME: every writer's BTF is its kernel's reference.
same_outputs() {
	local bad="" i
	for i in $(seq 0 7); do
		cmp -s "$W/$1/w$i.btf" "$W/ref/$(basename "${V[$((i % ${#V[@]}))]}").btf" || bad+="w$i "
	done
	[ -z "$bad" ] && ok "$1: the 8 writers' BTF is the same bytes as without a cache" ||
		not_ok "$1: the 8 writers' BTF is the same bytes as without a cache" "differ: $bad"
}
# hits NAME: "HITS MISSES" of the extracted CUs over the round's writers.
hits() {
	cat "$W/$1"/w*.err | sed -n 's/.*(extracted CUs): this run: \([0-9]*\) hits, \([0-9]*\) misses.*/\1 \2/p' |
		awk '{ h += $1; m += $2 } END { print h + 0, m + 0 }'
}

t0=$(date +%s.%N)
round fill && ok "round 1: 8 writers over 3 hosts into one cache on the mount" ||
	not_ok "round 1: 8 writers over 3 hosts" "$(tail -5 "$W/fill.out"; cat "$W/fill.joblog")"
cpu() { awk '{ s += $2 + $3 } END { printf "%.1f", s }' "$W/$1/time" 2>/dev/null; }
echo "info: round 1: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s wall, $(cpu fill) s CPU (the writers); hits/misses $(hits fill); cache $(du -sh "$EXPORT/cache" | cut -f1)"
same_outputs fill
round again
read -r h m < <(hits again)
[ "$m" = 0 ] && [ "$h" -gt 0 ] && ok "round 2: every CU found in the cache ($h hits, 0 misses): no entry lost" ||
	not_ok "round 2: every CU found in the cache" "$h hits, $m misses"
same_outputs again
out=$(for v in "${V[@]}"; do BTFPIPE_CACHE_VERIFY=1 "$T_BIN/btfpipe" -j2 --cache "$MNT/cache" -o "$W/verify.btf" "$v" 2>&1 || echo "FAILED: $v"; done)
echo "$out" | grep -q FAILED && not_ok "--cache-verify over the five kernels: no corrupt entry" "$out" ||
	ok "--cache-verify over the five kernels: every hit equals a fresh extraction"

# ---- the server stopped mid-run ----
round outage 3
rc=$?
grep -q started "$W/outage.stopped" 2>/dev/null && ok "the server was stopped 3 s into round 3 and started 5 s later" ||
	not_ok "the server was stopped and started again" "$(cat "$W/outage.stopped" 2>/dev/null)"
said=$(grep -l -i 'warning.*cache\|cache.*warning' "$W"/outage/w*.err 2>/dev/null | wc -l)
echo "info: round 3: $said of the 8 writers warned about the cache; e.g. $(grep -h -i -m1 'warning' "$W"/outage/w*.err 2>/dev/null | head -1)"
[ $rc = 0 ] && ok "round 3: every writer exited 0 while the server was away ($said warned about the cache)" ||
	not_ok "round 3: every writer exited 0" "$(cat "$W/outage.joblog")"
same_outputs outage
for _ in $(seq 20); do ls "$MNT/cache" >/dev/null 2>&1 && break; sleep 0.5; done
round after
same_outputs after
echo "info: rounds 2-4 CPU (the writers): $(cpu again) s, $(cpu outage) s (server away), $(cpu after) s; after the outage: hits/misses $(hits after)"
engine_done
