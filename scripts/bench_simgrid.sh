#!/usr/bin/env bash
# bench_simgrid.sh: commcost's replay against SimGrid's on the same traces,
# on this machine (NP ranks, default 2, one per core).
#   1. calibrate: commcost pingpong and prtt, fitted to hockney, piecewise,
#      hyperbolic and loggp (models that do not fit are left out);
#   2. trace each program with commcost trace --simgrid: commcost's own
#      trace/testdata/calls.c and pingpong, osu_latency, and three Debian programs
#      nobody here wrote: hpcc, NetPIPE (NPopenmpi), mpi4py's ringtest;
#   3. replay each trace under SimGrid (smpireplaymain) twice: with the
#      piecewise fit exported by commcost export simgrid, and with SMPI's
#      default factors on the same links;
#   4. commcost replay assess prints every model's error per program, the
#      best model's, SimGrid's two, and checks the ground truth's
#      assertions (exit 1 when one fails; BENCH_NO_FAIL=1 only reports).
# Needs libsimgrid-dev (smpirun); the Debian programs are skipped when
# missing (apt-get install hpcc netpipe-openmpi python3-mpi4py).
# On the test cluster: LAUNCHER="mpirun --hostfile H --mca plm_rsh_agent A
# ..." (the whole launch prefix, -np excluded) and NP=4 run every step
# there; WORK=DIR keeps the files.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 0 ] || { echo "bench_simgrid: takes no arguments (got '$(printf '%s' "$*" | LC_ALL=C tr -c '[:print:]' '?')'): set NP, LAUNCHER, OSU_SRC or WORK in the environment" >&2; exit 2; }
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
from_caller OSU_SRC WORK
cd "$(dirname "$0")/.."
# shellcheck source=mpi.sh
. scripts/mpi.sh
# Every input is checked before anything is installed, built or launched;
# settings are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
impl=$(mpi_impl) || exit 2
NP=${NP:-2}
# NP ranks trace every program here (or on LAUNCHER's hosts) and SimGrid
# simulates as many on this machine: 2 at least (every program measures
# between ranks), at most 16 per core here, or 4096 (a test cluster's 64
# hosts of 64 slots) through LAUNCHER.
max_np=$((16 * $(nproc)))
[ -z "${LAUNCHER:-}" ] || max_np=4096
if ! [[ $NP =~ ^[0-9]{1,7}$ ]] || [ "$((10#$NP))" -lt 2 ] || [ "$((10#$NP))" -gt "$max_np" ]; then
	echo "bench_simgrid: NP '$(printable "$NP")': want an integer from 2 (the programs measure between ranks) to $max_np ($([ -n "${LAUNCHER:-}" ] && echo "through LAUNCHER" || echo "16 ranks per core of this machine's $(nproc)"))" >&2
	exit 2
