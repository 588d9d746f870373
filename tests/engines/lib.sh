# tests/engines/lib.sh: what the engine checks share (sourced): the test
# library's ok/not_ok/skip, the five kernels, the reference tree a serial
# batch makes, the comparison of a tree with it, the packages a check
# installs and removes again, and the tally.
#
# engine_init NAME: T_NAME engines-NAME, its own results file and output
# directory (tests/out/engines-NAME).
engine_init() {
	T_NAME=engines-$1
	. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
	T_RESULTS=$T_OUT/results
	: >"$T_RESULTS"
	A=$T_BIN/btfpipe-archive
	E_DL=${BTFPIPE_ENGINE_DL:-$T_TOP/tests/out/engines-dl}
	E_INSTALLED=()
	# /dev/null must still be the device at the end (a package's scripts,
	# or a redirection while it was missing, could leave a file there).
	[ -c /dev/null ] || { not_ok "/dev/null is the null device before the check" "$(ls -l /dev/null)"; }
	trap engine_cleanup EXIT
}

# Hooks the checks add their own teardown to (run in reverse order at exit).
E_CLEANUP=()
engine_on_exit() { E_CLEANUP+=("$1"); }
engine_cleanup() {
	local i
	for ((i = ${#E_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${E_CLEANUP[$i]}" >/dev/null 2>&1 || true
	done
	engine_remove_packages
	[ -c /dev/null ] || echo "FAIL: /dev/null is no longer the null device: $(ls -l /dev/null)"
}

# engine_need PKG...: install those not installed, with no service started
# (a policy-rc.d of our own while apt runs, when the system has none);
# every package that install added (dependencies included, nothing else)
# is purged again at exit (BTFPIPE_ENGINE_KEEP=1 keeps them), so the
# machine is left as it was found.
engine_need() {
	local missing=() p own_policy=0
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own_policy=1
	fi
	local before
	before=$(dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' | awk '$1 == "ii" { print $2 }' | sort)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$T_OUT/apt.log" 2>&1; then
		apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$T_OUT/apt.log" 2>&1
	fi
	local rc=$?
	[ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
	[ $rc = 0 ] || { not_ok "install ${missing[*]}" "$(tail -5 "$T_OUT/apt.log")"; return 1; }
	local added
	added=$(comm -13 <(echo "$before") <(dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' |
		awk '$1 == "ii" { print $2 }' | sort))
	E_INSTALLED+=($added)
	echo "info: installed ${missing[*]} ($(echo $added | wc -w) packages with their dependencies, purged again at the end)"
}
engine_remove_packages() {
	[ ${#E_INSTALLED[@]} -gt 0 ] && [ "${BTFPIPE_ENGINE_KEEP:-0}" != 1 ] || return 0
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${E_INSTALLED[@]}" >>"$T_OUT/apt.log" 2>&1 &&
		echo "info: purged ${E_INSTALLED[*]}"
	E_INSTALLED=()
}

# engine_kernels: E_DEBS, the five kernels' packages (tests/engines/kernels.sh).
engine_kernels() {
	local out
	out=$("$T_TOP/tests/engines/kernels.sh" "$E_DL" 2>&1) || { not_ok "fetch the five kernels" "$out"; return 1; }
	mapfile -t E_DEBS <<<"$out"
	echo "info: kernels: $(for d in "${E_DEBS[@]}"; do basename "$d" | cut -d_ -f1; done | tr '\n' ' ')"
}

# tree DIR: one "SHA256  PATH" line per published file, the job records and
# the manifest left out (they hold times; the manifest is compared by the
# kernels it names, manifest_kernels).
tree() { (cd "$1" && find . -path ./.jobs -prune -o -type f ! -name manifest.json -print0 | LC_ALL=C sort -z | xargs -0r sha256sum); }
manifest_kernels() { python3 -c 'import json,sys; print("\n".join(sorted("%s %s" % (k.get("kernel"), k.get("status")) for k in json.load(open(sys.argv[1]))["kernels"])))' "$1" 2>/dev/null; }

# engine_ref: E_REF, the tree a serial batch makes of the five kernels,
# without a cache (made once per btfpipe and kernel set, kept).
engine_ref() {
	local key
	key=$( { "$A" --version 2>&1; sha256sum "$T_BIN/btfpipe" "$A"; printf '%s\n' "${E_DEBS[@]}"; } | sha256sum | cut -c1-16)
	E_REF=$T_TOP/tests/out/engines-ref/$key
	if [ ! -f "$E_REF/done" ]; then
		rm -rf "$E_REF" && mkdir -p "$E_REF"
		local t0=$(date +%s.%N)
		if ! BTFPIPE_CACHE_DIR= "$A" -j 1 -o "$E_REF/out" "${E_DEBS[@]}" >"$E_REF/log" 2>&1; then
			not_ok "the serial reference batch" "$(tail -5 "$E_REF/log")"
			return 1
		fi
		awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' >"$E_REF/wall"
		tree "$E_REF/out" >"$E_REF/tree"
		manifest_kernels "$E_REF/out/manifest.json" >"$E_REF/kernels"
		touch "$E_REF/done"
	fi
	echo "info: the serial batch's tree: $(wc -l <"$E_REF/tree") files, $(cat "$E_REF/wall") s wall without a cache"
}

# same_tree WHAT DIR: DIR's published files are the reference's, byte for
# byte, and its manifest names the same kernels; no temp file is left.
same_tree() {
	local what=$1 d=$2 t left
	t=$(tree "$d")
	if [ "$t" = "$(cat "$E_REF/tree")" ]; then ok "$what: the tree is the serial batch's, byte for byte ($(echo "$t" | wc -l) files)"
	else not_ok "$what: the tree is the serial batch's" "$(diff <(echo "$t") "$E_REF/tree" | head -20)"; fi
	[ "$(manifest_kernels "$d/manifest.json")" = "$(cat "$E_REF/kernels")" ] &&
		ok "$what: the manifest names the same $(wc -l <"$E_REF/kernels") kernels" ||
		not_ok "$what: the manifest names the same kernels" "$(manifest_kernels "$d/manifest.json")"
	left=$(find "$d" \( -name '*.tmp.*' -o -name '*.old.*' -o -name 'tmp.*' -o -name '*.json.tmp' -o -name 'manifest.json.tmp' \) | head -5)
	[ -z "$left" ] && ok "$what: no temp file left" || not_ok "$what: no temp file left" "$left"
}

# jobs_sum DIR: "CPU_S WALL_S HITS MISSES" summed over DIR's job records.
jobs_sum() {
	python3 - "$1" <<'PY'
import glob, json, sys
c = w = h = m = 0
for f in glob.glob(sys.argv[1] + "/.jobs/*.json"):
    try:
        r = json.load(open(f))
    except ValueError:
        continue
    c += r.get("cpu_s") or 0; w += r.get("wall_s") or 0
    h += r.get("cache_hits") or 0; m += r.get("cache_misses") or 0
print("%.1f %.1f %d %d" % (c, w, h, m))
PY
}

# engine_ssh_keys DIR: a host key and a client key made in DIR (hostkey,
# id, authorized_keys), sshd's privilege separation directory when
# missing, and SSH_OPTS: ssh's options for the hosts those keys open.
engine_ssh_keys() {
	mkdir -p "$1"
	ssh-keygen -q -t ed25519 -N '' -f "$1/hostkey" <<<y >/dev/null 2>&1
	ssh-keygen -q -t ed25519 -N '' -f "$1/id" <<<y >/dev/null 2>&1
	cp "$1/id.pub" "$1/authorized_keys"
	chmod 600 "$1/authorized_keys" "$1/hostkey" "$1/id"
	[ -d /run/sshd ] || { mkdir -p /run/sshd && engine_on_exit "rmdir /run/sshd"; }
	SSH_OPTS=(-i "$1/id" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
		-o BatchMode=yes -o ConnectTimeout=5)
}

# engine_netfs DIR: a file server and its export mounted here, in DIR (the
# network filesystem the checks share a cache on): host 9, a network
# namespace (10.252.9.2) whose sshd serves DIR/export over SFTP, mounted
# at DIR/mnt with sshfs (reconnecting after the server comes back). Sets
# E_MNT, E_EXPORT and SSH_OPTS (the keys to reach netfs_host's hosts). NFS
# would be the real thing; this VM's kernel has no NFS (netfs.sh says so).
# Needs sshfs and openssh-server (engine_need).
engine_netfs() {
	NW=$1
	engine_ssh_keys "$NW"
	netfs_host 9 || { not_ok "make the file server (host 9)" "$(cat "$NW/sshd9.log" 2>/dev/null)"; return 1; }
	E_EXPORT=$NW/export E_MNT=$NW/mnt
	mkdir -p "$E_EXPORT" "$E_MNT"
	local _
	for _ in $(seq 20); do
		sshfs "root@10.252.9.2:$E_EXPORT" "$E_MNT" -o "IdentityFile=$NW/id" -o StrictHostKeyChecking=no \
			-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes -o ConnectTimeout=5 \
			-o reconnect -o ServerAliveInterval=2 -o ServerAliveCountMax=2 2>"$NW/sshfs.err" && break
		sleep 0.5
	done
	mountpoint -q "$E_MNT" && engine_on_exit "fusermount -u -z '$E_MNT'" &&
		ok "a file server's export is mounted here over the network ($(findmnt -n -o FSTYPE,SOURCE "$E_MNT"))" ||
		{ not_ok "mount the file server's export" "$(cat "$NW/sshfs.err")"; return 1; }
}
# netfs_host K: network namespace btfpipe-nK at 10.252.K.2 with an sshd
# (SFTP included) of engine_netfs's keys; gone at exit.
netfs_host() {
	local k=$1 ns=btfpipe-n$1
	ip netns del "$ns" 2>/dev/null
	ip link del "bpn$k" 2>/dev/null
	ip netns add "$ns" && engine_on_exit "ip netns del $ns" &&
		ip link add "bpn$k" type veth peer name eth0 netns "$ns" && engine_on_exit "ip link del bpn$k" &&
		ip addr add "10.252.$k.1/30" dev "bpn$k" && ip link set "bpn$k" up &&
		ip -n "$ns" addr add "10.252.$k.2/30" dev eth0 && ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up &&
		netfs_sshd "$k" && engine_on_exit "ip netns pids $ns | xargs -r kill -9"
}
netfs_sshd() {
	ip netns exec "btfpipe-n$1" /usr/sbin/sshd -f /dev/null -h "$NW/hostkey" -o "ListenAddress=10.252.$1.2" \
		-o "PidFile=$NW/sshd$1.pid" -o "AuthorizedKeysFile=$NW/authorized_keys" -o PermitRootLogin=prohibit-password \
		-o StrictModes=no -o UsePAM=no -o PasswordAuthentication=no -o "Subsystem=sftp internal-sftp" \
		-E "$NW/sshd$1.log"
}

# engine_done: the tally line, and the exit status.
engine_done() {
	local p f s
	p=$(grep -c pass "$T_RESULTS") f=$(grep -c fail "$T_RESULTS") s=$(grep -c skip "$T_RESULTS")
	echo "$p passed, $f failed, $s skipped"
	[ "$f" = 0 ]
}
