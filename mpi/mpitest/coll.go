package mpitest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/commcost/commcost/mpi"
)

const fillByte = 0xCC // marks receive-buffer bytes a collective must not write

// roots are the roots a rooted collective is tried with: all of them on
// small communicators, the first, middle and last on large ones.
func roots(n int) []int {
	if n <= 8 {
		return identity(n)
	}
	return []int{0, n / 2, n - 1}
}

func identity(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

func filled(n int) []byte { return bytes.Repeat([]byte{fillByte}, n) }

// layout places per-rank blocks of the given counts in a buffer, separated
// by gap bytes, in reverse rank order when reverse is set (so displacements
// are not monotone). It returns the displacements and the buffer length.
func layout(counts []int, gap int, reverse bool) (displs []int, total int) {
	displs = make([]int, len(counts))
	for k := range counts {
		i := k
		if reverse {
			i = len(counts) - 1 - k
		}
		displs[i] = total
		total += counts[i] + gap
	}
	return displs, total
}

func rankSize(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	if n < 1 || me < 0 || me >= n {
		return failf("Rank %d, Size %d", me, n)
	}
	if c.Backend() == "" {
		ck.errorf("Backend is empty")
	}
	ranks := make([]int64, n)
	if err := mpi.AllgatherInt64s(c, []int64{int64(me)}, ranks); err != nil {
		return failf("Allgather: %w", err)
	}
	for i, r := range ranks {
		if r != int64(i) {
			ck.errorf("rank at position %d reports Rank %d", i, r)
		}
	}
	for _, op := range []mpi.Op{mpi.OpMin, mpi.OpMax} {
		got := []int64{0}
		if err := c.AllreduceInt64s([]int64{int64(n)}, got, op); err != nil {
			return failf("Allreduce: %w", err)
		}
		if got[0] != int64(n) {
			ck.errorf("ranks disagree on Size: %v of Size is %d, mine %d", op, got[0], n)
		}
	}
	return ck.err()
}

func wtime(c mpi.Comm) error {
	ck := newChecker(c)
	if tick := c.Wtick(); !(tick > 0 && tick < 1) {
		ck.errorf("Wtick = %g, want in (0, 1)", tick)
	}
	t0 := c.Wtime()
	prev := t0
	for range 1000 {
		t := c.Wtime()
		if t < prev {
			ck.errorf("Wtime went back from %g to %g", prev, t)
			break
		}
		prev = t
	}
	const sleep = 20 * time.Millisecond
	time.Sleep(sleep)
	// Half the sleep allows for a coarse clock; the upper bound only
	// catches a wrong unit.
	if d := c.Wtime() - t0; d < sleep.Seconds()/2 || d > 100 {
		ck.errorf("Wtime advanced %g s over a %v sleep", d, sleep)
	}
	return ck.err()
}

// collectiveErrors: invalid roots, operations and counts fail with their
// MPI classes on every rank, and the communicator works afterwards. Every
// rank passes the same invalid argument, so that no rank communicates.
func collectiveErrors(c mpi.Comm) error {
	ck := newChecker(c)
	n := c.Size()
	buf := make([]byte, 8)
	ck.class("Bcast with root Size()", c.Bcast(buf, n), mpi.ErrRoot)
	ck.class("Bcast with root -1000", c.Bcast(buf, -1000), mpi.ErrRoot)
	ck.class("Gather with root Size()", c.Gather(buf, make([]byte, 8*n), n), mpi.ErrRoot)
	ck.class("Scatter with root Size()+1", c.Scatter(make([]byte, 8*n), buf, n+1), mpi.ErrRoot)
	ck.class("ReduceInt64s with root Size()", c.ReduceInt64s([]int64{1}, []int64{0}, mpi.OpSum, n), mpi.ErrRoot)
	ck.class("AllreduceInt64s with Op(99)", c.AllreduceInt64s([]int64{1}, []int64{0}, mpi.Op(99)), mpi.ErrOp)
	ck.class("AllreduceFloat64s with Op(-1)", c.AllreduceFloat64s([]float64{1}, []float64{0}, mpi.Op(-1)), mpi.ErrOp)
	long := make([]int, n+1)
	ck.class("Allgatherv with Size()+1 counts", c.Allgatherv(nil, make([]byte, 8*n), long, long), mpi.ErrArg, mpi.ErrCount)
	short := make([]int, n-1)
	zeros := make([]int, n)
	ck.class("Alltoallv with Size()-1 send counts", c.Alltoallv(nil, short, short, nil, zeros, zeros), mpi.ErrArg, mpi.ErrCount)

	// Still usable.
	if err := c.Barrier(); err != nil {
		return failf("Barrier after errors: %w", err)
	}
	sum := []int64{0}
	if err := c.AllreduceInt64s([]int64{1}, sum, mpi.OpSum); err != nil {
		return failf("Allreduce after errors: %w", err)
	}
	if sum[0] != int64(n) {
		ck.errorf("Allreduce after errors: sum of ones is %d, want %d", sum[0], n)
	}
	return ck.err()
}

// barrier checks repeated barriers, and that no rank leaves a barrier
// before the last has entered: each rank in turn enters late and first
// looks for messages the others send after leaving.
func barrier(c mpi.Comm) error {
	const tagAfter = 50
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for range 20 {
		if err := c.Barrier(); err != nil {
			return failf("Barrier: %w", err)
		}
	}
	for _, late := range roots(n) {
		tag := tagAfter + late
		if me == late {
			time.Sleep(peerDelay)
			found, st, err := c.Iprobe(mpi.AnySource, tag)
			if err != nil {
				return failf("Iprobe: %w", err)
			}
			if found {
				ck.errorf("rank %d left the barrier before rank %d entered it", st.Source, late)
			}
		}
		if err := c.Barrier(); err != nil {
			return failf("Barrier: %w", err)
		}
		if me != late {
			if err := c.Send(nil, late, tag); err != nil {
				return failf("Send: %w", err)
			}
			continue
		}
		for range n - 1 {
			if _, err := c.Recv(nil, mpi.AnySource, tag); err != nil {
				return failf("Recv: %w", err)
			}
		}
	}
	return ck.err()
}

func bcast(c mpi.Comm) error {
	ck := newChecker(c)
	for _, root := range roots(c.Size()) {
		for _, size := range []int{0, 1, 1000, 1<<17 + 5} {
			buf := make([]byte, size)
			if c.Rank() == root {
				fill(buf, root, size)
			}
			if err := c.Bcast(buf, root); err != nil {
				return failf("Bcast %d bytes from %d: %w", size, root, err)
			}
			ck.equal(fmt.Sprintf("Bcast %d bytes from %d", size, root), buf, pattern(size, root, size))
		}
	}
	return ck.err()
}

func gather(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for _, root := range roots(n) {
		for _, blk := range []int{0, 5, 4096} {
			var recv []byte
			if me == root {
				recv = filled(n*blk + 3)
			}
			if err := c.Gather(pattern(blk, me, blk), recv, root); err != nil {
				return failf("Gather %d bytes to %d: %w", blk, root, err)
			}
			if me != root {
				continue
			}
			want := filled(n*blk + 3)
			for i := range n {
				fill(want[i*blk:(i+1)*blk], i, blk)
			}
			ck.equal(fmt.Sprintf("Gather %d-byte blocks to %d", blk, root), recv, want)
		}
	}
	return ck.err()
}

// vCounts are uneven per-rank counts that include zeros.
func vCounts(n int) []int {
	counts := make([]int, n)
	for i := range counts {
		counts[i] = (7*i + 3) % 5 * 3
	}
	return counts
}

func gatherv(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	counts := vCounts(n)
	displs, total := layout(counts, 2, true)
	for _, root := range roots(n) {
		var recv []byte
		if me == root {
			recv = filled(total)
		}
		if err := c.Gatherv(pattern(counts[me], me, root), recv, counts, displs, root); err != nil {
			return failf("Gatherv to %d: %w", root, err)
		}
		if me != root {
			continue
		}
		want := filled(total)
		for i := range n {
			fill(want[displs[i]:displs[i]+counts[i]], i, root)
		}
		ck.equal(fmt.Sprintf("Gatherv to %d", root), recv, want)
	}
	return ck.err()
}

func allgather(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for _, blk := range []int{0, 3, 1024} {
		recv := filled(n * blk)
		if err := c.Allgather(pattern(blk, me, blk), recv); err != nil {
			return failf("Allgather %d bytes: %w", blk, err)
		}
		want := make([]byte, n*blk)
		for i := range n {
			fill(want[i*blk:(i+1)*blk], i, blk)
		}
		ck.equal(fmt.Sprintf("Allgather %d-byte blocks", blk), recv, want)
	}
	return ck.err()
}

func allgatherv(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	counts := vCounts(n)
	displs, total := layout(counts, 2, true)
	recv := filled(total)
	if err := c.Allgatherv(pattern(counts[me], me), recv, counts, displs); err != nil {
		return failf("Allgatherv: %w", err)
	}
	want := filled(total)
	for i := range n {
		fill(want[displs[i]:displs[i]+counts[i]], i)
	}
	ck.equal("Allgatherv", recv, want)
	return ck.err()
}

func scatter(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for _, root := range roots(n) {
		for _, blk := range []int{0, 5, 4096} {
			var send []byte
			if me == root {
				send = make([]byte, n*blk)
				for i := range n {
					fill(send[i*blk:(i+1)*blk], i, root, blk)
				}
			}
			recv := make([]byte, blk)
			if err := c.Scatter(send, recv, root); err != nil {
				return failf("Scatter %d bytes from %d: %w", blk, root, err)
			}
			ck.equal(fmt.Sprintf("Scatter %d bytes from %d", blk, root), recv, pattern(blk, me, root, blk))
		}
	}
	return ck.err()
}

func scatterv(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	counts := vCounts(n)
	displs, total := layout(counts, 1, true)
	for _, root := range roots(n) {
		var send []byte
		if me == root {
			send = filled(total)
			for i := range n {
				fill(send[displs[i]:displs[i]+counts[i]], i, root)
			}
		}
		recv := make([]byte, counts[me])
		if err := c.Scatterv(send, counts, displs, recv, root); err != nil {
			return failf("Scatterv from %d: %w", root, err)
		}
		ck.equal(fmt.Sprintf("Scatterv from %d", root), recv, pattern(counts[me], me, root))
	}
	return ck.err()
}

func alltoall(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for _, blk := range []int{0, 1, 100} {
		send := make([]byte, n*blk)
		for j := range n {
			fill(send[j*blk:(j+1)*blk], me, j, blk)
		}
		recv := filled(n * blk)
		if err := c.Alltoall(send, recv); err != nil {
			return failf("Alltoall %d-byte blocks: %w", blk, err)
		}
		want := make([]byte, n*blk)
		for i := range n {
			fill(want[i*blk:(i+1)*blk], i, me, blk)
		}
		ck.equal(fmt.Sprintf("Alltoall %d-byte blocks", blk), recv, want)
	}
	return ck.err()
}

func alltoallv(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	count := func(from, to int) int { return (from + 2*to) % 4 * 3 }
	sendCounts, recvCounts := make([]int, n), make([]int, n)
	for j := range n {
		sendCounts[j] = count(me, j)
		recvCounts[j] = count(j, me)
	}
	sendDispls, sendTotal := layout(sendCounts, 1, true)
	recvDispls, recvTotal := layout(recvCounts, 3, false)
	send := filled(sendTotal)
	for j := range n {
		fill(send[sendDispls[j]:sendDispls[j]+sendCounts[j]], me, j)
	}
	recv := filled(recvTotal)
	if err := c.Alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls); err != nil {
		return failf("Alltoallv: %w", err)
	}
	want := filled(recvTotal)
	for i := range n {
		fill(want[recvDispls[i]:recvDispls[i]+recvCounts[i]], i, me)
	}
	ck.equal("Alltoallv", recv, want)
	return ck.err()
}

