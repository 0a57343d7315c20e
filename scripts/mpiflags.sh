#!/usr/bin/env bash
# mpiflags.sh NP: prints the extra mpirun flags commcost uses for NP ranks on
# this machine: with more ranks than cores, Open MPI needs --oversubscribe and
# mpi_yield_when_idle so spinning ranks do not starve each other
# (ENVIRONMENT.md). MPICH's mpiexec oversubscribes by default.
np=${1:?usage: mpiflags.sh NP}
cores=$(nproc)
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
	if [ "$np" -gt "$cores" ]; then
		echo "--oversubscribe --mca mpi_yield_when_idle 1"
	fi
fi
