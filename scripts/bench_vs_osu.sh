#!/usr/bin/env bash
# bench_vs_osu.sh [--launches N] [--max-time S] [--tsv FILE] [--skip-missing]
#
# commcost's ping-pong and bandwidth next to OSU's osu_latency and osu_bw
# (issue 19), the tool their users know, on 2 ranks in one session.
#
# OSU: the binaries in $OSU_DIR (an installed OSU: osu_latency and osu_bw
# found in OSU_DIR, OSU_DIR/mpi/pt2pt or
# OSU_DIR/libexec/osu-micro-benchmarks/mpi/pt2pt), else built with mpicc
# into bin/osu from the OSU 5.3 sources in $OSU_SRC (default: the peer copy
# in ../shared/peers/osu-5.3 or /work/shared/peers/osu-5.3; they are test
# data, not part of commcost).
#
# Every launch (default 7) runs, alternately: osu_latency, commcost
# pingpong, commcost pingpong --osu, osu_bw, commcost bandwidth, commcost
# bandwidth --osu, each one mpirun over the sizes 1 B .. 4 MiB. A single
# launch is one sample (small-message bandwidth changes up to 3x between
# two launches of the same binary), so the script prints per size the
# median over launches of each column, the ratio of medians commcost/OSU
# (latency: time ratio; bandwidth: bandwidth ratio) and the between-launch
# spread of each column, (max - min) / median over the launches. Target:
# 0.95-1.05 at every size. commcost's default figure is the median of its
# repetitions (--max-time S per size, default 1 s); the --osu column runs
# OSU's own loop once and reports its mean, the figure to put next to
# OSU's; the difference between the two is the methodology.
#
# One row per size and benchmark is appended to
# results/bench/pt2pt_vs_osu.tsv (or --tsv FILE) with the date, commit,
# MPI library and load average. --skip-missing exits 0 with a message when
# no OSU is found (make bench); otherwise that is an error (status 2).
set -euo pipefail
cd "$(dirname "$0")/.."
launches=7 maxtime=1 tsv=results/bench/pt2pt_vs_osu.tsv skip_missing=
usage() { echo "usage: scripts/bench_vs_osu.sh [--launches N (>= 1)] [--max-time SECONDS (> 0)] [--tsv FILE] [--skip-missing]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--launches) launches=${2:-}; shift 2 || usage ;;
	--max-time) maxtime=${2:-}; shift 2 || usage ;;
	--tsv) tsv=${2:-}; shift 2 || usage ;;
	--skip-missing) skip_missing=1; shift ;;
	-h | --help) sed -n '2,31p' "$0"; exit 0 ;;
	*) usage ;;
	esac
done
[[ "$launches" =~ ^[1-9][0-9]*$ ]] || { echo "bench_vs_osu: --launches $launches: want an integer >= 1" >&2; exit 2; }
awk -v t="$maxtime" 'BEGIN{exit !(t + 0 > 0 && t ~ /^[0-9.]+$/)}' || { echo "bench_vs_osu: --max-time $maxtime: want a number of seconds > 0" >&2; exit 2; }
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
impl=$(mpi_impl) || exit 2
launcher=$(mpi_launcher "$impl") || { echo "$0: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
mpicc=$(mpi_cc "$impl") || { echo "$0: no $(mpi_name "$impl") mpicc; run scripts/setup.sh" >&2; exit 1; }

missing() {
	if [ -n "$skip_missing" ]; then
		echo "bench_vs_osu: SKIP: $1" >&2
		exit 0
	fi
	echo "bench_vs_osu: $1" >&2
	exit 2
}
lat= bw=
if [ -n "${OSU_DIR:-}" ]; then
	for d in "$OSU_DIR" "$OSU_DIR/mpi/pt2pt" "$OSU_DIR/libexec/osu-micro-benchmarks/mpi/pt2pt"; do
		if [ -x "$d/osu_latency" ] && [ -x "$d/osu_bw" ]; then
			lat=$d/osu_latency bw=$d/osu_bw
			break
		fi
	done
	[ -n "$lat" ] || missing "OSU_DIR=$OSU_DIR holds no osu_latency and osu_bw (looked in it, mpi/pt2pt and libexec/osu-micro-benchmarks/mpi/pt2pt)"
else
	src=${OSU_SRC:-}
	if [ -z "$src" ]; then
		for d in ../shared/peers/osu-5.3 /work/shared/peers/osu-5.3; do
			[ -f "$d/osu_latency.c" ] && src=$d && break
		done
	fi
	[ -n "$src" ] && [ -f "$src/osu_latency.c" ] && [ -f "$src/osu_bw.c" ] && [ -f "$src/osu_pt2pt.c" ] ||
		missing "no OSU found: set OSU_DIR to an installed OSU (module load osu-micro-benchmarks) or OSU_SRC to the sources of osu_latency.c, osu_bw.c and osu_pt2pt.c (OSU 5.x mpi/pt2pt)"
	mkdir -p bin/osu
	for b in osu_latency osu_bw; do
		"$mpicc" -O2 -I"$src" -o "bin/osu/$b" "$src/$b.c" "$src/osu_pt2pt.c" -lm
	done
	lat=bin/osu/osu_latency bw=bin/osu/osu_bw
fi
mkdir -p bin "$(dirname "$tsv")"
# Always (re)build: go build is incremental, and a binary left from another
# commit would be recorded under this one.
# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
go build ${TAGS:-} -ldflags "-X github.com/commcost/commcost/results.buildCommit=$(git describe --always --dirty 2>/dev/null || echo unknown)" -o bin/commcost ./cmd/commcost

# Each column's output is "size value" lines: OSU prints them, commcost's
# JSON Lines are reduced to them (latency in us, bandwidth in MB/s, MB =
# 10^6 bytes, as OSU prints).
osu_rows() { "$launcher" -np 2 "$@" | awk '!/^#/ && NF == 2 && $1 >= 1 {print $1, $2}'; }
cc_rows() {
	local scale=$1
	shift
	"$launcher" -np 2 bin/commcost "$@" --sizes 1:4M --format jsonl | awk -v s="$scale" '
		match($0, /"bytes":[0-9]+/) { b = substr($0, RSTART + 8, RLENGTH - 8)
			if (match($0, /"median":[-0-9.eE+]+/)) print b, substr($0, RSTART + 9, RLENGTH - 9) * s }'
}
cols=(osu_latency cc_pingpong cc_pingpong_osu osu_bw cc_bandwidth cc_bandwidth_osu)
run_col() {
	case "$1" in
	osu_latency) osu_rows "$lat" ;;
	cc_pingpong) cc_rows 1e6 pingpong --max-time "$maxtime" ;;
	cc_pingpong_osu) cc_rows 1e6 pingpong --osu ;;
	osu_bw) osu_rows "$bw" ;;
	cc_bandwidth) cc_rows 1e-6 bandwidth --max-time "$maxtime" ;;
	cc_bandwidth_osu) cc_rows 1e-6 bandwidth --osu ;;
	esac
}

