#!/usr/bin/env bash
# bench_vs_osu.sh [--launches N] [--max-time S] [--tsv FILE] [--skip-missing]
#                 [--np "2 4"] [--benches REGEX] [--tsv6 FILE]
#
# commcost's ping-pong and bandwidth next to OSU's osu_latency and osu_bw
# (issue 19), the tool their users know, on 2 ranks in one session; then
# every benchmark of OSU 6.1 commcost has a counterpart of (the
# collectives, ...) next to it at each rank count of --np.
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
#
# OSU 6.1 (the sources in $OSU6_SRC, default ../shared/peers/osu-6.1 or
# /work/shared/peers/osu-6.1; each benchmark built with one mpicc line into
# bin/osu6, with -DFLOAT_PRECISION=4 for 4 decimals): per launch, per rank
# count of --np (default "2 4"; more ranks than cores run oversubscribed,
# with mpi_yield_when_idle) and per
# benchmark of --benches (a regular expression on the names below,
# default all), the OSU binary over 4 B .. 1 MiB and commcost's
# counterpart in its --osu mode (OSU's repetition counts), alternately.
# Per size it prints the median over launches of OSU's figure and of
# commcost's figure computed as OSU computes it (the collectives: the
# average over ranks of each rank's mean time per call; the non-blocking
# ones: their pure communication time and overlap), their ratio (target
# 0.95-1.05; an overlap's difference, target within 5 points), commcost's
# own figure from the same repetitions (the median over repetitions of the
# maximum over ranks) and the spreads.
# Rows go to results/bench/osu6_vs_commcost.tsv (or --tsv6 FILE).
set -euo pipefail
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
from_caller OSU_DIR OSU_SRC OSU6_SRC
cd "$(dirname "$0")/.."
launches=7 maxtime=1 tsv=results/bench/pt2pt_vs_osu.tsv skip_missing=
nps="2 4" benches=. tsv6=results/bench/osu6_vs_commcost.tsv
# Settings are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
usage() { echo "bench_vs_osu: $1; usage: scripts/bench_vs_osu.sh [--launches N (1 to 1000)] [--max-time SECONDS (> 0, at most 3600)] [--tsv FILE] [--skip-missing] [--np \"2 4\"] [--benches REGEX] [--tsv6 FILE]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--launches | --max-time | --tsv | --np | --benches | --tsv6) [ $# -ge 2 ] || usage "$1 needs a value" ;;
	esac
	case "$1" in
	--launches) launches=$2; shift 2 ;;
	--max-time) maxtime=$2; shift 2 ;;
	--tsv) tsv=$2; from_caller tsv; shift 2 ;;
	--skip-missing) skip_missing=1; shift ;;
	--np) nps=$2; shift 2 ;;
	--benches) benches=$2; shift 2 ;;
	--tsv6) tsv6=$2; from_caller tsv6; shift 2 ;;
	-h | --help) sed -n '2,47p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) usage "unknown option '$(printable "$1")'" ;;
	esac
done
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
impl=$(mpi_impl) || exit 2

# The OSU 6.1 phase. Each benchmark: name | OSU source (under mpi/) | OSU
# arguments | commcost arguments | then per figure compared, as
# comma-separated lists: OSU's column (nK: column K of OSU's one line that
# prints no size, taken as size 0) | the key of commcost's record that is
# OSU's figure computed from commcost's repetitions | the key of commcost's
# own figure | the scale to OSU's unit | the unit | lat (lower is better),
# bw (higher) or pct (a percentage, compared as a difference in points) |
# the rank counts it runs on (empty: every one of --np) | and extra
# launcher arguments for both programs (osu_cas_latency's 8-byte swap
# crashes Open MPI 4.1's default osc/rdma on one node, as commcost's does:
# both run with osc sm there).
# osu_mbw_mr's message rate is its bandwidth over the size, so the ratio of
# its bandwidth is that of its rate too.
osu6=(
	"barrier|collective/osu_barrier||collective --ops barrier --osu|n1|osu_avg_s|median|1e6|us|lat|"
)
for op in bcast reduce allreduce gather gatherv scatter scatterv allgather allgatherv alltoall alltoallv reduce_scatter; do
	osu6+=("$op|collective/osu_$op|-m 4:1048576|collective --ops $op --osu --sizes 4:1M|2|osu_avg_s|median|1e6|us|lat|")
