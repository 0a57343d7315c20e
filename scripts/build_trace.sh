#!/usr/bin/env bash
# build_trace.sh [OUT]: build the PMPI tracing library (trace/pmpi) with the
# selected MPI's mpicc into OUT (default bin/libcommcost-trace.so), which
# `commcost trace` loads with LD_PRELOAD. See scripts/mpi.sh for MPI/TAGS.
# build_trace.sh --cc prints that mpicc (the tests build their programs
# with it).
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
# OUT is the caller's path (the default is the checkout's).
[ $# -ne 1 ] || [[ $1 == -* ]] || { out=$1 && from_caller out && set -- "$out"; }
cd "$(dirname "$0")/.."
# shellcheck source=mpi.sh
. scripts/mpi.sh
usage() { echo "build_trace.sh: $1; usage: scripts/build_trace.sh [OUT] (the library's file, default bin/libcommcost-trace.so) or scripts/build_trace.sh --cc" >&2; exit 2; }
[ $# -le 1 ] || usage "one argument at most, got $#"
out=${1:-bin/libcommcost-trace.so}
case $out in
--cc) ;;
-*) usage "unknown option '$(printf '%s' "$out" | LC_ALL=C tr -c '[:print:]' '?')'" ;;
*) [ ! -d "$out" ] || usage "OUT '$(printf '%s' "$out" | LC_ALL=C tr -c '[:print:]' '?')' is a directory: name the library's file in it"
	# The library replaces OUT by a move: an existing OUT must be a
	# regular file, and none may be one of the kernel's (/dev/null).
	[ ! -e "$out" ] || [ -f "$out" ] || usage "OUT '$(printf '%s' "$out" | LC_ALL=C tr -c '[:print:]' '?')' is not a regular file (a device, FIFO or socket): name a library file"
	! kernel_place "$out" || usage "OUT '$(printf '%s' "$out" | LC_ALL=C tr -c '[:print:]' '?')' is under /proc, /sys or /dev, the kernel's files: want a file in a directory of yours"
	# OUT's directory is checked before compiling, so a bad one costs no
	# build and leaves no half-written library.
	d=$(dirname -- "$out")
	[ -d "$d" ] && [ -w "$d" ] || usage "OUT '$(printf '%s' "$out" | LC_ALL=C tr -c '[:print:]' '?')': its directory is missing, not a directory or not writable: want a file in a writable directory"
	;;
esac
impl=$(mpi_impl) || exit 2
mpicc=$(mpi_cc "$impl") || { echo "$0: no $(mpi_name "$impl") mpicc; run scripts/setup.sh" >&2; exit 1; }
if [ "$out" = --cc ]; then
	echo "$mpicc"
	exit 0
fi
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
"$mpicc" -O2 -Wall -Wextra -fPIC -shared -o "$tmp" trace/pmpi/cctrace.c
mv "$tmp" "$out"
