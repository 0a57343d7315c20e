package mpitest

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
)

// Cases of the optional interfaces mpi.Reducer and
// mpi.NonBlockingCollectives; Run skips them on a backend without the
// feature (Case.Needs).

// typedInput is element k of rank r's vector: a small integer, so that sums
// over any number of ranks in any order are exact in every Datatype.
func typedInput(r, k int) float64 { return float64((r*5+k*3)%13 - 6) }

// typedVector is rank r's m elements of dt.
func typedVector(dt mpi.Datatype, r, m int) []byte {
	b := make([]byte, m*dt.Size())
	for k := range m {
		mpi.PutElement(b, dt, k, typedInput(r, k))
	}
	return b
}

// typedExpected is element k of the reduction over n ranks.
func typedExpected(n, k int, op mpi.Op) float64 {
	acc := typedInput(0, k)
	for r := 1; r < n; r++ {
		v := typedInput(r, k)
		switch op {
		case mpi.OpSum:
			acc += v
		case mpi.OpMin:
			acc = min(acc, v)
		case mpi.OpMax:
			acc = max(acc, v)
		}
	}
	return acc
}

// checkReduced checks m elements of dt in got against the reduction of
// elements from..from+m.
func checkReduced(ck *checker, what string, got []byte, dt mpi.Datatype, n, from, m int, op mpi.Op) {
	for k := range m {
		if g, w := mpi.Element(got, dt, k), typedExpected(n, from+k, op); g != w {
			ck.errorf("%s: element %d is %v, want %v", what, from+k, g, w)
			return
		}
	}
}

// typedReduce: Reduce at every root and Allreduce, for every element type,
// every operation and lengths 0, 1, 7 and 1027, and Allreduce in place.
func typedReduce(c mpi.Comm) error {
	red := c.(mpi.Reducer)
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for _, dt := range mpi.Datatypes {
		for _, op := range reduceOps {
			for _, m := range []int{0, 1, 7, 1027} {
				for _, root := range append(roots(n), -1) {
					what := fmt.Sprintf("%v of %d %v elements (root %d)", op, m, dt, root)
					recv := filled(m*dt.Size() + 3)
					var err error
					if root < 0 {
						err = red.Allreduce(typedVector(dt, me, m), recv[:m*dt.Size()], dt, op)
					} else {
						err = red.Reduce(typedVector(dt, me, m), recv[:m*dt.Size()], dt, op, root)
					}
					if err != nil {
						return failf("%s: %w", what, err)
					}
					if root < 0 || me == root {
						checkReduced(ck, what, recv, dt, n, 0, m, op)
					}
					ck.equal(what+": bytes past the result", recv[m*dt.Size():], filled(3))
				}
			}
		}
		buf := typedVector(dt, me, 5)
		if err := red.Allreduce(buf, buf, dt, mpi.OpSum); err != nil {
			return failf("Allreduce in place of %v: %w", dt, err)
		}
		checkReduced(ck, fmt.Sprintf("Allreduce in place of %v", dt), buf, dt, n, 0, 5, mpi.OpSum)
	}
	return ck.err()
}

// reduceScatterBlock: rank i gets the reduction of every rank's block i.
func reduceScatterBlock(c mpi.Comm) error {
	red := c.(mpi.Reducer)
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	for _, dt := range mpi.Datatypes {
		for _, op := range reduceOps {
			for _, blk := range []int{0, 1, 5} {
				what := fmt.Sprintf("ReduceScatterBlock %v of %d %v elements per rank", op, blk, dt)
				recv := filled(blk * dt.Size())
				if err := red.ReduceScatterBlock(typedVector(dt, me, n*blk), recv, dt, op); err != nil {
					return failf("%s: %w", what, err)
				}
				checkReduced(ck, what, recv, dt, n, me*blk, blk, op)
			}
		}
	}
	return ck.err()
}

// reduceScatter: uneven counts, zeros included.
func reduceScatter(c mpi.Comm) error {
	red := c.(mpi.Reducer)
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	counts := vCounts(n)
	total, from := 0, 0
	for i, k := range counts {
		if i < me {
			from += k
		}
		total += k
	}
	for _, dt := range mpi.Datatypes {
		for _, op := range reduceOps {
			what := fmt.Sprintf("ReduceScatter %v of %v with counts %v", op, dt, counts)
			recv := filled((counts[me] + 1) * dt.Size()) // one element more than it gets
			if err := red.ReduceScatter(typedVector(dt, me, total), recv, counts, dt, op); err != nil {
				return failf("%s: %w", what, err)
			}
			checkReduced(ck, what, recv, dt, n, from, counts[me], op)
			ck.equal(what+": the element past the result", recv[counts[me]*dt.Size():], filled(dt.Size()))
		}
	}
	return ck.err()
}

