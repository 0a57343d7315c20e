package native

import (
	"errors"
	"fmt"
	"testing"

	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib/storetest"
	"github.com/commcost/commcost/mpi"
)

// TestStoreServer runs the C store server: every rank writes a block into
// every rank's home memory (itself included) with batches of k packets,
// then reads every block back, while a Go receive it waits for with
// WaitAny completes only after the batches; served counts, bytes, a fault
// and bad arguments are checked.
func TestStoreServer(t *testing.T) {
	needMPI(t)
	c0 := world()
	d, err := c0.Dup()
	if err != nil {
		t.Fatal(err)
	}
	c := d.(*Comm)
	defer c.Free()
	p, me := c.Size(), c.Rank()
	const block, l, k = 1000, 64, 3
	srv, err := c.NewStoreServer(mpi.StoreSpec{ReqTag: 80, ReplyTag: 81, MaxPacket: 256})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Grow(block * p); err != nil {
		t.Fatal(err)
	}
	if len(srv.Mem()) != block*p {
		t.Fatalf("memory of %d bytes, want %d", len(srv.Mem()), block*p)
	}
	// Rank r's block lives at offset r*block of every home.
	batch := func(write bool, bufs func(h int) []byte) error {
		var b mpi.StoreBatch
		b.Write, b.K = write, k
		for i := range p {
			h := (me + i) % p
			buf := bufs(h)
			for lo := 0; lo < block; lo += l {
				hi := min(lo+l, block)
				b.Targets = append(b.Targets, h)
				b.Offs = append(b.Offs, me*block+lo)
				b.Bufs = append(b.Bufs, buf[lo:hi])
			}
		}
		return srv.Batch(b)
	}
	// A dissemination barrier of this backend's own requests, waited for
	// while serving, so the batches of every rank are complete after it.
	token := func() error {
		for d, round := 1, 0; d < p; d, round = d*2, round+1 {
			in := make([]byte, 1)
			recv, err := c.Irecv(in, (me-d+p)%p, 82+round)
			if err != nil {
				return err
			}
			send, err := c.Isend([]byte{1}, (me+d)%p, 82+round)
			if err != nil {
				return err
			}
			for _, r := range []mpi.Request{recv, send} {
				if i, _, err := srv.WaitAny([]mpi.Request{nil, r}); err != nil || i != 1 {
					return fmt.Errorf("WaitAny: index %d, %v", i, err)
				}
			}
		}
		return nil
	}
	data := make([]byte, block)
	for i := range data {
		data[i] = byte(me*7 + i)
	}
	if err := batch(true, func(int) []byte { return data }); err != nil {
		t.Fatal(err)
	}
	// Polling serves too: wait for the writes into this home (one per
	// packet of every rank's block) with Poll alone.
	for {
		if _, wr := srv.Served(); wr == int64(p*((block+l-1)/l)) {
			break
		}
		if err := srv.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	if err := token(); err != nil {
		t.Fatal(err)
	}
	got := make([][]byte, p)
	if err := batch(false, func(h int) []byte { got[h] = make([]byte, block); return got[h] }); err != nil {
		t.Fatal(err)
	}
	if err := token(); err != nil {
		t.Fatal(err)
	}
	for h, g := range got {
		for i := range g {
			if g[i] != data[i] {
				t.Fatalf("block of rank %d read from home %d: byte %d is %#x, want %#x", me, h, i, g[i], data[i])
			}
		}
	}
	mem := srv.Mem()
	for r := range p {
		for i := range block {
			if want := byte(r*7 + i); mem[r*block+i] != want {
				t.Fatalf("home %d: byte %d of rank %d's block is %#x, want %#x", me, i, r, mem[r*block+i], want)
			}
		}
	}
	packets := int64(p * ((block + l - 1) / l))
	if rd, wr := srv.Served(); rd != packets || wr != packets {
		t.Errorf("served %d reads and %d writes, want %d each", rd, wr, packets)
	}
	if err := srv.Batch(mpi.StoreBatch{K: 1, Targets: []int{0}, Offs: []int{0}, Bufs: [][]byte{make([]byte, 257)}}); !errors.Is(err, &mpi.Error{Class: mpi.ErrArg}) {
		t.Errorf("packet above MaxPacket: %v", err)
	}
	if err := srv.Batch(mpi.StoreBatch{K: 0, Targets: []int{0}, Offs: []int{0}, Bufs: [][]byte{nil}}); !errors.Is(err, &mpi.Error{Class: mpi.ErrArg}) {
		t.Errorf("k = 0: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// A read past the home's memory, to itself so no peer is involved, is
	// a fault that breaks the server.
	srv2, err := c.NewStoreServer(mpi.StoreSpec{ReqTag: 90, ReplyTag: 91, MaxPacket: 64})
	if err != nil {
		t.Fatal(err)
	}
	err = srv2.Batch(mpi.StoreBatch{K: 1, Targets: []int{me}, Offs: []int{8}, Bufs: [][]byte{make([]byte, 8)}})
	var f *mpi.AccessFault
	if !errors.As(err, &f) || f.Kind != mpi.FaultSlotRange || f.Rank != me {
		t.Errorf("read past the memory: %v", err)
	}
	if err := srv2.Batch(mpi.StoreBatch{K: 1}); err == nil {
		t.Error("a broken server ran again")
	}
}

// TestDirectStoreConformance runs the globalvar.Store conformance suite
// (divalib/storetest's workloads) on the direct store over MPI_COMM_WORLD,
// whose accesses run in the C server.
func TestDirectStoreConformance(t *testing.T) {
	needMPI(t)
	c := world()
	for _, w := range storetest.Workloads(storetest.Options{Ranks: c.Size(), CoherenceOps: 2000}) {
		t.Run(w.Name, func(t *testing.T) {
			s, err := directstore.New(c, directstore.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if !s.Kernel() {
				t.Fatal("the direct store does not use the C server")
			}
			rep, err := w.Run(c, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if c.Rank() == 0 {
				t.Logf("%d ops (%d reads, %d writes) on %d ranks", rep.Ops, rep.Reads, rep.Writes, c.Size())
			}
		})
	}
}
