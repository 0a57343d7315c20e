#!/usr/bin/env bash
# forced_alg.sh [--np "2 4"] [--ops "allreduce bcast ..."] [--sizes LIST] [--max-time S] [--out DIR]
#
# Checks the closed forms of the classic collective algorithms (model
# collalg, model/collalg.go) against the algorithm they describe, run by
# Open MPI on this machine: per rank count of --np, it measures the
# point-to-point alpha and beta (pingpong on 2 ranks; multilat, every pair
# at once, on more), the local reduction's gamma (reducelocal, every rank
# at once), and every collective of --ops at --sizes with each coll/tuned
# algorithm that has a closed form, forced with
#
#   mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<op>_algorithm N
#
# (N from ompi_info --param coll tuned --level 9), and with the library's
# default. The records name the algorithm (param alg). Then
# 'commcost fit collalg' prints, per rank count, each forced point against
# its closed form, and for each default point the forced algorithm and the
# closed form nearest it: which algorithm the default picked.
#
# Records go to DIR/forced_np<N>.jsonl (default DIR: results/bench/forced),
# the fit reports to DIR/forced_np<N>.txt. Open MPI only (MPICH forces
# algorithms with MPIR_CVAR_<OP>_INTRA_ALGORITHM; not run here).
set -euo pipefail
# shellcheck source=scripts/userpaths.sh
. "$(dirname "$0")/userpaths.sh"
cd "$(dirname "$0")/.."
nps="2 4" ops="allreduce bcast reduce allgather alltoall reduce_scatter_block barrier"
sizes=4,1K,16K,64K,256K,1M maxtime=0.5 out=results/bench/forced
# Settings are shown with control characters as '?'.
printable() { printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?'; }
usage() { echo "forced_alg: $1; usage: scripts/forced_alg.sh [--np \"2 4\"] [--ops \"allreduce bcast ...\"] [--sizes LIST] [--max-time S] [--out DIR]" >&2; exit 2; }
bad() { echo "forced_alg: $1" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--np | --ops | --sizes | --max-time | --out) [ $# -ge 2 ] || usage "$1 needs a value" ;;
	esac
	case "$1" in
	--np) nps=$2; shift 2 ;;
	--ops) ops=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--max-time) maxtime=$2; shift 2 ;;
	--out) out=$2; from_caller out; shift 2 ;;
	-h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) usage "unknown option '$(printable "$1")'" ;;
	esac
done

# The coll/tuned algorithms with a closed form in model/collalg.go, by op.
declare -A closed=(
	[allreduce]="basic_linear nonoverlapping recursive_doubling ring segmented_ring rabenseifner"
	[bcast]="basic_linear binomial scatter_allgather scatter_allgather_ring"
	[reduce]="linear binomial rabenseifner"
	[allgather]="bruck recursive_doubling ring neighbor two_proc"
	[alltoall]="pairwise modified_bruck two_proc"
	[reduce_scatter_block]="basic_linear recursive_halving butterfly"
	[gather]="basic_linear binomial linear_sync"
	[scatter]="basic_linear binomial linear_nb"
	[barrier]="linear double_ring recursive_doubling bruck two_proc tree"
)

# shellcheck source=batch/sizes.sh
. "$(dirname "$0")/batch/sizes.sh"

# Every setting is checked before anything is built or launched. Rank
# counts: 2 at least, at most 16 per core (more only oversubscribe).
max_np=$((16 * $(nproc)))
np_form="want rank counts from 2 to $max_np (16 per core of this machine's $(nproc)), each once, e.g. \"2 4\""
[ -n "${nps// /}" ] || bad "--np '$(printable "$nps")': $np_form"
seen=" "
for n in $nps; do
	[[ $n =~ ^[1-9][0-9]{0,6}$ && $n -ge 2 && $n -le $max_np && $seen != *" $n "* ]] || bad "--np '$(printable "$nps")': $np_form"
	seen+="$n "
done
# --ops: commcost collective's operations; those without a closed form
# are measured with the library's default only.
colls="barrier bcast reduce allreduce gather gatherv scatter scatterv allgather allgatherv alltoall alltoallv reduce_scatter_block reduce_scatter"
op_form="want some of the collectives $colls, each once (with closed forms: $(printf '%s\n' "${!closed[@]}" | sort | tr '\n' ' ' | sed 's/ $//'))"
[ -n "${ops// /}" ] || bad "--ops '$(printable "$ops")': $op_form"
seen=" "
for op in $ops; do
	[[ " $colls " == *" $op "* && $seen != *" $op "* ]] || bad "--ops '$(printable "$ops")': $op_form"
	seen+="$op "