done
osu6+=(
	"bibw|pt2pt/osu_bibw|-m 1:1048576|bibw --osu --sizes 1:1M|2|median|median|1e-6|MB/s|bw|2"
	"mbw_mr|pt2pt/osu_mbw_mr|-m 1:1048576|mbwmr --osu --sizes 1:1M|2|osu_bw_B_per_s|median|1e-6|MB/s|bw|"
	"multi_lat|pt2pt/osu_multi_lat|-m 0:1048576|multilat --osu --sizes 0:1M|2|osu_latency_s|median|1e6|us|lat|"
	"ibarrier|collective/osu_ibarrier||nonblocking --ops barrier --osu|n3,n4|osu_comm_s,osu_overlap_pct|comm_s,overlap_pct|1e6,1|us,%|lat,pct|"
)
for op in ibcast ireduce iallreduce igather igatherv iscatter iscatterv iallgather iallgatherv ialltoall ialltoallv; do
	osu6+=("$op|collective/osu_$op|-m 4:1048576|nonblocking --ops ${op#i} --osu --sizes 4:1M|4,5|osu_comm_s,osu_overlap_pct|comm_s,overlap_pct|1e6,1|us,%|lat,pct|")
done
osc_sm=
[ "$impl" = openmpi ] && osc_sm="--mca osc sm"
osu6+=(
	"put_latency|one-sided/osu_put_latency|-m 1:1048576|onesided --ops put --modes lat --osu --sizes 1:1M|2|median|median|1e6|us|lat|2"
	"get_latency|one-sided/osu_get_latency|-m 1:1048576|onesided --ops get --modes lat --osu --sizes 1:1M|2|median|median|1e6|us|lat|2"
	"put_bw|one-sided/osu_put_bw|-m 1:1048576|onesided --ops put --modes bw --osu --sizes 1:1M|2|median|median|1e-6|MB/s|bw|2"
	"get_bw|one-sided/osu_get_bw|-m 1:1048576|onesided --ops get --modes bw --osu --sizes 1:1M|2|median|median|1e-6|MB/s|bw|2"
	"put_bibw|one-sided/osu_put_bibw|-m 1:1048576|onesided --ops put --modes bibw --osu --sizes 1:1M|2|median|median|1e-6|MB/s|bw|2"
	"acc_latency|one-sided/osu_acc_latency|-m 1:1048576|onesided --ops acc --modes lat --osu --sizes 1:1M|2|median|median|1e6|us|lat|2"
	"get_acc_latency|one-sided/osu_get_acc_latency|-m 1:1048576|onesided --ops get_acc --modes lat --osu --sizes 1:1M|2|median|median|1e6|us|lat|2"
	"fop_latency|one-sided/osu_fop_latency||onesided --ops fop --modes lat --osu|2|median|median|1e6|us|lat|2"
	"cas_latency|one-sided/osu_cas_latency||onesided --ops cas --modes lat --osu|2|median|median|1e6|us|lat|2|$osc_sm"
)

# Every setting is checked before anything is built or launched.
[[ "$launches" =~ ^[1-9][0-9]{0,3}$ && $launches -le 1000 ]] || { echo "bench_vs_osu: --launches '$(printable "$launches")': want an integer from 1 to 1000" >&2; exit 2; }
# Rank counts: 2 at least (every benchmark measures between ranks), at
# most 16 per core (more only oversubscribe this machine).
max_np=$((16 * $(nproc)))
[ -n "${nps// /}" ] || { echo "bench_vs_osu: --np '$(printable "$nps")': want rank counts from 2 to $max_np (16 per core of this machine's $(nproc)), e.g. \"2 4\"" >&2; exit 2; }
for n in $nps; do
	[[ "$n" =~ ^[1-9][0-9]{0,6}$ ]] && [ "$n" -ge 2 ] && [ "$n" -le "$max_np" ] ||
		{ echo "bench_vs_osu: --np '$(printable "$nps")': want rank counts from 2 to $max_np (16 per core of this machine's $(nproc)), e.g. \"2 4\"" >&2; exit 2; }
done
awk -v t="$maxtime" 'BEGIN{exit !(t ~ /^([0-9]+\.?[0-9]*|\.[0-9]+)$/ && t + 0 > 0 && t + 0 <= 3600)}' || { echo "bench_vs_osu: --max-time '$(printable "$maxtime")': want a number of seconds > 0, at most 3600" >&2; exit 2; }
# --benches selects by name: a regular expression that matches at least one.
names="latency bandwidth"
for spec in "${osu6[@]}"; do names+=" ${spec%%|*}"; done
matched=0
if [ -n "$benches" ]; then
	for name in $names; do
		rc=0
		[[ "$name" =~ $benches ]] || rc=$?
		[ "$rc" != 2 ] || break # not a regular expression
		[ "$rc" != 0 ] || matched=1
	done
