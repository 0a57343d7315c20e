#!/usr/bin/env bash
# lint.sh: the static checks of `make test` (and `make lint`): gofmt, go vet
# with the build's $TAGS, go.mod/go.sum tidy, and the comment lint
# (internal/commentlint: no dates, run counts, issue numbers or paths
# outside the repository in code comments; its pending list names the files
# not yet cleaned). Each failure lists what to fix.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 0 ] || { echo "lint.sh: takes no arguments (got '$(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?')'): it checks the whole tree" >&2; exit 2; }
cd "$(dirname "$0")/.."
status=0

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "lint: not gofmt-formatted (run gofmt -w on them):" >&2
	printf '  %s\n' $unformatted >&2
	status=1
fi

# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
go vet ${TAGS:-} ./... || status=1

# go mod tidy -diff changes nothing and prints the diff it would make.
if ! tidy=$(go mod tidy -diff 2>&1); then
	echo "lint: go.mod/go.sum are not tidy (run go mod tidy):" >&2
	echo "$tidy" >&2
	status=1
fi
# The comment lint is a Go test; go test ./... runs it again, in a second.
go test -count=1 ./internal/commentlint || status=1
exit $status
