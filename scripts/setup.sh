#!/usr/bin/env bash
# setup.sh: make this machine able to build and run commcost. Idempotent.
#
#   scripts/setup.sh                 Open MPI (the default build)
#   MPI=mpich scripts/setup.sh       MPICH (builds with -tags mpich)
#   TAGS="-tags mpich" scripts/setup.sh   the same, as make passes it
#
# Checks for the selected MPI (scripts/mpi.sh): its pkg-config entry (ompi-c
# or mpich) and its own launcher (mpirun.openmpi or mpiexec.mpich, or a
# plain mpirun/mpiexec whose --version names it). If it is missing and we
# are root on Debian/Ubuntu, installs it from the distribution (libopenmpi-dev
# openmpi-bin, or libmpich-dev mpich; the two live side by side); otherwise
# prints exactly what to install or load and exits 1. Also checks the Go
# toolchain against go.mod.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 0 ] || { echo "setup.sh: takes no arguments (got '$(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?')'): set MPI or TAGS in the environment" >&2; exit 2; }
cd "$(dirname "$0")/.."
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh

say() { printf 'setup: %s\n' "$*" >&2; }

impl=$(mpi_impl) || exit 2
name=$(mpi_name "$impl")
pc=$(mpi_pkgconfig "$impl")

need_go=$(awk '/^go /{print $2; exit}' go.mod)
if ! command -v go >/dev/null 2>&1; then
	say "Go is not installed: install Go >= $need_go (https://go.dev/dl/) and put it on PATH."
	exit 1
fi

have_mpi() {
	command -v pkg-config >/dev/null 2>&1 || return 1
	pkg-config --exists "$pc" 2>/dev/null || return 1
	mpi_launcher "$impl" >/dev/null
}

if ! have_mpi; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		pkgs=$(mpi_packages "$impl")
		say "$name not found; installing it ($pkgs) with apt-get"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $pkgs pkg-config gcc make >/dev/null
	else
		say "$name not found (need pkg-config $pc and $name's launcher)."
		if [ "$impl" = mpich ]; then
			say "  Debian/Ubuntu:  sudo apt-get install libmpich-dev mpich pkg-config"
			say "  RHEL/Rocky:     sudo dnf install mpich-devel && module load mpi/mpich-x86_64"
			say "  cluster:        module load mpich; check: pkg-config --libs mpich"
		else
			say "  Debian/Ubuntu:  sudo apt-get install libopenmpi-dev openmpi-bin pkg-config"
			say "  RHEL/Rocky:     sudo dnf install openmpi-devel && module load mpi/openmpi-x86_64"
			say "  cluster:        module load openmpi; check: pkg-config --libs ompi-c"
			if [ "$impl" = openmpi ] && pkg-config --exists mpich 2>/dev/null; then
				say "  MPICH is installed: build and test against it with make TAGS=\"-tags mpich\""
			fi
		fi
		exit 1
	fi
fi
have_mpi || { say "$name still not usable after install (pkg-config $pc or its launcher missing)"; exit 1; }

launcher=$(mpi_launcher "$impl")
tags=$(mpi_tags "$impl")
say "MPI: $(mpi_version "$impl" "$launcher") (launcher $launcher, pkg-config $pc${tags:+; build with $tags})"
# Plain mpirun is whatever update-alternatives (or PATH) says; the scripts
# and tests never rely on it, but say so when it is the other library.
if plain=$(command -v mpirun 2>/dev/null) && ! mpi_version_is "$impl" "$plain"; then
	say "note: plain mpirun ($plain) is not $name's; commcost's scripts and tests use $launcher"
fi
