#!/usr/bin/env bash
# bench_dsm_vs_c.sh [ROUNDS]: divalib's own cost against C (issue 15, "a
# store as fast as C"), run alternately in one session so drift hits both
# alike:
#   - an uncached remote read of l bytes through the fixed home against the
#     k-k-access C reference (scripts/ref/access_ref.c) at k = 1, r = 1 and the
#     same l (8 B, 4 KiB, 64 KiB), 2 ranks: the same protocol (one request,
#     one answer of l bytes, every rank reading and serving at once) and the
#     same methodology (a barrier before every repetition, max over ranks;
#     the store's dissemination barrier, which leaves the ranks as evenly as
#     MPI_Barrier does, where the tree releases its root first). The
#     same working set too: an uncached read must be of a variable this
#     rank has no copy of, so the store reads 100 different variables
#     (divalib.RemoteReadConfig's batch) into 100 buffers before the homes
#     invalidate them, and the C reference rotates over as many (--nbuf
#     100); reading one buffer again and again, as the plain reference
#     does, keeps 64 KiB in the caches and halves its time;
#   - the store barrier (--barrier tree, the paper's, and dissemination)
#     against MPI_Barrier, both timed by `commcost dsm overhead` on idle
#     ranks, at 2, 4 and 16 ranks (more than 2 oversubscribed with
#     --mca mpi_yield_when_idle 1).
# Targets: remote read within 1.5x of C; store barrier within 2x of
# MPI_Barrier. Prints per-round values and median ratios, appends them to
# results/bench/bench_dsm_vs_c.tsv, and exits 1 if a target is missed
# (BENCH_NO_FAIL=1 only reports). Needs mpicc and mpirun; as root, export
# OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 first.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/.."
if [ $# -gt 1 ]; then
	echo "bench_dsm_vs_c: one argument at most (ROUNDS), got $#; usage: scripts/bench_dsm_vs_c.sh [ROUNDS]" >&2
	exit 2
fi
rounds=${1-5} # an empty argument is refused below, not taken for the default
reads=${READS:-2000}
# Arguments are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
[[ $rounds =~ ^[1-9][0-9]{0,4}$ ]] || { echo "bench_dsm_vs_c: ROUNDS '$(printable "$rounds")': want an integer from 1 to 99999; usage: scripts/bench_dsm_vs_c.sh [ROUNDS]" >&2; exit 2; }
[[ $reads =~ ^[1-9][0-9]{0,7}$ ]] || { echo "bench_dsm_vs_c: READS='$(printable "$reads")': want an integer from 1 to 99999999 (timed remote reads per size)" >&2; exit 2; }
for c in mpicc mpirun; do
	command -v "$c" >/dev/null || { echo "bench_dsm_vs_c: no $c on PATH (scripts/setup.sh installs Open MPI)" >&2; exit 1; }
done
mkdir -p bin results/bench
[ -x bin/commcost ] || go build -o bin/commcost ./cmd/commcost
mpicc -O2 -o bin/access_ref scripts/ref/access_ref.c

mpi() {
	local np=$1
	shift
	if [ "$np" -gt 2 ]; then
		mpirun -np "$np" --oversubscribe --mca mpi_yield_when_idle 1 "$@"
	else
		mpirun -np "$np" "$@"
	fi
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
# op_median OP [BYTES]: the median (seconds) of dsm overhead's record for op.
op_median() {
	python3 -c '
import json, sys
op, size = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    r = json.loads(line)
    p = r["params"]
    if p["op"] == op and (size == "" or str(p.get("bytes")) == size):
        print(r["median"]); break
' "$1" "${2:-}"
}

sizes=(8 4096 65536)
barrier_np=(2 4 16)
declare -A ratio
printf '%-5s %-22s %10s %10s %7s\n' round case "C us" "divalib us" ratio
for r in $(seq 1 "$rounds"); do
	out=$(mpi 2 bin/commcost dsm overhead --strategies fixed-home --barrier dissemination --iters 10 --batches 1 \
		--sizes 8,4K,64K --reads "$reads" --format jsonl)
	for l in "${sizes[@]}"; do
		c_us=$(mpi 2 bin/access_ref --k 1 --l "$l" --a 1 --reps "$reads" --nbuf 100 | awk '!/^#/ {printf "%.4f", $1 * 1e6; exit}')
		g_s=$(op_median remote-read "$l" <<<"$out")
		read -r g_us q < <(awk -v g="$g_s" -v c="$c_us" 'BEGIN{printf "%.4f %.4f\n", g*1e6, g*1e6/c}')
		ratio["read l=$l"]+="$q "
		printf '%-5s %-22s %10s %10s %7s\n' "$r" "read l=$l" "$c_us" "$g_us" "$q"
	done
	for np in "${barrier_np[@]}"; do
		for kind in tree dissemination; do
			out=$(mpi "$np" bin/commcost dsm overhead --strategies fixed-home --iters 10 --batches 7 \
				--sizes "" --barrier "$kind" --format jsonl)
			m_s=$(op_median mpi-barrier <<<"$out")
			s_s=$(op_median "barrier-$kind" <<<"$out")
			read -r m_us s_us q < <(awk -v s="$s_s" -v m="$m_s" 'BEGIN{printf "%.4f %.4f %.4f\n", m*1e6, s*1e6, s/m}')
			ratio["barrier $kind np=$np"]+="$q "
			printf '%-5s %-22s %10s %10s %7s\n' "$r" "barrier $kind np=$np" "$m_us" "$s_us" "$q"
		done
	done
done

fail=0
line="$(date -u +%FT%TZ)	$(git describe --always --dirty 2>/dev/null || echo unknown)	$(mpirun --version | head -n1)"
for key in "read l=8" "read l=4096" "read l=65536" \
	"barrier tree np=2" "barrier dissemination np=2" "barrier tree np=4" "barrier dissemination np=4" \
	"barrier tree np=16" "barrier dissemination np=16"; do
	# shellcheck disable=SC2086
	m=$(median ${ratio[$key]})
	target=2
	[[ $key == read* ]] && target=1.5
	verdict=ok
	if awk -v m="$m" -v t="$target" 'BEGIN{exit !(m > t)}'; then
		verdict=MISSED
		fail=1
	fi
	echo "median ratio $key: $m (target <= $target) $verdict"
	line+="	${key// /_}:$m"
done
printf '%s\n' "$line" >> results/bench/bench_dsm_vs_c.tsv
if [ "$fail" = 1 ] && [ -z "${BENCH_NO_FAIL:-}" ]; then
	echo "bench_dsm_vs_c: target missed" >&2
	exit 1
fi