fi
NP=$((10#$NP))
if [ -n "${LAUNCHER:-}" ]; then
	read -r -a launch <<<"$LAUNCHER"
	if [ ${#launch[@]} -eq 0 ] || ! command -v "${launch[0]}" >/dev/null; then
		echo "bench_simgrid: LAUNCHER='$(printable "$LAUNCHER")': want the whole launch prefix, a launcher on PATH and its flags (-np excluded), e.g. \"mpirun --hostfile H\"" >&2
		exit 2
	fi
fi
osu=${OSU_SRC:-../shared/peers/osu-6.1}
[ -n "${OSU_SRC:-}" ] || [ -d "$osu" ] || osu=/work/shared/peers/osu-6.1
if [ ! -f "$osu/mpi/pt2pt/osu_latency.c" ] || [ ! -f "$osu/util/osu_util.c" ]; then
	echo "bench_simgrid: OSU_SRC='$(printable "$osu")' holds no OSU 6.1 sources (mpi/pt2pt/osu_latency.c and util/osu_util.c): set OSU_SRC to them" >&2
	exit 2
fi
# WORK is deleted and made again: only a directory this bench made (its
# marker file inside), an empty one or a new one (the default is its own).
work=${WORK:-bin/bench_simgrid}
if [ -n "${WORK:-}" ] && [ -e "$work" ] && { [ ! -d "$work" ] || { [ -n "$(ls -A "$work")" ] && [ ! -e "$work/.bench_simgrid" ]; }; }; then
	echo "bench_simgrid: WORK='$(printable "$work")' is not a directory an earlier run of this bench made (it deletes WORK first): name a new or empty directory" >&2
	exit 2
fi
# the bench's own packages (not make test's): SimGrid and the Debian programs
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! { command -v smpirun && command -v hpcc && command -v NPopenmpi; } >/dev/null 2>&1; then
	apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsimgrid-dev hpcc netpipe-openmpi python3-mpi4py >/dev/null || true
fi
if [ -n "${LAUNCHER:-}" ]; then
	launcher=${launch[0]}
	flags=("${launch[@]:1}")
else
	launcher=$(mpi_launcher "$impl") || { echo "bench_simgrid: no $(mpi_name "$impl") launcher; run scripts/setup.sh" >&2; exit 1; }
	read -r -a flags <<<"$(mpi_flags "$impl" "$NP")"
fi
if ! command -v smpirun >/dev/null; then
	echo "SKIP bench_simgrid: no smpirun (apt-get install libsimgrid-dev)"
	exit 0
fi
replaymain=/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain
[ -x "$replaymain" ] || replaymain=$(dpkg -L libsimgrid-dev 2>/dev/null | grep smpireplaymain | head -1) || true
[ -x "$replaymain" ] || { echo "bench_simgrid: no smpireplaymain (SimGrid's replay program, in libsimgrid-dev)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
: >"$work/.bench_simgrid"
work=$(cd "$work" && pwd)
go build ${TAGS:-} -o bin/commcost ./cmd/commcost
scripts/build_trace.sh bin/libcommcost-trace.so
cc=$(scripts/build_trace.sh --cc)
cc_bin=$PWD/bin
"$cc" -O2 -o "$work/calls" trace/testdata/calls.c
"$cc" -O2 -I "$osu/util" -o "$work/osu_latency" "$osu/mpi/pt2pt/osu_latency.c" "$osu/util/osu_util.c" "$osu/util/osu_util_mpi.c" -lm

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v n="$(nproc)" 'BEGIN{exit !(l > n)}'; then
	echo "WARNING: load average $load on $(nproc) cores: other jobs share the cores, so the measured runs include waiting for them, which no network model predicts; repeat on a quiet machine"
fi
echo "== calibration: pingpong and prtt on $NP ranks (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
mkdir -p "$work/cal"
"$launcher" "${flags[@]}" -np 2 "$cc_bin/commcost" pingpong --sizes 1,8,64,512,2K,4K,8K,16K,64K,256K,1M --max-time 1 --quiet --out "$work/cal/records.jsonl" >/dev/null
"$launcher" "${flags[@]}" -np 2 "$cc_bin/commcost" prtt --max-time 1 --quiet --out "$work/cal/records.jsonl" >/dev/null
models=()
for k in hockney piecewise hyperbolic loggp; do
	if "$cc_bin/commcost" fit "$k" "$work/cal/records.jsonl" --format json >"$work/$k.json" 2>"$work/$k.err"; then
		models+=(--model "$work/$k.json")
	else
		echo "note: $k does not fit: $(head -1 "$work/$k.err")"
	fi
done

simtime() { # config-dir trace-dir
	local cfg
	read -r -a cfg <<<"$(tr '\n' ' ' <"$1/smpi.cfg")"
	(cd "$2" && smpirun -np "$NP" -platform "$1/platform.xml" -hostfile "$1/hostfile" "${cfg[@]}" \
		-replay simgrid.txt "$replaymain" 2>&1 | sed -n 's/.*Simulation time \([0-9.e+-]*\).*/\1/p' | tail -1)
}

: >"$work/programs.tsv"
run() { # name program args...
	local name=$1 dir=$work/trace-$1
	shift
	echo "== $name: $*"
	if ! (cd "$work" && "$launcher" "${flags[@]}" -np "$NP" "$cc_bin/commcost" trace --out "$dir" --simgrid -- "$@" >"$work/$name.out" 2>&1); then
		echo "FAIL $name did not run under the tracer:"
		tail -5 "$work/$name.out"
		return 1
	fi
	local cal def
	# SimGrid's platform, with the MPI's eager limit from this trace
	"$cc_bin/commcost" export simgrid "$work/piecewise.json" --out "$dir/sg-cal" --hosts "$NP" --trace "$dir"
	"$cc_bin/commcost" export simgrid "$work/piecewise.json" --out "$dir/sg-def" --hosts "$NP" --trace "$dir" --defaults
	cal=$(simtime "$dir/sg-cal" "$dir")
	def=$(simtime "$dir/sg-def" "$dir")
	printf '%s\t%s\t%s\t%s\n' "$name" "$dir" "${cal:--}" "${def:--}" >>"$work/programs.tsv"
}
rc=0
run calls "$work/calls" 2000 || rc=1
run commcost-pingpong "$cc_bin/commcost" pingpong --sizes 8,1K,16K,64K --max-time 0.5 --quiet || rc=1
run osu_latency "$work/osu_latency" -m 1:65536 -i 500 -x 50 || rc=1
if command -v hpcc >/dev/null; then
	zcat -f /usr/share/doc/hpcc/examples/_hpccinf.txt* | awk -v q="$NP" 'NR==11{$1=1} NR==12{$1=q} {print}' >"$work/hpccinf.txt"
	run hpcc hpcc || rc=1
else echo "SKIP hpcc: not installed"; fi
if command -v NPopenmpi >/dev/null && [ "$impl" = openmpi ] && [ "$NP" = 2 ]; then
	run netpipe NPopenmpi -u 65536 -n 50 -o /dev/null || rc=1
else echo "SKIP netpipe: not installed (or not 2 ranks of Open MPI)"; fi
if /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
	run mpi4py-ringtest /usr/bin/python3 -m mpi4py.bench ringtest -n 4096 -l 2000 || rc=1
else echo "SKIP mpi4py: not installed"; fi

echo "== commcost replay against SimGrid (errors relative to the measured run; SimGrid gives the wall time only)"
if ! "$cc_bin/commcost" replay assess --programs "$work/programs.tsv" "${models[@]}"; then
	rc=1
fi
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); work files in $work)"
if [ "$rc" != 0 ] && [ -z "${BENCH_NO_FAIL:-}" ]; then exit 1; fi
