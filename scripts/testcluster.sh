#!/usr/bin/env bash
# testcluster.sh: a multi-host MPI test cluster on one machine, with known
# link rates, for ground-truth tests of commcost's models.
#
# usage:
#   scripts/testcluster.sh --hosts N [options] -- COMMAND...
#   scripts/testcluster.sh --cleanup [--prefix P]   remove what a crashed run left
#   scripts/testcluster.sh --check                  can this machine host one?
#
# Creates N hosts as network namespaces PREFIXh1..PREFIXhN (default cc-h1 ..)
# plus a control host PREFIXctl, joins them through a fabric namespace
# PREFIXfab (Linux bridges), shapes each host's link with tbf (both ways:
# host egress = uplink, switch port egress = downlink), writes /etc/hosts
# lines for the hosts and an rsh agent for Open MPI, runs COMMAND on the
# control host, and removes everything it created when COMMAND ends, fails,
# times out or is interrupted (trap on EXIT, INT, TERM, HUP). Leftovers of a
# crashed earlier run with the same prefix are removed first.
#
# Topologies (ENVIRONMENT.md has the recipe this follows):
#   default              one switch (bridge): every host has its own link of
#                        --rate; no shared bottleneck ("switched").
#   --bottleneck C --groups 2
#                        two switches joined by one link shaped to C in each
#                        direction; hosts 1..K on the first (K = --split,
#                        default ceil(N/2)), the rest on the second. Traffic
#                        between the groups shares the link (paper 001's
#                        SP2 two-frame case). --groups 2 is the default
#                        when --bottleneck is given.
#   --bottleneck C --groups 1
#                        a shared medium: every packet between any two hosts
#                        goes through one router namespace PREFIXrt and leaves
#                        it through one tbf queue of rate C, so all traffic
#                        of all hosts shares C (paper 001's Ethernet case,
#                        eq. 4: all n(n-1) messages of an all-to-all share
#                        the network block). TCP ACKs share it too.
# Every shaped queue is tbf with a bucket of 1 ms of data (at least two
# frames; smaller messages ride it, so fit slopes over larger ones; --burst
# sets it) and room for 200 ms of data, so TCP meets the rate, not drops
# (--stats).
#
# Options:
#   --hosts N            number of hosts, 1..64 (required)
#   --rate R[,R...]      per-host link rate in tc units (200mbit, 1gbit,
#                        500kbit, 10mbps = 10 MB/s): one rate for all hosts or
#                        one per host; "none" leaves a host unshaped
#                        (default none)
#   --bottleneck C       rate of the shared link (tc units), see above
#   --groups 1|2         topology with --bottleneck, see above (default 2)
#   --split K            hosts on the first switch with --groups 2
#   --burst B            every tbf bucket holds B bytes, 3028 (two full
#                        frames: the link serialises every frame at its
#                        rate, as a real port does) to 100000000; default
#                        1 ms of data at the queue's rate, at least 3028
#   --slots S            MPI slots per host in $CC_MPIRUN (default 1)
#   --prefix P           name prefix, [a-z][a-z0-9]{0,5}- (default cc-)
#   --subnet A.B.C       the cluster's /24 (default 10.77.0): hosts .1..N,
#                        control host .250, router .254; addresses exist only
#                        inside the namespaces
#   --timeout SECS       stop COMMAND (SIGTERM, then SIGKILL) after SECS and
#                        exit 124 (default 0: no limit)
#   --lock-wait SECS     one cluster runs at a time on a machine (a lock on
#                        /etc/hosts); wait this long for it (default 0)
#   --stats              print the tc statistics (bytes, packets, drops) of
#                        every shaped queue before cleaning up
#   -q, --quiet          no progress messages on stderr
#
# COMMAND runs on the control host PREFIXctl (its own network namespace and
# hostname; same file system; no network beyond the cluster: build first).
# Its words are joined with spaces and run by sh -c, as ssh does, so quote
# what the cluster's shell should expand:
#
#   scripts/testcluster.sh --hosts 2 --rate 200mbit -- \
#     '$CC_MPIRUN bin/commcost pingpong --sizes 64K:2M --iters 1 --out pp.jsonl'
#
# COMMAND's environment:
#   CC_MPIRUN    mpirun with every flag the cluster needs and the host list:
#                  mpirun --mca plm_rsh_agent AGENT --mca plm_rsh_no_tree_spawn 1
#                    --mca btl tcp,self --mca btl_tcp_if_include SUBNET
#                    --mca oob_tcp_if_include SUBNET --mca mpi_yield_when_idle 1
#                    --bind-to none -H PREFIXh1:S,...,PREFIXhN:S
#                (one rank per slot by default; add -np to use fewer)
#   CC_HOSTS     PREFIXh1,...,PREFIXhN         CC_NHOSTS  N
#   CC_HOSTFILE  an Open MPI hostfile (PREFIXhI slots=S per line)
#   CC_AGENT     the rsh agent: AGENT HOST CMD... runs
#                ip netns exec HOST unshare --uts sh -c 'hostname HOST; CMD'
#   CC_SUBNET    A.B.C.0/24                    CC_PREFIX  P
#   OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (it runs as root)
# --bind-to none: every host sees the same 2 cores, so Open MPI's default
# binding would pin each host's first rank to core 0.
#
# Exit status: COMMAND's; 124 when --timeout stopped it; 130/143/129 on
# SIGINT/SIGTERM/SIGHUP; 2 for bad options; 1 when the cluster cannot be
# built; --check exits 3 when this machine cannot host a cluster (not root,
# no ip/tc/unshare/flock, no network namespaces or tbf) and says why.
set -uo pipefail

