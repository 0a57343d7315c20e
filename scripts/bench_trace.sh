#!/usr/bin/env bash
# bench_trace.sh: the tracing library's overhead.
#   1. osu_latency at 8 B, traced against untraced (OSU 6.1 from
#      $OSU_SRC, default ../shared/peers/osu-6.1, built per its BUILD.md):
#      the median over REPS alternating launches of each; the overhead of
#      one intercepted call is half the latency's difference (a one-way
#      latency is one Send and one Recv on the critical path).
#   2. one call in a tight loop (trace/testdata/callcost.c: MPI_Send to
#      MPI_PROC_NULL, one event each, and MPI_Iprobe finding nothing,
#      merged), traced against untraced: the same cost without the
#      network's noise, which a loaded machine makes larger than it.
#   3. a real program's wall time, traced against untraced: hpcc (Debian's
#      HPC Challenge) on 2 ranks with a small input, median over REPS.
# Targets (printed with PASS/FAIL): at most 100 ns per call (osu and the
# loops), at most 3% on the wall time. BENCH_NO_FAIL=1 only reports. Set-up: libopenmpi-dev,
# hpcc (scripts/setup.sh installs them; hpcc is skipped when missing).
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 0 ] || { echo "bench_trace: takes no arguments (got '$(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?')'): set REPS or BENCH_NO_FAIL in the environment" >&2; exit 2; }
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
from_caller OSU_SRC
cd "$(dirname "$0")/.."
# shellcheck source=mpi.sh
. scripts/mpi.sh
# Every input is checked before anything is installed, built or launched;
# settings are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
impl=$(mpi_impl) || exit 2
REPS=${REPS:-7}
# Each repetition is a pair of launches per case (a few seconds each):
# more than 1000 is a typo, not a measurement.
if ! [[ $REPS =~ ^[0-9]{1,4}$ ]] || [ "$((10#$REPS))" -lt 1 ] || [ "$((10#$REPS))" -gt 1000 ]; then
	echo "bench_trace: REPS '$(printable "$REPS")': want an integer from 1 to 1000 (launches of each case)" >&2
	exit 2
