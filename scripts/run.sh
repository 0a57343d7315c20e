#!/usr/bin/env bash
# run.sh [NP]: the main job on this machine: runs `commcost suite` under
# mpirun with NP ranks (default 2), which measures, prints the tables and
# writes a run directory under results/runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2}
[ -x bin/commcost ] || { echo "run.sh: bin/commcost missing; run 'make build'" >&2; exit 1; }
# shellcheck disable=SC2046
exec mpirun -np "$np" $(scripts/mpiflags.sh "$np") bin/commcost suite --rundir results/runs
