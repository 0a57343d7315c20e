#!/usr/bin/env bash
# test_batch.sh: submits commcost's batch job scripts (scripts/batch) to a
# real, private one-node Slurm (scripts/slurmcluster.sh) and checks each
# job: its exit state, its run directory (valid records, a report) and, for
# the jobs that must refuse, the message and the status. Part of make test.
#
# usage: scripts/test_batch.sh [BINARY]     (an Open MPI build; default: builds bin/commcost)
#        TEST_BATCH_LOGS=DIR keeps the jobs' logs in DIR
#
# Skipped, with the reason, when not root or without apt-get and Slurm;
# as root with apt-get, Slurm that cannot be installed is a failure.
# The one node declares 4 CPUs on this 2-core machine (config_overrides), so
# the emulated-network job can get its 4 ranks; jobs with more tasks than
# cores run unbound with Open MPI's mpi_yield_when_idle. The point-to-point
# scripts ask for 2 nodes; on one node the test overrides that with
# --nodes=1 on the command line (sbatch and qsub options beat #SBATCH/#PBS
# directives), which the job notes in its log.
set -euo pipefail
# --help prints the comment above (the script's usage) and exits 0.
case "${1:-}" in -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
from_caller TEST_BATCH_LOGS
[ $# -ne 1 ] || [[ $1 == -* ]] || { bin=$1 && from_caller bin && set -- "$bin"; }
cd "$(dirname "$0")/.."
say() { printf 'test_batch: %s\n' "$*" >&2; }

# The inputs are checked before anything is built or started (bad input:
# status 2); they are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
bad() {
	say "$1"
	exit 2
}
if [ -n "${TEST_BATCH_LOGS:-}" ] && [ -e "$TEST_BATCH_LOGS" ] && [ ! -d "$TEST_BATCH_LOGS" ]; then
	bad "TEST_BATCH_LOGS='$(printable "$TEST_BATCH_LOGS")' is not a directory: want the directory to keep the jobs' logs in"
fi
if [ "${1:-}" = --inside ]; then
	[ -n "${SLURM_CONF:-}" ] || bad "--inside runs inside scripts/slurmcluster.sh (no SLURM_CONF): run scripts/test_batch.sh [BINARY]"
else
	[ $# -le 1 ] || bad "one argument at most (BINARY), got $#; usage: scripts/test_batch.sh [BINARY]"
	case ${1:-} in
	"") ;;
	-*) bad "unknown option '$(printable "$1")'; usage: scripts/test_batch.sh [BINARY]" ;;
	*) [ -f "$1" ] && [ -x "$1" ] || bad "BINARY '$(printable "$1")' is not an executable file: want an Open MPI build of commcost (make build)" ;;
	esac
fi

