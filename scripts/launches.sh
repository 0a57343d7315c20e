#!/usr/bin/env bash
# launches.sh N CMD [ARG...]: run CMD N times, one launch after the other,
# each with COMMCOST_LAUNCH_ID set to its number (1..N), so that every
# record it writes carries meta.launch.
#
# One mpirun launch is one sample of the machine's state: process
# placement, memory layout, the cores the OS picked. The repetitions of
# one launch vary less than launches do (ReproMPI: Hunold and
# Carpen-Amarie, "Reproducible MPI benchmarking is still not as easy as
# you think", TPDS 2016), so a record's CI says how well one launch knows
# a point, not how well the machine does. Compare the launches with
#
#   commcost compare --by launch FILE-OR-RUNDIRS...
#   commcost report RUNDIR        (a run directory holding several launches)
#
# which show the spread between launches next to the spread within one.
#
# Examples:
#   scripts/launches.sh 5 mpirun -np 2 bin/commcost pingpong --sizes 8:1M --samples --out pp.jsonl
#   commcost compare --by launch pp.jsonl
#   scripts/launches.sh 3 mpirun -np 2 bin/commcost suite --rundir results/runs
#   commcost compare --by launch results/runs/HOST-*   (one run directory per launch)
#
# Rank 0 writes the records, so it must see the variable: mpirun on one
# host, MPICH's mpiexec and srun pass the environment on; Open MPI's mpirun
# across hosts needs "-x COMMCOST_LAUNCH_ID".
#
# When COMMCOST_LAUNCH_ID is already set (a batch array task), the launch
# ids become ID.1 .. ID.N. The script stops at the first launch that fails
# and exits with its status, naming it; bad arguments exit with status 2.
set -uo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

usage() {
	echo "launches.sh: $1; usage: scripts/launches.sh N CMD [ARG...] (N launches, N an integer from 1 to $max_n)" >&2
	exit 2
}

# More launches than this are a typo, not a series (each launch is a whole
# mpirun); N is shown with control characters as '?'.
max_n=10000
[ $# -ge 1 ] || usage "no N given"
n=$1
shift
[[ $n =~ ^[0-9]{1,5}$ ]] && [ "$((10#$n))" -ge 1 ] && [ "$((10#$n))" -le $max_n ] ||
	usage "N $(printf '%s' "$n" | LC_ALL=C tr -c '[:print:]' '?'): want an integer >= 1 and at most $max_n"
n=$((10#$n))
[ $# -ge 1 ] || usage "no command given"
command -v -- "$1" >/dev/null 2>&1 ||
	usage "CMD $(printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'): no such command or executable"

# An inherited id is checked as commcost checks it (no control
# characters, at most 256 bytes with ".N"), so a bad one stops the series
# before its first launch and is never written raw to the terminal.
inherited=${COMMCOST_LAUNCH_ID:-}
if [[ $inherited == *[[:cntrl:]]* ]] || [ "${#inherited}" -gt 250 ]; then
	usage "COMMCOST_LAUNCH_ID '$(printf '%s' "${inherited:0:64}" | LC_ALL=C tr -c '[:print:]' '?')': want plain text of at most 250 bytes (the launch ids become ID.1 .. ID.N)"
fi
prefix=${inherited:+$inherited.}
for ((i = 1; i <= n; i++)); do
	id=$prefix$i
	echo "launches.sh: launch $i of $n (COMMCOST_LAUNCH_ID=$id): $*" >&2
	COMMCOST_LAUNCH_ID=$id "$@"
	status=$?
	if [ $status -ne 0 ]; then
		rest=""
		[ "$i" -lt "$n" ] && rest="; launches $((i + 1))..$n not run"
		echo "launches.sh: launch $i of $n (COMMCOST_LAUNCH_ID=$id) failed with status $status$rest" >&2
		exit $status
	fi
done
