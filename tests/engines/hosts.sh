#!/usr/bin/env bash
# tests/engines/hosts.sh (make check-hosts): btfpipe-archive's job list
# spread over several hosts by GNU parallel --sshloginfile.
#
# The hosts are made on this machine: HOSTS network namespaces (default 3),
# each joined to the root namespace by a veth pair of its own subnet
# (10.251.K.0/30) and running its own sshd on its own address, with a host
# key and an authorized key made here (openssh-server is installed when
# missing, and purged again). The namespaces share the filesystem, as the
# hosts of a build farm share OUTDIR and the cache. Checked:
#  1. the job list over the hosts: the serial batch's tree, the manifest's
#     kernels, no temp file; the jobs ran on more than one host;
#  2. a host that dies mid-run (every process in its namespace killed,
#     its sshd included): parallel's --retries runs its job on another
#     host, and the tree is the same; the dead host's half-made job left
#     nothing that the rerun did not remove.
. "$(dirname "$0")/lib.sh"
engine_init hosts

[ "$(id -u)" = 0 ] || { skip "hosts" "needs root: it makes network namespaces and runs sshd"; engine_done; exit; }
engine_need openssh-server openssh-client || { engine_done; exit 1; }
command -v parallel >/dev/null || engine_need parallel || { engine_done; exit 1; }
engine_kernels && engine_ref || { engine_done; exit 1; }

N=${HOSTS:-3}
W=$T_OUT/hosts
mkdir -p "$W"
engine_ssh_keys "$W"
SSH="ssh ${SSH_OPTS[*]}"
: >"$W/sshlogins"
for k in $(seq "$N"); do
	ns=btfpipe-h$k
	ip netns del "$ns" 2>/dev/null
	ip link del "bph$k" 2>/dev/null
	ip netns add "$ns" && engine_on_exit "ip netns del $ns" &&
		ip link add "bph$k" type veth peer name eth0 netns "$ns" && engine_on_exit "ip link del bph$k" &&
		ip addr add "10.251.$k.1/30" dev "bph$k" && ip link set "bph$k" up &&
		ip -n "$ns" addr add "10.251.$k.2/30" dev eth0 && ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up ||
		{ not_ok "make host $k (network namespace $ns)"; engine_done; exit 1; }
	ip netns exec "$ns" /usr/sbin/sshd -f /dev/null -h "$W/hostkey" -o "ListenAddress=10.251.$k.2" \
		-o "PidFile=$W/sshd$k.pid" -o "AuthorizedKeysFile=$W/authorized_keys" -o PermitRootLogin=prohibit-password \
		-o StrictModes=no -o UsePAM=no -o PasswordAuthentication=no -o "SetEnv=TMPDIR=${TMPDIR:-/tmp}" \
		-E "$W/sshd$k.log" || { not_ok "start sshd on host $k" "$(cat "$W/sshd$k.log")"; engine_done; exit 1; }
	engine_on_exit "ip netns pids $ns | xargs -r kill -9"
	echo "1/root@10.251.$k.2" >>"$W/sshlogins"
done
up=0
for k in $(seq "$N"); do
	for _ in $(seq 20); do
		[ "$($SSH root@10.251.$k.2 'ip -o -4 addr show eth0 | cut -d" " -f7' 2>/dev/null)" = "10.251.$k.2/30" ] && { up=$((up + 1)); break; }
		sleep 0.5
	done
done
[ $up = "$N" ] && ok "$N hosts, each a network namespace with its own sshd on its own address" ||
	{ not_ok "$N hosts answer ssh" "$up of them do; $(cat "$W"/sshd*.log | tail -5)"; engine_done; exit 1; }

