package patterns

import (
	"fmt"

	"github.com/commcost/commcost/opts"
)

// KKGrid is a grid of k-k-accesses (paper 000, section 4): every (k, l, r)
// of K x L x R, the design the trilinear model T(k, l, r) is fitted on.
// It is the one type of the k x l x r sweeps: bound with the flag prefix
// "cal-" it is the calibration sweep of an experiment (--cal-k, --cal-l,
// --cal-r); embedded, a sweep's own grid (--k, --l, --r). Each sweep
// measures the cells in its own order (records stream in it).
type KKGrid struct {
	K opts.Ints   `flag:"k" default:"1,2,4,8" param:"k" usage:"send hot spots k (packets per accessing rank): a list (1,2,4,8) or a power-of-two range (1:8)"`
	L opts.Ints   `flag:"l" default:"64,1K,16K" param:"l" usage:"packet sizes l in bytes: a list (64,1K,16K) or a power-of-two range (64:16K); K = 1024"`
	R opts.Floats `flag:"r" default:"0.5,1" param:"r" usage:"portions r of accessing ranks, each in (0, 1]"`
}

// MaxPackets is the largest send hot spot a k-k-access sends: its sequence
// numbers carry the packet index in 16 bits.
const MaxPackets = maxAccessIndex

// Cells is the number of k-k-accesses of the grid.
func (g KKGrid) Cells() int { return len(g.K) * len(g.L) * len(g.R) }

// Validate checks every value against the k-k-access's parameters,
// naming the fields K, L and R.
func (g KKGrid) Validate() error {
	return Checks(
		func() error { return CheckPackets("K", g.K) },
		func() error { return CheckValues("L", BenchKKAccess, "l", g.L) },
		func() error { return CheckValues("R", BenchKKAccess, "r", g.R) })
}

// CheckPackets checks the send hot spots of field: each from 1 to
// MaxPackets.
func CheckPackets(field string, ks []int) error {
	for _, k := range ks {
		if k > MaxPackets {
			return &opts.FieldError{Field: field, Reason: fmt.Sprintf("%d packets is above the most a k-k-access sends (%d)", k, MaxPackets)}
		}
	}
	return CheckValues(field, BenchKKAccess, "k", ks)
}

// Each calls f for every cell, k outermost, then l, then r, and stops at
// the first error.
func (g KKGrid) Each(f func(k, l int, r float64) error) error {
	for _, k := range g.K {
		for _, l := range g.L {
			for _, r := range g.R {
				if err := f(k, l, r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