// Reduction inputs are small multiples of 1/4, so sums are exact in any
// order and every backend must give exactly the expected values; the int64
// inputs use the high bits.
func floatInput(r, k int) float64 { return float64((r*7+k*3)%11-5) + 0.25*float64(k) }
func intInput(r, k int) int64     { return (int64(r)-3*int64(k))<<33 + int64(r*k) }

var reduceOps = []mpi.Op{mpi.OpSum, mpi.OpMin, mpi.OpMax}

// expected is the reduction over n ranks of input, elementwise.
func expected[T int64 | float64](n, m int, op mpi.Op, input func(r, k int) T) []T {
	out := make([]T, m)
	for k := range m {
		acc := input(0, k)
		for r := 1; r < n; r++ {
			v := input(r, k)
			switch op {
			case mpi.OpSum:
				acc += v
			case mpi.OpMin:
				acc = min(acc, v)
			case mpi.OpMax:
				acc = max(acc, v)
			}
		}
		out[k] = acc
	}
	return out
}

func inputs[T int64 | float64](r, m int, input func(r, k int) T) []T {
	v := make([]T, m)
	for k := range v {
		v[k] = input(r, k)
	}
	return v
}

// reduceCase checks Reduce (at every root) or Allreduce, for every op and a
// few lengths, zero included.
func reduceCase[T int64 | float64](c mpi.Comm, all bool, input func(r, k int) T,
	reduce func(send, recv []T, op mpi.Op, root int) error) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	rts := roots(n)
	if all {
		rts = []int{-1}
	}
	for _, root := range rts {
		for _, op := range reduceOps {
			for _, m := range []int{0, 1, 7} {
				var recv []T
				if all || me == root {
					recv = make([]T, m)
				}
				if err := reduce(inputs(me, m, input), recv, op, root); err != nil {
					return failf("%v of %d elements (root %d): %w", op, m, root, err)
				}
				if !all && me != root {
					continue
				}
				want := expected(n, m, op, input)
				for k := range m {
					if recv[k] != want[k] {
						ck.errorf("%v of %d elements (root %d): element %d is %v, want %v", op, m, root, k, recv[k], want[k])
					}
				}
			}
		}
	}
	return ck.err()
}