# run NAME OUT CACHE [KILL_AFTER]: the job list (but its manifest line)
# over the hosts, one job per host at a time, each job tried on up to N
# hosts; then the manifest here. With KILL_AFTER, host 1 dies (every
# process in its namespace SIGKILLed) that many seconds in.
run() {
	local name=$1 out=$2 cache=$3 kill_after=${4:-}
	"$A" --job-list --cache "$cache" -o "$out" "${E_DEBS[@]}" >"$W/$name.jobs" 2>"$W/$name.jobs.err" || return 1
	head -n -1 "$W/$name.jobs" >"$W/$name.kernels"
	if [ -n "$kill_after" ]; then
		( sleep "$kill_after"
		  # What host 1 was doing when it died: the --one of the job it ran.
		  ip netns pids btfpipe-h1 | xargs -r -n1 ps -o args= -p 2>/dev/null |
			sed -n "s/.*--one '\\{0,1\\}\\([^' ]*\\).*/\\1/p" | sort -u >"$W/$name.dying"
		  find "$out/.jobs" -maxdepth 1 -name 'tmp.*' >"$W/$name.temps" 2>/dev/null
		  ip netns pids btfpipe-h1 | xargs -r kill -9; echo killed >"$W/$name.killed" ) &
	fi
	parallel --will-cite --sshloginfile "$W/sshlogins" --ssh "$SSH" --retries "$N" --joblog "$W/$name.joblog" \
		-j 1 <"$W/$name.kernels" >"$W/$name.out" 2>&1
	local rc=$?
	wait
	sh -c "$(tail -1 "$W/$name.jobs")" >>"$W/$name.out" 2>&1 || rc=1
	return $rc
}

# ---- 1. over the hosts ----
rm -rf "$W/out1" "$W/cache1"
t0=$(date +%s.%N)
run run1 "$W/out1" "$W/cache1" && ok "GNU parallel ran the job list over the hosts" ||
	not_ok "GNU parallel ran the job list over the hosts" "$(tail -5 "$W/run1.out")"
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
read -r jcpu jwall hits misses < <(jobs_sum "$W/out1")
hosts_used=$(awk 'NR > 1 { print $2 }' "$W/run1.joblog" | sort -u | tr '\n' ' ')
echo "info: ${#E_DEBS[@]} kernels over $N hosts: wall ${wall} s, CPU ${jcpu} s (the jobs' records), cache ${hits} hits ${misses} misses; hosts used: $hosts_used"
same_tree "over $N hosts" "$W/out1"
[ "$(echo $hosts_used | wc -w)" -gt 1 ] && ok "the jobs ran on more than one host ($hosts_used)" ||
	not_ok "the jobs ran on more than one host" "$(cat "$W/run1.joblog")"

# ---- 2. a host dies mid-run ----
rm -rf "$W/out2" "$W/cache2"
# Host 1 dies a little after its first job began: a third of the first run's time.
kill_at=$(awk -v w="$wall" 'BEGIN { printf "%.1f", w / 3 }')
run run2 "$W/out2" "$W/cache2" "$kill_at"
rc=$?
[ -f "$W/run2.killed" ] && ok "host 1 died ${kill_at} s into the run (every process of its namespace SIGKILLed)" ||
	not_ok "host 1 died mid-run" "the kill did not happen"
dying=$(head -1 "$W/run2.dying" 2>/dev/null)
echo "info: host 1 was converting $(basename "${dying:-nothing}") when it died, with $(wc -l <"$W/run2.temps" 2>/dev/null || echo 0) job temp dirs in OUTDIR; the joblog after: $(awk 'NR > 1 { print $2, "exit", $7 }' "$W/run2.joblog" | sort | uniq -c | tr -s ' \n' ' ')"
[ -n "$dying" ] && ok "host 1 died in the middle of a kernel's job ($(basename "$dying"))" ||
	not_ok "host 1 died in the middle of a kernel's job" "no job of host 1 was running when it was killed"
[ $rc = 0 ] && [ -n "$dying" ] && awk -v d="$dying" 'NR > 1 && index($0, d) { print $2, $7 }' "$W/run2.joblog" | grep -v '10.251.1.2' | grep -q ' 0$' &&
	ok "parallel --retries ran that job again on a live host, exit 0" ||
	not_ok "parallel --retries ran the dead host's job again on a live host" "$(cat "$W/run2.joblog")"
same_tree "host 1 dead mid-run" "$W/out2"
engine_done
