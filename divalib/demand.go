package divalib

import (
	"fmt"

	"github.com/commcost/commcost/internal/sysmem"
)

// Memory the dsm experiments ask of each rank, from their parameters,
// before anything is allocated (sysmem.Need, Bytes per rank), so that the
// command refuses `dsm matsquare --blocks 1e9` or `dsm overhead --reads
// 1e12` with one message instead of dying in the runtime's out-of-memory
// error.

// Demand is what RunMatSquare asks of each of p ranks at its largest block
// of m ints on the sqrt(p) x sqrt(p) mesh: the accumulator, the two
// operands and the raw read buffer, the rank's own block as a store home,
// a cached copy of every block of its row and column (2 sqrt(p) blocks;
// the hand version holds the same as its row and column arrays), and,
// with Verify, the oracle's matrices on every rank: the cached matrix, the
// next step and, under mpirun, the allgathered bands (at most four n x n
// matrices, 16 p m bytes) and the rank's own band (one block). Four blocks
// are in flight in a step of the hand version.
func (e MatSquareExperiment) Demand(p int) sysmem.Need {
	q := float64(isqrt(max(p, 1)))
	fp := float64(max(p, 1))
	var worst sysmem.Need
	for _, m := range e.Blocks {
		blk := 4 * float64(m)
		b := blk * (6 + 2*q)
		if e.Verify {
			b += blk * (4*fp + 1)
		}
		if b > worst.Bytes {
			worst = sysmem.Need{Field: "blocks", Bytes: b, InFlight: 4 * blk,
				What: fmt.Sprintf("the matrix square's blocks of %d ints on %d ranks", m, p)}
		}
	}
	return worst
}

// remoteReadBatch is RemoteReadConfig's default Batch, which RunOverhead
// uses.
const remoteReadBatch = 100

// Demand is what RunOverhead asks of each rank: every timed remote read's
// time (Reads per size, kept, reduced in place and copied into the record
// and its summary: four float64 a read), the batch of variables of the
// largest read size homed at the rank with a cached copy of as many
// (RemoteReadConfig.Batch of each, and the buffers of their rewrites
// between batches), and the per-batch times of the cached
// accesses and barriers. Field names the term that dominates: "reads"
// (the kept times), "batches" (the per-batch times) or "sizes" (the
// variables).
func (e OverheadExperiment) Demand() sysmem.Need {
	maxSize := 0
	for _, l := range e.ReadSizes {
		maxSize = max(maxSize, l)
	}
	reads := 4 * 8 * float64(max(e.Reads, 0)) * float64(len(e.ReadSizes))
	vars := 4 * remoteReadBatch * float64(maxSize)
	batches := 4 * 8 * float64(max(e.Batches, 0))
	total := reads + vars + batches
	switch {
	case batches > reads && batches > vars:
		return sysmem.Need{Field: "batches", Bytes: total,
			What: fmt.Sprintf("the times of %d timed batches of each access", e.Batches)}
	case reads >= vars:
		return sysmem.Need{Field: "reads", Bytes: total,
			What: fmt.Sprintf("the times of %d remote reads of each of %d sizes", e.Reads, len(e.ReadSizes))}
	}
	return sysmem.Need{Field: "sizes", Bytes: total,
		What: fmt.Sprintf("%d variables of %d bytes homed and cached per rank", remoteReadBatch, maxSize)}
}
