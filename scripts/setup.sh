#!/usr/bin/env bash
# setup.sh: make this machine able to build and run commcost. Idempotent.
#
# Finds an MPI through pkg-config (Open MPI "ompi-c" or MPICH "mpich") and
# mpirun. If none is found and we are root on Debian/Ubuntu, installs Open MPI
# from the distribution; otherwise prints exactly what to install or load and
# exits 1. Also checks the Go toolchain against go.mod.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

need_go=$(awk '/^go /{print $2; exit}' go.mod)
if ! command -v go >/dev/null 2>&1; then
	say "Go is not installed: install Go >= $need_go (https://go.dev/dl/) and put it on PATH."
	exit 1
fi

have_mpi() {
	command -v mpirun >/dev/null 2>&1 || return 1
	command -v pkg-config >/dev/null 2>&1 || return 1
	pkg-config --exists ompi-c 2>/dev/null || pkg-config --exists mpich 2>/dev/null
}

if ! have_mpi; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "no MPI found; installing Open MPI (libopenmpi-dev openmpi-bin) with apt-get"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null
		apt-get install -y -qq --no-install-recommends \
			libopenmpi-dev openmpi-bin pkg-config gcc make >/dev/null
	else
		say "no MPI found (need mpirun and a pkg-config entry ompi-c or mpich)."
		say "  Debian/Ubuntu:  sudo apt-get install libopenmpi-dev openmpi-bin pkg-config"
		say "  RHEL/Rocky:     sudo dnf install openmpi-devel && module load mpi/openmpi-x86_64"
		say "  cluster:        module load openmpi   (or mpich); check: pkg-config --libs ompi-c"
		exit 1
	fi
fi
have_mpi || { say "MPI still not usable after install (mpirun or pkg-config entry missing)"; exit 1; }

if pkg-config --exists ompi-c 2>/dev/null; then
	say "MPI: $(mpirun --version 2>/dev/null | head -n1) (pkg-config ompi-c)"
else
	say "MPI: $(mpirun --version 2>/dev/null | head -n1) (pkg-config mpich; build with -tags mpich)"
fi
