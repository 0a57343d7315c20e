#!/usr/bin/env bash
# bench_vs_c.sh [ROUNDS]: commcost's ping-pong and bandwidth against a C
# reference (scripts/ref/osu_ref.c, OSU methodology) compiled with mpicc,
# run alternately in one session on 2 ranks so drift hits both alike.
#
# Targets (issue 2): latency at 8 B within 1.05x of C; bandwidth at 1 MiB at
# least 0.97x of C. Prints per-round values and the median ratios, appends
# them to results/bench/bench_vs_c.tsv, and exits 1 if a target is missed
# (set BENCH_NO_FAIL=1 to only report).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
lat_size=8
bw_size=1048576
mkdir -p bin results/bench
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
impl=$(mpi_impl) || exit 2
launcher=$(mpi_launcher "$impl") || { echo "$0: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
mpicc=$(mpi_cc "$impl") || { echo "$0: no $(mpi_name "$impl") mpicc; run scripts/setup.sh" >&2; exit 1; }
# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
[ -x bin/commcost ] || go build ${TAGS:-} -o bin/commcost ./cmd/commcost
"$mpicc" -O2 -o bin/osu_ref scripts/ref/osu_ref.c

run2() { "$launcher" -np 2 "$@"; }
c_value() { awk '!/^#/ && NF==2 {print $2; exit}'; }
go_median() { grep -o '"median":[-0-9.e+]*' | head -n1 | cut -d: -f2; }

lat_ratios=() bw_ratios=()
printf '%-5s %12s %12s %8s %12s %12s %8s\n' round "C lat us" "cc lat us" ratio "C MB/s" "cc MB/s" ratio
for r in $(seq 1 "$rounds"); do
	c_lat=$(run2 bin/osu_ref --mode lat --sizes $lat_size | c_value)
	g_lat=$(run2 bin/commcost pingpong --sizes $lat_size --format jsonl | go_median)
	c_bw=$(run2 bin/osu_ref --mode bw --sizes $bw_size | c_value)
	g_bw=$(run2 bin/commcost bandwidth --sizes $bw_size --format jsonl | go_median)
	read -r g_lat_us g_bw_mb lr br < <(awk -v gl="$g_lat" -v cl="$c_lat" -v gb="$g_bw" -v cb="$c_bw" \
		'BEGIN{printf "%.4f %.1f %.4f %.4f\n", gl*1e6, gb/1e6, gl*1e6/cl, (gb/1e6)/cb}')
	lat_ratios+=("$lr") bw_ratios+=("$br")
	printf '%-5s %12s %12s %8s %12s %12s %8s\n' "$r" "$c_lat" "$g_lat_us" "$lr" "$c_bw" "$g_bw_mb" "$br"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
lat_med=$(median "${lat_ratios[@]}")
bw_med=$(median "${bw_ratios[@]}")
echo "median latency ratio commcost/C at ${lat_size} B: ${lat_med} (target <= 1.05)"
echo "median bandwidth ratio commcost/C at 1 MiB:   ${bw_med} (target >= 0.97)"
printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$(git describe --always --dirty 2>/dev/null || echo unknown)" \
	"$(mpi_version "$impl" "$launcher")" "$lat_med" "$bw_med" >> results/bench/bench_vs_c.tsv
ok=$(awk -v l="$lat_med" -v b="$bw_med" 'BEGIN{print (l<=1.05 && b>=0.97) ? 1 : 0}')
if [ "$ok" != 1 ] && [ -z "${BENCH_NO_FAIL:-}" ]; then
	echo "bench_vs_c: target missed" >&2
	exit 1
fi
