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
		p[k] = v
	}
	return p, ranks, nil
}