func reduceFloat64s(c mpi.Comm) error {
	return reduceCase(c, false, floatInput, c.ReduceFloat64s)
}

func reduceInt64s(c mpi.Comm) error {
	return reduceCase(c, false, intInput, c.ReduceInt64s)
}

func allreduceFloat64s(c mpi.Comm) error {
	return reduceCase(c, true, floatInput, func(s, r []float64, op mpi.Op, _ int) error {
		return c.AllreduceFloat64s(s, r, op)
	})
}

func allreduceInt64s(c mpi.Comm) error {
	return reduceCase(c, true, intInput, func(s, r []int64, op mpi.Op, _ int) error {
		return c.AllreduceInt64s(s, r, op)
	})
}

// collectivesIgnorePointToPoint: pending point-to-point messages of the
// same size and from the same root never match a collective (MPI keeps
// collectives in a separate context), and are still there afterwards.
func collectivesIgnorePointToPoint(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	var reqs []mpi.Request
	// Every rank has a message from rank 0 and one from its right neighbour
	// pending while the collectives run.
	if me == 0 {
		for r := 1; r < n; r++ {
			req, err := c.Isend(pattern(8, 999), r, 0)
			if err != nil {
				return failf("Isend: %w", err)
			}
			reqs = append(reqs, req)
		}
	}
	left := (me + n - 1) % n
	req, err := c.Isend(pattern(8, me, 1), left, 1)
	if err != nil {
		return failf("Isend: %w", err)
	}
	reqs = append(reqs, req)

	buf := make([]byte, 8)
	if me == 0 {
		fill(buf, 1)
	}
	if err := c.Bcast(buf, 0); err != nil {
		return failf("Bcast: %w", err)
	}
	ck.equal("Bcast with messages pending", buf, pattern(8, 1))
	recv := make([]byte, 8*n)
	if err := c.Allgather(pattern(8, me, 2), recv); err != nil {
		return failf("Allgather: %w", err)
	}
	for i := range n {
		ck.equal("Allgather with messages pending", recv[8*i:8*i+8], pattern(8, i, 2))
	}
	if err := c.Barrier(); err != nil {
		return failf("Barrier: %w", err)
	}

	right := (me + 1) % n
	st, err := c.Recv(buf, right, 1)
	if err != nil {
		return failf("Recv: %w", err)
	}
	ck.status("Recv after collectives", st, right, 1, 8)
	ck.equal("Recv after collectives", buf, pattern(8, right, 1))
	if me != 0 {
		st, err := c.Recv(buf, 0, 0)
		if err != nil {
			return failf("Recv: %w", err)
		}
		ck.status("Recv after collectives", st, 0, 0, 8)
		ck.equal("Recv after collectives", buf, pattern(8, 999))
	}
	if _, err := mpi.Waitall(reqs); err != nil {
		return failf("Waitall: %w", err)
	}
	return ck.err()
}
