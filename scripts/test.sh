#!/usr/bin/env bash
# test.sh: the whole test suite (what `make test` and CI run): unit tests,
# the conformance suite on both backends, CLI golden and bad-input tests,
# integration tests under real mpirun, and benchstat reading our output.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go vet ./...
# Everything once; -race again on the packages that run goroutine ranks.
go test -count=1 -timeout 12m ./...
go test -count=1 -timeout 5m -race ./mpi/local/... ./patterns/... ./emulate/...

# benchstat must read the Go benchmark format of a real measurement.
go build -o "$tmp/commcost" ./cmd/commcost
mpirun -np 2 "$tmp/commcost" pingpong --sizes 8,1K --max-time 1 --format gobench >"$tmp/pingpong.txt"
scripts/check_benchstat.sh "$tmp/pingpong.txt" >/dev/null
echo "benchstat read $(grep -c '^Benchmark' "$tmp/pingpong.txt") benchmark lines"

echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
