#!/usr/bin/env bash
# check_benchstat.sh: check that commcost's Go benchmark output (results
# package, GoBenchWriter) is read by benchstat.
#
#   scripts/check_benchstat.sh [FILE...]
#
# With no FILE it generates one from the results package's tests
# (TestGoBenchBenchstat with COMMCOST_GOBENCH_OUT). It fails if benchstat
# exits non-zero, prints anything on stderr (benchstat reports lines it
# cannot parse there), or prints no result rows.
#
# benchstat is installed from the Go module proxy into a temporary GOBIN
# (golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION) rather than run with
# "go run": that keeps go's own download messages out of the stderr we
# check. The version is pinned below, so CI reads our output with the
# benchstat it was checked against, not whatever is latest that day; go
# install verifies the module against the checksum database. The pin lives
# here rather than in a go.mod "tool" directive because that would merge
# x/perf's requirements into commcost's own module graph: it raised
# golang.org/x/image, x/sys and x/text, which plot and the terminal code
# link into commcost. BENCHSTAT_VERSION=latest tries the newest one.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# golang.org/x/perf at 2026-09-08 (x/perf has no tagged releases).
version=${BENCHSTAT_VERSION:-v0.0.0-20260908200009-22c9c6c9d4da}
# The inputs are checked before anything is generated or installed (bad
# input: status 2); they are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
[[ $version =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]] ||
	{ echo "check_benchstat: BENCHSTAT_VERSION='$(printable "$version")': want a module version of golang.org/x/perf (v0.0.0-DATE-COMMIT, a commit or latest)" >&2; exit 2; }
for f in "$@"; do
	[ -f "$f" ] && [ -s "$f" ] || { echo "check_benchstat: '$(printable "$f")' is missing, empty or not a file: want files of Go benchmark output" >&2; exit 2; }
	# A file with no benchmark line gives benchstat nothing to compare:
	# refused here, before benchstat is installed.
	grep -q '^Benchmark' "$f" || { echo "check_benchstat: '$(printable "$f")' holds no Benchmark line: want files of Go benchmark output (go test -bench)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
	files=("$tmp/bench.txt")
	(cd "$repo" && COMMCOST_GOBENCH_OUT="${files[0]}" go test -count=1 -run '^TestGoBenchBenchstat$' ./results/ >/dev/null)
	[ -s "${files[0]}" ] || { echo "check_benchstat: the results package's TestGoBenchBenchstat wrote no benchmark output" >&2; exit 1; }
fi

# Outside the module (cd $tmp) so that nothing touches go.mod or go.sum.
(cd "$tmp" && GOBIN="$tmp/bin" GOFLAGS= go install "golang.org/x/perf/cmd/benchstat@$version")

status=0
"$tmp/bin/benchstat" "${files[@]}" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/out"
if [ $status -ne 0 ]; then
	cat "$tmp/err" >&2
	echo "check_benchstat: benchstat exited with status $status" >&2
	exit 1
fi
if [ -s "$tmp/err" ]; then
	cat "$tmp/err" >&2
	echo "check_benchstat: benchstat reported problems (above)" >&2
	exit 1
fi
# Every result row carries a value and its CI ("1.520µ ± 5%", or "± ∞"
# when there are too few samples for one); no such row means benchstat
# parsed no results.
rows=$(grep -c '±' "$tmp/out" || true)
if [ "$rows" -eq 0 ]; then
	echo "check_benchstat: benchstat printed no results for ${files[*]}" >&2
	exit 1
fi
echo "check_benchstat: ok (${files[*]}: $rows result rows)"