fi
REPS=$((10#$REPS))
osu=${OSU_SRC:-../shared/peers/osu-6.1}
[ -n "${OSU_SRC:-}" ] || [ -d "$osu" ] || osu=/work/shared/peers/osu-6.1
if [ ! -f "$osu/mpi/pt2pt/osu_latency.c" ] || [ ! -f "$osu/util/osu_util.c" ]; then
	echo "bench_trace: OSU_SRC='$(printable "$osu")' holds no OSU 6.1 sources (mpi/pt2pt/osu_latency.c and util/osu_util.c): set OSU_SRC to them" >&2
	exit 2
fi
# the bench's own packages (not make test's): SimGrid and the Debian programs
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! { command -v smpirun && command -v hpcc && command -v NPopenmpi; } >/dev/null 2>&1; then
	apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsimgrid-dev hpcc netpipe-openmpi python3-mpi4py >/dev/null || true
fi
launcher=$(mpi_launcher "$impl") || { echo "bench_trace: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
mpicc=$(scripts/build_trace.sh --cc)
out=bin/bench_trace
mkdir -p "$out"
scripts/build_trace.sh "$out/libcommcost-trace.so"
lib=$PWD/$out/libcommcost-trace.so
"$mpicc" -O2 -I "$osu/util" -o "$out/osu_latency" "$osu/mpi/pt2pt/osu_latency.c" "$osu/util/osu_util.c" "$osu/util/osu_util_mpi.c" -lm
"$mpicc" -O2 -o "$out/callcost" trace/testdata/callcost.c
tdir=$(mktemp -d)
trap 'rm -rf "$tdir"' EXIT
if [ "$impl" = mpich ]; then
	pre=(-genv LD_PRELOAD "$lib" -genv COMMCOST_TRACE_DIR "$tdir/t")
else
	pre=(-x "LD_PRELOAD=$lib" -x "COMMCOST_TRACE_DIR=$tdir/t")
fi
# wall-clock figures mean little when other jobs hold the cores
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v n="$(nproc)" 'BEGIN{exit !(l > n)}'; then
	echo "WARNING: load average $load on $(nproc) cores: other jobs share the cores, and the wall-clock figures below (latencies, wall times, measured runs) are inflated by waiting for them; repeat on a quiet machine"
fi
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
fail=0
check() { # name value limit unit
	if awk -v v="$2" -v l="$3" 'BEGIN{exit !(v <= l)}'; then echo "PASS $1: $2 $4 (target <= $3)"; else echo "FAIL $1: $2 $4 (target <= $3)"; fail=1; fi
}

echo "== osu_latency 8 B, $REPS launches each, alternating (us)"
: >"$tdir/u"
: >"$tdir/t.lat"
for _ in $(seq "$REPS"); do
	"$launcher" -np 2 "$out/osu_latency" -m 8:8 -i 100000 -x 10000 | awk '$1 == 8 {print $2}' >>"$tdir/u"
	rm -rf "$tdir/t"
	"$launcher" -np 2 "${pre[@]}" "$out/osu_latency" -m 8:8 -i 100000 -x 10000 | awk '$1 == 8 {print $2}' >>"$tdir/t.lat"
done
u=$(median <"$tdir/u")
t=$(median <"$tdir/t.lat")
echo "untraced: $(tr '\n' ' ' <"$tdir/u")-> median $u"
echo "traced:   $(tr '\n' ' ' <"$tdir/t.lat")-> median $t"
ns=$(awk -v u="$u" -v t="$t" 'BEGIN{printf "%.1f", (t-u)*1000/2}')
check "osu_latency overhead per intercepted call" "$ns" 100 ns

for mode in send iprobe; do
	echo "== $mode loop (callcost.c: MPI_Send to MPI_PROC_NULL, one event per call; MPI_Iprobe finding nothing, merged), 10^6 calls, $REPS launches each (ns per call)"
	: >"$tdir/cu"
	: >"$tdir/ct"
	for _ in $(seq "$REPS"); do
		"$launcher" -np 1 "$out/callcost" 1000000 "$mode" >>"$tdir/cu"
		rm -rf "$tdir/t"
		"$launcher" -np 1 "${pre[@]}" "$out/callcost" 1000000 "$mode" >>"$tdir/ct"
	done
	cu=$(median <"$tdir/cu")
	ct=$(median <"$tdir/ct")
	d=$(awk -v u="$cu" -v t="$ct" 'BEGIN{printf "%.1f", t-u}')
	echo "untraced: $(tr '\n' ' ' <"$tdir/cu")-> median $cu"
	echo "traced:   $(tr '\n' ' ' <"$tdir/ct")-> median $ct"
	check "$mode: the library's cost per intercepted call" "$d" 100 ns
done

if command -v hpcc >/dev/null; then
	echo "== hpcc on 2 ranks (1 x 2 grid, N = 1000), wall seconds, $REPS launches each"
	mkdir -p "$tdir/hpcc"
	zcat -f /usr/share/doc/hpcc/examples/_hpccinf.txt* |
		awk 'NR==11{$1=1} NR==12{$1=2} {print}' >"$tdir/hpcc/hpccinf.txt"
	: >"$tdir/hu"
	: >"$tdir/ht"
	for _ in $(seq "$REPS"); do
		(cd "$tdir/hpcc" && s=$(date +%s.%N) && "$launcher" -np 2 hpcc >/dev/null && echo "$(date +%s.%N) - $s" | bc) >>"$tdir/hu"
		rm -rf "$tdir/t"
		(cd "$tdir/hpcc" && s=$(date +%s.%N) && "$launcher" -np 2 "${pre[@]}" hpcc >/dev/null && echo "$(date +%s.%N) - $s" | bc) >>"$tdir/ht"
	done
	hu=$(median <"$tdir/hu")
	ht=$(median <"$tdir/ht")
	echo "untraced: $(tr '\n' ' ' <"$tdir/hu")-> median $hu s"
	echo "traced:   $(tr '\n' ' ' <"$tdir/ht")-> median $ht s"
	events=$(du -cb "$tdir"/t/rank-*.cct | tail -1 | awk '{printf "%d", $1/64}')
	echo "the traced run wrote about $events events"
	check "hpcc wall-time overhead" "$(awk -v u="$hu" -v t="$ht" 'BEGIN{printf "%.2f", (t-u)/u*100}')" 3 %
else
	echo "SKIP hpcc: not installed (apt-get install hpcc)"
fi
if [ "$fail" = 1 ] && [ -z "${BENCH_NO_FAIL:-}" ]; then exit 1; fi
