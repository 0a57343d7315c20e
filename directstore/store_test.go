package directstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib/storetest"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, local.Run, func(c mpi.Comm) (globalvar.Store, error) {
		return directstore.New(c, directstore.Config{})
	}, storetest.Options{})
}

// TestConformanceSmallPackets cuts every plain access into 8-byte packets,
// so the suite's 16-byte slots travel as two packets in flight at once.
// Torn reads are then allowed by the contract (atomic per packet), so only
// the workloads that do not depend on whole-slot atomicity are run.
func TestConformanceSmallPackets(t *testing.T) {
	newStore := func(c mpi.Comm) (globalvar.Store, error) {
		return directstore.New(c, directstore.Config{MaxPacket: 8})
	}
	for _, w := range storetest.Workloads(storetest.Options{Ranks: 8}) {
		if w.Name == "TornReads" || w.Name == "Coherence" {
			continue
		}
		t.Run(w.Name, func(t *testing.T) {
			rep, err := storetest.RunWorkload(local.Run, 8, newStore, w.Run)
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// fill is byte i of the block homed for writer w.
func fill(w, i int) byte { return byte(w*29 + i*7 + 1) }

// TestBatch writes and reads blocks with every (k, l) on p ranks: each rank
// writes its block on home (r+1) mod p, barrier, reads the block of rank
// (r+2) mod p, and checks the bytes and the packets served.
func TestBatch(t *testing.T) {
	for _, tc := range []struct {
		p, block, k, l int
	}{
		{1, 100, 1, 100},
		{2, 1000, 4, 64},
		{4, 4096, 3, 100},
		{8, 777, 2, 50},
		{4, 64, 8, 64},  // fewer packets than k
		{3, 10, 1, 1},   // byte packets
		{4, 0, 2, 16},   // an empty block: no packet
		{2, 300, 16, 7}, // the last group partial
	} {
		t.Run(fmt.Sprintf("p%d_block%d_k%d_l%d", tc.p, tc.block, tc.k, tc.l), func(t *testing.T) {
			err := local.Run(tc.p, func(c mpi.Comm) error {
				s, err := directstore.New(c, directstore.Config{MaxPacket: 1 << 10})
				if err != nil {
					return err
				}
				p, me := c.Size(), c.Rank()
				vars := make([]globalvar.Var, p)
				for i := range vars {
					if vars[i], err = s.CreateAt(fmt.Sprintf("block.%d", i), tc.block, (i+1)%p); err != nil {
						return err
					}
				}
				if h, _ := s.Home(vars[me]); h != (me+1)%p {
					return fmt.Errorf("home of block %d is %d", me, h)
				}
				mine := make([]byte, tc.block)
				for i := range mine {
					mine[i] = fill(me, i)
				}
				pk, err := globalvar.Split(vars[me], 0, mine, tc.l)
				if err != nil {
					return err
				}
				if err := globalvar.WriteBatch(s, pk, tc.k); err != nil {
					return err
				}
				if err := s.Barrier(); err != nil {
					return err
				}
				src := (me + 2) % p
				got := make([]byte, tc.block)
				pk, err = globalvar.Split(vars[src], 0, got, tc.l)
				if err != nil {
					return err
				}
				if err := globalvar.ReadBatch(s, pk, tc.k); err != nil {
					return err
				}
				for i := range got {
					if got[i] != fill(src, i) {
						return fmt.Errorf("rank %d: byte %d of block %d is %#x, want %#x", me, i, src, got[i], fill(src, i))
					}
				}
				if err := s.Barrier(); err != nil {
					return err
				}
				// Every rank's block is written by one rank and read by one,
				// so each home served its block's packets once each way.
				st := s.Stats()
				n := int64(globalvar.Packets(tc.block, tc.l))
				if st.ServedWrites != n || st.ServedReads != n || st.Packets != 2*n {
					return fmt.Errorf("rank %d: served %d writes, %d reads, issued %d packets; want %d, %d, %d",
						me, st.ServedWrites, st.ServedReads, st.Packets, n, n, 2*n)
				}
				return s.Close()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBatchErrors: bad batches are refused before anything is sent, and the
// store stays usable.
func TestBatchErrors(t *testing.T) {
	err := local.Run(2, func(c mpi.Comm) error {
		s, err := directstore.New(c, directstore.Config{MaxPacket: 64})
		if err != nil {
			return err
		}
		v, err := s.Create("v", 256)
		if err != nil {
			return err
		}
		buf := make([]byte, 128)
		for _, tc := range []struct {
			name string
			err  error
			want error
		}{
			{"k zero", s.ReadBatch([]globalvar.Packet{{Var: v, Buf: buf[:8]}}, 0), globalvar.ErrBatch},
			{"packet above MaxPacket", s.WriteBatch([]globalvar.Packet{{Var: v, Buf: buf}}, 1), globalvar.ErrBatch},
			{"past the end", s.ReadBatch([]globalvar.Packet{{Var: v, Off: 250, Buf: buf[:8]}}, 1), globalvar.ErrRange},
			{"unknown variable", s.ReadBatch([]globalvar.Packet{{Var: globalvar.Var{ID: 9, Size: 8}, Buf: buf[:8]}}, 1), globalvar.ErrUnknownVar},
			{"split l zero", func() error { _, err := globalvar.Split(v, 0, buf, 0); return err }(), globalvar.ErrBatch},
		} {
			if !errors.Is(tc.err, tc.want) {
				return fmt.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
			}
		}
		// A plain access longer than MaxPacket goes as several packets.
		for i := range buf {
			buf[i] = byte(i)
		}
		if c.Rank() == 0 {
			if err := s.Write(v, 10, buf); err != nil {
				return err
			}
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		got := make([]byte, len(buf))
		if err := s.Read(v, 10, got); err != nil {
			return err
		}
		if !bytes.Equal(got, buf) {
			return fmt.Errorf("rank %d: long read differs", c.Rank())
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFallback: a store without Batcher gets one plain access per packet.
func TestFallback(t *testing.T) {
	err := local.Run(2, func(c mpi.Comm) error {
		ds, err := directstore.New(c, directstore.Config{})
		if err != nil {
			return err
		}
		s := plainOnly{ds}
		if globalvar.Batched(s) || !globalvar.Batched(ds) {
			return errors.New("Batched misreports")
		}
		v, err := s.Create("v", 100)
		if err != nil {
			return err
		}
		data := bytes.Repeat([]byte{7}, 100)
		pk, _ := globalvar.Split(v, 0, data, 30)
		if c.Rank() == 1 {
			if err := globalvar.WriteBatch(s, pk, 4); err != nil {
				return err
			}
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		got := make([]byte, 100)
		pk, _ = globalvar.Split(v, 0, got, 30)
		if err := globalvar.ReadBatch(s, pk, 4); err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			return errors.New("fallback read differs")
		}
		// 4 packets written by one rank and read by two, one batch each.
		if st := ds.Stats(); st.Batches != map[int]int64{0: 4, 1: 8}[c.Rank()] {
			return fmt.Errorf("rank %d: %d batches, want one per packet", c.Rank(), st.Batches)
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// plainOnly hides the Batcher of a store.
type plainOnly struct{ s *directstore.Store }

func (p plainOnly) Create(name string, size int) (globalvar.Var, error) {
	return p.s.Create(name, size)
}
func (p plainOnly) Read(v globalvar.Var, off int, buf []byte) error { return p.s.Read(v, off, buf) }
func (p plainOnly) Write(v globalvar.Var, off int, d []byte) error  { return p.s.Write(v, off, d) }
func (p plainOnly) Barrier() error                                  { return p.s.Barrier() }
func (p plainOnly) Lock(v globalvar.Var) error                      { return p.s.Lock(v) }
func (p plainOnly) Unlock(v globalvar.Var) error                    { return p.s.Unlock(v) }
func (p plainOnly) Close() error                                    { return p.s.Close() }

// TestPoll: a rank outside any access serves a batch only through Poll.
func TestPoll(t *testing.T) {
	err := local.Run(2, func(c mpi.Comm) error {
		s, err := directstore.New(c, directstore.Config{})
		if err != nil {
			return err
		}
		v, err := s.CreateAt("v", 4096, 0)
		if err != nil {
			return err
		}
		const l = 256
		if c.Rank() == 0 {
			// Rank 0 "computes", polling, until every packet is served.
			for s.Stats().ServedReads < 4096/l {
				if err := s.Poll(); err != nil {
					return err
				}
			}
		} else {
			pk, _ := globalvar.Split(v, 0, make([]byte, 4096), l)
			if err := globalvar.ReadBatch(s, pk, 4); err != nil {
				return err
			}
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKeeps: a rank keeps exactly the variables homed on it
// (globalvar.Keeps), and a store without the query keeps nothing.
func TestKeeps(t *testing.T) {
	err := local.Run(3, func(c mpi.Comm) error {
		s, err := directstore.New(c, directstore.Config{})
		if err != nil {
			return err
		}
		for home := range 3 {
			v, err := s.CreateAt(fmt.Sprintf("v%d", home), 64, home)
			if err != nil {
				return err
			}
			if got, want := globalvar.Keeps(s, v), home == c.Rank(); got != want {
				return fmt.Errorf("rank %d: Keeps(v on %d) = %v, want %v", c.Rank(), home, got, want)
			}
			if globalvar.Keeps(plainOnly{s}, v) {
				return fmt.Errorf("rank %d: a store without Keeps keeps v on %d", c.Rank(), home)
			}
		}
		if globalvar.Keeps(s, globalvar.Var{ID: 99, Name: "never", Size: 1}) {
			return fmt.Errorf("rank %d keeps a variable never created", c.Rank())
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
