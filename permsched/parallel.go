package permsched

import (
	"fmt"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// ScheduleParallel is runtime scheduling (paper Section 4, Step 1 of
// Fig. 6, parallel form): every rank knows only its own row (the
// destinations of its messages, and their sizes for a weighted matrix, nil
// otherwise; every rank must agree on which). For CGM each rank first
// compacts its own row (Fig. 5's Random_Swap, with the same per-row random
// stream as the sequential scheduler); the rows are then concatenated with
// Allgatherv, O(dn) (the paper's "concatenate operation"), and every rank
// runs the scheduler on the same matrix, so all ranks hold the same
// schedule. The result sends the same (source, destination, size) in every
// phase as s.Schedule on the whole matrix with the same seed; only the
// message ids may be numbered differently. Collective.
func ScheduleParallel(c mpi.Comm, s Scheduler, row []int32, sizes []int64, seed uint64) (*Schedule, error) {
	m, err := GatherMatrix(c, row, sizes, compactor(s), seed)
	if err != nil {
		return nil, err
	}
	if cg, ok := s.(CGM); ok {
		cg.Compacted = true
		s = cg
	}
	return s.Schedule(m, seed)
}

// compactor returns the per-row step a scheduler runs on the owning rank,
// or nil.
func compactor(s Scheduler) func(i int, row []int32, sizes []int64, seed uint64) {
	if cg, ok := s.(CGM); ok && !cg.Compacted {
		return func(i int, row []int32, sizes []int64, seed uint64) {
			CompactRow(i, len(row), seed, func(a, b int) {
				row[a], row[b] = row[b], row[a]
				if sizes != nil {
					sizes[a], sizes[b] = sizes[b], sizes[a]
				}
			})
		}
	}
	return nil
}

// GatherMatrix concatenates every rank's row into the whole matrix on every
// rank (Allgather of the lengths, Allgatherv of the rows). compact, when
// not nil, first transforms this rank's copy of its row. Every rank returns
// the same matrix, or the same error when a row is invalid. Collective.
func GatherMatrix(c mpi.Comm, row []int32, sizes []int64, compact func(i int, row []int32, sizes []int64, seed uint64), seed uint64) (*Matrix, error) {
	n, me := c.Size(), c.Rank()
	row = append([]int32(nil), row...)
	weighted := sizes != nil
	if weighted {
		sizes = append([]int64(nil), sizes...)
		if len(sizes) != len(row) {
			// Still take part in the collectives below so that no rank
			// hangs; the length mismatch is reported by every rank.
			sizes = append(sizes[:0:0], make([]int64, len(row))...)
			weighted = false
		}
	}
	if compact != nil {
		compact(me, row, sizes, seed)
	}
	// Per rank: number of messages, weighted flag (0/1, 2 = bad sizes).
	hdr := []int64{int64(len(row)), 0}
	switch {
	case weighted:
		hdr[1] = 1
	case sizes != nil:
		hdr[1] = 2
	}
	all := make([]int64, 2*n)
	if err := mpi.AllgatherInt64s(c, hdr, all); err != nil {
		return nil, err
	}
	counts := make([]int, n)
	displs := make([]int, n)
	total, w := 0, all[1]
	for r := 0; r < n; r++ {
		counts[r], displs[r] = int(all[2*r])*4, total*4
		total += int(all[2*r])
		if all[2*r+1] != w || w == 2 {
			return nil, fmt.Errorf("permsched: GatherMatrix: ranks disagree on message sizes (rank %d: %d sizes flag, rank 0: %d), or a rank's sizes do not match its row", r, all[2*r+1], w)
		}
	}
	if total > maxMessages {
		return nil, fmt.Errorf("permsched: GatherMatrix: %d messages, at most %d", total, maxMessages)
	}
	flat := make([]int32, total)
	if err := c.Allgatherv(int32Bytes(row), int32Bytes(flat), counts, displs); err != nil {
		return nil, err
	}
	var flatSizes []int64
	if w == 1 {
		flatSizes = make([]int64, total)
		for r := range counts {
			counts[r] *= 2
			displs[r] *= 2
		}
		if err := c.Allgatherv(mpi.Int64Bytes(sizes), mpi.Int64Bytes(flatSizes), counts, displs); err != nil {
			return nil, err
		}
	}
	rows := make([][]int32, n)
	var rowSizes [][]int64
	if w == 1 {
		rowSizes = make([][]int64, n)
	}
	for r, at := 0, 0; r < n; r++ {
		k := int(all[2*r])
		rows[r] = flat[at : at+k : at+k]
		if w == 1 {
			rowSizes[r] = flatSizes[at : at+k : at+k]
		}
		at += k
	}
	if w == 1 {
		return NewWeighted(n, rows, rowSizes)
	}
	return NewMatrix(n, rows)
}

// int32Bytes views v as bytes without copying (all ranks share the host
// representation, as MPI_BYTE transfer assumes).
func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}
