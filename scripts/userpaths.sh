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
	case $real in
	/dev/shm | /dev/shm/*) ;;
	/dev | /dev/* | /proc | /proc/* | /sys | /sys/*) echo "want a file to append rows to, not one of the kernel's $real"; return 1 ;;
	esac
}
