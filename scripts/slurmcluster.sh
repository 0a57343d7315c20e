#!/usr/bin/env bash
# slurmcluster.sh: a private one-node Slurm on this machine, for testing
# commcost's batch jobs with the real sbatch, srun and qsub.
#
# usage:
#   scripts/slurmcluster.sh [options] -- COMMAND...
#   scripts/slurmcluster.sh --check     can this machine run one? (exit 0/1)
#
# Starts munged (its own key and socket), slurmctld and slurmd with a
# slurm.conf of their own in a temporary directory (nothing under /etc is
# touched), waits until the node is idle, runs COMMAND with SLURM_CONF
# pointing at that configuration (so sbatch, srun, squeue, scontrol and
# qsub talk to this cluster), and stops every daemon it started, by pid,
# and removes the directory when COMMAND ends, fails or is interrupted.
#
# Needs root (slurmd runs jobs as their user) and the distribution's
# slurm-wlm, munge and libpmix-dev (for srun --mpi=pmix); --install
# installs them with apt-get when they are missing.
#
# Options:
#   --install        install slurm-wlm munge libpmix-dev slurm-wlm-torque if
#                    missing (Debian/Ubuntu, root)
#   --cpus N         CPUs of the node (default: nproc)
#   --port P         slurmctld port; slurmd uses P+1 (default 16817)
#   --keep           keep the directory (logs) after COMMAND, print its path
#   -q, --quiet      no progress messages
#
# COMMAND's environment: SLURM_CONF, CC_SLURM_DIR (the cluster's directory:
# logs in CC_SLURM_DIR/log), CC_SLURM_NODE (the node name).
#
# The node uses TaskPlugin=task/affinity, so srun --cpu-bind=cores binds
# each task to its core (under task/none nothing is bound; ENVIRONMENT.md).
set -euo pipefail

# Arguments are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
say() { [ "$quiet" = 1 ] || printf 'slurmcluster: %s\n' "$*" >&2; }
die() {
	printf 'slurmcluster: %s\n' "$*" >&2
	exit 2
}

install=0 cpus=$(nproc) port=16817 keep=0 quiet=0 check=0
while [ $# -gt 0 ]; do
	case $1 in
	--install) install=1 ;;
	--cpus | --port)
		[ $# -ge 2 ] || die "$1 needs a number (see --help)"
		if [ "$1" = --cpus ]; then cpus=$2; else port=$2; fi
		shift
		;;
	--keep) keep=1 ;;
	--check) check=1 ;;
	-q | --quiet) quiet=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
		exit 0
		;;
	--)
		shift
		break
		;;
	*) die "unknown option '$(printable "$1")' (see --help)" ;;
	esac
	shift
done
# A node of more than 1024 CPUs is a typo on a test machine (Slurm runs
# what the node declares, oversubscribing the real cores).
[[ $cpus =~ ^[0-9]{1,4}$ ]] && [ "$((10#$cpus))" -ge 1 ] && [ "$((10#$cpus))" -le 1024 ] ||
	die "--cpus '$(printable "$cpus")': want a whole number from 1 to 1024"
cpus=$((10#$cpus))
[[ $port =~ ^[0-9]{1,5}$ ]] && [ "$((10#$port))" -ge 1024 ] && [ "$((10#$port))" -le 65000 ] ||
	die "--port '$(printable "$port")': want a port number from 1024 to 65000"
port=$((10#$port))

missing() {
	local m=()
	for c in sbatch srun slurmctld slurmd munged munge; do command -v "$c" >/dev/null || m+=("$c"); done
	echo "${m[*]}"
}

# reason prints why this machine cannot run the cluster, or nothing.
reason() {
	[ "$(id -u)" = 0 ] || {
		echo "needs root (slurmd and munged)"
		return
	}
	local m
	m=$(missing)
	[ -z "$m" ] || echo "missing: $m (install slurm-wlm munge, or use --install)"
}

if [ "$install" = 1 ] && [ -n "$(missing)" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	say "installing slurm-wlm munge libpmix-dev slurm-wlm-torque"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends slurm-wlm munge libpmix-dev slurm-wlm-torque >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends slurm-wlm munge libpmix-dev slurm-wlm-torque >/dev/null; }
fi
why=$(reason)
if [ "$check" = 1 ]; then
	[ -z "$why" ] && exit 0
	echo "$why"
	exit 1
fi
[ -z "$why" ] || die "$why"
[ $# -gt 0 ] || die "no COMMAND given (usage: slurmcluster.sh [options] -- COMMAND...)"

dir=$(mktemp -d /tmp/ccslurm.XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
	local rc=$?
	for pf in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
		[ -s "$pf" ] || continue
		local pid
		pid=$(cat "$pf")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	done
	if [ "$keep" = 1 ]; then
		say "kept $dir"
	else
		rm -rf "$dir"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chown -R munge:munge "$dir/munge"
chmod 700 "$dir/munge"
chmod 400 "$dir/munge/munge.key"
sock=$dir/munge/munge.sock
runuser -u munge -- munged --force --socket="$sock" --key-file="$dir/munge/munge.key" \
	--log-file="$dir/munge/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" ||
	die "munged did not start (log: $dir/munge/munged.log)"

node=$(hostname)
cat >"$dir/slurm.conf" <<EOF
# written by commcost's scripts/slurmcluster.sh
ClusterName=cctest
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
$([ "$cpus" -gt "$(nproc)" ] && echo "SlurmdParameters=config_overrides")
NodeName=$node CPUs=$cpus State=UNKNOWN
PartitionName=cc Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf CC_SLURM_DIR=$dir CC_SLURM_NODE=$node
slurmctld -f "$SLURM_CONF" || die "slurmctld did not start (log: $dir/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" || die "slurmd did not start (log: $dir/log/slurmd.log)"
for i in $(seq 100); do
	state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	[ "$i" = 100 ] && die "node $node is '$state', not idle, after 20 s (logs: $dir/log)"
	sleep 0.2
done
say "one-node Slurm up ($node, $cpus CPUs, SLURM_CONF=$SLURM_CONF)"
set +e
"$@"
rc=$?
set -e
exit "$rc"
