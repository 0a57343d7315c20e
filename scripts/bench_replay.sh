#!/usr/bin/env bash
# bench_replay.sh: the replay's speed on one core (GOMAXPROCS=1), lowering
# included, on a synthetic ring program of 10^5, 10^6 and 10^7 events
# (replay.BenchmarkReplay). Targets: at least 5 million events per second
# of CPU at every size, and linear in events (the CPU time per event of
# 10^7 events within 1.5 x that of 10^5). The wall-clock rate is printed
# too; on a machine shared with other jobs it is the lower one.
# BENCH_NO_FAIL=1 only reports.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 0 ] || { echo "bench_replay: takes no arguments (got '$(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?')'): set BENCHTIME or BENCH_NO_FAIL in the environment" >&2; exit 2; }
cd "$(dirname "$0")/.."
# BENCHTIME is go test's -benchtime: Nx (N runs of each size, 1 to 1000)
# or a duration of one unit from 1ms to 10m (1.5s, 500ms); checked before
# anything is built.
benchtime=${BENCHTIME:-3x}
duration_ok() { # a number and one unit, 1 ms to 10 minutes
	[[ $1 =~ ^([0-9]+(\.[0-9]+)?)(ns|us|ms|s|m)$ ]] || return 1
	awk -v v="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" 'BEGIN {
		s = v * (u == "ns" ? 1e-9 : u == "us" ? 1e-6 : u == "ms" ? 1e-3 : u == "m" ? 60 : 1)
		exit !(s >= 1e-3 && s <= 600) }'
}
if ! [[ $benchtime =~ ^[1-9][0-9]{0,3}x$ && ${benchtime%x} -le 1000 ]] && ! duration_ok "$benchtime"; then
	echo "bench_replay: BENCHTIME='$(printf '%s' "$benchtime" | LC_ALL=C tr -c '[:print:]' '?')': want Nx (N runs of each size, 1 to 1000) or a duration of one unit from 1ms to 10m, such as 1.5s or 500ms" >&2
	exit 2
fi
if ! out=$(GOMAXPROCS=1 go test -run '^$' -bench 'BenchmarkReplay' -benchtime "$benchtime" ./replay/); then
	echo "$out"
	echo "bench_replay: go test of replay.BenchmarkReplay failed (its output above)" >&2
	exit 1
fi
echo "$out" | grep -E '^Benchmark|^cpu'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$out" | awk -v nofail="${BENCH_NO_FAIL:-}" '
/^BenchmarkReplay/ {
	for (i = 1; i <= NF; i++) if ($(i+1) == "events/cpu-s") rate[++n] = $i
}
END {
	fail = 0
	if (n == 0) {
		print "FAIL replay speed: the benchmark printed no events/cpu-s figure (go test output above)"
		fail = 1
	}
	for (i = 1; i <= n; i++) {
		ok = rate[i] >= 5e6
		printf "%s replay speed, size %d: %.2f M events per CPU second (target >= 5)\n", ok ? "PASS" : "FAIL", i, rate[i] / 1e6
		if (!ok) fail = 1
	}
	if (n == 3) {
		ratio = rate[1] / rate[3]
		ok = ratio <= 1.5
		printf "%s replay linearity: CPU time per event at 10^7 is %.2f x that at 10^5 (target <= 1.5)\n", ok ? "PASS" : "FAIL", ratio
		if (!ok) fail = 1
	}
	exit (fail && nofail == "") ? 1 : 0
}'
