package patterns

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// ParseAssignments parses an instance typed as key=value pairs (commcost
// predict MODEL.json PATTERN k=4 l=1K): numbers become float64, other
// values strings; "ranks" is returned separately. Keys must be non-empty
// identifiers and appear once.
func ParseAssignments(args []string) (results.Params, int, error) {
	p := results.Params{}
	ranks := 0
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" || v == "" {
			return nil, 0, fmt.Errorf("%q is not key=value", a)
		}
		for _, c := range k {
			if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
				return nil, 0, fmt.Errorf("%q: key %q must be letters, digits and _", a, k)
			}
		}
		if _, dup := p[k]; dup || (k == "ranks" && ranks != 0) {
			return nil, 0, fmt.Errorf("%q: %s given twice", a, k)
		}
		if k == "ranks" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<24 {
				return nil, 0, fmt.Errorf("%q: ranks wants an integer from 1 to %d", a, 1<<24)
			}
			ranks = n
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, 0, fmt.Errorf("%q: %s must be finite", a, k)
			}
			p[k] = f
			continue
		}
		if n, err := opts.ParseSize(v); err == nil {
			p[k] = float64(n) // 64K, 1M
			continue
		}
		if f, ok := unitNumber(v); ok {
			p[k] = f // 3G: a number, beyond what a size flag takes; the spec says so
			continue
		}
		p[k] = v
	}
	return p, ranks, nil
}

// unitNumber is the value of digits with a K, M or G (K = 1024) that
// opts.ParseSize refuses as more than an MPI call carries, so that the
// parameter's own check words it ("bytes = 3G: must be ... to
// 2147483647 bytes") instead of calling it no number.
func unitNumber(v string) (float64, bool) {
	if len(v) < 2 {
		return 0, false
	}
	mult := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}[v[len(v)-1]&^0x20]
	digits := v[:len(v)-1]
	if mult == 0 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(digits, 64)
	return f * mult, err == nil && !math.IsInf(f*mult, 0)
}
