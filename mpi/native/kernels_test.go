package native

import (
	"bytes"
	"errors"
	"math"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// TestAccessKernel runs the C access engine between partners: two accesses
// of k = 3 packets each to the partner, reads then writes, and checks the
// answers, the served requests and the partner's memory; then a request
// for another rank's slot (to itself, so no peer waits) is a fault that
// breaks the runner, and bad arguments are refused.
func TestAccessKernel(t *testing.T) {
	needMPI(t)
	c := world()
	if _, err := c.NewAccess(mpi.AccessSpec{K: 0, L: 8, Slots: 1, MaxSteps: 1}); !errors.Is(err, &mpi.Error{Class: mpi.ErrArg}) {
		t.Errorf("k = 0: %v", err)
	}
	const k, l, steps = 3, 40, 2
	peer, ok := partner(c)
	me := c.Rank()
	if ok {
		for _, write := range []bool{false, true} {
			x, err := c.NewAccess(mpi.AccessSpec{Write: write, K: k, L: l, Slots: c.Size(), MaxSteps: steps, KeepReplies: true, ReqTag: 70, ReplyTag: 71})
			if err != nil {
				t.Fatal(err)
			}
			b := x.Buffers()
			// Page-aligned as the C reference's (access.c page_zalloc):
			// misaligned packets copy slower (docs/findings/trust.md).
			for _, buf := range []struct {
				name string
				b    []byte
			}{{"Mem", b.Mem}, {"ReqMsgs", b.ReqMsgs}, {"Replies", b.Replies}} {
				if a := uintptr(unsafe.Pointer(unsafe.SliceData(buf.b))) % 4096; a != 0 {
					t.Errorf("write %v: %s at %d bytes past a page boundary, want 0", write, buf.name, a)
				}
			}
			for i := range b.Mem {
				b.Mem[i] = byte(me*17 + i)
			}
			reqLen := mpi.AccessHeaderBytes
			if write {
				reqLen += l
				for j := range k {
					for i := range l {
						b.ReqMsgs[j*reqLen+mpi.AccessHeaderBytes+i] = byte(me*5 + j*3 + i)
					}
				}
			}
			targets := []int{peer, peer, peer, peer, peer, peer}
			sec, err := x.Run(mpi.AccessRun{Targets: targets, Slot: me, Incoming: k * steps, Rep: 9, CheckSlot: true})
			if err != nil || sec <= 0 {
				t.Fatalf("write %v: %g s, %v", write, sec, err)
			}
			served := x.Served()
			if len(served) != k*steps {
				t.Fatalf("write %v: served %d, want %d", write, len(served), k*steps)
			}
			seen := map[uint64]bool{}
			for _, s := range served {
				if s.Source != peer || s.Slot != uint64(peer) || s.Seq>>32 != 9 {
					t.Errorf("write %v: served %+v", write, s)
				}
				seen[s.Seq] = true
			}
			if len(seen) != k*steps {
				t.Errorf("write %v: %d distinct sequence numbers, want %d", write, len(seen), k*steps)
			}
			for s := range steps {
				for j := range k {
					if write {
						ack := b.Replies[(s*k+j)*mpi.AccessHeaderBytes:][:mpi.AccessHeaderBytes]
						if ack[0] != byte(me) || ack[8] != byte(j) || ack[10] != byte(s) {
							t.Errorf("ack of access %d packet %d: % x", s, j, ack)
						}
						continue
					}
					got := b.Replies[(s*k+j)*l:][:l]
					for i := range got {
						if got[i] != byte(peer*17+me*l+i) {
							t.Fatalf("read access %d packet %d byte %d: %#x, want %#x", s, j, i, got[i], byte(peer*17+me*l+i))
						}
					}
				}
			}
			if write {
				// The partner wrote its last packet (j = k-1) into slot peer.
				want := make([]byte, l)
				for i := range want {
					want[i] = byte(peer*5 + (k-1)*3 + i)
				}
				if got := b.Mem[peer*l:][:l]; !bytes.Equal(got, want) {
					t.Errorf("slot %d holds % x, want % x", peer, got, want)
				}
			}
			x.Close()
		}
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
	x, err := c.NewAccess(mpi.AccessSpec{K: 1, L: 8, Slots: c.Size(), MaxSteps: 1, ReqTag: 72, ReplyTag: 73})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, err := x.Run(mpi.AccessRun{Targets: []int{me, me}, Slot: me, Incoming: 1}); !errors.Is(err, &mpi.Error{Class: mpi.ErrArg}) {
		t.Errorf("2 rows of k = 1 with MaxSteps 1: %v", err)
	}
	if _, err := x.Run(mpi.AccessRun{Targets: []int{c.Size()}, Slot: me}); !errors.Is(err, &mpi.Error{Class: mpi.ErrRank}) {
		t.Errorf("target = size: %v", err)
	}
	other := (me + 1) % c.Size()
	if c.Size() == 1 {
		t.Skip("the slot fault needs another rank's slot")
	}
	_, err = x.Run(mpi.AccessRun{Targets: []int{me}, Slot: other, Incoming: 1, CheckSlot: true})
	var f *mpi.AccessFault
	if !errors.As(err, &f) || f.Kind != mpi.FaultSlotOwn || f.Rank != me || f.Slot != uint64(other) || f.Want != me {
		t.Fatalf("request for slot %d of rank %d: %v", other, me, err)
	}
	if _, err := x.Run(mpi.AccessRun{Targets: []int{me}, Slot: me, Incoming: 1}); err == nil {
		t.Error("a broken runner ran again")
	}
}

// TestAccessKernelArgs: sizes that would wrap a C int and negative ranks in
// an active row are refused before C sees them.
func TestAccessKernelArgs(t *testing.T) {
	needMPI(t)
	c := world()
	for _, spec := range []mpi.AccessSpec{
		{K: 1 << 16, L: 8, Slots: 1, MaxSteps: 1},
		{K: 1, L: 8, Slots: 1, MaxSteps: 1 << 16},
		{K: 1, L: -1, Slots: 1, MaxSteps: 1},
	} {
		if _, err := c.NewAccess(spec); !errors.Is(err, &mpi.Error{Class: mpi.ErrArg}) {
			t.Errorf("%+v: %v", spec, err)
		}
	}
	if _, err := c.NewAccess(mpi.AccessSpec{K: 1, L: 1<<32 + 64, Slots: 1, MaxSteps: 1}); !errors.Is(err, &mpi.Error{Class: mpi.ErrCount}) {
		t.Errorf("l = 4 GiB + 64: %v", err)
	}
	x, err := c.NewAccess(mpi.AccessSpec{K: 2, L: 8, Slots: c.Size(), MaxSteps: 2, ReqTag: 74, ReplyTag: 75})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, err := x.Run(mpi.AccessRun{Targets: []int{c.Rank(), -1}}); !errors.Is(err, &mpi.Error{Class: mpi.ErrRank}) {
		t.Errorf("rank -1 in an active row: %v", err)
	}
	// An idle row, then nothing to serve: returns at once with time 0.
	if sec, err := x.Run(mpi.AccessRun{Targets: []int{-1, -1}}); err != nil || sec != 0 {
		t.Errorf("idle: %g, %v", sec, err)
	}
}

// TestPRTTKernel: netgauge's exchanges in C between partners take at least
// the delays they spin, the server's arrival span includes its own delays
// in the o_r run, the server receives the client's bytes, and bad n or
// delay are refused.
func TestPRTTKernel(t *testing.T) {
	needMPI(t)
	c := world()
	other := (c.Rank() + 1) % c.Size()
	if c.Size() > 1 {
		for _, bad := range []struct {
			n     int
			delay float64
		}{{0, 0}, {1, -1}, {2, math.NaN()}, {2, math.Inf(1)}} {
			if _, _, err := c.PRTT(nil, other, 80, bad.n, bad.delay, 1, true, false); !errors.Is(err, &mpi.Error{Class: mpi.ErrArg}) {
				t.Errorf("n %d delay %g: %v", bad.n, bad.delay, err)
			}
		}
	}
	peer, ok := partner(c)
	if !ok {
		return
	}
	client := c.Rank()%2 == 0
	const n, iters, delay = 3, 4, 200e-6
	for _, serverDelay := range []bool{false, true} {
		buf := bytes.Repeat([]byte{0x11}, 100)
		if !client {
			buf = bytes.Repeat([]byte{0x22}, 100)
		}
		sec, arrivals, err := c.PRTT(buf, peer, 81, n, delay, iters, client, serverDelay)
		if err != nil {
			t.Fatal(err)
		}
		spun := float64(iters*(n-1)) * delay
		switch {
		case client && sec < spun:
			t.Errorf("client, server delay %v: %g s for %g s of delays", serverDelay, sec, spun)
		case !client && serverDelay && arrivals < spun:
			t.Errorf("server o_r run: arrivals span %g s, less than its own %g s of delays", arrivals, spun)
		case !client && (arrivals <= 0 || arrivals > sec || buf[0] != 0x11):
			t.Errorf("server: arrivals %g s of %g s, last byte %#x", arrivals, sec, buf[0])
		}
	}
}

// TestAllToAllKernel: every rank's block reaches every other rank, for an
// exchange among all ranks and among the first two; a rank outside n and
// short buffers are refused.
func TestAllToAllKernel(t *testing.T) {
	needMPI(t)
	c := world()
	me, p := c.Rank(), c.Size()
	const block = 24
	fill := func(src, dst int) byte { return byte(src*16 + dst + 1) }
	for _, n := range []int{p, min(2, p)} {
		send, recv := make([]byte, p*block), make([]byte, p*block)
		for d := 0; d < p; d++ {
			for i := 0; i < block; i++ {
				send[d*block+i] = fill(me, d)
			}
		}
		if me < n {
			sec, err := c.AllToAllPt2Pt(send, recv, block, n, 90, 3)
			if err != nil || sec <= 0 {
				t.Fatalf("n = %d: %g s, %v", n, sec, err)
			}
			for s := 0; s < n; s++ {
				if s == me {
					continue
				}
				if got := recv[s*block : (s+1)*block]; !bytes.Equal(got, bytes.Repeat([]byte{fill(s, me)}, block)) {
					t.Errorf("n = %d: block from %d is % x", n, s, got[:4])
				}
			}
		} else if _, err := c.AllToAllPt2Pt(send, recv, block, n, 90, 1); !errors.Is(err, &mpi.Error{Class: mpi.ErrRank}) {
			t.Errorf("rank %d outside n = %d: %v", me, n, err)
		}
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AllToAllPt2Pt(make([]byte, block), make([]byte, p*block), block, p, 91, 1); p > 1 && !errors.Is(err, &mpi.Error{Class: mpi.ErrCount}) {
		t.Errorf("send buffer of one block for %d ranks: %v", p, err)
	}
}

// TestSpareP: after Start a rank bound to one core still has a second P
// (keepSpareP), unless the environment chose GOMAXPROCS.
func TestSpareP(t *testing.T) {
	needMPI(t)
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS set in the environment")
	}
	if got := runtime.GOMAXPROCS(0); got < minProcs {
		t.Errorf("GOMAXPROCS = %d after Start, want at least %d", got, minProcs)
	}
}
