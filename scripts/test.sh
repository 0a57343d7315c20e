#!/usr/bin/env bash
# test.sh: the whole test suite (what `make test` and CI run), for the MPI
# that $TAGS / $MPI select (scripts/mpi.sh; Open MPI by default, MPICH with
# TAGS="-tags mpich"):
#
#   1. lint: gofmt, go vet, go.mod tidy (scripts/lint.sh);
#   2. unit tests, the conformance suite on both backends, CLI golden and
#      bad-input tests, integration tests under the MPI's own launcher, all
#      built with $TAGS; -race again on the packages that run goroutine ranks;
#   3. benchstat reads what we write in Go benchmark format: a real
#      pingpong measurement and mpi/native's kernel benchmarks;
#   4. the other MPI's conformance suite: mpi/native (and mpi/mpirun) built
#      against it and run under its own launcher, so an Open MPI run also
#      proves the MPICH build and the reverse. As root with apt-get the other
#      MPI is installed (scripts/setup.sh; the two live side by side);
#      elsewhere, if it is missing, a SKIP line says so. OTHER_MPI=none skips
#      this step on purpose.
#
# Every launcher is named explicitly (mpirun.openmpi, mpiexec.mpich): plain
# mpirun is whatever update-alternatives chose.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 0 ] || { echo "test.sh: takes no arguments (got '$(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?')'): set TAGS, MPI or OTHER_MPI in the environment" >&2; exit 2; }
cd "$(dirname "$0")/.."
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Open MPI refuses to run as root unless told; CI runs as root (the
# Makefile exports these too; this covers running the script directly).
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
step() { printf '== test.sh [%4d s] %s\n' "$(($(date +%s) - start))" "$*"; }

impl=$(mpi_impl) || exit 2

# The other MPI first, so that everything below runs on a machine with both
# installed: that is where plain mpirun may belong to the wrong one.
other=mpich
[ "$impl" = mpich ] && other=openmpi
oname=$(mpi_name "$other")
if [ "${OTHER_MPI:-}" = none ]; then
	have_other="OTHER_MPI=none"
elif TAGS="$(mpi_tags "$other")" MPI="$other" scripts/setup.sh; then
	have_other=yes
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "test.sh: could not install $oname (above); set OTHER_MPI=none to skip its conformance suite" >&2
	exit 1
else
	have_other="$oname is not installed and this is not root with apt-get (see setup's message above)"
fi

launcher=$(mpi_launcher "$impl") || {
	echo "test.sh: no $(mpi_name "$impl") launcher (run scripts/setup.sh)" >&2
	exit 1
}
# The Go tests find the same launcher (mpi/mpirun); pinning it here makes
# sure they do.
export COMMCOST_MPIRUN="$launcher"
tags=${TAGS:-}
step "testing the $(mpi_version "$impl" "$launcher") build (launcher $launcher${tags:+, $tags}); plain mpirun: $(command -v mpirun >/dev/null && mpirun --version 2>&1 | head -n1 || echo none)"

step "lint: gofmt, go vet, go mod tidy"
scripts/lint.sh

# Oversubscribed MPICH is several times slower on the polling tests (mpi/mpirun's
# HangLimit gives them 4 times longer), so its package limit is longer too.
timeout=12m
[ "$impl" = mpich ] && timeout=30m
step "go test ./... (-timeout $timeout per package; the test cluster next, alone)"
# shellcheck disable=SC2086 # $tags is "-tags mpich": two words
go test $tags -count=1 -timeout $timeout -skip '^TestTestCluster$' ./...
# The ground-truth checks on the shaped cluster assert prediction errors,
# which load from other test packages running beside them would inflate:
# they get the machine to themselves (only the emulated hosts' own load).
step "go test -run TestTestCluster ./cmd/commcost (shaped multi-host ground truth)"
tclog="$tmp/testcluster.log"
# shellcheck disable=SC2086
if ! go test $tags -count=1 -timeout $timeout -run '^TestTestCluster$' -v ./cmd/commcost >"$tclog" 2>&1; then
	cat "$tclog"
	exit 1
fi
# The figures (every asserted error and its bound), not the tables.
grep -E -- '--- (PASS|FAIL|SKIP)|^ok|median \|error\||bound [0-9]' "$tclog" || true
step "go test -race (goroutine-rank packages)"
# shellcheck disable=SC2086
go test $tags -count=1 -timeout 5m -race ./mpi/local/... ./patterns/... ./emulate/...

step "benchstat reads our Go benchmark output"
# shellcheck disable=SC2086
go build $tags -o "$tmp/commcost" ./cmd/commcost
# shellcheck disable=SC2046
"$launcher" -np 2 $(mpi_flags "$impl" 2) "$tmp/commcost" pingpong --sizes 8,1K --max-time 1 --format gobench >"$tmp/pingpong.txt"
scripts/check_benchstat.sh "$tmp/pingpong.txt" >/dev/null
echo "benchstat read $(grep -c '^Benchmark' "$tmp/pingpong.txt") pingpong benchmark lines"
# mpi/native's kernel benchmarks (2 ranks, a few operations: this checks
# that they run and report, not the figures).
# shellcheck disable=SC2086
COMMCOST_MPI_NP=2 go test $tags -count=1 -run '^$' -bench '^BenchmarkKernels$' -benchtime 20x ./mpi/native >"$tmp/kernels.txt" ||
	{ cat "$tmp/kernels.txt"; exit 1; }
scripts/check_benchstat.sh "$tmp/kernels.txt" >/dev/null
n=$(grep -c '^BenchmarkKernels/.* ns/op' "$tmp/kernels.txt" || true)
if [ "$n" -ne 4 ]; then
	cat "$tmp/kernels.txt"
	echo "test.sh: BenchmarkKernels reported $n figures, want 4" >&2
	exit 1
fi
echo "benchstat read $n kernel benchmark lines"

otags=$(mpi_tags "$other")
if [ "$have_other" = yes ]; then
	step "the $oname conformance suite (mpi/native, mpi/mpirun built with ${otags:-no tags})"
	olauncher=$(COMMCOST_MPIRUN= mpi_launcher "$other")
	# shellcheck disable=SC2086
	COMMCOST_MPIRUN="$olauncher" go test $otags -count=1 -timeout 8m ./mpi/native ./mpi/mpirun
else
	step "SKIP the $oname conformance suite: $have_other"
fi

step "batch jobs on a private one-node Slurm (scripts/test_batch.sh)"
# Root only (slurmd and munged); anywhere else it says SKIP and why. The
# jobs launch an Open MPI build (srun --mpi=pmix and the mpirun fallback);
# test_batch.sh builds and launches the MPICH one itself (srun --mpi=pmi2).
batchbin=$tmp/commcost
if [ "$impl" = mpich ]; then
	batchbin=$tmp/commcost-openmpi
	go build -o "$batchbin" ./cmd/commcost
fi
scripts/test_batch.sh "$batchbin"

step "the Spack recipe (scripts/test_spack.py)"
python3 scripts/test_spack.py

step "all tests passed"
echo "test.sh: all tests passed in $(($(date +%s) - start)) s"
