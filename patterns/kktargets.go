package patterns

import (
	"math/rand/v2"
	"slices"
)

// Targets draws one k-k-access as Run draws each repetition's (Definition
// 2 and its Note: a random set of round(R p) accessing ranks, then for each
// of the K steps a random (partial) permutation restricted to them, with
// Distinct, Self and Block honoured) from rng: targets[i] are rank i's K
// targets, nil for a rank that does not access. Every rank that calls it with the
// same rng state gets the same draw. Drivers that run the pattern through
// another protocol (apps.StoreKKAccess, over a global-variable store) use
// it, so their accesses are distributed exactly as the pattern's.
func (kk KKAccess) Targets(rng *rand.Rand, p int) [][]int {
	pl := newAccessPlan(p, kk.K, 1)
	drawKK(rng, pl, 0, AccessingRanks(kk.R, p), kk.Distinct, kk.Self, kk.Block)
	out := make([][]int, p)
	for i := range p {
		if row := pl.row(0, i); row[0] >= 0 {
			out[i] = slices.Clone(row)
		}
	}
	return out
}