if [ "${1:-}" != --inside ]; then
	start=$(date +%s)
	bin=${1:-}
	if [ -z "$bin" ]; then
		# An Open MPI build: the jobs launch it through srun --mpi=pmix
		# and mpirun; the MPICH build is made and launched below (pmi2).
		go build -o bin/commcost ./cmd/commcost
		bin=$PWD/bin/commcost
	fi
	if [ "$(id -u)" != 0 ]; then
		say "SKIP: needs root to run slurmd and munged"
		exit 0
	fi
	install=()
	command -v apt-get >/dev/null && install=(--install)
	if ! why=$(scripts/slurmcluster.sh "${install[@]}" --check); then
		# As root with apt-get the packages can be installed: not having
		# them is a failure, not a reason to skip.
		if [ ${#install[@]} -gt 0 ]; then
			say "FAIL: could not set up Slurm: $why"
			exit 1
		fi
		say "SKIP: $why"
		exit 0
	fi
	COMMCOST=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
	export COMMCOST
	scripts/slurmcluster.sh --quiet --cpus 4 -- "$0" --inside
	say "all batch jobs passed in $(($(date +%s) - start)) s"
	exit 0
fi

# Inside the cluster: SLURM_CONF is set.
tmp=$(mktemp -d /tmp/ccbatch.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
export COMMCOST_RESULTS=$tmp/runs COMMCOST_QUICK=1 OMPI_MCA_mpi_yield_when_idle=1
export COMMCOST_BATCH_LIB=$PWD/scripts/batch/lib.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fails=0
fail() {
	say "FAIL: $*"
	fails=$((fails + 1))
}

# check_run NAME DIR LOG: the job's run directory holds valid records and a
# report.
check_run() {
	local name=$1 dir=$2 log=$3
	if [ ! -s "$dir/records.jsonl" ]; then
		fail "$name: no records in $dir"
		sed 's/^/    /' "$log" >&2
		return
	fi
	local n
	n=$(grep -c . "$dir/records.jsonl")
	if ! "$COMMCOST" report "$dir" >/dev/null 2>"$tmp/report.err"; then
		fail "$name: commcost report $dir failed: $(cat "$tmp/report.err")"
		return
	fi
	[ -s "$dir/report.md" ] || fail "$name: no report.md in $dir"
	grep -q '^== commcost job' "$log" || fail "$name: the log lacks the environment header"
	say "ok: $name: $n records, report.md, log $(wc -l <"$log") lines"
}

# wait_job ID: polls job ID (every task of an array) every 0.2 s until it
# has ended, for at most 10 minutes. Sets job_state to COMPLETED when every
# task completed, else to the first other final state, and job_rc to the
# highest exit status (at least 1 when a task was killed by a signal).
# sbatch --wait would do the same, but it polls at 2, 10 and 42 s, so a
# job of 3 s took 10 and one of 11 s took 42.
wait_job() {
	local id=$1 lines line st code sig ended=0
	for _ in $(seq 3000); do
		lines=$(scontrol -o show job "$id" 2>/dev/null) || lines=
		if [ -n "$lines" ]; then
			ended=1
			while read -r line; do
				st=$(grep -o 'JobState=[A-Z_]*' <<<"$line" | cut -d= -f2)
				case $st in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE) ;; *) ended=0 ;; esac
			done <<<"$lines"
		fi
		if [ "$ended" = 1 ]; then break; fi
		sleep 0.2
	done
	job_state=COMPLETED job_rc=0
	if [ "$ended" != 1 ]; then job_state=UNFINISHED job_rc=124; fi
	while read -r line; do
		st=$(grep -o 'JobState=[A-Z_]*' <<<"$line" | cut -d= -f2)
		code=$(grep -o ' ExitCode=[0-9:]*' <<<"$line" | cut -d= -f2)
		sig=${code#*:} code=${code%%:*}
		if [ "${code:-0}" -gt "$job_rc" ]; then job_rc=$code; fi
		if [ "${sig:-0}" != 0 ] && [ "$job_rc" = 0 ]; then job_rc=1; fi
		if [ "$job_state" = COMPLETED ] && [ "$st" != COMPLETED ]; then job_state=$st; fi
	done <<<"$lines"
	return 0
}

# submit NAME EXPECT SBATCH-ARGS...: sbatch, then wait_job; EXPECT is the
# exit status the job must end with. Sets id to the job id.
id=
submit() {
	local name=$1 expect=$2
	shift 2
	local rc=0 t0=$SECONDS
	if sbatch --parsable -o "$tmp/$name-%j.out" "$@" >"$tmp/sbatch.out"; then
		id=$(head -n1 "$tmp/sbatch.out")
		id=${id%%;*}
		wait_job "$id"
		rc=$job_rc
	else
		rc=$? id=none
	fi
	if [ "$rc" != "$expect" ]; then
		fail "$name: job $id ended with status $rc, want $expect"
		sed 's/^/    /' "$tmp/$name-$id.out" >&2 || true
	fi
	say "job $name ($id): status $rc in $((SECONDS - t0)) s"
}

# 1. Point-to-point job through srun (pmix) and through the mpirun fallback.
submit p2p 0 --nodes=1 --ntasks-per-node=2 scripts/batch/slurm/p2p.sbatch
check_run p2p "$COMMCOST_RESULTS/slurm-$id" "$tmp/p2p-$id.out"
grep -q 'slurm_cpu_bind' "$COMMCOST_RESULTS/slurm-$id/info.txt" || fail "p2p: info.txt shows no Slurm CPU binding"
COMMCOST_LAUNCHER=mpirun submit p2p-mpirun 0 --nodes=1 --ntasks-per-node=2 scripts/batch/slurm/p2p.sbatch
check_run p2p-mpirun "$COMMCOST_RESULTS/slurm-$id" "$tmp/p2p-mpirun-$id.out"

# 2. All-ranks job.
submit all 0 --nodes=1 --ntasks=2 scripts/batch/slurm/all.sbatch
check_run all "$COMMCOST_RESULTS/slurm-$id" "$tmp/all-$id.out"

# 3. Emulated network: HC(1) needs 4 ranks (2 application + 2 service).
COMMCOST_NET='HC(1)' CC_PLACE_SRUN='--cpu-bind=none' submit emulate 0 --ntasks=4 scripts/batch/slurm/emulate.sbatch
check_run emulate "$COMMCOST_RESULTS/slurm-$id" "$tmp/emulate-$id.out"

# 4. Refusals: too few tasks for the network, before any measurement; no
#    binary.
COMMCOST_NET='BF(2)' submit emulate-small 2 --ntasks=4 scripts/batch/slurm/emulate.sbatch
grep -q 'BF(2) needs 16 ranks, the job has 4: submit with --ntasks=16' "$tmp/emulate-small-$id.out" ||
	fail "emulate-small: no message naming the 16 ranks BF(2) needs: $(cat "$tmp/emulate-small-$id.out")"
[ ! -e "$COMMCOST_RESULTS/slurm-$id/records.jsonl" ] || fail "emulate-small: wrote records before refusing"
COMMCOST=/nonexistent/commcost submit nobinary 2 --nodes=1 --ntasks=2 scripts/batch/slurm/all.sbatch
grep -q 'no commcost binary' "$tmp/nobinary-$id.out" || fail "nobinary: no clear message: $(cat "$tmp/nobinary-$id.out")"

#    A binary whose MPI library is missing (as when the job forgets its
#    module): a stand-in linked against a library that is then removed.
mkdir -p "$tmp/nolib"
printf 'int cc_gone(void) { return 0; }\n' >"$tmp/nolib/gone.c"
printf 'int cc_gone(void);\nint main(void) { return cc_gone(); }\n' >"$tmp/nolib/main.c"
if cc -shared -fPIC -o "$tmp/nolib/libccgone.so" "$tmp/nolib/gone.c" &&
	cc -o "$tmp/nolib/commcost" "$tmp/nolib/main.c" -L"$tmp/nolib" -lccgone; then
	rm "$tmp/nolib/libccgone.so"
	COMMCOST=$tmp/nolib/commcost submit nolib 1 --nodes=1 --ntasks=2 scripts/batch/slurm/all.sbatch
	grep -q 'libccgone.so is not found; load the MPI module' "$tmp/nolib-$id.out" ||
		fail "nolib: no message naming the missing library: $(cat "$tmp/nolib-$id.out")"
else
	fail "nolib: could not build the stand-in binary"
fi

# 5. Repeated launches: a job array of 2, each task its own run directory.
submit repeat 0 --array=1-2 --nodes=1 --ntasks-per-node=2 scripts/batch/slurm/repeat.sbatch
for t in 1 2; do
	check_run "repeat[$t]" "$COMMCOST_RESULTS/slurm-${id}_$t" "$tmp/repeat-$id.out"
done

# 6. PBS scripts through Slurm's PBS wrapper (qsub from slurm-wlm-torque):
#    it runs #PBS scripts as Slurm jobs without PBS_* variables, which the
#    scripts' library falls back from. qsub does not wait: poll.
if command -v qsub >/dev/null; then
	for job in p2p all; do
		out=$(cd "$tmp" && qsub -l nodes=1:ppn=2 "$(dirname "$COMMCOST_BATCH_LIB")/pbs/$job.pbs" 2>&1) || {
			fail "pbs $job: qsub: $out"
			continue
		}
		id=$(echo "$out" | grep -o '[0-9][0-9]*' | tail -n1)
		wait_job "$id"
		state=$job_state exitcode=$job_rc
		# The wrapper ignores #PBS -j oe: join SCRIPT.oID and SCRIPT.eID.
		log=$tmp/pbs-$job-$id.log
		cat "$tmp"/*.o"$id" "$tmp"/*.e"$id" >"$log" 2>/dev/null || true
		if [ "$state" != COMPLETED ] || [ "$exitcode" != 0 ]; then
			fail "pbs $job: job $id $state exit $exitcode"
			sed 's/^/    /' "$log" >&2
			continue
		fi
		check_run "pbs $job" "$COMMCOST_RESULTS/pbs-$id" "$log"
	done
else
	say "note: no qsub (slurm-wlm-torque); PBS scripts not submitted"
fi

# 7. An MPICH build launched by srun through PMI-2, when MPICH is installed.
if pkg-config --exists mpich 2>/dev/null; then
	mbin=$tmp/commcost-mpich
	if go build -tags mpich -o "$mbin" ./cmd/commcost 2>"$tmp/mpich-build.err"; then
		COMMCOST=$mbin COMMCOST_SRUN_MPI=pmi2 submit p2p-mpich 0 --nodes=1 --ntasks-per-node=2 scripts/batch/slurm/p2p.sbatch
		check_run p2p-mpich "$COMMCOST_RESULTS/slurm-$id" "$tmp/p2p-mpich-$id.out"
		grep -q 'MPICH' "$COMMCOST_RESULTS/slurm-$id/info.txt" || fail "p2p-mpich: info does not show MPICH"
	else
		fail "MPICH build: $(cat "$tmp/mpich-build.err")"
	fi
else
	say "note: MPICH not installed; the MPICH build was not launched"
fi

# TEST_BATCH_LOGS=DIR keeps every job's log (to show one, or to debug).
if [ -n "${TEST_BATCH_LOGS:-}" ]; then
	mkdir -p "$TEST_BATCH_LOGS"
	cp "$tmp"/*.out "$tmp"/*.log "$TEST_BATCH_LOGS"/ 2>/dev/null || true
fi

if [ "$fails" -gt 0 ]; then
	say "$fails failure(s); slurm logs in $CC_SLURM_DIR/log:"
	tail -n 20 "$CC_SLURM_DIR"/log/*.log >&2
	exit 1
fi