// typedErrors: a length that is not whole elements, an unknown type or
// operation and a bad root fail with their classes on every rank, and the
// communicator works afterwards.
func typedErrors(c mpi.Comm) error {
	red := c.(mpi.Reducer)
	ck := newChecker(c)
	n := c.Size()
	ck.class("Allreduce of 6 bytes of int64", red.Allreduce(make([]byte, 6), make([]byte, 6), mpi.Int64, mpi.OpSum), mpi.ErrCount)
	ck.class("Allreduce of Datatype(9)", red.Allreduce(make([]byte, 8), make([]byte, 8), mpi.Datatype(9), mpi.OpSum), mpi.ErrType)
	ck.class("Allreduce with Op(99)", red.Allreduce(make([]byte, 8), make([]byte, 8), mpi.Float32, mpi.Op(99)), mpi.ErrOp)
	ck.class("Reduce with root Size()", red.Reduce(make([]byte, 8), make([]byte, 8), mpi.Float64, mpi.OpSum, n), mpi.ErrRoot)
	ck.class("ReduceScatterBlock with a short send", red.ReduceScatterBlock(make([]byte, 4*n-4), make([]byte, 4), mpi.Int32, mpi.OpSum), mpi.ErrCount)
	ck.class("ReduceScatter with Size()+1 counts", red.ReduceScatter(make([]byte, 64), make([]byte, 64), make([]int, n+1), mpi.Int32, mpi.OpSum), mpi.ErrArg)
	if err := c.Barrier(); err != nil {
		return failf("Barrier after errors: %w", err)
	}
	return ck.err()
}

// nbCall is one non-blocking collective of a case: it starts the call and
// returns the check to run once it has completed.
type nbCall struct {
	name  string
	start func(nb mpi.NonBlockingCollectives) (mpi.Request, func(ck *checker), error)
}

