# lib.sh: shared steps of commcost's batch jobs (Slurm and PBS). Sourced by
# the job scripts in scripts/batch/slurm and scripts/batch/pbs; not run on
# its own. Every function prints what it does on stderr, so the job's log
# says where the ranks landed and which MPI ran.
#
# Environment a job reads (all optional):
#   COMMCOST           the commcost binary (default: bin/commcost under the
#                      submit directory, then commcost on PATH)
#   COMMCOST_LAUNCHER  srun (default under Slurm) or mpirun (the fallback:
#                      mpirun inside the allocation; the only launcher
#                      under PBS)
#   COMMCOST_SRUN_MPI  srun's --mpi plugin (default: pmix if `srun
#                      --mpi=list` offers it, else pmi2)
#   COMMCOST_RESULTS   base directory of run directories (default:
#                      results/runs under the submit directory)
#   COMMCOST_MPIRUN_FLAGS  extra mpirun flags (e.g. --mca btl ^openib)
# Each launch (one srun or mpirun per commcost invocation) is its own
# sample of the machine's placement, as ReproMPI recommends.

# Messages quote the job's settings, which may hold escape sequences:
# control characters are shown as '?'.
cc_printable() { printf '%s\n' "$*" | LC_ALL=C tr -d '\n' | LC_ALL=C tr -c '[:print:]' '?'; }

cc_die() { # cc_die STATUS MESSAGE: stop the job before any measurement
	echo "commcost job: $(cc_printable "$2")" >&2
	exit "$1"
}

cc_say() { echo "commcost job: $(cc_printable "$*")" >&2; }

# The jobs run under set -e -o pipefail: a command that fails where no
# check expected it would end the job with its status and no word. The
# trap names the command, its status and the line, so no job dies
# silently (functions and subshells inherit it: set -E).
set -E
trap 'cc_say "stopped with status $? at ${BASH_SOURCE[0]:-the job script} line $LINENO, in: $BASH_COMMAND"' ERR

# cc_check_plain: every COMMCOST_* setting the jobs read is quoted in the
# log or passed to srun, mpirun and commcost; one holding control
# characters (an escape sequence pasted by mistake) is refused before
# anything runs, as is an srun MPI plugin that is not one plain name.
cc_check_plain() {
	local v
	for v in COMMCOST COMMCOST_LAUNCHER COMMCOST_SRUN_MPI COMMCOST_RESULTS COMMCOST_MPIRUN_FLAGS \
		COMMCOST_SIZES COMMCOST_KK_ARGS COMMCOST_NET COMMCOST_QUICK; do
		if [[ ${!v:-} == *[[:cntrl:]]* ]]; then
			cc_die 2 "$v='${!v}' holds control characters: give it in plain text"
		fi
	done
	if [ -n "${COMMCOST_SRUN_MPI:-}" ] && [[ ! $COMMCOST_SRUN_MPI =~ ^[A-Za-z0-9._-]+$ ]]; then
		cc_die 2 "COMMCOST_SRUN_MPI='$COMMCOST_SRUN_MPI': want the name of one of srun's MPI plugins (srun --mpi=list), e.g. pmix or pmi2"
	fi
	# The steps' settings are checked here too, so that a bad one stops
	# the job before the first launch rather than at its second.
	case ${COMMCOST_QUICK:-0} in
	0 | 1) ;;
	*) cc_die 2 "COMMCOST_QUICK='$COMMCOST_QUICK': want 1 (small sweeps) or 0" ;;
	esac
	if [ -n "${COMMCOST_SIZES:-}" ] && ! cc_sizes_ok "$COMMCOST_SIZES"; then
		cc_die 2 "COMMCOST_SIZES='$COMMCOST_SIZES': want LO:HI (LO doubled up to HI) or a comma list of sizes, each once (e.g. 8,1K,64K), a size at most 2G less 1 bytes"
	fi
}

# cc_sizes_ok LIST (sizes.sh, shared with scripts/forced_alg.sh).
# shellcheck source=sizes.sh
. "$(dirname "${BASH_SOURCE[0]}")/sizes.sh"