readonly PROG=testcluster.sh
readonly TAG="commcost-testcluster"

# The cluster's ranks are started through Open MPI's rsh agent, so
# $CC_MPIRUN must be Open MPI's mpirun even where update-alternatives made
# plain mpirun MPICH's (scripts/mpi.sh). Programs run on it must be built
# for Open MPI (the default build, not -tags mpich).
# shellcheck source=scripts/mpi.sh
. "$(dirname "$0")/mpi.sh"
OMPIRUN=$(mpi_launcher openmpi) || OMPIRUN=""

# die_usage MESSAGE: bad input, one line (the options: --help).
die_usage() {
	echo "$PROG: $(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?'); usage: $PROG --hosts N [options] -- COMMAND..., $PROG --cleanup [--prefix P] or $PROG --check (options: $PROG --help)" >&2
	exit 2
}
say() { [ "$QUIET" = 1 ] || echo "$PROG: $*" >&2; }
fail() {
	echo "$PROG: $*" >&2
	exit 1
}

# ---------------------------------------------------------------- options
HOSTS="" RATE="none" BOTTLENECK="" GROUPS_="" SPLIT="" SLOTS=1 PREFIX="cc-"
SUBNET="10.77.0" TIMEOUT=0 LOCKWAIT=0 STATS=0 QUIET=0 MODE=run BURST=""
CMD=()
while [ $# -gt 0 ]; do
	opt=$1
	shift
	hasval=0
	if [[ $opt == --*=* ]]; then
		val=${opt#*=} opt=${opt%%=*} hasval=1
	fi
	case $opt in
	--hosts | --rate | --bottleneck | --groups | --split | --burst | --slots | --prefix | --subnet | --timeout | --lock-wait)
		if [ "$hasval" = 0 ]; then
			[ $# -ge 1 ] || die_usage "$opt needs a value"
			val=$1
			shift
		fi
		case $opt in
		--hosts) HOSTS=$val ;;
		--rate) RATE=$val ;;
		--bottleneck) BOTTLENECK=$val ;;
		--groups) GROUPS_=$val ;;
		--split) SPLIT=$val ;;
		--burst) BURST=$val ;;
		--slots) SLOTS=$val ;;
		--prefix) PREFIX=$val ;;
		--subnet) SUBNET=$val ;;
		--timeout) TIMEOUT=$val ;;
		--lock-wait) LOCKWAIT=$val ;;
		esac
		;;
	--stats) STATS=1 ;;
	-q | --quiet) QUIET=1 ;;
	--cleanup) MODE=cleanup ;;
	--check) MODE=check ;;
	-h | --help)
		sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	--)
		CMD=("$@")
		break
		;;
	*) die_usage "unknown option $opt (COMMAND goes after --)" ;;
	esac
done

# isint: a whole number the shell's tests compare (at most 9 digits; a
# longer one is no count or time these options take).
isint() { [[ $1 =~ ^[0-9]{1,9}$ ]]; }

