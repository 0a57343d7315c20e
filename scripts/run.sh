#!/usr/bin/env bash
# run.sh [NP]: the main job on this machine: runs `commcost suite` with NP
# ranks (default 2) under the launcher of the MPI bin/commcost was built for
# ($TAGS/$MPI, scripts/mpi.sh), which measures, prints the tables and writes
# a run directory under results/runs/.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/.."
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
if [ $# -gt 1 ]; then
	echo "run.sh: one argument at most (NP), got $#; usage: scripts/run.sh [NP]" >&2
	exit 2
fi
np=${1-2} # an empty argument is refused below, not taken for the default
# The suite measures between ranks (2 at least); more than 16 ranks per
# core only oversubscribe this machine (mpirun then spins, and a launch of
# thousands of processes ignores SIGTERM while it forks). Checked before
# anything starts.
max_np=$((16 * $(nproc)))
if ! [[ $np =~ ^[0-9]{1,7}$ ]] || [ "$((10#$np))" -lt 2 ] || [ "$((10#$np))" -gt "$max_np" ]; then
	# Shown with control characters as '?': the argument may hold escapes.
	echo "run.sh: NP '$(printf '%s' "$np" | LC_ALL=C tr -c '[:print:]' '?')': want an integer from 2 (the suite measures between ranks) to $max_np (16 ranks per core of this machine's $(nproc)); for more, submit a batch job (scripts/batch)" >&2
	exit 2
fi
np=$((10#$np))
[ -x bin/commcost ] || { echo "run.sh: bin/commcost missing; run 'make build'" >&2; exit 1; }
impl=$(mpi_impl) || exit 2
launcher=$(mpi_launcher "$impl") || { echo "run.sh: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
# shellcheck disable=SC2046
exec "$launcher" -np "$np" $(mpi_flags "$impl" "$np") bin/commcost suite --rundir results/runs
