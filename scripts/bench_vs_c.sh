#!/usr/bin/env bash
# bench_vs_c.sh [--rounds N] [--np P] [--cells REGEX] [--tsv FILE]
#
# Every pattern's timed loop against a C program of the same protocol
# (issue 19): for each cell of a small grid per pattern (the smallest and a
# large message, the smallest and largest k or n), commcost and the C
# reference (scripts/ref/*.c, compiled here with mpicc, the repetition
# protocol of scripts/ref/ref.h) run alternately, one mpirun launch each,
# for N rounds (default 7), the order flipping every round so drift hits
# both alike. Both run the same iterations per repetition, the same
# warm-up and the same fixed number of repetitions, and report the median
# repetition (per operation); bandwidth compares the median repetition
# time.
#
# Prints every round, then per cell the median over rounds of each side,
# the median of the per-round ratios commcost/C and their range (the
# between-launch spread), and appends one row per cell to
# results/bench/patterns_vs_c.tsv (or --tsv FILE) with the date, commit,
# MPI library, ranks and load average. Target: every median ratio at most
# 1.05; the script exits 1 when a cell misses it (BENCH_NO_FAIL=1: report
# only). --cells selects cells by a regular expression on their names.
set -euo pipefail
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
cd "$(dirname "$0")/.."
rounds=7 np=2 filter=. tsv=results/bench/patterns_vs_c.tsv
# Settings are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
usage() { echo "bench_vs_c: $1; usage: scripts/bench_vs_c.sh [--rounds N (1 to 1000)] [--np P (2 to 16 per core)] [--cells REGEX] [--tsv FILE]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds | --np | --cells | --tsv) [ $# -ge 2 ] || usage "$1 needs a value" ;;
	esac
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--np) np=$2; shift 2 ;;
	--cells) filter=$2; shift 2 ;;
	--tsv) tsv=$2; from_caller tsv; shift 2 ;;
	-h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) usage "unknown option '$(printable "$1")'" ;;
	esac
