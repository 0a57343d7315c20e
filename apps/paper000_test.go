package apps

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// testStore is a store under test: how to run fn on p application ranks
// with the store.
type testStore struct {
	name string
	run  func(p int, fn func(env Env) error) error
	// pOK says which application rank counts the store can run.
	pOK func(p int) bool
}

func withStore(p int, newStore func(c mpi.Comm) (globalvar.Store, error), fn func(env Env) error) error {
	return local.RunWith(local.Options{Timeout: 120 * time.Second}, p, func(c mpi.Comm) error {
		s, err := newStore(c)
		if err != nil {
			return err
		}
		if err := fn(Env{Comm: c, Store: s, Seed: 5}); err != nil {
			return err
		}
		return s.Close()
	})
}

// testStores: the direct store, fixed home, the 4-ary access tree, and the
// emulated butterfly BF(2) (4 application ranks, 12 service ranks).
var testStores = []testStore{
	{"direct", func(p int, fn func(Env) error) error {
		return withStore(p, func(c mpi.Comm) (globalvar.Store, error) { return directstore.New(c, directstore.Config{}) }, fn)
	}, func(int) bool { return true }},
	{"fixed-home", func(p int, fn func(Env) error) error {
		return withStore(p, func(c mpi.Comm) (globalvar.Store, error) {
			return divalib.New(c, divalib.Config{Strategy: divalib.FixedHome, Seed: 3})
		}, fn)
	}, func(int) bool { return true }},
	{"tree-4", func(p int, fn func(Env) error) error {
		return withStore(p, func(c mpi.Comm) (globalvar.Store, error) {
			return divalib.New(c, divalib.Config{Variant: divalib.Tree4, Seed: 3})
		}, fn)
	}, func(int) bool { return true }},
	{"BF(2)", func(p int, fn func(Env) error) error {
		top, err := emulate.Parse("BF(2)")
		if err != nil {
			return err
		}
		cfg := emulate.Config{Topology: top, Seed: 3, StallTimeout: 30 * time.Second}
		return local.RunWith(local.Options{Timeout: 120 * time.Second}, top.Ranks(), func(w mpi.Comm) error {
			return emulate.Run(w, cfg, func(s *emulate.Store) error {
				return fn(Env{Comm: s.AppComm(), Store: s, Seed: 5})
			})
		})
	}, func(p int) bool { return p == 4 }},
}

// runApp runs app twice (so repeated runs over one setup are covered) on
// every rank and returns rank 0's outcome of the second run.
func runApp(ts testStore, p int, app App) (Outcome, error) {
	var mu sync.Mutex
	var out0 Outcome
	err := ts.run(p, func(env Env) error {
		if err := app.Check(env.Comm.Size()); err != nil {
			return err
		}
		if su, ok := app.(Setupper); ok {
			st, err := su.Setup(env)
			if err != nil {
				return err
			}
			env.State = st
		}
		var out Outcome
		for range 2 {
			var err error
			if out, err = app.Run(env); err != nil {
				return err
			}
		}
		if env.Comm.Rank() == 0 {
			mu.Lock()
			out0 = out
			mu.Unlock()
		}
		return nil
	})
	if err == nil {
		err = registeredPhases(app, out0)
	}
	return out0, err
}

