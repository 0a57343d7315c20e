# shellcheck shell=bash
# mpi.sh: sourced by the other scripts: which MPI a build uses, and the
# launcher, compiler and pkg-config name that belong to it.
#
# The implementation is $MPI (openmpi or mpich) when set, else mpich when
# $TAGS names the build tag mpich (make TAGS="-tags mpich"), else openmpi:
# the rule of mpi/native's cgo files and mpi/mpirun.
#
# Debian installs Open MPI and MPICH side by side and update-alternatives
# decides what plain mpirun, mpiexec and mpicc are (on amd64 Open MPI's
# priority 50 beats MPICH's 40, but an administrator or another
# architecture may choose otherwise); Open MPI's mpirun cannot start an
# MPICH program or the reverse. So every launcher and compiler is named
# explicitly (mpirun.openmpi, mpicc.openmpi; mpiexec.mpich, mpicc.mpich),
# and a plain name (a module system's) is used only when its --version shows
# the right implementation. mpi/mpirun does the same for the Go tests.

# mpi_impl prints the selected implementation, or fails naming the
# variable and the accepted values.
mpi_impl() {
	local from_tags=openmpi tags=${TAGS:-} w
	for w in ${tags//[,=]/ }; do
		if [ "$w" = mpich ]; then from_tags=mpich; fi
	done
	case ${MPI:-} in
	"") echo "$from_tags" ;;
	openmpi | mpich)
		if [ "$MPI" != "$from_tags" ] && [ -n "${tags// /}" ]; then
			echo "MPI=$MPI does not match TAGS=\"$tags\" (the mpich tag selects MPICH; without it Open MPI)" >&2
			return 2
		fi
		echo "$MPI"
		;;
	*)
		echo "MPI=$MPI: accepted values are openmpi and mpich" >&2
		return 2
		;;
	esac
}

# mpi_name IMPL: the implementation's name for messages.
mpi_name() { if [ "$1" = mpich ]; then echo MPICH; else echo "Open MPI"; fi; }

# mpi_pkgconfig IMPL: the pkg-config package cgo links (mpi/native).
mpi_pkgconfig() { if [ "$1" = mpich ]; then echo mpich; else echo ompi-c; fi; }

# mpi_tags IMPL: the go build flags that select IMPL.
mpi_tags() { if [ "$1" = mpich ]; then echo "-tags mpich"; fi; }

# mpi_packages IMPL: the Debian packages that provide IMPL.
mpi_packages() { if [ "$1" = mpich ]; then echo "libmpich-dev mpich"; else echo "libopenmpi-dev openmpi-bin"; fi; }

# mpi_version_is IMPL PROG: does PROG --version name IMPL? (Open MPI's
# mpirun prints "mpirun (Open MPI) 4.1.4", MPICH's Hydra "HYDRA build
# details".)
mpi_version_is() {
	local out
	out=$("$2" --version 2>&1) || true
	case $1 in
	openmpi) [[ $out == *"Open MPI"* || $out == *OpenRTE* ]] ;;
	mpich) [[ $out == *HYDRA* ]] ;;
	*) return 1 ;;
	esac
}

# mpi_version IMPL LAUNCHER: prints "Open MPI 4.1.4" or "MPICH 4.0.2".
mpi_version() {
	local v
	if [ "$1" = mpich ]; then
		v=$("$2" --version 2>/dev/null | awk '$1 == "Version:" {print $2; exit}')
	else
		v=$("$2" --version 2>/dev/null | awk 'NR == 1 {print $NF; exit}')
	fi
	echo "$(mpi_name "$1") ${v:-(version unknown)}"
}

# mpi_launcher IMPL: prints the path of IMPL's launcher, or fails.
# $COMMCOST_MPIRUN (the override mpi/mpirun reads) comes first when it is
# IMPL's.
mpi_launcher() {
	local names p n
	if [ -n "${COMMCOST_MPIRUN:-}" ] && p=$(command -v "$COMMCOST_MPIRUN" 2>/dev/null) && mpi_version_is "$1" "$p"; then
		echo "$p"
		return 0
	fi
	case $1 in
	mpich) names="mpiexec.mpich mpirun.mpich mpiexec mpirun" ;;
	*) names="mpirun.openmpi mpirun mpiexec" ;;
	esac
	for n in $names; do
		p=$(command -v "$n" 2>/dev/null) || continue
		if mpi_version_is "$1" "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# mpi_cc IMPL: prints IMPL's C compiler wrapper, or fails.
mpi_cc() {
	local p
	if p=$(command -v "mpicc.$1" 2>/dev/null); then
		echo "$p"
		return 0
	fi
	p=$(command -v mpicc 2>/dev/null) || return 1
	# mpicc -show prints the underlying command line: Open MPI's links
	# -lmpi, MPICH's -lmpich.
	case $1 in
	mpich) "$p" -show 2>/dev/null | grep -q -- -lmpich || return 1 ;;
	*) "$p" -show 2>/dev/null | grep -q -- '-lmpi\b' || return 1 ;;
	esac
	echo "$p"
}

# mpi_flags IMPL NP: extra launcher flags for NP ranks on this machine. With
# more ranks than cores Open MPI needs --oversubscribe and
# mpi_yield_when_idle, or spinning ranks starve each other (ENVIRONMENT.md);
# MPICH's Hydra oversubscribes by default and has no such flag.
mpi_flags() {
	if [ "$1" = openmpi ] && [ "$2" -gt "$(nproc)" ]; then
		echo "--oversubscribe --mca mpi_yield_when_idle 1"
	fi
}
