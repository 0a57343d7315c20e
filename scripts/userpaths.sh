# userpaths.sh: sourced, before their cd to the checkout, by the scripts
# that take paths from the user (arguments, environment variables). It
# keeps the caller's directory; from_caller VAR... makes each named
# variable's relative path absolute against it, so that sub/x.tsv means the
# caller's sub/, not one inside the checkout. Empty and absolute values
# stay as they are.
caller_dir=$PWD
from_caller() {
	local v
	for v; do
		case ${!v-} in
		'' | /*) ;;
		*) printf -v "$v" '%s/%s' "$caller_dir" "${!v}" ;;
		esac
	done
}

# rows_file_problem FILE: succeeds when FILE is a place to append rows to:
# a writable regular file, or a new one in a writable directory (made if
# missing), outside the kernel's /proc, /sys and /dev (/dev/shm is memory).
# Otherwise it prints why, so that a bench refuses it before measuring.
rows_file_problem() {
	local f=$1 d real
	[ -n "$f" ] && [ ! -d "$f" ] || { echo "want a file to append rows to, not a directory"; return 1; }
	if [ -e "$f" ]; then
		[ -f "$f" ] || { echo "want a file to append rows to: it is not a regular file (a device, FIFO or socket)"; return 1; }
		[ -w "$f" ] || { echo "want a file to append rows to: it is not writable"; return 1; }
		d=$f
	else
		d=$(dirname -- "$f")
		while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done
		[ -d "$d" ] && [ -w "$d" ] || { echo "want a file to append rows to: '$d' is not a writable directory"; return 1; }
	fi
	real=$(realpath -- "$d") || { echo "want a file to append rows to: '$d' cannot be resolved"; return 1; }
	! kernel_place "$real" || { echo "want a file to append rows to, not one of the kernel's $real"; return 1; }
}

# kernel_place PATH: succeeds when PATH, or the nearest existing directory
# above it, resolves (symbolic links followed) under /proc, /sys or /dev
# but /dev/shm: the kernel's files, where no output belongs (a move onto
# /dev/null as root would replace the device).
kernel_place() {
	local d=$1 real
	while [ ! -e "$d" ] && [ "$d" != / ] && [ "$d" != . ]; do d=$(dirname -- "$d"); done
	real=$(realpath -- "$d" 2>/dev/null) || return 1
	case $real in
	/dev/shm | /dev/shm/*) return 1 ;;
	/dev | /dev/* | /proc | /proc/* | /sys | /sys/*) return 0 ;;
	esac
	return 1
}
