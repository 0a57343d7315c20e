# sizes.sh: sourced by scripts/batch/lib.sh and scripts/forced_alg.sh.
# shellcheck shell=bash

# cc_sizes_ok LIST: is LIST what commcost's --sizes takes (opts.ParseSizes):
# LO:HI with LO <= HI, or a comma list of sizes, each once; a size is
# digits with an optional K, M or G (K = 1024), at most 2G less 1 bytes?
cc_sizes_ok() {
	awk -v s="$1" '
		function size(t,   m, u) {
			gsub(/^[ \t]+|[ \t]+$/, "", t)
			m = 1; u = toupper(substr(t, length(t)))
			if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824
			if (m > 1) t = substr(t, 1, length(t) - 1)
			if (t !~ /^[-+]?[0-9]+$/) return -1
			t = t * m
			return (t < 0 || t > 2147483647) ? -1 : t
		}
		BEGIN {
			if (index(s, ":")) {
				k = split(s, p, ":")
				exit !(k == 2 && (lo = size(p[1])) >= 0 && (hi = size(p[2])) >= 0 && lo <= hi)
			}
			k = split(s, p, ",")
			if (k == 0) exit 1
			for (i = 1; i <= k; i++) { v = size(p[i]); if (v < 0 || (v in seen)) exit 1; seen[v] = 1 }
		}'
}
