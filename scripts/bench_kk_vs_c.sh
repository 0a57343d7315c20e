#!/usr/bin/env bash
# bench_kk_vs_c.sh [ROUNDS]: commcost's k-k-access (r = 1, read, 2 ranks)
# against a C reference of the same protocol (scripts/ref/kk_ref.c)
# compiled with mpicc, run alternately so drift hits both alike. Cells:
# k = 1 and 8, l = 64 B and 16 KiB; 1000 timed repetitions each.
#
# Target: the median over rounds of commcost/C is at most 1.5 in every cell
# (the Go request path measured 5-10x; the C kernel should measure MPI).
# Prints per-round values and the median ratios, appends them to
# results/bench/bench_kk_vs_c.tsv, and exits 1 if the target is missed
# (set BENCH_NO_FAIL=1 to only report).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
mkdir -p bin results/bench
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
impl=$(mpi_impl) || exit 2
launcher=$(mpi_launcher "$impl") || { echo "$0: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
mpicc=$(mpi_cc "$impl") || { echo "$0: no $(mpi_name "$impl") mpicc; run scripts/setup.sh" >&2; exit 1; }
# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
[ -x bin/commcost ] || go build ${TAGS:-} -o bin/commcost ./cmd/commcost
"$mpicc" -O2 -o bin/kk_ref scripts/ref/kk_ref.c

run2() { "$launcher" -np 2 "$@"; }
go_median() { grep -o '"median":[-0-9.e+]*' | head -n1 | cut -d: -f2; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }

cells=("1 64" "8 64" "1 16384" "8 16384")
declare -A ratios
printf '%-5s %3s %6s %10s %10s %7s\n' round k l "C us" "cc us" ratio
for r in $(seq 1 "$rounds"); do
	for cell in "${cells[@]}"; do
		read -r k l <<<"$cell"
		c_us=$(run2 bin/kk_ref "$k" "$l" 1000 | awk '!/^#/ {print $3; exit}')
		g_s=$(run2 bin/commcost kkaccess --k "$k" --l "$l" --r 1 --min-reps 1000 --max-reps 1000 --max-time 60 --format jsonl | go_median)
		read -r g_us ratio < <(awk -v g="$g_s" -v c="$c_us" 'BEGIN{printf "%.4f %.4f\n", g*1e6, g*1e6/c}')
		ratios[$cell]+="$ratio "
		printf '%-5s %3s %6s %10s %10s %7s\n' "$r" "$k" "$l" "$c_us" "$g_us" "$ratio"
	done
done
worst=0
line="$(date -u +%FT%TZ)	$(git describe --always --dirty 2>/dev/null || echo unknown)	$(mpi_version "$impl" "$launcher")"
for cell in "${cells[@]}"; do
	# shellcheck disable=SC2086
	m=$(median ${ratios[$cell]})
	echo "median ratio commcost/C at k l = $cell: $m (target <= 1.5)"
	line+="	k,l=${cell/ /,}:$m"
	worst=$(awk -v a="$worst" -v b="$m" 'BEGIN{print (b>a)?b:a}')
done
printf '%s\n' "$line" >> results/bench/bench_kk_vs_c.tsv
if awk -v w="$worst" 'BEGIN{exit !(w > 1.5)}' && [ -z "${BENCH_NO_FAIL:-}" ]; then
	echo "bench_kk_vs_c: target missed" >&2
	exit 1
fi