# cc_init SCHEDULER: find the binary and the launcher, name the run
# directory after the job, log the environment. Sets CC_BIN, CC_RUNDIR,
# CC_NTASKS, CC_LAUNCHER, CC_JOBID.
cc_init() {
	CC_SCHED=$1
	local submit
	cc_check_plain
	case $CC_SCHED in
	slurm)
		submit=${SLURM_SUBMIT_DIR:-$PWD}
		[ -n "${SLURM_JOB_ID:-}" ] || cc_die 1 "not inside a Slurm job (no SLURM_JOB_ID): submit with sbatch"
		CC_JOBID=$SLURM_JOB_ID
		if [ -n "${SLURM_ARRAY_JOB_ID:-}" ]; then
			# An array job's id needs its task's index: without it the
			# run directory would not name the task.
			[ -n "${SLURM_ARRAY_TASK_ID:-}" ] ||
				cc_die 2 "SLURM_ARRAY_JOB_ID=$SLURM_ARRAY_JOB_ID is set but SLURM_ARRAY_TASK_ID is not: give both (an array job's task) or neither"
			CC_JOBID="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
		fi
		CC_NTASKS=${SLURM_NTASKS:-${SLURM_NPROCS:-0}}
		CC_LAUNCHER=${COMMCOST_LAUNCHER:-srun}
		;;
	pbs)
		# Slurm's PBS wrappers (slurm-wlm-torque's qsub) run #PBS scripts
		# as Slurm jobs without PBS_* variables: fall back to Slurm's.
		submit=${PBS_O_WORKDIR:-${SLURM_SUBMIT_DIR:-$PWD}}
		CC_JOBID=${PBS_JOBID:-${SLURM_JOB_ID:-}}
		[ -n "$CC_JOBID" ] || cc_die 1 "not inside a PBS job (no PBS_JOBID): submit with qsub"
		CC_JOBID=${CC_JOBID%%.*}
		# An id such as ".server" is empty once the server is stripped:
		# every such job would share the run directory "pbs-".
		[ -n "$CC_JOBID" ] ||
			cc_die 2 "the job id '${PBS_JOBID:-${SLURM_JOB_ID:-}}' is empty without its server suffix: want NUMBER.SERVER (e.g. 42.server)"
		if [ -n "${PBS_NODEFILE:-}" ] && [ -r "$PBS_NODEFILE" ]; then
			# grep -c counts 0 lines with status 1: not a failure here.
			CC_NTASKS=$(grep -c . "$PBS_NODEFILE" || true)
			[ "$CC_NTASKS" -ge 1 ] ||
				cc_die 2 "the PBS node file $PBS_NODEFILE lists no host: the job has no slots to run on (check the -l nodes=...:ppn=... request and the server's node list)"
		else
			CC_NTASKS=${PBS_NP:-${SLURM_NTASKS:-0}}
		fi
		# mpirun is the only launcher under PBS: another one asked for is
		# refused, not replaced without a word.
		[ "${COMMCOST_LAUNCHER:-mpirun}" = mpirun ] ||
			cc_die 2 "COMMCOST_LAUNCHER=$COMMCOST_LAUNCHER: a PBS job launches with mpirun only (unset it, or set it to mpirun)"
		CC_LAUNCHER=mpirun
		;;
	*) cc_die 2 "cc_init: scheduler must be slurm or pbs, not '$CC_SCHED'" ;;
	esac
	cd "$submit" || cc_die 1 "cannot enter the submit directory $submit"
	CC_BIN=${COMMCOST:-}
	# A bare name (COMMCOST=commcost) is looked up on PATH, as a shell would.
	if [ -n "$CC_BIN" ] && [ "${CC_BIN#*/}" = "$CC_BIN" ]; then
		CC_BIN=$(command -v "$CC_BIN" || echo "$CC_BIN")
	fi
	if [ -z "$CC_BIN" ]; then
		if [ -x bin/commcost ]; then CC_BIN=$PWD/bin/commcost; else CC_BIN=$(command -v commcost || true); fi
	fi
	[ -n "$CC_BIN" ] ||
		cc_die 1 "no commcost binary: build it (make build) in $submit, put it on PATH, or set COMMCOST=/path/to/commcost"
	# A COMMCOST that names no program is bad input (status 2), like a
	# bad flag; a binary that cannot be found at all is a setup failure.
	[ ! -d "$CC_BIN" ] ||
		cc_die 2 "COMMCOST=$CC_BIN is a directory: set it to the commcost binary (e.g. ${CC_BIN%/}/commcost) or to a script that runs it"
	[ -e "$CC_BIN" ] ||
		cc_die 2 "no commcost binary at $CC_BIN: build it (make build) in $submit, put it on PATH, or set COMMCOST=/path/to/commcost"
	[ -x "$CC_BIN" ] ||
		cc_die 2 "$CC_BIN is not executable: chmod +x it, or set COMMCOST to the commcost binary"
	# A binary whose MPI library is not on the loader's path (the module
	# it was built with is not loaded) would fail on every rank at start.
	# ldd fails on what is not a dynamic executable (a wrapper script that
	# loads the module and runs commcost, a static build): nothing to check.
	local missing= libs
	if libs=$(ldd "$CC_BIN" 2>/dev/null); then
		missing=$(awk '/not found/ {print $1}' <<<"$libs" | tr '\n' ' ')
	fi
	[ -z "$missing" ] ||
		cc_die 1 "$CC_BIN cannot start: the library ${missing% } is not found; load the MPI module it was built with (module load openmpi, or mpich) or set LD_LIBRARY_PATH"
	# The kkaccess flags handed over in COMMCOST_KK_ARGS are checked by
	# commcost itself now (its check-only mode measures nothing), not when
	# their step comes after minutes of others.
	if [ -n "${COMMCOST_KK_ARGS:-}" ]; then
		local kk=() why status=0
		cc_kk_args kk
		why=$("$CC_BIN" --check-flags kkaccess "${kk[@]}" 2>&1) || status=$?
		case $status in
		0) ;;
		2) cc_die 2 "COMMCOST_KK_ARGS='$COMMCOST_KK_ARGS': commcost kkaccess refuses it: ${why#commcost: }" ;;
		*) cc_die 1 "COMMCOST_KK_ARGS: $CC_BIN --check-flags kkaccess failed with status $status: $why" ;;
		esac
	fi
	case $CC_LAUNCHER in
	srun)
		command -v srun >/dev/null || cc_die 1 "srun not found: load the Slurm module, or set COMMCOST_LAUNCHER=mpirun"
		if [ -z "${COMMCOST_SRUN_MPI:-}" ]; then
			if srun --mpi=list 2>&1 | grep -qw pmix; then COMMCOST_SRUN_MPI=pmix; else COMMCOST_SRUN_MPI=pmi2; fi
		fi
		;;
	mpirun)
		command -v mpirun >/dev/null ||
			cc_die 1 "mpirun not found: load the MPI module commcost was built with (module load openmpi, or mpich)"
		;;
	*) cc_die 2 "COMMCOST_LAUNCHER=$CC_LAUNCHER: want srun or mpirun" ;;
	esac
	[[ $CC_NTASKS =~ ^[0-9]{1,9}$ ]] || cc_die 2 "the job's task count '$CC_NTASKS' is not a whole number of at most 9 digits"
	[ "$CC_NTASKS" -ge 1 ] || cc_die 2 "the job has no tasks (ntasks=$CC_NTASKS)"
	# The job id names a directory: it must be one name (a scheduler gives
	# digits, underscores and dots; nothing may climb out of the base).
	case $CC_JOBID in
	*/* | . | .. | *[!A-Za-z0-9._-]*)
		cc_die 2 "the job id '$(printf '%q' "$CC_JOBID")' is not a plain name (letters, digits, . _ -): it names the run directory" ;;
	esac
	local base=${COMMCOST_RESULTS:-$submit/results/runs}
	if [ -e "$base" ] && [ ! -d "$base" ]; then
		cc_die 2 "COMMCOST_RESULTS=$base is not a directory: set it to the directory that holds the run directories"
	fi
	CC_RUNDIR=$base/$CC_SCHED-$CC_JOBID
	mkdir -p "$CC_RUNDIR" || cc_die 1 "cannot create the run directory $CC_RUNDIR"
	CC_OUT=$CC_RUNDIR/records.jsonl
	cc_log_env
}

# cc_need_ranks N WHY: stop at once, before any measurement, when the job
# has fewer than N tasks.
cc_need_ranks() {
	if [ "$CC_NTASKS" -lt "$1" ]; then
		case $CC_SCHED in
		slurm) cc_die 2 "$2 needs $1 ranks, the job has $CC_NTASKS: submit with --ntasks=$1 (or more)" ;;
		pbs) cc_die 2 "$2 needs $1 ranks, the job has $CC_NTASKS: submit with -l nodes=...:ppn=... giving $1 slots" ;;
		esac
	fi
}

# cc_log_env: what a reader of the log needs to repeat the job.
cc_log_env() {
	{
		echo "== commcost job $CC_JOBID ($CC_SCHED) on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "binary:   $CC_BIN"
		echo "launcher: $CC_LAUNCHER${COMMCOST_SRUN_MPI:+ --mpi=$COMMCOST_SRUN_MPI}"
		echo "tasks:    $CC_NTASKS"
		echo "rundir:   $CC_RUNDIR"
		echo "mpirun:   $( (mpirun --version 2>/dev/null || mpiexec --version 2>/dev/null) | head -n1)"
		echo "== scheduler environment"
		env | grep -E '^(SLURM|PBS)_' | sort
	} | tee "$CC_RUNDIR/job-env.txt" >&2
}

# cc_launch NTASKS ARGS...: one launch of commcost ARGS on NTASKS ranks
# (all of the job's when NTASKS is 0), with the placement flags given in
# CC_PLACE (srun: --distribution and --cpu-bind; mpirun: --map-by and
# --bind-to). Returns commcost's status.
cc_launch() {
	local n=$1
	shift
	[ "$n" -gt 0 ] || n=$CC_NTASKS
	cc_say "launch ($CC_LAUNCHER, $n ranks): commcost $*"
	case $CC_LAUNCHER in
	srun)
		# shellcheck disable=SC2086
		srun --mpi="$COMMCOST_SRUN_MPI" --ntasks="$n" ${CC_PLACE_SRUN:---distribution=block:block --cpu-bind=cores} \
			"$CC_BIN" "$@"
		;;
	mpirun)
		local hostfile=()
		if [ "$CC_SCHED" = pbs ] && [ -n "${PBS_NODEFILE:-}" ]; then
			if mpirun --version 2>/dev/null | grep -q "Open MPI"; then hostfile=(--hostfile "$PBS_NODEFILE"); else hostfile=(-f "$PBS_NODEFILE"); fi
		fi
		local place=()
		if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
			# shellcheck disable=SC2206
			place=(${CC_PLACE_MPIRUN:---map-by core --bind-to core})
			# More ranks than slots on a node (a test on one small node):
			# Open MPI needs to be told, and spinning ranks must yield.
			if [ "$n" -gt "$(nproc)" ] && [ "${CC_OVERSUBSCRIBE:-0}" = 1 ]; then
				place=(--oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
			fi
		fi
		# The extra flags are split into words without pathname expansion.
		local extra=()
		read -r -a extra <<<"${COMMCOST_MPIRUN_FLAGS:-}"
		mpirun -np "$n" "${hostfile[@]}" "${place[@]}" "${extra[@]}" "$CC_BIN" "$@"
		;;
	esac
}

# cc_report: the last step of every job: report.md and plots/ from the
# records alone.
cc_report() {
	if [ ! -s "$CC_OUT" ]; then
		cc_say "no records in $CC_OUT: nothing to report"
		return 1
	fi
	cc_say "report: $CC_RUNDIR"
	"$CC_BIN" report "$CC_RUNDIR"
}

# The jobs' steps, shared by the Slurm and PBS scripts so both measure the
# same thing. Sizes and sweeps can be narrowed with COMMCOST_SIZES (ping-pong
# and bandwidth sizes), COMMCOST_KK_ARGS (kkaccess flags) and
# COMMCOST_QUICK=1 (small sweeps, for testing the scripts).

# cc_steps_p2p: ping-pong, bandwidth and PRTT between ranks 0 and 1.
cc_steps_p2p() {
	local sizes=${COMMCOST_SIZES:-1:4M} quick=() prtt=()
	if [ "${COMMCOST_QUICK:-0}" = 1 ]; then
		quick=(--max-time 0.3)
		sizes=${COMMCOST_SIZES:-8,1K,64K}
		prtt=(--sizes 8,1K,64K --n 1,8)
	fi
	cc_launch 2 info | tee "$CC_RUNDIR/info.txt"
	cc_launch 2 pingpong --sizes "$sizes" "${quick[@]}" --out "$CC_OUT"
	cc_launch 2 bandwidth --sizes "$sizes" "${quick[@]}" --out "$CC_OUT"
	cc_launch 2 prtt "${prtt[@]}" "${quick[@]}" --out "$CC_OUT"
}

# cc_kk_args ARRAY: the kkaccess step's flags into the array named ARRAY:
# COMMCOST_KK_ARGS or the default sweep, and the quick run's time limit.
# The flags are split into words without pathname expansion: a '*' in
# them must reach commcost, not become the directory's file names.
cc_kk_args() {
	local -n into=$1
	local def='--k 1,2,4,8 --l 64:64K --r 0.25,0.5,1' quick=()
	if [ "${COMMCOST_QUICK:-0}" = 1 ]; then
		def='--k 1,2 --l 64,1K,16K --r 0.5,1'
		quick=(--max-time 0.3)
	fi
	read -r -a into <<<"${COMMCOST_KK_ARGS:-$def}"
	into+=("${quick[@]}")
}

# cc_steps_all: every rank of the job.
cc_steps_all() {
	local quick=() kk=() sizes=(--sizes 0,1K,64K)
	if [ "${COMMCOST_QUICK:-0}" = 1 ]; then
		quick=(--max-time 0.3)
		sizes=(--sizes 8,64K)
	fi
	cc_kk_args kk
	cc_launch 0 info | tee "$CC_RUNDIR/info.txt"
	cc_launch 0 kkaccess "${kk[@]}" --out "$CC_OUT"
	cc_launch 0 alltoall "${sizes[@]}" "${quick[@]}" --out "$CC_OUT"
	cc_launch 0 aggregate "${sizes[@]}" "${quick[@]}" --out "$CC_OUT"
}

# cc_steps_emulate NET: the service network NET (paper 000) needs as many
# ranks as `commcost emulate info` says (BF(3): 8 application + 32 service
# = 40); a smaller job stops here, before measuring anything.
cc_steps_emulate() {
	local net=$1 need
	local info
	info=$("$CC_BIN" emulate info --net "$net") ||
		cc_die 2 "COMMCOST_NET=$net: commcost emulate info refused it (its message is above)"
	need=$(awk '$1 == "ranks" {print $2; exit}' <<<"$info")
	[ -n "$need" ] || cc_die 2 "COMMCOST_NET=$net: commcost emulate info does not know this network"
	cc_need_ranks "$need" "the emulated network $net"
	local quick=()
	[ "${COMMCOST_QUICK:-0}" = 1 ] && quick=(--max-time 0.3 --k 1,2 --l 64,1K)
	CC_OVERSUBSCRIBE=${CC_OVERSUBSCRIBE:-0} cc_launch "$need" emulate kk --net "$net" "${quick[@]}" --out "$CC_OUT"
}
