package divalib_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestBatch: batched reads and writes (globalvar.Batcher) on every strategy
// and variant. Every rank owns vars variables of size bytes; in each epoch
// it writes its own in packets of l bytes, k in flight, then, after a
// barrier, reads every variable in shuffled packets (several per variable
// in one group, every k) and checks each byte against the epoch's value.
// A group of k distinct uncached variables has k accesses in flight at
// once (Stats.PeakInFlight).
func TestBatch(t *testing.T) {
	const np, vars, size, epochs = 6, 3, 40, 4
	for _, cfg := range allConfigs {
		for _, tc := range []struct{ k, l int }{{1, 40}, {3, 7}, {8, 16}, {64, 5}} {
			cfg := cfg
			cfg.Seed = 9
			t.Run(fmt.Sprintf("%s/k%d/l%d", cfg.Name(), tc.k, tc.l), func(t *testing.T) {
				err := local.Run(np, func(c mpi.Comm) error {
					s, err := divalib.New(c, cfg)
					if err != nil {
						return err
					}
					me := c.Rank()
					all := make([]globalvar.Var, np*vars)
					for i := range all {
						if all[i], err = s.Create(fmt.Sprintf("b%d", i), size); err != nil {
							return err
						}
					}
					value := func(epoch, v, b int) byte { return byte(epoch*31 + v*7 + b) }
					rng := rand.New(rand.NewPCG(uint64(me), 3))
					for epoch := 1; epoch <= epochs; epoch++ {
						var w []globalvar.Packet
						for v := me * vars; v < (me+1)*vars; v++ {
							buf := make([]byte, size)
							for b := range buf {
								buf[b] = value(epoch, v, b)
							}
							pk, err := globalvar.Split(all[v], 0, buf, tc.l)
							if err != nil {
								return err
							}
							w = append(w, pk...)
						}
						if err := s.WriteBatch(w, tc.k); err != nil {
							return err
						}
						if err := s.Barrier(); err != nil {
							return err
						}
						bufs := make([][]byte, len(all))
						var r []globalvar.Packet
						for v := range all {
							bufs[v] = make([]byte, size)
							pk, err := globalvar.Split(all[v], 0, bufs[v], tc.l)
							if err != nil {
								return err
							}
							r = append(r, pk...)
						}
						rng.Shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
						if err := s.ReadBatch(r, tc.k); err != nil {
							return err
						}
						for v, buf := range bufs {
							for b, x := range buf {
								if x != value(epoch, v, b) {
									return fmt.Errorf("epoch %d: byte %d of variable %d is %d, want %d", epoch, b, v, x, value(epoch, v, b))
								}
							}
						}
						if err := s.Barrier(); err != nil {
							return err
						}
					}
					// Distinct variables that other ranks own, read in one
					// group, are in flight together. A rank that is neither
					// owner nor home (fixed home) nor root (access tree) of a
					// variable holds no copy once its owner has written it
					// again; the home would hold one again as soon as another
					// rank read it.
					if tc.k >= 3 {
						var pk []globalvar.Packet
						for v := range all {
							if h, _ := s.Home(all[v]); v/vars != me && h != me && len(pk) < 3 {
								pk = append(pk, globalvar.Packet{Var: all[v], Off: 0, Buf: make([]byte, size)})
							}
						}
						// Uncached: the owners write again first.
						if err := s.WriteBatch(w0(all, me, vars, size), tc.k); err != nil {
							return err
						}
						if err := s.Barrier(); err != nil {
							return err
						}
						s.ResetStats()
						if err := s.ReadBatch(pk, tc.k); err != nil {
							return err
						}
						if got := s.Stats().PeakInFlight; got != len(pk) || len(pk) < 2 {
							return fmt.Errorf("%d accesses in flight at most, want %d", got, len(pk))
						}
					}
					return s.Close()
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// w0 is a whole write of rank me's variables.
func w0(all []globalvar.Var, me, vars, size int) []globalvar.Packet {
	var pk []globalvar.Packet
	for v := me * vars; v < (me+1)*vars; v++ {
		pk = append(pk, globalvar.Packet{Var: all[v], Off: 0, Buf: make([]byte, size)})
	}
	return pk
}

// TestBatchErrors: a batch is checked whole before anything is sent.
func TestBatchErrors(t *testing.T) {
	err := local.Run(2, func(c mpi.Comm) error {
		s, err := divalib.New(c, divalib.Config{Strategy: divalib.FixedHome})
		if err != nil {
			return err
		}
		v, err := s.Create("v", 16)
		if err != nil {
			return err
		}
		for _, tc := range []struct {
			name string
			pk   []globalvar.Packet
			k    int
			want error
		}{
			{"k zero", []globalvar.Packet{{Var: v, Buf: make([]byte, 4)}}, 0, globalvar.ErrBatch},
			{"out of range", []globalvar.Packet{{Var: v, Off: 14, Buf: make([]byte, 4)}}, 2, globalvar.ErrRange},
			{"unknown variable", []globalvar.Packet{{Var: globalvar.Var{ID: 7, Name: "x", Size: 4}, Buf: make([]byte, 4)}}, 2, globalvar.ErrUnknownVar},
		} {
			if err := s.ReadBatch(tc.pk, tc.k); !errors.Is(err, tc.want) {
				return fmt.Errorf("%s: read error %v, want %v", tc.name, err, tc.want)
			}
			if err := s.WriteBatch(tc.pk, tc.k); !errors.Is(err, tc.want) {
				return fmt.Errorf("%s: write error %v, want %v", tc.name, err, tc.want)
			}
		}
		if st := s.Stats(); st.Reads+st.Writes != 0 {
			return fmt.Errorf("refused batches made %d accesses", st.Reads+st.Writes)
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPoll: a rank outside any access serves others only through Poll. Rank
// 0 "computes", polling, until it has answered rank 1's batch of reads of
// variables whose fixed home it is; without Poll rank 1 would wait for ever
// and rank 0 would hit the deadline.
func TestPoll(t *testing.T) {
	err := local.Run(2, func(c mpi.Comm) error {
		s, err := divalib.New(c, divalib.Config{Strategy: divalib.FixedHome})
		if err != nil {
			return err
		}
		var pk []globalvar.Packet
		for i := 0; len(pk) < 4; i++ {
			v, err := s.Create(fmt.Sprintf("p%d", i), 64)
			if err != nil {
				return err
			}
			if h, _ := s.Home(v); h == 0 {
				pk = append(pk, globalvar.Packet{Var: v, Buf: make([]byte, 64)})
			}
		}
		if c.Rank() == 0 {
			deadline := time.Now().Add(20 * time.Second)
			for s.Stats().Messages < int64(len(pk)) {
				if err := s.Poll(); err != nil {
					return err
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("rank 0 sent %d answers in 20 s of polling, want %d", s.Stats().Messages, len(pk))
				}
			}
		} else if err := s.ReadBatch(pk, 2); err != nil {
			return err
		}
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
