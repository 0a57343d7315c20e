package native

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

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

// TestEngineBarrierLate: the tree barrier's sums reach every rank whichever
// rank enters last (rank e mod P in epoch e), so at 2 ranks the root
// releases its remote child early (engine.h) in some epochs and in the
// usual order in others.
func TestEngineBarrierLate(t *testing.T) {
	d := dupWorld(t)
	me, p := d.Rank(), d.Size()
	eng, err := d.(mpi.EngineKernel).NewEngine(mpi.EngineSpec{Tag: 9, HeadBytes: 4, Barrier: engineTree(me, p)})
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < 10; e++ {
		if e%p == me {
			time.Sleep(2 * time.Millisecond)
		}
		_, ok, err := eng.Barrier(int64(me+e), 1)
		for ; err == nil; _, ok, err = eng.Next(true) {
			if ok {
				t.Fatal("a message arrived, none was sent")
			}
			if _, _, done := eng.BarrierDone(); done {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		a, b, _ := eng.BarrierDone()
		if wa, wb := int64(p*(p-1)/2+p*e), int64(p); a != wa || b != wb {
			t.Fatalf("epoch %d: sums %d, %d; want %d, %d", e, a, b, wa, wb)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestEngineReply: requests for keys with a body are answered by the
// engine (the answer's head is the template with the key, its body the
// one set: empty, inline, just over the inline limit, large), Served sees
// each in arrival order before the message that followed it, and requests
// for keys without a body (never set, or cleared) come to the caller. A
// body replaced while answers from it may be in flight, and a GC, leave
// the answers intact (the engine holds the old body until they leave).
func TestEngineReply(t *testing.T) {
	d := dupWorld(t)
	me, p := d.Rank(), d.Size()
	const (
		head, inline       = 8, 64
		kReq, kAns, kOther = 7, 9, 3
		nkeys              = 5
	)
	sizes := []int{0, 5, inline, inline + 1, 100 << 10}
	body := func(owner, k, gen int) []byte {
		return bytes.Repeat([]byte{byte(owner*37 + k*5 + gen)}, sizes[k])
	}
	key := func(owner, k int) int { return owner*nkeys + k }
	hdr := func(kind byte, k int) []byte {
		h := make([]byte, head)
		h[0] = kind
		binary.LittleEndian.PutUint32(h[4:], uint32(k))
		return h
	}
	var served []int // sources, in order
	ans := make([]byte, head)
	ans[0] = kAns
	eng, err := d.(mpi.EngineKernel).NewEngine(mpi.EngineSpec{Tag: 11, HeadBytes: head, InlineBytes: inline, Barrier: engineTree(me, p),
		Reply: &mpi.EngineReply{KindOffset: 0, Request: kReq, KeyOffset: 4, Head: ans, Served: func(k, src, n int) {
			if n != sizes[k%nkeys] {
				t.Errorf("served key %d with %d bytes, want %d", k, n, sizes[k%nkeys])
			}
			if k/nkeys != me {
				t.Errorf("served key %d, not one of rank %d's", k, me)
			}
			served = append(served, src)
		}}})
	if err != nil {
		t.Fatal(err)
	}
	rep := eng.(mpi.EngineReplier)
	// barrier returns the messages that arrived meanwhile (a peer past it
	// may send its requests already), heads copied.
	barrier := func() (early []mpi.EngineMessage) {
		m, ok, err := eng.Barrier(0, 0)
		for ; err == nil; m, ok, err = eng.Next(true) {
			if ok {
				m.Head = append([]byte(nil), m.Head...)
				early = append(early, m)
			}
			if _, _, done := eng.BarrierDone(); done {
				return early
			}
		}
		t.Fatal(err)
		return nil
	}
	for gen := 0; gen < 3; gen++ {
		for k := range sizes {
			if err := rep.SetReply(key(me, k), body(me, k, gen)); err != nil {
				t.Fatal(err)
			}
		}
		if gen == 2 {
			rep.ClearReply(key(me, 1)) // its requests come to Go now
		}
		served = served[:0] // a peer past the barrier may be served in it
		early := barrier()
		// Every rank asks every other for each key twice (so answers
		// from one body can be in flight when the next generation
		// replaces it) and once for a key nobody set, then says done.
		for to := 0; to < p; to++ {
			if to == me {
				continue
			}
			for k := range sizes {
				for range 2 {
					if err := eng.Send(hdr(kReq, key(to, k)), nil, to); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := eng.Send(hdr(kReq, key(p, 0)), nil, to); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		answers, unknown, done, peersDone := 0, 0, 0, 0
		want := (p - 1) * 2 * len(sizes)
		wantUnknown := p - 1
		if gen == 2 {
			want -= (p - 1) * 2
			wantUnknown += (p - 1) * 2
		}
		for done < p-1 || peersDone < p-1 {
			if answers == want && unknown == wantUnknown && done < p-1 {
				// All answers in: tell the peers, whose requests to this
				// rank came before their own done.
				for to := 0; to < p; to++ {
					if to != me {
						if err := eng.Send(hdr(kOther, 0), nil, to); err != nil {
							t.Fatal(err)
						}
					}
				}
				done = p - 1
				continue
			}
			var m mpi.EngineMessage
			if len(early) > 0 {
				m, early = early[0], early[1:]
			} else {
				var ok bool
				var err error
				if m, ok, err = eng.Next(true); err != nil {
					t.Fatal(err)
				} else if !ok {
					continue
				}
			}
			k := int(binary.LittleEndian.Uint32(m.Head[4:]))
			switch m.Head[0] {
			case kAns:
				owner, kk := k/nkeys, k%nkeys
				if owner != m.Source || !bytes.Equal(m.Body, body(owner, kk, gen)) {
					t.Fatalf("gen %d: answer for key %d from %d with %d bytes, want rank %d's body %d", gen, k, m.Source, len(m.Body), owner, kk)
				}
				answers++
			case kReq:
				if k != key(p, 0) && !(gen == 2 && k == key(me, 1)) {
					t.Fatalf("gen %d: request for key %d from %d reached the caller", gen, k, m.Source)
				}
				unknown++
			case kOther:
				// Everything this peer asked was answered before.
				n := 0
				for _, s := range served {
					if s == m.Source {
						n++
					}
				}
				if wantN := 2*len(sizes) - map[bool]int{true: 2}[gen == 2]; n != wantN {
					t.Fatalf("gen %d: done from %d after %d of its requests served, want %d", gen, m.Source, n, wantN)
				}
				peersDone++
			default:
				t.Fatalf("unexpected head %v", m.Head)
			}
		}
		if answers != want || unknown != wantUnknown {
			t.Fatalf("gen %d: %d answers and %d requests in, want %d and %d", gen, answers, unknown, want, wantUnknown)
		}
		if late := barrier(); len(late) > 0 {
			t.Fatalf("gen %d: %d messages after everything was answered", gen, len(late))
		}
	}
	if err := rep.SetReply(-1, nil); err == nil {
		t.Error("SetReply of key -1 accepted")
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rep.SetReply(0, nil); err == nil {
		t.Error("SetReply on a closed engine accepted")
	}
	// A reply spec that does not fit the head is refused.
	if _, err := d.(mpi.EngineKernel).NewEngine(mpi.EngineSpec{Tag: 11, HeadBytes: head, Reply: &mpi.EngineReply{KeyOffset: head - 2, Head: ans, Served: func(int, int, int) {}}}); err == nil {
		t.Error("a key past the head accepted")
	}
}

// TestEngineSending: Sending reports a body while a send from it has not
// completed (a Send's and an answer from a SetReply body), and no longer
// once it has; a body sent inline, a reply body nobody asked for and
// memory beside a body never are. A rendezvous send cannot complete
// before its receive is posted, which rank 1 delays behind a barrier that
// rank 0 enters after looking; 8 MiB is far over the eager limits of Open
// MPI's and MPICH's transports by default (shared memory 4-64 KiB, TCP
// 64-128 KiB), but a transport configured to send it eagerly fails the
// test.
func TestEngineSending(t *testing.T) {
	d := dupWorld(t)
	me, p := d.Rank(), d.Size()
	if p < 2 {
		t.Skip("needs 2 ranks: rank 0 sends to rank 1")
	}
	const (
		head, inline = 8, 64
		kReq, kAns   = 7, 9
		big          = 8 << 20
	)
	eng, err := d.(mpi.EngineKernel).NewEngine(mpi.EngineSpec{Tag: 13, HeadBytes: head, InlineBytes: inline, Barrier: engineTree(me, p),
		Reply: &mpi.EngineReply{KindOffset: 0, Request: kReq, KeyOffset: 4, Head: []byte{kAns, 0, 0, 0, 0, 0, 0, 0}, Served: func(int, int, int) {}}})
	if err != nil {
		t.Fatal(err)
	}
	tr := eng.(mpi.EngineSendTracker)
	sending := func(b []byte) bool {
		t.Helper()
		busy, err := tr.Sending(b)
		if err != nil {
			t.Fatal(err)
		}
		return busy
	}
	// settles waits (polling, as a store would) until b is no longer sent.
	settles := func(b []byte, what string) {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); sending(b); {
			if time.Now().After(end) {
				t.Fatalf("%s: still sending 30 s after its receiver took it", what)
			}
			if _, _, err := eng.Next(false); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := func() mpi.EngineMessage {
		t.Helper()
		for {
			m, ok, err := eng.Next(true)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				return m
			}
		}
	}
	mem := bytes.Repeat([]byte{5}, 2*big)
	body, beside := mem[:big], mem[big:]
	small := bytes.Repeat([]byte{6}, inline)
	reply := bytes.Repeat([]byte{7}, big)
	hdr := make([]byte, head)
	// Round 1: rank 0 sends body to rank 1.
	switch me {
	case 0:
		if err := eng.Send(hdr, body, 1); err != nil {
			t.Fatal(err)
		}
		if err := eng.Send(hdr, small, 1); err != nil {
			t.Fatal(err)
		}
		if err := eng.Flush(); err != nil {
			t.Fatal(err)
		}
		if !sending(body) || !sending(body[big/2:big/2+1]) || !sending(mem[big-1:big+1]) {
			t.Error("an 8 MiB body its receiver has not asked for yet: not reported as sending (whole, inside, straddling its end)")
		}
		if sending(beside) || sending(small) {
			t.Error("memory beside the body, or a body sent inline, reported as sending")
		}
	}
	if err := d.Barrier(); err != nil {
		t.Fatal(err)
	}
	switch me {
	case 0:
		settles(body, "a Send's body")
	case 1:
		for _, want := range [][]byte{body, small} {
			if m := next(); m.Source != 0 || !bytes.Equal(m.Body, want) {
				t.Fatalf("from %d: %d bytes, want rank 0's %d", m.Source, len(m.Body), len(want))
			}
		}
	}
	if err := d.Barrier(); err != nil {
		t.Fatal(err)
	}
	// Round 2: rank 1 asks rank 0 for key 3, whose answer is reply.
	switch me {
	case 0:
		if err := tr.(mpi.EngineReplier).SetReply(3, reply); err != nil {
			t.Fatal(err)
		}
		if sending(reply) {
			t.Error("a reply body nobody asked for reported as sending")
		}
	}
	if err := d.Barrier(); err != nil {
		t.Fatal(err)
	}
	switch me {
	case 0:
		// The engine answers inside Next; wait for the request to be
		// answered (the reply's send then stays open: rank 1 waits).
		end := time.Now().Add(30 * time.Second)
		for !sending(reply) {
			if time.Now().After(end) {
				t.Fatal("rank 1's request not answered in 30 s")
			}
			if _, ok, err := eng.Next(false); err != nil || ok {
				t.Fatalf("Next: a message (%t) or %v, want only the answered request", ok, err)
			}
		}
	case 1:
		h := make([]byte, head)
		h[0], h[4] = kReq, 3
		if err := eng.Send(h, nil, 0); err != nil {
			t.Fatal(err)
		}
		if err := eng.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Barrier(); err != nil {
		t.Fatal(err)
	}
	switch me {
	case 0:
		settles(reply, "an answer's body")
	case 1:
		if m := next(); m.Source != 0 || m.Head[0] != kAns || !bytes.Equal(m.Body, reply) {
			t.Fatalf("answer from %d: head %v, %d bytes, want rank 0's %d", m.Source, m.Head, len(m.Body), big)
		}
	}
	if err := d.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}

// dupWorld is a duplicate of the world for one test (skipped outside the
// mpirun children), freed when the test ends.
func dupWorld(t *testing.T) mpi.Comm {
	t.Helper()
	needMPI(t)
	d, err := world().Dup()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free() })
	return d
}