// nbCalls are every non-blocking collective with data whose result is
// known, rooted ones at root.
func nbCalls(c mpi.Comm, root, blk int) []nbCall {
	n, me := c.Size(), c.Rank()
	counts := vCounts(n)
	displs, total := layout(counts, 1, true)
	blocks := func(seed int) []byte {
		b := make([]byte, n*blk)
		for d := range n {
			fill(b[d*blk:(d+1)*blk], me, d, seed)
		}
		return b
	}
	return []nbCall{
		{"Ibarrier", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			q, err := nb.Ibarrier()
			return q, func(*checker) {}, err
		}},
		{"Ibcast", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			buf := make([]byte, blk)
			if me == root {
				fill(buf, root, 1)
			}
			q, err := nb.Ibcast(buf, root)
			return q, func(ck *checker) { ck.equal("Ibcast", buf, pattern(blk, root, 1)) }, err
		}},
		{"Igather", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := filled(n * blk)
			q, err := nb.Igather(pattern(blk, me, 2), recv, root)
			return q, func(ck *checker) {
				if me == root {
					for i := range n {
						ck.equal("Igather", recv[i*blk:(i+1)*blk], pattern(blk, i, 2))
					}
				}
			}, err
		}},
		{"Igatherv", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := filled(total)
			q, err := nb.Igatherv(pattern(counts[me], me, 3), recv, counts, displs, root)
			return q, func(ck *checker) {
				if me == root {
					for i := range n {
						ck.equal("Igatherv", recv[displs[i]:displs[i]+counts[i]], pattern(counts[i], i, 3))
					}
				}
			}, err
		}},
		{"Iscatter", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := filled(blk)
			q, err := nb.Iscatter(blocks(4), recv, root)
			return q, func(ck *checker) {
				want := make([]byte, blk)
				fill(want, root, me, 4)
				ck.equal("Iscatter", recv, want)
			}, err
		}},
		{"Iscatterv", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			send := make([]byte, total)
			for i := range n {
				fill(send[displs[i]:displs[i]+counts[i]], me, i, 5)
			}
			recv := filled(counts[me])
			q, err := nb.Iscatterv(send, counts, displs, recv, root)
			return q, func(ck *checker) {
				want := make([]byte, counts[me])
				fill(want, root, me, 5)
				ck.equal("Iscatterv", recv, want)
			}, err
		}},
		{"Iallgather", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := filled(n * blk)
			q, err := nb.Iallgather(pattern(blk, me, 6), recv)
			return q, func(ck *checker) {
				for i := range n {
					ck.equal("Iallgather", recv[i*blk:(i+1)*blk], pattern(blk, i, 6))
				}
			}, err
		}},
		{"Iallgatherv", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := filled(total)
			q, err := nb.Iallgatherv(pattern(counts[me], me, 7), recv, counts, displs)
			return q, func(ck *checker) {
				for i := range n {
					ck.equal("Iallgatherv", recv[displs[i]:displs[i]+counts[i]], pattern(counts[i], i, 7))
				}
			}, err
		}},
		{"Ialltoall", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := filled(n * blk)
			q, err := nb.Ialltoall(blocks(8), recv)
			return q, func(ck *checker) {
				for s := range n {
					want := make([]byte, blk)
					fill(want, s, me, 8)
					ck.equal("Ialltoall", recv[s*blk:(s+1)*blk], want)
				}
			}, err
		}},
		{"Ialltoallv", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			sc, rc := make([]int, n), make([]int, n)
			for d := range n {
				sc[d] = (me+2*d)%3 + blk // bytes to d
				rc[d] = (d+2*me)%3 + blk // bytes from d
			}
			sd, sn := layout(sc, 1, false)
			rd, rn := layout(rc, 2, true)
			send := make([]byte, sn)
			for d := range n {
				fill(send[sd[d]:sd[d]+sc[d]], me, d, 9)
			}
			recv := filled(rn)
			q, err := nb.Ialltoallv(send, sc, sd, recv, rc, rd)
			return q, func(ck *checker) {
				for s := range n {
					want := make([]byte, rc[s])
					fill(want, s, me, 9)
					ck.equal("Ialltoallv", recv[rd[s]:rd[s]+rc[s]], want)
				}
			}, err
		}},
		{"Ireduce", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := make([]byte, 4*blk)
			q, err := nb.Ireduce(typedVector(mpi.Int32, me, blk), recv, mpi.Int32, mpi.OpSum, root)
			return q, func(ck *checker) {
				if me == root {
					checkReduced(ck, "Ireduce", recv, mpi.Int32, n, 0, blk, mpi.OpSum)
				}
			}, err
		}},
		{"Iallreduce", func(nb mpi.NonBlockingCollectives) (mpi.Request, func(*checker), error) {
			recv := make([]byte, 4*blk)
			q, err := nb.Iallreduce(typedVector(mpi.Float32, me, blk), recv, mpi.Float32, mpi.OpMax)
			return q, func(ck *checker) { checkReduced(ck, "Iallreduce", recv, mpi.Float32, n, 0, blk, mpi.OpMax) }, err
		}},
	}
}

// nonBlockingCollectives: every call at every root, waited for at once,
// then all of them started before any is waited for (and waited for in
// reverse order), each with its data checked.
func nonBlockingCollectives(c mpi.Comm) error {
	nb := c.(mpi.NonBlockingCollectives)
	ck := newChecker(c)
	for _, root := range roots(c.Size()) {
		for _, blk := range []int{0, 3, 4099} {
			for _, call := range nbCalls(c, root, blk) {
				q, check, err := call.start(nb)
				if err != nil {
					return failf("%s of %d bytes (root %d): %w", call.name, blk, root, err)
				}
				if _, err := q.Wait(); err != nil {
					return failf("Wait for %s of %d bytes (root %d): %w", call.name, blk, root, err)
				}
				check(ck)
			}
		}
	}
	calls := nbCalls(c, c.Size()-1, 64)
	reqs := make([]mpi.Request, len(calls))
	checks := make([]func(*checker), len(calls))
	for i, call := range calls {
		var err error
		if reqs[i], checks[i], err = call.start(nb); err != nil {
			return failf("%s with others in flight: %w", call.name, err)
		}
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		if _, err := reqs[i].Wait(); err != nil {
			return failf("Wait for %s with others in flight: %w", calls[i].name, err)
		}
		checks[i](ck)
	}
	return ck.err()
}