# The commit the launches measure, taken before they run (the tree may
# change while they do).
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
declare -A vals
for l in $(seq 1 "$launches"); do
	echo "launch $l of $launches" >&2
	for col in "${cols[@]}"; do
		n=0
		while read -r size v; do
			vals[$col,$size]+="$v "
			n=$((n + 1))
		done < <(run_col "$col")
		[ "$n" -gt 0 ] || { echo "bench_vs_osu: $col printed no sizes" >&2; exit 1; }
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{if (NR) print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
# spread: (max - min) / median over the launches.
spread() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m ? (a[NR]-a[1])/m : 0}'; }
library=$(mpi_version "$impl" "$launcher")
date=$(date -u +%FT%TZ)
[ -s "$tsv" ] || printf 'date\tcommit\tmpi\tload_start\tload_end\tlaunches\tbench\tbytes\tosu\tcommcost\tratio\tcommcost_osu\tratio_osu\tspread_osu\tspread_commcost\tspread_commcost_osu\n' >"$tsv"
echo "medians over $launches launches on 2 ranks (load average $load_start at the start, $load_end at the end); spread = (max - min) / median"
missed=()
for bench in latency bandwidth; do
	if [ $bench = latency ]; then
		o=osu_latency c=cc_pingpong co=cc_pingpong_osu unit=us
	else
		o=osu_bw c=cc_bandwidth co=cc_bandwidth_osu unit=MB/s
	fi
	echo
	printf '| %-9s | %9s | %12s | %12s | %6s | %12s | %6s | %16s |\n' "$bench" bytes "OSU $unit" "commcost" ratio "--osu" ratio "spread O/c/--osu"
	printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' -----------  ----------- -------------- -------------- -------- -------------- -------- ------------------
	for size in $(printf '%s\n' "${!vals[@]}" | awk -F, -v o="$o" '$1 == o {print $2}' | sort -n); do
		# shellcheck disable=SC2086
		{
			om=$(median ${vals[$o,$size]})
			cm=$(median ${vals[$c,$size]:-})
			cm2=$(median ${vals[$co,$size]:-})
			so=$(spread ${vals[$o,$size]})
			sc=$(spread ${vals[$c,$size]:-})
			sc2=$(spread ${vals[$co,$size]:-})
		}
		[ -n "$cm" ] && [ -n "$cm2" ] || { echo "bench_vs_osu: commcost has no $size-byte $bench" >&2; exit 1; }
		r=$(awk -v a="$cm" -v b="$om" 'BEGIN{printf "%.3f", a/b}')
		r2=$(awk -v a="$cm2" -v b="$om" 'BEGIN{printf "%.3f", a/b}')
		printf '| %-9s | %9s | %12.3f | %12.3f | %6s | %12.3f | %6s | %16s |\n' "$bench" "$size" "$om" "$cm" "$r" "$cm2" "$r2" "$so/$sc/$sc2"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$date" "$commit" "$library" "$load_start" "$load_end" \
			"$launches" "$bench" "$size" "$om" "$cm" "$r" "$cm2" "$r2" "$so" "$sc" "$sc2" >>"$tsv"
		if awk -v r="$r2" 'BEGIN{exit !(r < 0.95 || r > 1.05)}'; then
			missed+=("$bench $size B: --osu $r2")
		fi
	done
done
echo "rows appended to $tsv"
if [ ${#missed[@]} -gt 0 ]; then
	echo "bench_vs_osu: outside 0.95-1.05: ${missed[*]}" >&2
	[ -n "${BENCH_NO_FAIL:-}" ] || exit 1
fi
