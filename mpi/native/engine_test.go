package native

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// engineTree is a combining tree over the ranks for the engine's barrier:
// a binary heap, node r on rank r, plus one leaf per rank (node size+r) as
// divalib's trees have, so every rank simulates its leaf and an inner node.
func engineTree(me, size int) []mpi.BarrierNode {
	leaf := mpi.BarrierNode{ID: int32(size + me), Need: 1, Parent: int32(me), ParentRank: me}
	inner := mpi.BarrierNode{ID: int32(me), Need: 1, Parent: -1, ParentRank: me}
	if me > 0 {
		inner.Parent, inner.ParentRank = int32((me-1)/2), (me-1)/2
	}
	for _, k := range []int{2*me + 1, 2*me + 2} {
		if k < size {
			inner.Need++
			inner.Kids = append(inner.Kids, int32(k))
			inner.KidRanks = append(inner.KidRanks, k)
		}
	}
	return []mpi.BarrierNode{leaf, inner}
}

// TestEngine: messages of every size class (empty, inline, just over the
// inline limit, large) reach every rank with their source, head and body;
// barriers complete with the sums of all ranks while messages sent before
// them are still arriving; large bodies survive a GC while MPI sends them.
func TestEngine(t *testing.T) {
	needMPI(t)
	c := world()
	d, err := c.Dup()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	const head, inline = 12, 64
	eng, err := d.(mpi.EngineKernel).NewEngine(mpi.EngineSpec{Tag: 9, HeadBytes: head, InlineBytes: inline, Barrier: engineTree(d.Rank(), d.Size())})
	if err != nil {
		t.Fatal(err)
	}
	me, p := d.Rank(), d.Size()
	sizes := []int{0, 5, inline, inline + 1, 100 << 10}
	body := func(from, to, k int) []byte {
		return bytes.Repeat([]byte{byte(from*31 + to*7 + k)}, sizes[k])
	}
	const rounds = 3
	got := make([]int, rounds+1) // a peer past a barrier sends the next round early
	// MPI's order per sender holds through the engine's ring of posted
	// receives (more messages per sender than the ring has slots, inline
	// and separate bodies mixed): a sender's messages arrive as sent.
	last := make([]int, p)
	for i := range last {
		last[i] = -1
	}
	for round := 0; round < rounds; round++ {
		for to := 0; to < p; to++ {
			for k := range sizes {
				h := []byte(fmt.Sprintf("%03d%03d%03d%03d", me, to, k, round))
				if err := eng.Send(h, body(me, to, k), to); err != nil {
					t.Fatal(err)
				}
			}
		}
		runtime.GC() // the large bodies are only referenced by the engine's pins
		m, ok, err := eng.Barrier(int64(me), 1)
		for {
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				var from, to, k, r int
				if _, err := fmt.Sscanf(string(m.Head), "%03d%03d%03d%03d", &from, &to, &k, &r); err != nil {
					t.Fatalf("head %q: %v", m.Head, err)
				}
				if from != m.Source || to != me || (r != round && r != round+1) || !bytes.Equal(m.Body, body(from, me, k)) {
					t.Fatalf("round %d: message %q from %d with %d body bytes", round, m.Head, m.Source, len(m.Body))
				}
				got[r]++
				if seq := r*len(sizes) + k; seq <= last[from] {
					t.Fatalf("message %q from %d after its sequence number %d: out of order", m.Head, from, last[from])
				} else {
					last[from] = seq
				}
			}
			a, b, done := eng.BarrierDone()
			if done && got[round] == p*len(sizes) {
				if a != int64(p*(p-1)/2) || b != int64(p) {
					t.Fatalf("round %d: barrier sums %d, %d; want %d, %d", round, a, b, p*(p-1)/2, p)
				}
				break
			}
			m, ok, err = eng.Next(true)
		}
	}
	// Dissemination barriers: a message to the next rank sent before a
	// barrier has arrived when that barrier completes there (it precedes
	// the round-0 notice on the same channel). One rank sends to itself,
	// which no barrier orders. The previous rank's first one may already
	// have come in while this rank waited for the last tree barrier above
	// (counted there as the round after the last).
	recv := got[rounds]
	for round := 0; round < 5; round++ {
		h := []byte(fmt.Sprintf("%03d%03d%03d%03d", me, (me+1)%p, 0, rounds+round))
		if err := eng.Send(h, nil, (me+1)%p); err != nil {
			t.Fatal(err)
		}
		_, ok, err := eng.Dissemination()
		for {
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				recv++
			}
			if eng.DisseminationDone() {
				break
			}
			_, ok, err = eng.Next(true)
		}
		if p > 1 && recv < round+1 {
			t.Fatalf("dissemination round %d: %d messages in, want %d", round, recv, round+1)
		}
	}
	for recv < 5 {
		_, ok, err := eng.Next(true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			recv++
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(make([]byte, head), nil, 0); err == nil {
		t.Error("Send on a closed engine succeeded")
	}
}

// TestEngineArgs: malformed specs and sends are refused with ErrArg/ErrRank.
func TestEngineArgs(t *testing.T) {
	needMPI(t)
	c := world()
	var ek mpi.EngineKernel = c
	for _, spec := range []mpi.EngineSpec{
		{Tag: -1, HeadBytes: 4},
		{Tag: 1, HeadBytes: -1},
		{Tag: 1, HeadBytes: 4, Barrier: []mpi.BarrierNode{{ID: 0, Need: 0, Parent: -1}}},
		{Tag: 1, HeadBytes: 4, Barrier: []mpi.BarrierNode{{ID: 0, Need: 1, Parent: -1, ParentRank: c.Size()}}},
		{Tag: 1, HeadBytes: 4, Barrier: []mpi.BarrierNode{{ID: 0, Need: 1, Parent: -1, Kids: []int32{1}}}},
	} {
		if _, err := ek.NewEngine(spec); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
	eng, err := ek.NewEngine(mpi.EngineSpec{Tag: 1, HeadBytes: 4})
	if err != nil {
		t.Fatal(err)
	}
	wantClass(t, eng.Send(make([]byte, 3), nil, 0), "Engine.Send", mpi.ErrArg)
	wantClass(t, eng.Send(make([]byte, 4), nil, c.Size()), "Engine.Send", mpi.ErrRank)
	_, _, err = eng.Barrier(0, 0)
	wantClass(t, err, "Engine.Barrier", mpi.ErrArg)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}