// nonBlockingProgress: starting a non-blocking collective does not wait for
// the other ranks. Each rank in turn is late: it Ssends to every other rank
// before it starts the Ibarrier, and the others receive that message after
// starting theirs, which deadlocks if starting blocks. Test polls the
// request to completion.
func nonBlockingProgress(c mpi.Comm) error {
	nb := c.(mpi.NonBlockingCollectives)
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	const tag = 77
	for _, late := range roots(n) {
		var q mpi.Request
		var err error
		if me == late {
			for r := range n {
				if r != me {
					if err := c.Ssend(pattern(8, late), r, tag); err != nil {
						return failf("Ssend: %w", err)
					}
				}
			}
			if q, err = nb.Ibarrier(); err != nil {
				return failf("Ibarrier: %w", err)
			}
		} else {
			if q, err = nb.Ibarrier(); err != nil {
				return failf("Ibarrier: %w", err)
			}
			buf := make([]byte, 8)
			if _, err := c.Recv(buf, late, tag); err != nil {
				return failf("Recv with an Ibarrier in flight: %w", err)
			}
			ck.equal("message received with an Ibarrier in flight", buf, pattern(8, late))
		}
		for polls := 0; ; polls++ {
			done, _, err := q.Test()
			if err != nil {
				return failf("Test of Ibarrier: %w", err)
			}
			if done {
				break
			}
		}
	}
	sum := make([]byte, 8)
	q, err := nb.Iallreduce(typedVector(mpi.Int64, me, 1), sum, mpi.Int64, mpi.OpSum)
	if err != nil {
		return failf("Iallreduce: %w", err)
	}
	for {
		done, _, err := q.Test()
		if err != nil {
			return failf("Test of Iallreduce: %w", err)
		}
		if done {
			break
		}
	}
	checkReduced(ck, "Iallreduce polled with Test", sum, mpi.Int64, n, 0, 1, mpi.OpSum)
	return ck.err()
}

// nonBlockingErrors: a bad root or length fails when the call is started,
// on every rank, and the communicator works afterwards.
func nonBlockingErrors(c mpi.Comm) error {
	nb := c.(mpi.NonBlockingCollectives)
	ck := newChecker(c)
	n := c.Size()
	_, err := nb.Ibcast(make([]byte, 4), n)
	ck.class("Ibcast with root Size()", err, mpi.ErrRoot)
	_, err = nb.Iallreduce(make([]byte, 6), make([]byte, 6), mpi.Float32, mpi.OpSum)
	ck.class("Iallreduce of 6 bytes of float32", err, mpi.ErrCount)
	_, err = nb.Ialltoallv(nil, make([]int, n-1), make([]int, n-1), nil, make([]int, n), make([]int, n))
	ck.class("Ialltoallv with Size()-1 send counts", err, mpi.ErrArg, mpi.ErrCount)
	q, err := nb.Ibarrier()
	if err != nil {
		return failf("Ibarrier after errors: %w", err)
	}
	if _, err := q.Wait(); err != nil {
		return failf("Wait for Ibarrier after errors: %w", err)
	}
	return ck.err()
}

// reduceLocal: MPI_Reduce_local folds in into inout element by element for
// every type and operation, and refuses unequal lengths.
func reduceLocal(c mpi.Comm) error {
	red := c.(mpi.Reducer)
	ck := newChecker(c)
	me := c.Rank()
	for _, dt := range mpi.Datatypes {
		for _, op := range reduceOps {
			in, inout := typedVector(dt, me, 9), typedVector(dt, me+1, 9)
			if err := red.ReduceLocal(in, inout, dt, op); err != nil {
				return failf("ReduceLocal %v of %v: %w", op, dt, err)
			}
			for k := range 9 {
				a, b := typedInput(me, k), typedInput(me+1, k)
				want := a + b
				switch op {
				case mpi.OpMin:
					want = min(a, b)
				case mpi.OpMax:
					want = max(a, b)
				}
				if got := mpi.Element(inout, dt, k); got != want {
					ck.errorf("ReduceLocal %v of %v: element %d is %v, want %v", op, dt, k, got, want)
					break
				}
			}
		}
	}
	ck.class("ReduceLocal of unequal lengths", red.ReduceLocal(make([]byte, 8), make([]byte, 16), mpi.Int32, mpi.OpSum), mpi.ErrCount)
	return ck.err()
}