# rate_bits RATE: bits per second of a tc rate, or nothing if malformed.
rate_bits() {
	local r=${1,,}
	[[ $r =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$ ]] || return 1
	local n=${BASH_REMATCH[1]} u=${BASH_REMATCH[3]} m
	case $u in
	bit) m=1 ;; kbit) m=1e3 ;; mbit) m=1e6 ;; gbit) m=1e9 ;; tbit) m=1e12 ;;
	bps) m=8 ;; kbps) m=8e3 ;; mbps) m=8e6 ;; gbps) m=8e9 ;; tbps) m=8e12 ;;
	esac
	awk -v n="$n" -v m="$m" 'BEGIN { v = n * m; if (v < 8000 || v > 1e11) exit 1; printf "%.0f\n", v }'
}

[[ $PREFIX =~ ^[a-z][a-z0-9]{0,5}-$ ]] || die_usage "--prefix $PREFIX: want a lower-case letter, up to 5 letters or digits and a dash, e.g. cc-"
readonly PREFIX
NSRE="^${PREFIX}(h[0-9]+|ctl|fab|rt|chk[0-9]+)\$" # the only namespaces this script touches
TMPD="${TMPDIR:-/tmp}/$TAG.${PREFIX%-}"

validate_run() {
	[ -n "$HOSTS" ] || die_usage "--hosts N is required"
	{ isint "$HOSTS" && [ "$HOSTS" -ge 1 ] && [ "$HOSTS" -le 64 ]; } || die_usage "--hosts $HOSTS: want a whole number of hosts, 1 to 64"
	{ isint "$SLOTS" && [ "$SLOTS" -ge 1 ] && [ "$SLOTS" -le 64 ]; } || die_usage "--slots $SLOTS: want 1 to 64 MPI slots per host"
	IFS=, read -r -a RATES <<<"$RATE"
	if [ "${#RATES[@]}" -eq 1 ]; then
		local i
		for ((i = 1; i < HOSTS; i++)); do RATES+=("${RATES[0]}"); done
	fi
	[ "${#RATES[@]}" -eq "$HOSTS" ] || die_usage "--rate $RATE: want one rate or $HOSTS (one per host), got ${#RATES[@]}"
	local r
	for r in "${RATES[@]}"; do
		[ "$r" = none ] || rate_bits "$r" >/dev/null || die_usage "--rate $r: want a tc rate between 8kbit and 100gbit such as 200mbit, 1gbit, 500kbit or 10mbps (bytes), or none"
	done
	if [ -n "$BOTTLENECK" ]; then
		rate_bits "$BOTTLENECK" >/dev/null || die_usage "--bottleneck $BOTTLENECK: want a tc rate between 8kbit and 100gbit such as 100mbit"
		GROUPS_=${GROUPS_:-2}
		case $GROUPS_ in
		1) [ -z "$SPLIT" ] || die_usage "--split applies to --groups 2" ;;
		2)
			[ "$HOSTS" -ge 2 ] || die_usage "--groups 2 needs --hosts 2 or more"
			SPLIT=${SPLIT:-$(((HOSTS + 1) / 2))}
			{ isint "$SPLIT" && [ "$SPLIT" -ge 1 ] && [ "$SPLIT" -lt "$HOSTS" ]; } || die_usage "--split $SPLIT: want 1 to $((HOSTS - 1)) hosts on the first switch"
			;;
		*) die_usage "--groups $GROUPS_: want 1 (one shared medium) or 2 (two switches joined by the bottleneck)" ;;
		esac
	else
		[ -z "$GROUPS_" ] || die_usage "--groups needs --bottleneck RATE"
		[ -z "$SPLIT" ] || die_usage "--split needs --bottleneck RATE --groups 2"
		GROUPS_=0
	fi
	[[ $SUBNET =~ ^(10|172|192)\.([0-9]{1,3})\.([0-9]{1,3})$ ]] && [ "$((10#${BASH_REMATCH[2]}))" -le 255 ] && [ "$((10#${BASH_REMATCH[3]}))" -le 255 ] ||
		die_usage "--subnet $SUBNET: want the first three numbers of a private /24, each 0 to 255, e.g. 10.77.0"
	{ isint "$TIMEOUT" && [ "$((10#$TIMEOUT))" -le 604800 ]; } || die_usage "--timeout $TIMEOUT: want whole seconds from 0 (no limit) to 604800 (a week)"
	{ isint "$LOCKWAIT" && [ "$((10#$LOCKWAIT))" -le 86400 ]; } || die_usage "--lock-wait $LOCKWAIT: want whole seconds from 0 to 86400 (a day)"
	TIMEOUT=$((10#$TIMEOUT)) LOCKWAIT=$((10#$LOCKWAIT))
	[ -z "$BURST" ] || { isint "$BURST" && [ "${#BURST}" -le 9 ] && [ "$BURST" -ge 3028 ] && [ "$BURST" -le 100000000 ]; } ||
		die_usage "--burst $BURST: want the tbf bucket in bytes, a whole number from 3028 (two full frames; one frame does not hold the rate) to 100000000"
	[ "${#CMD[@]}" -gt 0 ] || die_usage "no COMMAND: put it after --, e.g. -- '\$CC_MPIRUN bin/commcost pingpong'"
}

# ---------------------------------------------------------------- cleanup
# Removes every namespace, /etc/hosts line and temporary file of PREFIX,
# whether this run made them or a crashed one did. Processes still inside
# the namespaces (orted, ranks) are ended first, by pid. Safe to repeat.
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "$NSRE" || true; }

