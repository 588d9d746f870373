#!/usr/bin/env bash
# tests/engines/slurm.sh (make check-slurm): btfpipe-archive's job list as
# a Slurm job array, on a one-node cluster made from Debian's packages
# (slurmctld, slurmd, slurm-client, munge) and torn down again.
#
# The cluster runs from a directory of its own: munged, slurmctld and
# slurmd started by hand on that directory's configuration (no service
# enabled, no file under /etc written); the packages this installed are
# purged at the end. Five kernels (tests/engines/kernels.sh: two of one
# series, 6.12, arm64, s390x), line i of the job list as array task i, the
# manifest as a job that depends on the array. Checked:
#  1. the array's tree is the serial batch's, byte for byte, the manifest
#     names the same kernels, no temp file is left; a later batch of one
#     of its kernels finds every CU in the shared cache;
#  2. an array scancel'ed mid-run, then submitted again: the same tree, no
#     temp file.
# The cache lives on shared storage: a file server's export mounted on the
# node (engine_netfs in lib.sh: sshfs from a network namespace, as this
# VM's kernel has no NFS); the archive on the node's disk.
. "$(dirname "$0")/lib.sh"
engine_init slurm

[ "$(id -u)" = 0 ] || { skip "Slurm" "needs root: it installs and starts slurmctld, slurmd and munged"; engine_done; exit; }
engine_need slurmctld slurmd slurm-client munge sshfs openssh-server openssh-client || { engine_done; exit 1; }
engine_kernels && engine_ref || { engine_done; exit 1; }

W=$T_OUT/cluster
mkdir -p "$W/ctld" "$W/d" "$W/log" "$W/munge"
# The shared storage: the cache on a file server's export, mounted here
# (engine_netfs: sshfs from a network namespace of its own).
engine_netfs "$T_OUT/netfs" || { engine_done; exit 1; }
host=$(hostname -s)
# munged runs as root here (--force), with a key of its own.
dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$W/munge/munge.key"
/usr/sbin/munged --force --key-file="$W/munge/munge.key" --socket="$W/munge/munge.socket" \
	--pid-file="$W/munge/munged.pid" --log-file="$W/munge/munged.log" --seed-file="$W/munge/munged.seed" ||
	{ not_ok "start munged" "$(tail -3 "$W/munge/munged.log")"; engine_done; exit 1; }
engine_on_exit "kill \$(cat '$W/munge/munged.pid')"
cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024) - 1024 }' /proc/meminfo)
cat >"$W/slurm.conf" <<EOF
ClusterName=btfpipe
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=46817
SlurmdPort=46818
StateSaveLocation=$W/ctld
SlurmdSpoolDir=$W/d
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=10
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=btfpipe Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$W/slurm.conf
/usr/sbin/slurmctld -f "$SLURM_CONF" || { not_ok "start slurmctld" "$(tail -5 "$W/log/slurmctld.log")"; engine_done; exit 1; }
engine_on_exit "kill \$(cat '$W/slurmctld.pid')"
/usr/sbin/slurmd -f "$SLURM_CONF" || { not_ok "start slurmd" "$(tail -5 "$W/log/slurmd.log")"; engine_done; exit 1; }
engine_on_exit "kill \$(cat '$W/slurmd.pid')"
engine_on_exit "scancel --partition=btfpipe --full"
up=0
for _ in $(seq 60); do
	sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && { up=1; break; }
	sleep 1
done
[ $up = 1 ] && ok "a one-node Slurm cluster is up ($(sinfo -h -o '%N %c CPUs %T'))" ||
	{ not_ok "a one-node Slurm cluster is up" "$(sinfo 2>&1; tail -5 "$W/log/slurmd.log")"; engine_done; exit 1; }

