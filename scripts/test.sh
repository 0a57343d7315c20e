#!/usr/bin/env bash
# test.sh: the whole test suite (what `make test` and CI run).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
go vet ./...
# -race on the packages that run goroutine ranks; everything once without.
go test -count=1 ./...
go test -count=1 -race ./mpi/local/... ./patterns/...
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