done
cc_sizes_ok "$sizes" || bad "--sizes '$(printable "$sizes")': want LO:HI (LO doubled up to HI) or a comma list of sizes, each once (e.g. 4,1K,16K), a size at most 2G less 1 bytes"
awk -v t="$maxtime" 'BEGIN{exit !(t ~ /^([0-9]+\.?[0-9]*|\.[0-9]+)$/ && t + 0 > 0 && t + 0 <= 3600)}' || bad "--max-time '$(printable "$maxtime")': want a number of seconds > 0, at most 3600"
[ -n "$out" ] && { [ ! -e "$out" ] || [ -d "$out" ]; } || bad "--out '$(printable "$out")': want a directory for the records and reports"
! kernel_place "$out" || bad "--out '$(printable "$out")': under /proc, /sys or /dev, the kernel's files: want a directory of yours for the records and reports"
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# shellcheck source=scripts/mpi.sh
. scripts/mpi.sh
impl=$(mpi_impl) || exit 2
[ "$impl" = openmpi ] || { echo "forced_alg: Open MPI only (MPI=$impl)" >&2; exit 2; }
launcher=$(mpi_launcher "$impl") || { echo "$0: no Open MPI launcher; run scripts/setup.sh" >&2; exit 1; }
command -v ompi_info >/dev/null || { echo "forced_alg: no ompi_info" >&2; exit 1; }
mkdir -p bin "$out"
# shellcheck disable=SC2086 # TAGS is "-tags mpich": two words
go build ${TAGS:-} -ldflags "-X github.com/commcost/commcost/results.buildCommit=$(git describe --always --dirty 2>/dev/null || echo unknown)" -o bin/commcost ./cmd/commcost

# number OP NAME: the MCA value of NAME in ompi_info's list for OP.
tuned=$(ompi_info --param coll tuned --level 9 2>/dev/null) || { echo "forced_alg: ompi_info --param coll tuned --level 9 failed: no coll/tuned algorithms to force" >&2; exit 1; }
number() {
	printf '%s\n' "$tuned" | awk -v p="\"coll_tuned_$1_algorithm\"" -v n="$2" '
		index($0, p) { hit = 1; next }
		hit && /Valid values/ {
			s = $0; sub(/.*Valid values: /, "", s); k = split(s, vs, ", ")
			for (i = 1; i <= k; i++) { split(vs[i], kv, ":"); gsub(/"/, "", kv[2]); if (kv[2] == n) { print kv[1]; exit } }
			exit }'
}
# shellcheck disable=SC2046
launch() { local n=$1; shift; "$launcher" -np "$n" $(mpi_flags "$impl" "$n") "$@"; }
for np in $nps; do
	f=$out/forced_np$np.jsonl
	rm -f "$f"
	echo "== $np ranks (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	if [ "$np" = 2 ]; then
		launch 2 bin/commcost pingpong --sizes 1:1M --max-time "$maxtime" --out "$f" --quiet >/dev/null
	else
		launch "$np" bin/commcost multilat --sizes 1:1M --max-time "$maxtime" --iters 10 --out "$f" --quiet >/dev/null
	fi
	launch "$np" bin/commcost reducelocal --sizes 4:1M --max-time "$maxtime" --out "$f" --quiet >/dev/null
	for op in $ops; do
		launch "$np" bin/commcost collective --ops "$op" --sizes "$sizes" --max-time "$maxtime" --out "$f" --quiet >/dev/null
		for alg in ${closed[$op]:-}; do
			[ "$alg" = two_proc ] && [ "$np" != 2 ] && continue
			n=$(number "$op" "$alg")
			[ -n "$n" ] || { echo "forced_alg: ompi_info lists no $op algorithm $alg" >&2; continue; }
			echo "   $op $alg (coll_tuned_${op}_algorithm $n)" >&2
			launch "$np" --mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${op}_algorithm" "$n" \
				bin/commcost collective --ops "$op" --sizes "$sizes" --max-time "$maxtime" --out "$f" --quiet >/dev/null
		done
	done
	echo
	echo "## $np ranks"
	bin/commcost fit collalg "$f" --holdout none | tee "$out/forced_np$np.txt"
done