done
# Every setting is checked before anything is built or launched.
[[ "$rounds" =~ ^[1-9][0-9]{0,3}$ && $rounds -le 1000 ]] || { echo "bench_vs_c: --rounds '$(printable "$rounds")': want an integer from 1 to 1000" >&2; exit 2; }
# 2 ranks at least (every cell measures between ranks), at most 16 per
# core (more only oversubscribe this machine).
max_np=$((16 * $(nproc)))
[[ "$np" =~ ^[1-9][0-9]{0,6}$ && $np -ge 2 && $np -le $max_np ]] || { echo "bench_vs_c: --np '$(printable "$np")': want an integer from 2 to $max_np (16 ranks per core of this machine's $(nproc))" >&2; exit 2; }
why=$(rows_file_problem "$tsv") || { echo "bench_vs_c: --tsv '$(printable "$tsv")': $(printable "$why")" >&2; exit 2; }
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
impl=$(mpi_impl) || exit 2
launcher=$(mpi_launcher "$impl") || { echo "$0: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
mpicc=$(mpi_cc "$impl") || { echo "$0: no $(mpi_name "$impl") mpicc; run scripts/setup.sh" >&2; exit 1; }
# Cells: name | commcost arguments | C reference and arguments | repetitions.
# The iterations and repetitions are chosen so that a cell takes well under
# a second on a quiet machine (a loaded one stretches 1 MiB messages 30x).
cells=(
	"pingpong 8B|pingpong --sizes 8 --iters 1000 --warmup 100|pt2pt_ref --mode pingpong --bytes 8 --iters 1000 --warmup 100|200"
	"pingpong 1MiB|pingpong --sizes 1M --iters 10 --warmup 10|pt2pt_ref --mode pingpong --bytes 1048576 --iters 10 --warmup 10|50"
	"bandwidth 8B|bandwidth --sizes 8 --iters 10 --warmup 10|pt2pt_ref --mode bandwidth --bytes 8 --iters 10 --warmup 10|300"
	"bandwidth 1MiB|bandwidth --sizes 1M --iters 2 --warmup 2|pt2pt_ref --mode bandwidth --bytes 1048576 --iters 2 --warmup 2|20"
	"roundtrip 8B|roundtrip --sizes 8 --iters 1000 --warmup 100|pt2pt_ref --mode roundtrip --bytes 8 --iters 1000 --warmup 100|200"
	"roundtrip 1MiB|roundtrip --sizes 1M --iters 10 --warmup 10|pt2pt_ref --mode roundtrip --bytes 1048576 --iters 10 --warmup 10|50"
	"pairwise 8B|pairwise --sizes 8 --iters 1000 --warmup 100|pt2pt_ref --mode pairwise --bytes 8 --iters 1000 --warmup 100|200"
	"pairwise 1MiB|pairwise --sizes 1M --iters 10 --warmup 10|pt2pt_ref --mode pairwise --bytes 1048576 --iters 10 --warmup 10|50"
	"rowcontention 8B|rowcontention --sizes 8 --iters 1000 --warmup 100|pt2pt_ref --mode rowcontention --bytes 8 --iters 1000 --warmup 100|200"
	"rowcontention 1MiB|rowcontention --sizes 1M --iters 10 --warmup 10|pt2pt_ref --mode rowcontention --bytes 1048576 --iters 10 --warmup 10|50"
	"prtt 8B n=1|prtt --sizes 8 --n 1 --delay 0 --iters 1000 --warmup 100|pt2pt_ref --mode prtt --bytes 8 --n 1 --iters 1000 --warmup 100|200"
	"prtt 8B n=10|prtt --sizes 8 --n 10 --delay 0 --iters 100 --warmup 10|pt2pt_ref --mode prtt --bytes 8 --n 10 --iters 100 --warmup 10|200"
	"prtt 64KiB n=1|prtt --sizes 64K --n 1 --delay 0 --iters 100 --warmup 10|pt2pt_ref --mode prtt --bytes 65536 --n 1 --iters 100 --warmup 10|100"
	"prtt 64KiB n=10|prtt --sizes 64K --n 10 --delay 0 --iters 10 --warmup 2|pt2pt_ref --mode prtt --bytes 65536 --n 10 --iters 10 --warmup 2|100"
	"kkaccess k=1 l=64|kkaccess --k 1 --l 64 --r 1|access_ref --k 1 --l 64|1000"
	"kkaccess k=8 l=64|kkaccess --k 8 --l 64 --r 1|access_ref --k 8 --l 64|1000"
	"kkaccess k=1 l=16K|kkaccess --k 1 --l 16K --r 1|access_ref --k 1 --l 16384|1000"
	"kkaccess k=8 l=16K|kkaccess --k 8 --l 16K --r 1|access_ref --k 8 --l 16384|500"
	"kaccess k=1 l=64 a=4|kaccess --k 1 --l 64 --a 4 --h 1/p --es false|access_ref --k 1 --l 64 --a 4|1000"
	"kaccess k=8 l=64 a=4|kaccess --k 8 --l 64 --a 4 --h 1/p --es false|access_ref --k 8 --l 64 --a 4|500"
	"kaccess k=1 l=16K a=4|kaccess --k 1 --l 16K --a 4 --h 1/p --es false|access_ref --k 1 --l 16384 --a 4|500"
	"kaccess k=8 l=16K a=4|kaccess --k 8 --l 16K --a 4 --h 1/p --es false|access_ref --k 8 --l 16384 --a 4|200"
	"alltoall 8B|alltoall --sizes 8|coll_ref --mode alltoall --bytes 8|1000"
	"alltoall 1MiB|alltoall --sizes 1M|coll_ref --mode alltoall --bytes 1048576|200"
	"permutations 16B|permutations --sizes 16|coll_ref --mode permutations --bytes 16|1000"
	"permutations 256KiB|permutations --sizes 256K|coll_ref --mode permutations --bytes 262144|500"
)
# OSU 6.1's bidirectional and multi-pair point-to-point benchmarks.
cells+=(
	"bibw 8B|bibw --sizes 8 --iters 10 --warmup 10|pt2pt_ref --mode bibw --bytes 8 --iters 10 --warmup 10|300"
	"bibw 1MiB|bibw --sizes 1M --iters 2 --warmup 2|pt2pt_ref --mode bibw --bytes 1048576 --iters 2 --warmup 2|20"
	"mbwmr 8B|mbwmr --sizes 8|pt2pt_ref --mode mbwmr --bytes 8 --iters 1|300"
	"mbwmr 1MiB|mbwmr --sizes 1M|pt2pt_ref --mode mbwmr --bytes 1048576 --iters 1|50"
	"multilat 8B|multilat --sizes 8|pt2pt_ref --mode multilat --bytes 8 --iters 1|1000"
	"multilat 1MiB|multilat --sizes 1M|pt2pt_ref --mode multilat --bytes 1048576 --iters 1|100"
)
# OSU 6.1's one-sided loops (patterns/onesided.go) against
# scripts/ref/rma_ref.c: OSU's default synchronisation (flush; pscw for
# bibw) and the others for put latency. The 8-byte cas of OSU crashes Open
# MPI 4.1's osc/rdma on one node, so cas is left out here (the OSU table
# runs it with --mca osc sm).
for op in put get acc get_acc fop; do
	cells+=("onesided $op lat 8B|onesided --ops $op --modes lat --sizes 8 --iters 1000 --warmup 100|rma_ref --op $op --mode lat --bytes 8 --iters 1000 --warmup 100|200")
done
for sync in lock lock_all fence pscw; do
	cells+=("onesided put lat $sync 8B|onesided --ops put --modes lat --sync $sync --sizes 8 --iters 1000 --warmup 100|rma_ref --op put --mode lat --sync $sync --bytes 8 --iters 1000 --warmup 100|200")
done
cells+=(
	"onesided put lat 1MiB|onesided --ops put --modes lat --sizes 1M --iters 10 --warmup 10|rma_ref --op put --mode lat --bytes 1048576 --iters 10 --warmup 10|50"
	"onesided put bw 8B|onesided --ops put --modes bw --sizes 8 --iters 10 --warmup 10|rma_ref --op put --mode bw --bytes 8 --iters 10 --warmup 10|200"
	"onesided get bw 1MiB|onesided --ops get --modes bw --sizes 1M --iters 2 --warmup 2|rma_ref --op get --mode bw --bytes 1048576 --iters 2 --warmup 2|20"
	"onesided put bibw 8B|onesided --ops put --modes bibw --sizes 8 --iters 10 --warmup 10|rma_ref --op put --mode bibw --sync pscw --bytes 8 --iters 10 --warmup 10|200"
)
# MPI's collectives through the library (patterns/collective.go) against
# scripts/ref/collective_ref.c: every one at 8 B, the reductions and the
# all-to-all ones at 1 MiB too; one call per repetition (OSU's, the
# default).
for op in barrier bcast reduce allreduce gather gatherv scatter scatterv allgather allgatherv alltoall alltoallv reduce_scatter_block reduce_scatter; do
	cells+=("collective $op 8B|collective --ops $op --sizes 8|collective_ref --op $op --bytes 8|1000")
done
for op in bcast allreduce allgather alltoall reduce_scatter; do
	cells+=("collective $op 1MiB|collective --ops $op --sizes 1M|collective_ref --op $op --bytes 1048576|50")
done
# MPI-3's non-blocking collectives, OSU's overlap measurement
# (patterns/nonblocking.go): the overlapped call's median repetition.
for op in barrier bcast allreduce alltoall; do
	cells+=("nonblocking i$op 8B|nonblocking --ops $op --sizes 8|collective_ref --nonblocking 1 --op $op --bytes 8|500")
done
for op in allreduce alltoall; do
	cells+=("nonblocking i$op 1MiB|nonblocking --ops $op --sizes 1M|collective_ref --nonblocking 1 --op $op --bytes 1048576|30")
done
# (The loop variable is not $impl: that names the MPI library below.)
for op in bcast allgather scatter alltoall qshift news; do
	for how in mpi textbook; do
		cells+=("aggregate $op $how 8B|aggregate --ops $op --impl $how --sizes 8|coll_ref --mode aggregate --op $op --impl $how --bytes 8|1000")
		cells+=("aggregate $op $how 1MiB|aggregate --ops $op --impl $how --sizes 1M|coll_ref --mode aggregate --op $op --impl $how --bytes 1048576|100")
	done
done

# shellcheck disable=SC2046
launch() { "$launcher" -np "$np" $(mpi_flags "$impl" "$np") "$@"; }
# c_run REF ARGS... REPS prints the reference's median seconds.
c_run() { launch "bin/$1" "${@:2}" | awk '!/^#/ && NF >= 1 {print $1; exit}'; }
# cc_run REPS ARGS... prints commcost's median seconds per operation (the
# median repetition time for bandwidth, whose records hold B/s).
cc_run() {
	local reps=$1
	shift
	# permutations times --count repetitions; the others --min/--max-reps.
	local fixed=(--min-reps "$reps" --max-reps "$reps")
	[ "$1" = permutations ] && fixed=(--count "$reps")
	launch bin/commcost "$@" "${fixed[@]}" --max-time 3600 --format jsonl |
		awk -v bw="$([[ "$1" =~ ^(bandwidth|bibw|mbwmr)$ || " $* " =~ " --modes "(bw|bibw)" " ]] && echo 1 || echo 0)" '
			{ key = bw ? "\"rep_time_s\":" : "\"median\":"
			  if (match($0, key "[-0-9.eE+]+")) { print substr($0, RSTART + length(key), RLENGTH - length(key)); exit } }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{if (NR) print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }

selected=()
for cell in "${cells[@]}"; do
	name=${cell%%|*}
	[ -n "$filter" ] && [[ "$name" =~ $filter ]] && selected+=("$cell")
done
[ ${#selected[@]} -gt 0 ] || { echo "bench_vs_c: --cells '$(printable "$filter")': want a regular expression matching some cells' names, such as 'pingpong 8B', 'collective bcast 1MiB' or 'kkaccess k=8 l=64' (e.g. 'pingpong|collective bcast')" >&2; exit 2; }
# TAGS goes to go build as words: only the form make takes is accepted,
# so a typo stops here, not in go build's errors.
case ${TAGS:-} in
"" | "-tags mpich") ;;
*) echo "bench_vs_c: TAGS='$(printable "$TAGS")': want \"-tags mpich\" or empty" >&2; exit 2 ;;
esac
mkdir -p bin "$(dirname "$tsv")"
# Always (re)build: go build is incremental, and a binary left from another
# commit would be recorded under this one.
# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
go build ${TAGS:-} -ldflags "-X github.com/commcost/commcost/results.buildCommit=$(git describe --always --dirty 2>/dev/null || echo unknown)" -o bin/commcost ./cmd/commcost
for ref in pt2pt_ref access_ref coll_ref collective_ref rma_ref; do
	"$mpicc" -O2 -o "bin/$ref" "scripts/ref/$ref.c"
done

# The commit the rounds measure, taken before they run (the tree may change
# while they do).
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
declare -A c_vals cc_vals ratios
printf '%-5s %-33s %14s %14s %8s\n' round cell "C s" "commcost s" ratio
for r in $(seq 1 "$rounds"); do
	for cell in "${selected[@]}"; do
		IFS='|' read -r name cc_args ref_args reps <<<"$cell"
		# shellcheck disable=SC2086
		if [ $((r % 2)) = 1 ]; then
			c=$(c_run $ref_args --reps "$reps")
			g=$(cc_run "$reps" $cc_args)
		else
			g=$(cc_run "$reps" $cc_args)
			c=$(c_run $ref_args --reps "$reps")
		fi
		if [ -z "$c" ] || [ -z "$g" ]; then
			echo "bench_vs_c: $name: no result (C '$c', commcost '$g')" >&2
			exit 1
		fi
		ratio=$(awk -v g="$g" -v c="$c" 'BEGIN{printf "%.4f", g/c}')
		c_vals[$name]+="$c " cc_vals[$name]+="$g " ratios[$name]+="$ratio "
		printf '%-5s %-33s %14.6g %14.6g %8s\n' "$r" "$name" "$c" "$g" "$ratio"
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

library=$(mpi_version "$impl" "$launcher")
date=$(date -u +%FT%TZ)
[ -s "$tsv" ] || printf 'date\tcommit\tmpi\tnp\tload_start\tload_end\trounds\tcell\tc_median_s\tcommcost_median_s\tratio_median\tratio_min\tratio_max\n' >"$tsv"
echo
echo "commcost/C per cell, $rounds rounds on $np ranks (load average ${load_start} at the start, ${load_end} at the end)"
printf '| %-33s | %12s | %12s | %7s | %15s |\n' cell "C median" "commcost" ratio "ratio min-max"
printf '|%s|%s|%s|%s|%s|\n' "-----------------------------------" "--------------" "--------------" "---------" "-----------------"
fmt() { awk -v v="$1" 'BEGIN{ if (v < 1e-6) printf "%.1f ns", v*1e9; else if (v < 1e-3) printf "%.3f us", v*1e6; else printf "%.3f ms", v*1e3 }'; }
missed=()
for cell in "${selected[@]}"; do
	name=${cell%%|*}
	# shellcheck disable=SC2086
	{
		cm=$(median ${c_vals[$name]})
		gm=$(median ${cc_vals[$name]})
		rm=$(median ${ratios[$name]})
		lo=$(printf '%s\n' ${ratios[$name]} | sort -g | head -n1)
		hi=$(printf '%s\n' ${ratios[$name]} | sort -g | tail -n1)
	}
	printf '| %-33s | %12s | %12s | %7s | %15s |\n' "$name" "$(fmt "$cm")" "$(fmt "$gm")" "$rm" "$lo-$hi"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$date" "$commit" "$library" "$np" "$load_start" "$load_end" \
		"$rounds" "$name" "$cm" "$gm" "$rm" "$lo" "$hi" >>"$tsv"
	if awk -v m="$rm" 'BEGIN{exit !(m > 1.05)}'; then
		missed+=("$name ($rm)")
	fi
done
echo "rows appended to $tsv"
if [ ${#missed[@]} -gt 0 ]; then
	echo "bench_vs_c: above 1.05x: ${missed[*]}" >&2
	[ -n "${BENCH_NO_FAIL:-}" ] || exit 1
fi