# submit NAME OUT CACHE: the job list of the five kernels as an array (one
# CPU a task) and the manifest job after it; prints the array's job id.
submit() {
	local name=$1 out=$2 cache=$3 n
	"$A" --job-list --cache "$cache" -o "$out" "${E_DEBS[@]}" >"$W/$name.jobs" 2>"$W/$name.jobs.err" || return 1
	n=$(($(wc -l <"$W/$name.jobs") - 1))
	cat >"$W/$name.task.sh" <<EOF
#!/bin/sh
# One line of the job list: array task i runs line i.
line=\$(sed -n "\${SLURM_ARRAY_TASK_ID}p" '$W/$name.jobs')
exec /usr/bin/time -f "%e %U %S" -a -o '$W/$name.time' sh -c "\$line"
EOF
	sbatch --parsable -J "$name" --array=1-$n -c 1 -o "$W/log/$name-%a.out" "$W/$name.task.sh"
}
# wait_jobs: until the partition's queue is empty (at most 30 minutes).
wait_jobs() {
	for _ in $(seq 1800); do
		[ -z "$(squeue -h -p btfpipe 2>/dev/null)" ] && return 0
		sleep 1
	done
	return 1
}
manifest() { # NAME: the job list's last line, after the array
	local id=$1
	sbatch --parsable -J "$1-manifest" -c 1 -o "$W/log/$1-manifest.out" --wrap "$(tail -1 "$W/$1.jobs")" >/dev/null
}

# ---- 1. the array, cache on the shared filesystem ----
C1=$E_MNT/cache1 C2=$E_MNT/cache2
rm -rf "$W/out1" "$C1"
t0=$(date +%s.%N)
id=$(submit run1 "$W/out1" "$C1") || { not_ok "submit the array" "$(cat "$W/run1.jobs.err")"; engine_done; exit 1; }
wait_jobs && manifest run1 && wait_jobs || not_ok "the array finished within 30 minutes" "$(squeue)"
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
cpu=$(awk '{ s += $2 + $3 } END { printf "%.1f", s }' "$W/run1.time")
read -r jcpu jwall hits misses < <(jobs_sum "$W/out1")
echo "info: array $id: ${#E_DEBS[@]} kernels, ${#E_DEBS[@]} tasks + the manifest; wall ${wall} s, CPU ${cpu} s (tasks), cache ${hits} hits ${misses} misses; the serial batch without a cache: $(cat "$E_REF/wall") s wall"
same_tree "Slurm array" "$W/out1"
# How many CUs a task found depends on which tasks ran at once; a later
# batch of the series' second kernel must find every one of its CUs that
# the array's tasks stored in the shared cache.
"$A" --cache "$C1" -o "$W/out1b" "${E_DEBS[1]}" >"$W/out1b.log" 2>&1
read -r _ _ h2 m2 < <(jobs_sum "$W/out1b")
[ "$m2" = 0 ] && [ "$h2" -gt 0 ] &&
	ok "the array's tasks left every CU in the shared cache: $(basename "${E_DEBS[1]}" | cut -d_ -f1) again, $h2 hits, 0 misses" ||
	not_ok "the array's tasks left every CU in the shared cache" "$h2 hits, $m2 misses: $(tail -3 "$W/out1b.log")"
bad=$(grep -l -i "error" "$W"/log/run1-*.out 2>/dev/null | head -3)
[ -z "$bad" ] && ok "no task printed an error" || not_ok "no task printed an error" "$(head -5 $bad)"

# ---- 2. scancel mid-run, then the array again ----
rm -rf "$W/out2" "$C2" "$W/run2.time"
id=$(submit run2 "$W/out2" "$C2") || { not_ok "submit the second array"; engine_done; exit 1; }
# Mid-run: the first tasks have been running a while (their temp files are
# there), none has finished.
for _ in $(seq 120); do
	[ -n "$(find "$W/out2/.jobs" -maxdepth 1 -name 'tmp.*' 2>/dev/null)" ] && break
	sleep 0.5
done
sleep 2
running=$(squeue -h -j "$id" -t R 2>/dev/null | wc -l)
done_before=$(find "$W/out2/.jobs" -maxdepth 1 -name '*.json' 2>/dev/null | wc -l)
scancel "$id"
wait_jobs
left=$(find "$W/out2" \( -name 'tmp.*' -o -name '*.tmp.*' \) 2>/dev/null | wc -l)
echo "info: scancel'ed array $id with $running tasks running, $done_before kernels done; $left temp files after it (SIGTERM: each job removes what it began)"
[ "$done_before" -lt "${#E_DEBS[@]}" ] && ok "the array was cancelled mid-run ($done_before of ${#E_DEBS[@]} kernels done)" ||
	not_ok "the array was cancelled mid-run" "all $done_before kernels were done before scancel"
id=$(submit run2 "$W/out2" "$C2") && wait_jobs && manifest run2 && wait_jobs ||
	not_ok "the array submitted again finished" "$(squeue)"
same_tree "scancel'ed, then submitted again" "$W/out2"
engine_done