# hosts_rewrite FILTER: rewrites /etc/hosts in place (same inode: it may be
# a bind mount) through an awk filter, under the caller's lock.
hosts_rewrite() {
	local t
	t=$(mktemp) || return 1
	if awk "$1" /etc/hosts >"$t"; then
		cat "$t" >/etc/hosts
	fi
	rm -f "$t"
}

# our_pids: processes inside any of our namespaces (one pass over /proc,
# comparing network namespace inodes; ip netns pids scans /proc once per
# namespace).
our_pids() {
	local ns inodes=""
	for ns in $(our_namespaces); do
		inodes="$inodes $(stat -L -c %i "/run/netns/$ns" 2>/dev/null)"
	done
	[ -n "${inodes// /}" ] || return 0
	stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null | awk -v list="$inodes" -v self=$$ '
		BEGIN { n = split(list, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		($1 in want) { split($2, p, "/"); if (p[3] != self) print p[3] }'
}

cleanup_all() {
	local ns pids
	pids=$(our_pids)
	if [ -n "$pids" ]; then
		kill -TERM $pids 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			pids=$(our_pids)
			[ -n "$pids" ] || break
			sleep 0.3
		done
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
	fi
	for ns in $(our_namespaces); do
		ip netns del "$ns" 2>/dev/null
	done
	if grep -q "# $TAG $PREFIX\$" /etc/hosts 2>/dev/null; then
		hosts_rewrite "!/# $TAG $PREFIX\$/"
	fi
	rm -rf "$TMPD"
	# All of it gone?
	local left
	left=$(our_namespaces)
	[ -z "$left" ] || echo "$PROG: warning: could not remove namespaces: $left" >&2
}

# ---------------------------------------------------------------- check
check_machine() {
	local why=""
	[ "$(id -u)" = 0 ] || why="not root (network namespaces and tc need root)"
	local c
	for c in ip tc unshare flock awk; do
		[ -n "$why" ] || command -v $c >/dev/null || why="$c not found"
	done
	[ -n "$why" ] || [ -n "$OMPIRUN" ] || why="Open MPI's mpirun not found (scripts/setup.sh installs Open MPI)"
	local ns="${PREFIX}chk$$"
	if [ -z "$why" ]; then
		if ! ip netns add "$ns" 2>/dev/null; then
			why="ip netns add fails (no network namespaces here)"
		else
			if ! ip -n "$ns" link add va type veth peer name vb 2>/dev/null; then
				why="cannot create veth pairs in a network namespace"
			elif ! ip -n "$ns" link add vbr type bridge 2>/dev/null; then
				why="cannot create a Linux bridge in a network namespace"
			elif ! ip -n "$ns" link set va up 2>/dev/null || ! tc -n "$ns" qdisc add dev va root tbf rate 100mbit burst 16kb latency 50ms 2>/dev/null; then
				why="tc tbf is not available (sch_tbf)"
			elif ! ip netns exec "$ns" unshare --uts true 2>/dev/null; then
				why="unshare --uts fails inside a network namespace"
			fi
			ip netns del "$ns" 2>/dev/null
		fi
	fi
	if [ -n "$why" ]; then
		echo "$PROG: cannot build a test cluster here: $why" >&2
		exit 3
	fi
	echo "$PROG: this machine can host a test cluster"
	exit 0
}

# ---------------------------------------------------------------- build
nsx() { ip netns exec "$@"; }

# shape NS DEV RATE: tbf at RATE on DEV's egress in NS. The bucket holds
# --burst bytes, or by default 1 ms of data (at least two full frames):
# messages below that ride the burst, so fit the slope over large messages.
# The queue holds 200 ms, so TCP is slowed by the bucket, not by drops
# (--stats shows drops).
shape() {
	local ns=$1 dev=$2 rate=$3 bits burst
	[ "$rate" = none ] && return 0
	bits=$(rate_bits "$rate") || return 1
	burst=$BURST
	[ -n "$burst" ] || burst=$(awk -v b="$bits" 'BEGIN { v = b / 8 / 1000; if (v < 3028) v = 3028; printf "%d\n", v }')
	tc -n "$ns" qdisc replace dev "$dev" root tbf rate "$bits"bit burst "$burst" latency 200ms
}

# ns_new NS: a namespace with loopback up and IPv6 off (no stray traffic).
ns_new() {
	ip netns add "$1" || return 1
	nsx "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
	ip -n "$1" link set lo up
}

# attach NS PORT BRIDGE ADDR RATE: veth eth0 in NS <-> PORT on BRIDGE in
# the fabric, shaped to RATE both ways, with ADDR (last number) on eth0.
attach() {
	local ns=$1 port=$2 br=$3 addr=$4 rate=$5
	ip -n "$FAB" link add "$port" type veth peer name eth0 netns "$ns" || return 1
	ip -n "$FAB" link set "$port" master "$br" up || return 1
	if [ "$GROUPS_" = 1 ]; then
		# Shared medium: no direct path between hosts; everything goes via
		# the router (the /24 without its prefix route, the router as
		# gateway for the whole subnet).
		ip -n "$ns" addr add "$SUBNET.$addr/24" dev eth0 noprefixroute || return 1
		ip -n "$ns" link set eth0 up || return 1
		ip -n "$ns" route add "$SUBNET.254/32" dev eth0 scope link || return 1
		ip -n "$ns" route add "$SUBNET.0/24" via "$SUBNET.254" dev eth0 || return 1
		nsx "$ns" sysctl -qw net.ipv4.conf.all.accept_redirects=0 net.ipv4.conf.eth0.accept_redirects=0 >/dev/null
	else
		ip -n "$ns" addr add "$SUBNET.$addr/24" dev eth0 || return 1
		ip -n "$ns" link set eth0 up || return 1
	fi
	shape "$ns" eth0 "$rate" || return 1 # uplink
	shape "$FAB" "$port" "$rate" || return 1 # downlink
}

build_cluster() {
	FAB="${PREFIX}fab" CTL="${PREFIX}ctl" RT="${PREFIX}rt"
	mkdir -p "$TMPD" || return 1
	ns_new "$FAB" || return 1
	ip -n "$FAB" link add br1 type bridge stp_state 0 forward_delay 0 || return 1
	ip -n "$FAB" link set br1 up || return 1
	case $GROUPS_ in
	2)
		ip -n "$FAB" link add br2 type bridge stp_state 0 forward_delay 0 || return 1
		ip -n "$FAB" link set br2 up || return 1
		ip -n "$FAB" link add trunk1 type veth peer name trunk2 || return 1
		ip -n "$FAB" link set trunk1 master br1 up || return 1
		ip -n "$FAB" link set trunk2 master br2 up || return 1
		shape "$FAB" trunk1 "$BOTTLENECK" || return 1 # group 1 -> group 2
		shape "$FAB" trunk2 "$BOTTLENECK" || return 1 # group 2 -> group 1
		;;
	1)
		ns_new "$RT" || return 1
		ip -n "$FAB" link add rt type veth peer name bus netns "$RT" || return 1
		ip -n "$FAB" link set rt master br1 up || return 1
		ip -n "$RT" addr add "$SUBNET.254/24" dev bus || return 1
		ip -n "$RT" link set bus up || return 1
		# Packets come in on bus and leave on bus again: forward, and do not
		# tell hosts to go direct.
		nsx "$RT" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 \
			net.ipv4.conf.bus.send_redirects=0 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.bus.rp_filter=0 >/dev/null || return 1
		shape "$RT" bus "$BOTTLENECK" || return 1 # the one shared queue
		;;
	esac
	local i br
	ns_new "$CTL" || return 1
	attach "$CTL" ctl br1 250 none || return 1
	for ((i = 1; i <= HOSTS; i++)); do
		br=br1
		[ "$GROUPS_" = 2 ] && [ "$i" -gt "$SPLIT" ] && br=br2
		ns_new "${PREFIX}h$i" || return 1
		attach "${PREFIX}h$i" "h$i" "$br" "$i" "${RATES[i - 1]}" || return 1
	done
	# /etc/hosts, tagged so cleanup finds exactly these lines.
	{
		for ((i = 1; i <= HOSTS; i++)); do echo "$SUBNET.$i ${PREFIX}h$i # $TAG $PREFIX"; done
		echo "$SUBNET.250 ${PREFIX}ctl # $TAG $PREFIX"
	} >"$TMPD/hosts" || return 1
	hosts_rewrite '{ print } END { while ((getline l < "'"$TMPD/hosts"'") > 0) print l }' || return 1
	# The rsh agent Open MPI starts its daemons with: AGENT HOST CMD...
	cat >"$TMPD/agent" <<-'EOF' || return 1
		#!/bin/sh
		# rsh agent of scripts/testcluster.sh: run CMD on HOST (a network
		# namespace, with its own hostname), as ssh HOST CMD would.
		host=$1
		shift
		exec ip netns exec "$host" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
	EOF
	chmod +x "$TMPD/agent" || return 1
	: >"$TMPD/hostfile"
	local hl=""
	for ((i = 1; i <= HOSTS; i++)); do
		echo "${PREFIX}h$i slots=$SLOTS" >>"$TMPD/hostfile"
		hl="$hl${hl:+,}${PREFIX}h$i:$SLOTS"
	done
	# orte_leave_session_attached: the daemons (and so the ranks) stay
	# children of mpirun instead of daemonizing, so whoever runs COMMAND
	# can tell the launch's CPU time from other processes'.
	CC_MPIRUN="${OMPIRUN:-mpirun} --mca plm_rsh_agent $TMPD/agent --mca plm_rsh_no_tree_spawn 1 --mca btl tcp,self --mca btl_tcp_if_include $SUBNET.0/24 --mca oob_tcp_if_include $SUBNET.0/24 --mca mpi_yield_when_idle 1 --mca orte_leave_session_attached 1 --bind-to none -H $hl"
	# Every host answers before COMMAND starts: a TCP connection to a closed
	# port is refused (reachable) rather than timing out (no ping needed).
	for ((i = 1; i <= HOSTS; i++)); do
		local out
		out=$(nsx "$CTL" timeout 5 bash -c "echo >/dev/tcp/$SUBNET.$i/9" 2>&1)
		[[ $out == *refused* ]] || {
			echo "$PROG: ${PREFIX}h$i ($SUBNET.$i) does not answer from ${PREFIX}ctl: ${out:-timeout}" >&2
			return 1
		}
	done
	return 0
}