// count sums the counts of a phase's workload items.
func count(items []results.WorkItem) float64 {
	s := 0.0
	for _, it := range items {
		s += it.Count
	}
	return s
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func TestMatMul(t *testing.T) {
	for _, ts := range testStores {
		for _, p := range []int{1, 2, 4, 8} {
			if !ts.pOK(p) {
				continue
			}
			for _, sync := range []bool{false, true} {
				app := MatMul{N: 16, Access: Access{K: 2, L: 32}, Sync: sync}
				t.Run(fmt.Sprintf("%s/p%d/sync=%v", ts.name, p, sync), func(t *testing.T) {
					out, err := runApp(ts, p, app)
					if err != nil {
						t.Fatal(err)
					}
					// T_MM = (p+2) ceil((n^2/p)/(k l)) with 4-byte integers,
					// over the accesses that cross the network: on the direct
					// store rank i keeps B_(p-1-i) (and with p = 1 everything),
					// so p+1 of the p+2 submatrix accesses do.
					g := ceilDiv(4*16*16/p, 2*32)
					reads, writes := p+1, 1
					if ts.name == "direct" {
						reads--
						if p == 1 {
							reads, writes = 0, 0
						}
					}
					if got := count(out.Workload[PhaseMM]); got != float64((reads+writes)*g) {
						t.Errorf("T_MM count %v, want (%d reads + %d writes) ceil(4 n^2/(p k l)) = %v", got, reads, writes, (reads+writes)*g)
					}
					for _, it := range out.Workload[PhaseMM] {
						want := reads * g
						if it.Params["op"] == opWrite {
							want = writes * g
						}
						if it.Count != float64(want) {
							t.Errorf("%v: count %v, want %d", it.Params, it.Count, want)
						}
					}
					if sync != (out.Phases.Kind(PhaseSync) == KindSync) {
						t.Errorf("sync phase %q with Sync %v", out.Phases.Kind(PhaseSync), sync)
					}
				})
			}
		}
	}
}

// TestMeasureMatMul: Measure sets the application up once and repeats it.
func TestMeasureMatMul(t *testing.T) {
	err := withStore(4, func(c mpi.Comm) (globalvar.Store, error) { return directstore.New(c, directstore.Config{}) }, func(env Env) error {
		recs, err := Measure(env, MatMul{N: 32, Access: Access{K: 4, L: 64}, Sync: true}, patterns.Reps{MinReps: 3, MaxReps: 3, Warmup: 1}, results.Meta{Backend: "local"})
		if err != nil {
			return err
		}
		if len(recs) != 3 {
			return fmt.Errorf("%d records, want mm, sync, compute", len(recs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestConnComp(t *testing.T) {
	for _, ts := range testStores {
		for _, p := range []int{1, 2, 4, 8} {
			if !ts.pOK(p) {
				continue
			}
			app := ConnComp{N: 64, Parts: 3, Density: 0.3, Access: Access{K: 2, L: 16}}
			t.Run(fmt.Sprintf("%s/p%d", ts.name, p), func(t *testing.T) {
				out, err := runApp(ts, p, app)
				if err != nil {
					t.Fatal(err)
				}
				// T_bfs = ceil((4 n^2/(16p))/(k l)): 16 edges per 4-byte
				// integer; T_merge = (1 + 2 log p) ceil(4n/(k l)).
				bfs, merge := ceilDiv(4*64*64/16/p, 2*16), ceilDiv(4*64, 2*16)
				logp := 0
				for 1<<logp < p {
					logp++
				}
				// Over the accesses that cross the network: on the direct
				// store with p = 2 rank 0 reads W_1 on itself, with p = 1
				// every access stays on the rank.
				merges := 1 + 2*logp
				if ts.name == "direct" {
					switch p {
					case 1:
						bfs, merges = 0, 0
					case 2:
						merges--
					}
				}
				if got := count(out.Workload[PhaseBFS]); got != float64(bfs) {
					t.Errorf("T_bfs count %v, want %d", got, bfs)
				}
				if got := count(out.Workload[PhaseMerge]); got != float64(merges*merge) {
					t.Errorf("T_merge count %v, want %d x %d", got, merges, merge)
				}
				if ts.name == "direct" && p == 2 {
					if it := out.Workload[PhaseMerge][1]; it.Params["op"] != opRead || it.Count != 0 {
						t.Errorf("merge step 1 read %v count %v, want the read of W_1 on rank 0 counted 0", it.Params, it.Count)
					}
				}
				// The r of the merge steps are 1, then 1/2^j twice for j = 1..log p.
				for _, it := range out.Workload[PhaseMerge][1:] {
					if r := it.Params["r"].(float64); r >= 1 || r*float64(p) != float64(int(r*float64(p))) {
						t.Errorf("merge item r = %v", r)
					}
				}
			})
		}
	}
}

// TestSamePartition: the check of W_0 catches a split and a merged component.
func TestSamePartition(t *testing.T) {
	want := []uint32{0, 0, 2, 2, 4}
	for _, tc := range []struct {
		name string
		got  []uint32
		ok   bool
	}{
		{"same", []uint32{1, 1, 3, 2, 4}, true},
		{"split", []uint32{0, 1, 2, 2, 4}, false},
		{"merged", []uint32{0, 0, 0, 2, 4}, false},
		{"not a vertex", []uint32{0, 0, 2, 2, 9}, false},
	} {
		if err := samePartition(tc.got, want); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestBitonicSort(t *testing.T) {
	for _, ts := range testStores {
		for _, p := range []int{1, 2, 4, 8} {
			if !ts.pOK(p) {
				continue
			}
			app := BitonicSort{N: 100, Access: Access{K: 3, L: 40}}
			t.Run(fmt.Sprintf("%s/p%d", ts.name, p), func(t *testing.T) {
				out, err := runApp(ts, p, app)
				if err != nil {
					t.Fatal(err)
				}
				// (2 + log^2 p + log p) ceil(4n/(k l)) over the accesses
				// that cross the network: on the direct store with p = 2
				// the partner's array A_(1-i) is on rank i (log p of the
				// reads stay), with p = 1 every access does.
				logp := log2(p)
				steps := logp * (logp + 1) / 2
				reads, writes := 1+steps, steps+1
				if ts.name == "direct" {
					switch p {
					case 1:
						reads, writes = 0, 0
					case 2:
						reads--
					}
				}
				// 400 bytes in packets of 40, 3 in flight: 3 full
				// k-k-accesses and a partial one of 1 packet of 40 bytes.
				g := float64(ceilDiv(4*100, 3*40))
				for _, it := range out.Workload[PhaseBitonic] {
					n := float64(reads)
					if it.Params["op"] == opWrite {
						n = float64(writes)
					}
					want, wantL := 3*n, 40
					if it.Params["k"] == 1 {
						want = n
					} else if it.Params["k"] != 3 {
						t.Errorf("T_bitonic %v: k is neither the full 3 nor the partial 1", it.Params)
					}
					if it.Count != want || it.Params["l"] != wantL {
						t.Errorf("T_bitonic %v: count %v, want %v", it.Params, it.Count, want)
					}
				}
				if got, want := count(out.Workload[PhaseBitonic]), float64(reads+writes)*g; got != want {
					t.Errorf("T_bitonic count %v, want %v", got, want)
				}
			})
		}
	}
}

func TestSampleSort(t *testing.T) {
	for _, ts := range testStores {
		for _, p := range []int{1, 2, 4, 8} {
			if !ts.pOK(p) {
				continue
			}
			app := SampleSort{N: 640, Access: Access{K: 2, L: 64}}
			t.Run(fmt.Sprintf("%s/p%d", ts.name, p), func(t *testing.T) {
				out, err := runApp(ts, p, app)
				if err != nil {
					t.Fatal(err)
				}
				e := out.Counters[CounterExpansion]
				if e < 1 || e > 2 {
					t.Errorf("expansion factor E(s, n) = %v, want in [1, 2]", e)
				}
				c := float64(ceilDiv(4*640, 2*64))
				local := float64(ceilDiv(int(math.Round(e*640))*4, 2*64))
				// The paper's T(1)..T(8) over the accesses that cross the
				// network. Where every access crosses (every store but the
				// direct one): (6c) is ceil(4n/(k l)), (3) and (6b) have
				// k = p, and (5) is read by the p-1 ranks other than 0 (none
				// with p = 1). On the direct store (module j is rank p-1-j)
				// rank 0 keeps B_(p-1) and rank i lengths_(p-1-i), so (3)
				// and (6b) have k = p-1, the list for A_(p-1-i) stays on
				// rank i in (6c), with p = 2 rank 1's read (5) of B_0 stays
				// too, and with p = 1 every access does.
				direct := ts.name == "direct"
				split, dist, sixB := c+3, 3.0, float64(p)
				switch {
				case direct && p == 1:
					split, dist, local = 0, 0, 0
				case direct:
					sixB = float64(p - 1)
					if p == 2 {
						dist--
					}
				case p == 1:
					dist--
				}
				for _, tc := range []struct {
					phase string
					want  float64
				}{
					{PhaseSplitter, split},    // (1) + (2) + (3) + (4)
					{PhaseDistribution, dist}, // (5) + (6a) + (6b), (6c) below
					{PhaseLocalSort, 2 * local},
				} {
					items := out.Workload[tc.phase]
					if tc.phase == PhaseDistribution {
						items = items[:3]
					}
					if got := count(items); got != tc.want {
						t.Errorf("%s count %v, want %v", tc.phase, got, tc.want)
					}
				}
				sixC := out.Workload[PhaseDistribution][3].Count
				switch {
				case direct && p == 1:
					if sixC != 0 {
						t.Errorf("(6c) count %v with every list on the one rank", sixC)
					}
				case direct:
					if !(sixC > 0 && sixC < c) {
						t.Errorf("(6c) count %v, want above 0 and below ceil(4n/(k l)) = %v (one list stays on the rank)", sixC, c)
					}
				case sixC != c:
					t.Errorf("(6c) count %v, want ceil(4n/(k l)) = %v", sixC, c)
				}
				if got := out.Workload[PhaseDistribution][2].Params["k"]; p > 1 && got != int(sixB) {
					t.Errorf("(6b) k = %v, want %v", got, sixB)
				}
				if got := out.Workload[PhaseSplitter][2].Params["k"]; p > 1 && got != int(sixB) {
					t.Errorf("(3) k = %v, want %v", got, sixB)
				}
			})
		}
	}
}

// TestRadixSort against the standard library on seeded keys.
func TestRadixSort(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000, 70000} {
		keys := sortInput(int64(n)+1, 0, n)
		want := slices.Clone(keys)
		slices.Sort(want)
		radixSort(keys, make([]uint32, n), nil)
		if !slices.Equal(keys, want) {
			t.Errorf("n = %d: radix sort differs from slices.Sort", n)
		}
	}
}

// corrupting is a direct store whose rank-0 writes, once armed, carry
// 0xffffffff in the first four bytes of their first packet (of 32 bytes or
// more, so that the data, not the sample sort's list lengths, is hit):
// every application must notice.
type corrupting struct {
	*directstore.Store
	armed bool
	rank  int
}

func (c *corrupting) spoil(pk []globalvar.Packet) []globalvar.Packet {
	if !c.armed || c.rank != 0 || len(pk) == 0 || len(pk[0].Buf) < 32 {
		return pk
	}
	out := slices.Clone(pk)
	out[0].Buf = slices.Clone(pk[0].Buf)
	copy(out[0].Buf, []byte{0xff, 0xff, 0xff, 0xff})
	return out
}

func (c *corrupting) WriteBatch(pk []globalvar.Packet, k int) error {
	return c.Store.WriteBatch(c.spoil(pk), k)
}

func (c *corrupting) Write(v globalvar.Var, off int, data []byte) error {
	return c.WriteBatch([]globalvar.Packet{{Var: v, Off: off, Buf: data}}, 1)
}

// TestVerificationFails: with rank 0's writes spoilt after setup, every
// application's check fails on every rank.
func TestVerificationFails(t *testing.T) {
	for _, app := range []App{
		MatMul{N: 16, Access: Access{K: 2, L: 32}},
		ConnComp{N: 64, Access: Access{K: 2, L: 32}},
		BitonicSort{N: 100, Access: Access{K: 2, L: 40}},
		SampleSort{N: 640, Access: Access{K: 2, L: 64}},
	} {
		t.Run(app.Name(), func(t *testing.T) {
			errs := make([]error, 4)
			_ = local.RunWith(local.Options{Timeout: 60 * time.Second}, 4, func(c mpi.Comm) error {
				ds, err := directstore.New(c, directstore.Config{})
				if err != nil {
					return err
				}
				s := &corrupting{Store: ds, rank: c.Rank()}
				env := Env{Comm: c, Store: s, Seed: 5}
				st, err := app.(Setupper).Setup(env)
				if err != nil {
					return err
				}
				env.State = st
				s.armed = true
				_, errs[c.Rank()] = app.Run(env)
				return s.Close()
			})
			for r, err := range errs {
				if err == nil {
					t.Errorf("rank %d: the spoilt run passed its check", r)
				}
			}
			if !errors.Is(errs[0], errVerify) {
				t.Errorf("rank 0: %v, want a verification failure", errs[0])
			}
		})
	}
}

// TestAccessItemsPartial: an access whose volume is not a whole number of
// k l is one full k-k-access per k l and a last one of the packets left
// (the short last packet counted whole), so the workload states the
// packets the program sends. The case of a block of
// 192 x 192 integers (147,456 B) read as k = 2 packets of 48 KiB: one full
// access of 96 KiB and one of a single 48 KiB packet, 147,456 B in all,
// not two full accesses (196,608 B).
func TestAccessItemsPartial(t *testing.T) {
	for _, tc := range []struct {
		name      string
		acc       Access
		volume    int
		want      [][2]int // (k, l) of each item
		wantBytes int
	}{
		{"whole", Access{K: 2, L: 1024}, 8192, [][2]int{{2, 1024}}, 8192},
		{"matmul 384/4", Access{K: 2, L: 48 << 10}, 147456, [][2]int{{2, 48 << 10}, {1, 48 << 10}}, 147456},
		{"short last packet", Access{K: 4, L: 1000}, 6500, [][2]int{{4, 1000}, {3, 1000}}, 7000},
		{"below one access", Access{K: 4, L: 1000}, 700, [][2]int{{4, 1000}, {1, 1000}}, 1000},
	} {
		items := tc.acc.items(3, tc.volume, 1, opRead, 4)
		bytes := 0
		for i, it := range items {
			k, l := it.Params["k"].(int), it.Params["l"].(int)
			if i >= len(tc.want) || [2]int{k, l} != tc.want[i] {
				t.Errorf("%s: item %d k=%d l=%d, want %v", tc.name, i, k, l, tc.want)
			}
			bytes += int(it.Count) / 3 * k * l
		}
		if len(items) != len(tc.want) || bytes != tc.wantBytes {
			t.Errorf("%s: %d items moving %d bytes per access, want %d moving %d", tc.name, len(items), bytes, len(tc.want), tc.wantBytes)
		}
	}
}
