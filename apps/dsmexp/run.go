package dsmexp

import (
	"cmp"
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The experiments as sweep bodies: each runs collectively on one world and
// hands its records to emit (every rank the same records; the Output keeps
// rank 0's).

// RunBitonic runs Bitonic with each number of keys per rank and emits one
// record per strategy and point (BitonicRecord, with the ratios to the
// hand version when it runs).
func RunBitonic(c mpi.Comm, s Setup, keys []int, meta results.Meta, emit func(results.Record) error) error {
	return Bitonic(c, s, keys, func(r Result, hand *Result) error {
		return emit(BitonicRecord(r, c.Size(), meta, hand))
	})
}

// BitonicRankBytes is the memory bitonic sorting with m keys per rank
// takes on one rank: its block of m 4-byte keys, the partner's block it
// merges with and the merged result, each also as a store variable's home
// copy (six blocks); the verification gathers every key to rank 0 three
// times over (apps.bitonicVerify: the gathered bytes, the oracle, the
// output), three blocks per rank of the world in all.
func BitonicRankBytes(m int) float64 { return 9 * 4 * float64(m) }

// BarnesHutPoints are the body counts of a Barnes-Hut sweep: the list
// Bodies, or, when PerRank is set, N = PerRank x P on every world of P
// ranks (paper 004, Fig. 11: 200 bodies per processor over the mesh).
type BarnesHutPoints struct {
	Bodies  []int
	PerRank int
	// CellsFlag names --cells-per-body as given ("--cells-per-body
	// 1e12"), for Check's message; empty: the value formatted.
	CellsFlag string
}

// For returns the body counts on p ranks.
func (b BarnesHutPoints) For(p int) []int {
	if b.PerRank > 0 {
		return []int{b.PerRank * p}
	}
	return b.Bodies
}

// Check refuses a world of p ranks that cfg cannot simulate at one of the
// body counts (apps.BarnesHutConfig.Check).
func (b BarnesHutPoints) Check(cfg apps.BarnesHutConfig, p int) error {
	for _, n := range b.For(p) {
		c := cfg
		c.Bodies = n
		if err := c.Check(p); err != nil {
			if c.CellsTooMany(p) {
				// The pools of cells, not N, overflow the references.
				flag := cmp.Or(b.CellsFlag, fmt.Sprintf("--cells-per-body %v", cfg.CellsPerBody))
				return fmt.Errorf("%s: barneshut on %d ranks: N = %d bodies with that many cells each do not fit the cell references (int32); want --cells-per-body <= %s for N = %d on %d ranks", flag, p, n, apps.FormatCells(c.MaxCellsPerBody(p)), n, p)
			}
			if max := cfg.MaxBodies(p); n > max {
				// Name the flag that set N and its largest value here.
				if b.PerRank > 0 {
					return fmt.Errorf("--bodies-per-rank %d: barneshut on %d ranks: N = %d bodies and their cells do not fit the cell references (int32); want --bodies-per-rank <= %d on %d ranks", b.PerRank, p, n, max/p, p)
				}
				return fmt.Errorf("--bodies %d: barneshut on %d ranks: %w", n, p, err)
			}
			return fmt.Errorf("barneshut on %d ranks: %w", p, err)
		}
	}
	return nil
}

// RunBarnesHut runs BarnesHut at the body counts of pts for this world's
// size and emits one record per strategy, point and phase
// (BarnesHutRecords).
func RunBarnesHut(c mpi.Comm, s Setup, cfg apps.BarnesHutConfig, pts BarnesHutPoints, meta results.Meta, emit func(results.Record) error) error {
	return BarnesHut(c, s, cfg, pts.For(c.Size()), func(r Result) error {
		for _, rec := range BarnesHutRecords(r, c.Size(), meta) {
			if err := emit(rec); err != nil {
				return err
			}
		}
		return nil
	})
}