describe() {
	local topo
	case $GROUPS_ in
	0) topo="one switch, no shared bottleneck" ;;
	1) topo="shared medium: all host-to-host traffic through one $BOTTLENECK queue (router ${PREFIX}rt)" ;;
	2) topo="two switches (hosts 1-$SPLIT | $((SPLIT + 1))-$HOSTS) joined by one $BOTTLENECK link each way" ;;
	esac
	say "$HOSTS hosts ${PREFIX}h1..${PREFIX}h$HOSTS on $SUBNET.0/24, host links ${RATE//none/unshaped}; $topo"
}

print_stats() {
	local ns
	echo "$PROG: tc statistics of the shaped queues:" >&2
	for ns in $(our_namespaces); do
		tc -s -n "$ns" qdisc show 2>/dev/null | awk -v ns="$ns" '
			/^qdisc tbf/ { dev = $5; rate = ""; for (i = 1; i <= NF; i++) if ($i == "rate") rate = $(i + 1); on = 1; next }
			/^qdisc/ { on = 0 }
			on && /Sent/ { sub(/,$/, "", $7); printf "  %-10s %-7s rate %-9s sent %s bytes %s pkts, dropped %s, overlimits %s\n", ns, dev, rate, $2, $4, $7, $9 }' >&2
	done
}