fi
[ "$matched" = 1 ] || { echo "bench_vs_osu: --benches '$(printable "$benches")': want a regular expression matching some of the benchmarks $names (e.g. 'bcast|reduce')" >&2; exit 2; }
for f in "--tsv=$tsv" "--tsv6=$tsv6"; do
	why=$(rows_file_problem "${f#*=}") || { echo "bench_vs_osu: ${f%%=*} '$(printable "${f#*=}")': $(printable "$why")" >&2; exit 2; }
done
launcher=$(mpi_launcher "$impl") || { echo "$0: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
mpicc=$(mpi_cc "$impl") || { echo "$0: no $(mpi_name "$impl") mpicc; run scripts/setup.sh" >&2; exit 1; }

# missing reports a peer that is not there: with --skip-missing the phase
# that needs it is skipped, otherwise the script ends with status 2.
missing() {
	if [ -n "$skip_missing" ]; then
		echo "bench_vs_osu: SKIP: $1" >&2
		return 0
	fi
	echo "bench_vs_osu: $1" >&2
	exit 2
}
# The peers of the selected phases are looked up before anything is
# built: OSU 5.x for latency and bandwidth (the binaries in OSU_DIR, else
# the sources in OSU_SRC or the peer copy, built in its phase), OSU 6.1's
# sources for the others.
lat= bw= src= run_pt2pt=
if [[ latency =~ $benches || bandwidth =~ $benches ]]; then
	if [ -n "${OSU_DIR:-}" ]; then
		for d in "$OSU_DIR" "$OSU_DIR/mpi/pt2pt" "$OSU_DIR/libexec/osu-micro-benchmarks/mpi/pt2pt"; do
			if [ -x "$d/osu_latency" ] && [ -x "$d/osu_bw" ]; then
				lat=$d/osu_latency bw=$d/osu_bw
				break
			fi
		done
		if [ -n "$lat" ]; then run_pt2pt=1; else missing "OSU_DIR=$(printable "$OSU_DIR") holds no osu_latency and osu_bw (looked in it, mpi/pt2pt and libexec/osu-micro-benchmarks/mpi/pt2pt)"; fi
	else
		src=${OSU_SRC:-}
		if [ -z "$src" ]; then
			for d in ../shared/peers/osu-5.3 /work/shared/peers/osu-5.3; do
				[ -f "$d/osu_latency.c" ] && src=$d && break
			done
		fi
		if [ -n "$src" ] && [ -f "$src/osu_latency.c" ] && [ -f "$src/osu_bw.c" ] && [ -f "$src/osu_pt2pt.c" ]; then
			run_pt2pt=1
		else
			missing "no OSU found: set OSU_DIR to an installed OSU (module load osu-micro-benchmarks) or OSU_SRC to the sources of osu_latency.c, osu_bw.c and osu_pt2pt.c (OSU 5.x mpi/pt2pt)"
		fi
	fi
fi
osu6_selected=() osu6_src=${OSU6_SRC:-}
for spec in "${osu6[@]}"; do
	[[ "${spec%%|*}" =~ $benches ]] && osu6_selected+=("$spec")
done
if [ ${#osu6_selected[@]} -gt 0 ]; then
	if [ -z "$osu6_src" ]; then
		for d in ../shared/peers/osu-6.1 /work/shared/peers/osu-6.1; do
			[ -f "$d/util/osu_util.c" ] && osu6_src=$d && break
		done
	fi
	if [ -z "$osu6_src" ] || [ ! -f "$osu6_src/util/osu_util.c" ]; then
		missing "no OSU 6.1 sources: set OSU6_SRC to them (util/ and mpi/ of the OMB 6.1 tarball)"
		osu6_selected=()
	fi
fi
[ -n "$run_pt2pt" ] || [ ${#osu6_selected[@]} -gt 0 ] || exit 0 # every selected phase skipped (--skip-missing)
mkdir -p bin "$(dirname "$tsv")" "$(dirname "$tsv6")"
# Always (re)build: go build is incremental, and a binary left from another
# commit would be recorded under this one.
# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
go build ${TAGS:-} -ldflags "-X github.com/commcost/commcost/results.buildCommit=$(git describe --always --dirty 2>/dev/null || echo unknown)" -o bin/commcost ./cmd/commcost
# The commit the launches measure, taken before they run (the tree may
# change while they do).
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
library=$(mpi_version "$impl" "$launcher")
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{if (NR) print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
# spread: (max - min) / median over the launches.
spread() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m ? (a[NR]-a[1])/m : 0}'; }
missed=()

# The OSU 5.3 phase: ping-pong and bandwidth on 2 ranks.
pt2pt_phase() {
	local b l col n size v load_start load_end date bench o c co unit om cm cm2 so sc sc2 r r2
	if [ -z "$lat" ]; then
		mkdir -p bin/osu
		for b in osu_latency osu_bw; do
			"$mpicc" -O2 -I"$src" -o "bin/osu/$b" "$src/$b.c" "$src/osu_pt2pt.c" -lm
		done
		lat=bin/osu/osu_latency bw=bin/osu/osu_bw
	fi

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

	load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
	local -A vals
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

	date=$(date -u +%FT%TZ)
	[ -s "$tsv" ] || printf 'date\tcommit\tmpi\tload_start\tload_end\tlaunches\tbench\tbytes\tosu\tcommcost\tratio\tcommcost_osu\tratio_osu\tspread_osu\tspread_commcost\tspread_commcost_osu\n' >"$tsv"
	echo "medians over $launches launches on 2 ranks (load average $load_start at the start, $load_end at the end); spread = (max - min) / median"
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
}

osu6_phase() {
	local src=$osu6_src spec name path oargs cargs cols keys owns scales units kinds only extra np l size j
	local selected=("${osu6_selected[@]}")
	mkdir -p bin/osu6
	for spec in "${selected[@]}"; do
		IFS='|' read -r name path _ <<<"$spec"
		# FLOAT_PRECISION=4: OSU prints 4 decimals instead of 2, so that
		# figures below 0.1 us (one-sided on shared memory) compare.
		"$mpicc" -O2 -DFLOAT_PRECISION=4 -I"$src/util" -o "bin/osu6/$(basename "$path")" "$src/mpi/$path.c" "$src/util/osu_util.c" "$src/util/osu_util_mpi.c" -lm
	done
	# shellcheck disable=SC2046 # mpi_flags prints several words
	launch() { local n=$1; shift; "$launcher" -np "$n" $(mpi_flags "$impl" "$n") "$@"; }
	# osu6_rows NP COLS BIN ARGS: "size v1 v2 ..." of OSU's columns COLS.
	osu6_rows() {
		local n=$1 c=$2
		shift 2
		launch "$n" "$@" | awk -v cols="$c" '
			BEGIN { k = split(cols, cs, ","); nosize = cs[1] ~ /^n/; for (i = 1; i <= k; i++) sub(/^n/, "", cs[i]) }
			/^#/ || NF == 0 { next }
			nosize && $1 ~ /^[0-9.]+$/ { line = "0"; for (i = 1; i <= k; i++) line = line " " $cs[i]; print line; next }
			!nosize && $1 ~ /^[0-9]+$/ { line = $1; for (i = 1; i <= k; i++) line = line " " $cs[i]; print line }'
	}
	# cc6_rows NP KEYS OWNS SCALES EXTRA ARGS: "size v1 w1 v2 w2 ..." of
	# commcost's records, v the OSU figures, w its own; EXTRA are
	# launcher arguments.
	cc6_rows() {
		local n=$1 k=$2 o=$3 sc=$4 x=$5
		shift 5
		# shellcheck disable=SC2086
		launch "$n" $x bin/commcost "$@" --format jsonl | awk -v keys="$k" -v owns="$o" -v scales="$sc" '
			BEGIN { nk = split(keys, ks, ","); split(owns, os, ","); split(scales, ss, ",") }
			function val(key,   re) { re = "\"" key "\":[-0-9.eE+]+"; if (!match($0, re)) return "nan"; return substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3) }
			match($0, /"bytes":[0-9]+/) { b = substr($0, RSTART + 8, RLENGTH - 8); line = b
				for (i = 1; i <= nk; i++) line = line " " val(ks[i]) * ss[i] " " val(os[i]) * ss[i]
				print line }'
	}
	local -A o6 c6 m6
	local load_start load_end vs got
	load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
	for l in $(seq 1 "$launches"); do
		for np in $nps; do
			for spec in "${selected[@]}"; do
				IFS='|' read -r name path oargs cargs cols keys owns scales units kinds only extra <<<"$spec"
				[ -z "$only" ] || [[ " $only " == *" $np "* ]] || continue
				echo "launch $l of $launches: $name on $np ranks" >&2
				got=0
				# shellcheck disable=SC2086
				while read -r size vs; do
					read -ra v <<<"$vs"
					for j in "${!v[@]}"; do o6[$name,$np,$j,$size]+="${v[$j]} "; done
					got=$((got + 1))
				done < <(osu6_rows "$np" "$cols" $extra "bin/osu6/$(basename "$path")" $oargs)
				[ "$got" -gt 0 ] || { echo "bench_vs_osu: $(basename "$path") on $np ranks printed no sizes" >&2; exit 1; }
				got=0
				# shellcheck disable=SC2086
				while read -r size vs; do
					read -ra v <<<"$vs"
					for ((j = 0; 2 * j < ${#v[@]}; j++)); do
						c6[$name,$np,$j,$size]+="${v[2 * j]} " m6[$name,$np,$j,$size]+="${v[2 * j + 1]} "
					done
					got=$((got + 1))
				done < <(cc6_rows "$np" "$keys" "$owns" "$scales" "$extra" $cargs)
				[ "$got" -gt 0 ] || { echo "bench_vs_osu: commcost $cargs on $np ranks printed no sizes" >&2; exit 1; }
			done
		done
	done
	load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
	local date om cm mm so sc r unit kind ul kl
	date=$(date -u +%FT%TZ)
	[ -s "$tsv6" ] || printf 'date\tcommit\tmpi\tnp\tload_start\tload_end\tlaunches\tbench\tbytes\tunit\tosu\tcommcost\tratio\tcommcost_own\tspread_osu\tspread_commcost\n' >"$tsv6"
	echo
	echo "OSU 6.1: medians over $launches launches (load average $load_start at the start, $load_end at the end); commcost = OSU's figure from commcost's --osu run, own = commcost's own figure from the same repetitions; ratio = commcost/OSU, or for a percentage the difference commcost - OSU in points; spread = (max - min) / median"
	for spec in "${selected[@]}"; do
		IFS='|' read -r name path oargs cargs cols keys owns scales units kinds only extra <<<"$spec"
		IFS=, read -ra ul <<<"$units"
		IFS=, read -ra kl <<<"$kinds"
		for np in $nps; do
			[ -z "$only" ] || [[ " $only " == *" $np "* ]] || continue
			for j in "${!ul[@]}"; do
				unit=${ul[$j]} kind=${kl[$j]}
				echo
				printf '| %-20s | %3s | %9s | %12s | %12s | %6s | %12s | %11s |\n' "$name" np bytes "OSU $unit" commcost "$([ "$kind" = pct ] && echo diff || echo ratio)" own "spread O/c"
				printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------------------- ----- ----------- -------------- -------------- -------- -------------- -------------
				for size in $(printf '%s\n' "${!o6[@]}" | awk -F, -v b="$name" -v n="$np" -v j="$j" '$1 == b && $2 == n && $3 == j {print $4}' | sort -n); do
					# shellcheck disable=SC2086
					{
						om=$(median ${o6[$name,$np,$j,$size]})
						cm=$(median ${c6[$name,$np,$j,$size]:-})
						mm=$(median ${m6[$name,$np,$j,$size]:-})
						so=$(spread ${o6[$name,$np,$j,$size]})
						sc=$(spread ${c6[$name,$np,$j,$size]:-})
					}
					if [ -z "$cm" ]; then
						echo "bench_vs_osu: commcost has no $size-byte $name on $np ranks" >&2
						exit 1
					fi
					if [ "$kind" = pct ]; then
						r=$(awk -v a="$cm" -v b="$om" 'BEGIN{printf "%+.1f", a - b}')
					else
						r=$(awk -v a="$cm" -v b="$om" 'BEGIN{printf "%.3f", b ? a/b : 0}')
					fi
					printf '| %-20s | %3s | %9s | %12.3f | %12.3f | %6s | %12.3f | %11s |\n' "$name" "$np" "$size" "$om" "$cm" "$r" "$mm" "$so/$sc"
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$date" "$commit" "$library" "$np" "$load_start" "$load_end" \
						"$launches" "$name" "$size" "$unit" "$om" "$cm" "$r" "$mm" "$so" "$sc" >>"$tsv6"
					if [ "$kind" = pct ]; then
						if awk -v d="$r" 'BEGIN{exit !(d < -5 || d > 5)}'; then
							missed+=("$name np=$np $size B: overlap $r points")
						fi
					elif awk -v r="$r" 'BEGIN{exit !(r < 0.95 || r > 1.05)}'; then
						missed+=("$name np=$np $size B $unit: $r")
					fi
				done
			done
		done
	done
	echo "rows appended to $tsv6"
}

if [ -n "$run_pt2pt" ]; then
	pt2pt_phase
fi
if [ ${#osu6_selected[@]} -gt 0 ]; then
	osu6_phase
fi
if [ ${#missed[@]} -gt 0 ]; then
	echo "bench_vs_osu: outside 0.95-1.05: ${missed[*]}" >&2
	[ -n "${BENCH_NO_FAIL:-}" ] || exit 1
fi
