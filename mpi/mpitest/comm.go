package mpitest

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
)

// checkMembers checks that sub holds exactly the ranks of c in members, in
// that order, and that they can talk: an Allgather of the old ranks, a ring
// Sendrecv and an Allreduce, all inside sub.
func checkMembers(ck *checker, c, sub mpi.Comm, members []int, what string) error {
	me := c.Rank()
	if sub.Size() != len(members) {
		ck.errorf("%s: Size %d, want %d", what, sub.Size(), len(members))
		return nil
	}
	want := -1
	for i, r := range members {
		if r == me {
			want = i
		}
	}
	if sub.Rank() != want {
		ck.errorf("%s: Rank %d, want %d", what, sub.Rank(), want)
		return nil
	}
	n := sub.Size()
	old := make([]int64, n)
	if err := mpi.AllgatherInt64s(sub, []int64{int64(me)}, old); err != nil {
		return failf("%s: Allgather: %w", what, err)
	}
	for i, r := range members {
		if old[i] != int64(r) {
			ck.errorf("%s: rank %d is old rank %d, want %d", what, i, old[i], r)
		}
	}
	right, left := (sub.Rank()+1)%n, (sub.Rank()+n-1)%n
	got := make([]byte, 16)
	st, err := sub.Sendrecv(pattern(16, me), right, 3, got, mpi.AnySource, 3)
	if err != nil {
		return failf("%s: Sendrecv: %w", what, err)
	}
	ck.status(what+": Sendrecv", st, left, 3, 16)
	ck.equal(what+": Sendrecv", got, pattern(16, members[left]))
	sum := []int64{0}
	if err := sub.AllreduceInt64s([]int64{int64(me)}, sum, mpi.OpSum); err != nil {
		return failf("%s: Allreduce: %w", what, err)
	}
	var wantSum int64
	for _, r := range members {
		wantSum += int64(r)
	}
	if sum[0] != wantSum {
		ck.errorf("%s: Allreduce sum of old ranks %d, want %d", what, sum[0], wantSum)
	}
	return nil
}

func free(what string, c mpi.Comm) error {
	if err := c.Free(); err != nil {
		return failf("%s: Free: %w", what, err)
	}
	return nil
}

// split checks Split's grouping and ordering (by key, then old rank), that
// the groups work concurrently, and nested splits.
func split(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()

	// Parity groups, ordered by descending old rank through the key.
	sub, err := c.Split(me%2, -me)
	if err != nil {
		return failf("Split by parity: %w", err)
	}
	var members []int
	for r := n - 1; r >= 0; r-- {
		if r%2 == me%2 {
			members = append(members, r)
		}
	}
	if err := checkMembers(ck, c, sub, members, "parity split"); err != nil {
		return err
	}
	if err := free("parity split", sub); err != nil {
		return err
	}

	// Equal keys keep the old order.
	same, err := c.Split(7, 0)
	if err != nil {
		return failf("Split with one color: %w", err)
	}
	if err := checkMembers(ck, c, same, identity(n), "one-color split"); err != nil {
		return err
	}

	// A split of a split: halves of the one-color communicator, then
	// every other rank of each half.
	half, err := same.Split(same.Rank()*2/n, 0)
	if err != nil {
		return failf("Split in halves: %w", err)
	}
	quarter, err := half.Split(half.Rank()%2, 0)
	if err != nil {
		return failf("Split of a split: %w", err)
	}
	var halfMembers, quarterMembers []int
	for r := range n {
		if r*2/n == me*2/n {
			halfMembers = append(halfMembers, r)
		}
	}
	for i, r := range halfMembers {
		if i%2 == half.Rank()%2 {
			quarterMembers = append(quarterMembers, r)
		}
	}
	if err := checkMembers(ck, c, quarter, quarterMembers, "split of a split"); err != nil {
		return err
	}
	for _, fc := range []struct {
		what string
		c    mpi.Comm
	}{{"split of a split", quarter}, {"half split", half}, {"one-color split", same}} {
		if err := free(fc.what, fc.c); err != nil {
			return err
		}
	}
	return ck.err()
}

// splitUndefined: ranks that pass mpi.Undefined get a nil Comm; the others
// form communicators by color.
func splitUndefined(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	color := me % 3
	if color == 0 {
		color = mpi.Undefined
	}
	sub, err := c.Split(color, 0)
	if err != nil {
		return failf("Split: %w", err)
	}
	if color == mpi.Undefined {
		if sub != nil {
			ck.errorf("Split with Undefined gave a communicator of size %d, want nil", sub.Size())
		}
		return ck.err()
	}
	if sub == nil {
		return failf("Split with color %d gave nil", color)
	}
	var members []int
	for r := range n {
		if r%3 == color {
			members = append(members, r)
		}
	}
	if err := checkMembers(ck, c, sub, members, fmt.Sprintf("color %d", color)); err != nil {
		return err
	}
	if err := free("color split", sub); err != nil {
		return err
	}
	return ck.err()
}

// dup: a duplicate has the same ranks and its own message space: a message
// sent on the duplicate first is not received on the parent, and neither
// communicator's collectives see the other's messages.
func dup(c mpi.Comm) error {
	const tag = 5
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	d, err := c.Dup()
	if err != nil {
		return failf("Dup: %w", err)
	}
	if d.Size() != n || d.Rank() != me {
		ck.errorf("Dup has rank %d of %d, parent %d of %d", d.Rank(), d.Size(), me, n)
	}
	peer, first, ok := pairPeer(c)
	if ok && first {
		rd, err := d.Isend(pattern(16, 1), peer, tag)
		if err != nil {
			return failf("Isend on the duplicate: %w", err)
		}
		rc, err := c.Isend(pattern(16, 2), peer, tag)
		if err != nil {
			return failf("Isend on the parent: %w", err)
		}
		if _, err := mpi.Waitall([]mpi.Request{rd, rc}); err != nil {
			return failf("Waitall: %w", err)
		}
	}
	if ok && !first {
		buf := make([]byte, 16)
		st, err := c.Recv(buf, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return failf("Recv on the parent: %w", err)
		}
		ck.status("Recv on the parent", st, peer, tag, 16)
		ck.equal("Recv on the parent (got the duplicate's message?)", buf, pattern(16, 2))
		if found, _, err := c.Iprobe(mpi.AnySource, mpi.AnyTag); err != nil {
			return failf("Iprobe on the parent: %w", err)
		} else if found {
			ck.errorf("Iprobe on the parent sees the duplicate's message")
		}
		st, err = d.Recv(buf, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return failf("Recv on the duplicate: %w", err)
		}
		ck.status("Recv on the duplicate", st, peer, tag, 16)
		ck.equal("Recv on the duplicate", buf, pattern(16, 1))
	}

	// Interleaved collectives on both, with different data.
	for i := range 3 {
		for k, cc := range []mpi.Comm{d, c} {
			root := (i + k) % n
			buf := make([]byte, 32)
			if me == root {
				fill(buf, i, k)
			}
			if err := cc.Bcast(buf, root); err != nil {
				return failf("Bcast: %w", err)
			}
			ck.equal("Bcast on parent and duplicate", buf, pattern(32, i, k))
		}
	}
	if err := free("duplicate", d); err != nil {
		return err
	}
	return ck.err()
}