# ---------------------------------------------------------------- main
if [ "$MODE" = check ]; then
	check_machine
fi
[ "$MODE" = cleanup ] || validate_run
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, tc and /etc/hosts)"
for c in ip tc unshare flock awk; do command -v $c >/dev/null || fail "$c not found"; done

# One cluster at a time on a machine: the lock is on /etc/hosts, which every
# run edits; it also keeps a run from removing a live cluster's namespaces.
exec 9</etc/hosts || fail "cannot open /etc/hosts"
if ! flock -w "$LOCKWAIT" 9; then
	fail "another test cluster is running (it holds a lock on /etc/hosts); retry, or pass --lock-wait SECS"
fi

if [ "$MODE" = cleanup ]; then
	cleanup_all
	say "removed the namespaces, /etc/hosts lines and temporary files of prefix $PREFIX"
	exit 0
fi

[ -n "$OMPIRUN" ] || say "warning: Open MPI's mpirun not found; \$CC_MPIRUN will not work"

CHILD=""
WATCH=""
on_exit() {
	local rc=$?
	# Nothing interrupts the cleanup but SIGKILL: a parent-death signal
	# comes again each time the dying parent's threads hand us on, and
	# whoever reads our output may be gone (SIGPIPE on a write).
	trap '' INT TERM HUP PIPE
	trap - EXIT
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
		kill -TERM -- "-$CHILD" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$CHILD" 2>/dev/null || break
			sleep 0.3
		done
		kill -KILL -- "-$CHILD" 2>/dev/null
	fi
	[ -z "$WATCH" ] || kill "$WATCH" 2>/dev/null
	[ "$STATS" = 1 ] && print_stats
	cleanup_all
	say "cleaned up (prefix $PREFIX)"
	exit "$rc"
}
trap on_exit EXIT
trap 'trap "" INT TERM HUP; exit 130' INT
trap 'trap "" INT TERM HUP; exit 143' TERM
trap 'trap "" INT TERM HUP; exit 129' HUP

