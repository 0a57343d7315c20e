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
cd "$(dirname "$0")/.."
# the bench's own packages (not make test's): SimGrid and the Debian programs
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! { command -v smpirun && command -v hpcc && command -v NPopenmpi; } >/dev/null 2>&1; then
	apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsimgrid-dev hpcc netpipe-openmpi python3-mpi4py >/dev/null || true
fi
# shellcheck source=mpi.sh
. scripts/mpi.sh
NP=${NP:-2}
impl=$(mpi_impl)
if [ -n "${LAUNCHER:-}" ]; then
	read -r -a launch <<<"$LAUNCHER"
	launcher=${launch[0]}
	flags=("${launch[@]:1}")
else
	launcher=$(mpi_launcher "$impl")
	read -r -a flags <<<"$(mpi_flags "$impl" "$NP")"
fi
if ! command -v smpirun >/dev/null; then
	echo "SKIP bench_simgrid: no smpirun (apt-get install libsimgrid-dev)"
	exit 0
fi
replaymain=/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain
[ -x "$replaymain" ] || replaymain=$(dpkg -L libsimgrid-dev 2>/dev/null | grep smpireplaymain | head -1)
work=${WORK:-bin/bench_simgrid}
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
go build ${TAGS:-} -o bin/commcost ./cmd/commcost
scripts/build_trace.sh bin/libcommcost-trace.so
cc=$(scripts/build_trace.sh --cc)
cc_bin=$PWD/bin
"$cc" -O2 -o "$work/calls" trace/testdata/calls.c
osu=${OSU_SRC:-../shared/peers/osu-6.1}
[ -d "$osu" ] || osu=/work/shared/peers/osu-6.1
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
