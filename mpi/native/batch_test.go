package native

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/commcost/commcost/mpi"
)

// checkReduced checks a synchronised batch's samples against every rank's
// own times: each sample is the maximum over ranks (or rank 0's time with
// rank0), exactly, and every rank holds the same samples.
func checkReduced(t *testing.T, c *Comm, name string, b mpi.Batch) {
	t.Helper()
	n, p := len(b.Own), c.Size()
	all := make([]float64, n*p)
	if err := mpi.AllgatherFloat64s(c, b.Own, all); err != nil {
		t.Fatal(err)
	}
	samples0 := append([]float64(nil), b.Samples[:n]...)
	if err := mpi.BcastFloat64s(c, samples0, 0); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := math.Inf(-1)
		for r := range p {
			if b.Rank0 && r != 0 {
				continue
			}
			want = math.Max(want, all[r*n+i])
		}
		if b.Samples[i] != want || b.Samples[i] != samples0[i] {
			t.Errorf("%s: sample %d is %g, want %g (rank 0 has %g)", name, i, b.Samples[i], want, samples0[i])
		}
	}
}

// TestBatchKernels runs every batch kernel for 4 synchronised repetitions
// between partners (an odd last rank takes no part): the times are
// positive on the ranks that take part and 0 on the others, the samples are
// the maximum over ranks (rank 0's with Rank0), the data arrive; then the
// same kernels run unsynchronised.
func TestBatchKernels(t *testing.T) {
	needMPI(t)
	c := world()
	me, p := c.Rank(), c.Size()
	peer, on := partner(c)
	first := me%2 == 0
	kpeer := peer
	if !on {
		kpeer = mpi.NoPeer
	}
	const reps, size = 4, 1000
	send := bytes.Repeat([]byte{byte(me + 1)}, size)
	recv := make([]byte, p*size)
	tests := []struct {
		name string
		run  func(b mpi.Batch) error
		// active: this rank reports a time; check: the data it received.
		active bool
		check  func() error
	}{
		{"pingpong", func(b mpi.Batch) error { return c.PingPongBatch(b, send, recv, kpeer, 60, 3, first) }, on,
			func() error { return wantBytes(recv[:size], byte(peer+1)) }},
		{"bandwidth", func(b mpi.Batch) error { return c.BandwidthBatch(b, recv[:size], kpeer, 61, 4, 2, first) }, on, nil},
		{"prtt", func(b mpi.Batch) error {
			return c.PRTTBatch(b, recv[:size], kpeer, 62, 3, 1e-6, 2, first, false, mpi.PRTTElapsed)
		}, on, nil},
		{"prtt arrivals", func(b mpi.Batch) error {
			report := mpi.PRTTArrivals
			if first {
				report = mpi.PRTTNothing
			}
			return c.PRTTBatch(b, recv[:size], kpeer, 63, 3, 1e-6, 2, first, true, report)
		}, on && !first, nil},
		{"alltoall", func(b mpi.Batch) error { return c.AllToAllBatch(b, bytes.Repeat(send, p), recv, size, p, 64, 2) }, true,
			func() error {
				for s := range p {
					if s != me {
						if err := wantBytes(recv[s*size:(s+1)*size], byte(s+1)); err != nil {
							return err
						}
					}
				}
				return nil
			}},
	}
	for _, tt := range tests {
		for _, rank0 := range []bool{false, true} {
			name := fmt.Sprintf("%s rank0=%v", tt.name, rank0)
			clear(recv)
			b := mpi.Batch{Own: make([]float64, reps), Samples: make([]float64, reps), Sync: true, Rank0: rank0}
			if err := tt.run(b); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i, v := range b.Own {
				if tt.active != (v > 0) {
					t.Errorf("%s: repetition %d took %g s on rank %d (taking part: %v)", name, i, v, me, tt.active)
				}
			}
			checkReduced(t, c, name, b)
			if tt.check != nil {
				if err := tt.check(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
		// Unsynchronised: the same repetitions, no barrier, no reduction.
		b := mpi.Batch{Own: make([]float64, 2)}
		if err := tt.run(b); err != nil || tt.active != (b.Own[1] > 0) {
			t.Errorf("%s unsynchronised: %v, own %v", tt.name, err, b.Own)
		}
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
	wantClass(t, c.PingPongBatch(mpi.Batch{}, nil, nil, kpeer, 0, 1, true), "PingPongBatch", mpi.ErrArg)
	wantClass(t, c.PingPongBatch(mpi.Batch{Own: make([]float64, 2), Samples: make([]float64, 1), Sync: true}, nil, nil, kpeer, 0, 1, true), "PingPongBatch", mpi.ErrArg)
	wantClass(t, c.BandwidthBatch(mpi.Batch{Own: make([]float64, 1)}, nil, me, 0, 1, 1, true), "BandwidthBatch", mpi.ErrRank)
}

func wantBytes(got []byte, want byte) error {
	for i, v := range got {
		if v != want {
			return fmt.Errorf("byte %d is %#x, want %#x", i, v, want)
		}
	}
	return nil
}

// TestStepsBatch: a program using every step operation leaves the same
// buffers when C runs it (StepsBatch) as when Go runs it step by step
// (mpi.RunSteps), one program per repetition runs in order, and a bad
// program is refused before any communication.
func TestStepsBatch(t *testing.T) {
	needMPI(t)
	c := world()
	me, p := c.Rank(), c.Size()
	const m = 40
	right, left := (me+1)%p, (me-1+p)%p
	counts := make([]int, 4*p) // alltoallv: m bytes to the right, from the left
	counts[right], counts[2*p+left] = m, m
	prog := []mpi.Step{
		{Op: mpi.StepCopy, Send: mpi.Span{Buf: 0, Off: 0, Len: m}, Recv: mpi.Span{Buf: 2, Off: 0, Len: m}},
		{Op: mpi.StepBcast, Send: mpi.Span{Buf: 2, Off: 0, Len: m}, Peer: p - 1},
		{Op: mpi.StepAllgather, Send: mpi.Span{Buf: 0, Off: 0, Len: m}, Recv: mpi.Span{Buf: 1, Off: 0, Len: p * m}},
		{Op: mpi.StepScatter, Send: mpi.Span{Buf: 0, Off: 0, Len: p * m}, Recv: mpi.Span{Buf: 2, Off: m, Len: m}, Peer: 0},
		{Op: mpi.StepAlltoall, Send: mpi.Span{Buf: 0, Len: p * m}, Recv: mpi.Span{Buf: 3, Len: p * m}},
		{Op: mpi.StepAlltoallv, Send: mpi.Span{Buf: 0, Len: m}, Recv: mpi.Span{Buf: 2, Off: 2 * m, Len: m}, Counts: counts},
		{Op: mpi.StepSendrecv, Send: mpi.Span{Buf: 0, Off: m, Len: m}, Peer: right, Recv: mpi.Span{Buf: 2, Off: 3 * m, Len: m}, From: left, Tag: 5},
	}
	if p > 1 && me < 2 { // a send and a receive between ranks 0 and 1
		if me == 0 {
			prog = append(prog, mpi.Step{Op: mpi.StepSend, Send: mpi.Span{Buf: 0, Len: 7}, Peer: 1, Tag: 6})
		} else {
			prog = append(prog, mpi.Step{Op: mpi.StepRecv, Recv: mpi.Span{Buf: 2, Off: 4 * m, Len: 7}, From: 0, Tag: 6})
		}
	}
	fresh := func() [][]byte {
		src := make([]byte, p*m)
		for i := range src {
			src[i] = byte(me*29 + i*3 + 1)
		}
		return [][]byte{src, make([]byte, p*m), make([]byte, 5*m), make([]byte, p*m)}
	}
	inC, inGo := fresh(), fresh()
	b := mpi.Batch{Own: make([]float64, 2), Samples: make([]float64, 2), Sync: true}
	if err := c.StepsBatch(b, inC, [][]mpi.Step{prog}, 1); err != nil {
		t.Fatal(err)
	}
	checkReduced(t, c, "steps", b)
	if b.Own[0] <= 0 {
		t.Errorf("own times %v", b.Own)
	}
	if err := mpi.RunSteps(c, inGo, prog); err != nil {
		t.Fatal(err)
	}
	if err := mpi.RunSteps(c, inGo, prog); err != nil { // the batch ran the program twice
		t.Fatal(err)
	}
	for i := range inC {
		if !bytes.Equal(inC[i], inGo[i]) {
			t.Errorf("buffer %d differs after the C and the Go executor", i)
		}
	}
	// One program per repetition: repetition i sends byte i around the ring.
	progs := make([][]mpi.Step, 3)
	bufs := [][]byte{make([]byte, 3), make([]byte, 3)}
	for i := range progs {
		bufs[0][i] = byte(10*me + i)
		progs[i] = []mpi.Step{{Op: mpi.StepSendrecv, Send: mpi.Span{Buf: 0, Off: i, Len: 1}, Peer: right, Recv: mpi.Span{Buf: 1, Off: i, Len: 1}, From: left, Tag: 7}}
	}
	b = mpi.Batch{Own: make([]float64, 3), Samples: make([]float64, 3), Sync: true}
	if err := c.StepsBatch(b, bufs, progs, 2); err != nil {
		t.Fatal(err)
	}
	if want := []byte{byte(10 * left), byte(10*left + 1), byte(10*left + 2)}; !bytes.Equal(bufs[1], want) {
		t.Errorf("per-repetition programs delivered % x, want % x", bufs[1], want)
	}
	for _, bad := range [][]mpi.Step{
		{{Op: mpi.StepSend, Send: mpi.Span{Buf: 0, Off: 1, Len: 3}, Peer: right}},
		{{Op: mpi.StepRecv, Recv: mpi.Span{Buf: 2, Len: 1}, From: 0}},
		{{Op: mpi.StepSend, Send: mpi.Span{Buf: 0, Len: 1}, Peer: p}},
		{{Op: mpi.StepAlltoallv, Send: mpi.Span{Buf: 0, Len: 1}, Recv: mpi.Span{Buf: 1, Len: 1}, Counts: []int{1}}},
		{{Op: 0}},
	} {
		err := c.StepsBatch(mpi.Batch{Own: make([]float64, 1)}, bufs, [][]mpi.Step{bad}, 1)
		wantClass(t, err, "StepsBatch", mpi.ErrArg)
	}
	wantClass(t, c.StepsBatch(mpi.Batch{Own: make([]float64, 2)}, bufs, progs, 1), "StepsBatch", mpi.ErrArg)
}

// TestBatchFailureIsCollective: an MPI error inside a synchronised batch
// on one rank (a send with a negative tag, refused by the library) ends
// the batch on every rank in the same repetition: the failing rank gets
// its error, the others mpi.ErrPeerFailed; nobody waits in a barrier.
func TestBatchFailureIsCollective(t *testing.T) {
	needMPI(t)
	c := world()
	if c.Size() < 2 {
		t.Skip("needs 2 ranks")
	}
	var prog []mpi.Step
	if c.Rank() == 0 {
		prog = []mpi.Step{{Op: mpi.StepSend, Send: mpi.Span{Buf: 0, Len: 1}, Peer: 1, Tag: -5}}
	}
	b := mpi.Batch{Own: make([]float64, 3), Samples: make([]float64, 3), Sync: true}
	err := c.StepsBatch(b, [][]byte{make([]byte, 1)}, [][]mpi.Step{prog}, 1)
	if c.Rank() == 0 {
		wantClass(t, err, "StepsBatch", mpi.ErrTag)
	} else if !errors.Is(err, mpi.ErrPeerFailed) {
		t.Errorf("rank %d: %v, want ErrPeerFailed", c.Rank(), err)
	}
	// The access engine: rank 0 asks itself for another rank's slot (a
	// fault) in the second repetition; the others have nothing to do.
	x, err := c.NewAccess(mpi.AccessSpec{K: 1, L: 8, Slots: c.Size(), MaxSteps: 1, ReqTag: 76, ReplyTag: 77})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	me := c.Rank()
	runs := make([]mpi.AccessRun, 3)
	for i := range runs {
		runs[i] = mpi.AccessRun{Targets: []int{-1}, Slot: me, Rep: uint64(i + 1), CheckSlot: true}
		if me == 0 && i > 0 { // slot 1 is rank 1's, not rank 0's
			runs[i] = mpi.AccessRun{Targets: []int{0}, Slot: 1, Incoming: 1, Rep: uint64(i + 1), CheckSlot: true}
		}
	}
	if me == 0 {
		runs[0].Slot = 1 // RunBatch takes one slot for the batch
	}
	err = x.(mpi.AccessBatcher).RunBatch(mpi.Batch{Own: make([]float64, 3), Samples: make([]float64, 3), Sync: true}, runs)
	var f *mpi.AccessFault
	if me == 0 {
		if !errors.As(err, &f) || f.Kind != mpi.FaultSlotOwn || f.Slot != 1 {
			t.Errorf("rank 0: %v, want a FaultSlotOwn for slot 1", err)
		}
	} else if !errors.Is(err, mpi.ErrPeerFailed) {
		t.Errorf("rank %d: %v, want ErrPeerFailed", me, err)
	}
}

// TestAccessBatch: a batch of k-k-accesses between partners, reads, runs
// every repetition (the served requests of the last one are listed, with
// its sequence numbers), and the answers hold the partner's memory.
func TestAccessBatch(t *testing.T) {
	needMPI(t)
	c := world()
	peer, on := partner(c)
	me := c.Rank()
	const k, l, reps = 3, 24, 5
	x, err := c.NewAccess(mpi.AccessSpec{K: k, L: l, Slots: c.Size(), MaxSteps: 1, ReqTag: 78, ReplyTag: 79})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	bufs := x.Buffers()
	for i := range bufs.Mem {
		bufs.Mem[i] = byte(me*11 + i)
	}
	runs := make([]mpi.AccessRun, reps)
	for i := range runs {
		runs[i] = mpi.AccessRun{Targets: []int{-1, -1, -1}, Slot: me, Rep: uint64(100 + i)}
		if on {
			runs[i] = mpi.AccessRun{Targets: []int{peer, peer, peer}, Slot: me, Incoming: k, Rep: uint64(100 + i)}
		}
	}
	b := mpi.Batch{Own: make([]float64, reps), Samples: make([]float64, reps), Sync: true}
	if err := x.(mpi.AccessBatcher).RunBatch(b, runs); err != nil {
		t.Fatal(err)
	}
	checkReduced(t, c, "access", b)
	for i, v := range b.Own {
		if on != (v > 0) {
			t.Errorf("repetition %d: %g s (taking part: %v)", i, v, on)
		}
	}
	if !on {
		return
	}
	served := x.Served()
	if len(served) != k {
		t.Fatalf("served %d requests in the last repetition, want %d", len(served), k)
	}
	for _, s := range served {
		if s.Source != peer || s.Seq>>32 != 100+reps-1 {
			t.Errorf("served %+v, want from rank %d in repetition %d", s, peer, 100+reps-1)
		}
	}
	for j := range k {
		for i, v := range bufs.Replies[j*l : (j+1)*l] {
			if want := byte(peer*11 + me*l + i); v != want {
				t.Fatalf("answer %d byte %d is %#x, want %#x", j, i, v, want)
			}
		}
	}
	if err := x.(mpi.AccessBatcher).RunBatch(mpi.Batch{Own: make([]float64, 2)}, runs[:1]); err == nil {
		t.Error("2 repetitions with 1 run: no error")
	}
}