leftover=$(our_namespaces)
if [ -n "$leftover" ] || grep -q "# $TAG $PREFIX\$" /etc/hosts; then
	say "removing leftovers of an earlier run: $(echo $leftover)"
	cleanup_all
fi

describe
build_cluster || fail "could not build the cluster (see the message above)"

# The cluster runs as root (namespaces need it); Open MPI refuses that
# unless told (ENVIRONMENT.md).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CC_MPIRUN CC_HOSTS CC_NHOSTS=$HOSTS CC_HOSTFILE="$TMPD/hostfile" CC_AGENT="$TMPD/agent" CC_SUBNET="$SUBNET.0/24" CC_PREFIX=$PREFIX
CC_HOSTS=$(paste -sd, <(for ((i = 1; i <= HOSTS; i++)); do echo "${PREFIX}h$i"; done))
say "running on ${PREFIX}ctl: ${CMD[*]}"

# COMMAND in its own process group (so the whole tree can be stopped), on
# the control host, without the lock's descriptor.
setsid ip netns exec "${PREFIX}ctl" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "${PREFIX}ctl" "${CMD[*]}" 9<&- &
CHILD=$!
if [ "$TIMEOUT" -gt 0 ]; then
	(
		trap 'kill $sp 2>/dev/null; exit 0' TERM
		sleep "$TIMEOUT" &
		sp=$!
		wait $sp
		# Only while the script that started COMMAND lives (after a SIGKILL
		# of it the process group number may belong to someone else).
		read -r _ _ _ ppid _ </proc/$BASHPID/stat
		[ "$ppid" = $$ ] || exit 0
		: >"$TMPD/timedout"
		echo "$PROG: COMMAND still running after --timeout $TIMEOUT s; stopping it" >&2
		kill -TERM -- "-$CHILD" 2>/dev/null
		sleep 3 &
		sp=$!
		wait $sp
		kill -KILL -- "-$CHILD" 2>/dev/null
	) 9<&- &
	WATCH=$!
fi
wait "$CHILD"
rc=$?
CHILD=""
if [ -n "$WATCH" ]; then
	kill "$WATCH" 2>/dev/null
	wait "$WATCH" 2>/dev/null
	WATCH=""
	[ ! -e "$TMPD/timedout" ] || rc=124
fi
exit "$rc"
