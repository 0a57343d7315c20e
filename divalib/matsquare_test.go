package divalib_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// runMatSquare runs one strategy ("hand" or a Config name) on a local world
// and returns rank 0's result.
func runMatSquare(t testing.TB, np int, strategy string, mcfg divalib.MatSquareConfig) divalib.MatSquareResult {
	t.Helper()
	var mu sync.Mutex
	var out divalib.MatSquareResult
	err := local.Run(np, func(c mpi.Comm) error {
		var res divalib.MatSquareResult
		var err error
		if strategy == "hand" {
			res, err = divalib.MatSquareHand(c, divalib.SquareMesh(np), mcfg)
		} else {
			st, v, perr := divalib.ParseStrategy(strategy)
			if perr != nil {
				return perr
			}
			s, nerr := divalib.New(c, divalib.Config{Strategy: st, Variant: v, Seed: 11})
			if nerr != nil {
				return nerr
			}
			if res, err = divalib.MatSquareStore(c, s, mcfg); err != nil {
				return err
			}
			err = s.Close()
		}
		if c.Rank() == 0 {
			mu.Lock()
			out = res
			mu.Unlock()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMatSquareVerified checks every strategy's result against the serial
// product (and the sum kernel against its serial form), over two
// repetitions so that the second starts from the state the first left.
func TestMatSquareVerified(t *testing.T) {
	strategies := []string{"hand", "fixed-home", "tree-2", "tree-4", "tree-16", "tree-2-4", "tree-4-16"}
	for _, tc := range []struct {
		np     int
		block  int
		kernel divalib.Kernel
	}{
		{4, 64, divalib.KernelMul},
		{16, 16, divalib.KernelMul},
		{16, 64, divalib.KernelSum},
	} {
		for _, st := range strategies {
			t.Run(fmt.Sprintf("np%d/m%d/%s/%s", tc.np, tc.block, tc.kernel, st), func(t *testing.T) {
				res := runMatSquare(t, tc.np, st, divalib.MatSquareConfig{BlockInts: tc.block, Kernel: tc.kernel, Reps: 2, Verify: true, Seed: 5})
				if !res.Verified {
					t.Fatal("not verified")
				}
			})
		}
	}
}

// TestMatSquareHandCongestion checks the hand-optimised congestion against
// its closed form: every directed link carries sqrt(P)-1 blocks.
func TestMatSquareHandCongestion(t *testing.T) {
	for _, np := range []int{4, 16, 64} {
		const m = 64
		res := runMatSquare(t, np, "hand", divalib.MatSquareConfig{BlockInts: m, Kernel: divalib.KernelSum})
		q := divalib.SquareMesh(np).Rows
		if want := int64((q - 1) * 4 * m); res.Congestion.MaxLinkBytes != want {
			t.Errorf("np=%d: hand congestion %d bytes, want (sqrt(P)-1)*m*4 = %d", np, res.Congestion.MaxLinkBytes, want)
		}
	}
}

// congestionGap16 is the least fixed-home / tree-4 congestion ratio
// TestCongestionShape accepts on 16x16. The fixed home's ratio to hand is
// 23.65 there in every run; tree-4's spreads over about a fifth (6.8 to
// 8.2, the top under load: a gap of 2.9), so the bound sits below that
// spread. An access tree that lost its locality sits near the fixed home's
// ratio, a gap near 1.
const congestionGap16 = 2.5

// TestCongestionShape is the paper's Figure 4 shape at sizes that fit a
// unit test (block 64 ints): the fixed-home congestion ratio grows with the
// mesh, the 4-ary access tree's stays below it, and on 16x16 the access
// tree has at least congestionGap16 times less congestion (32x32 in
// divalib/STUDY.md: minutes on mpi/local). The fixed home's count is the
// same in every run; the access tree's depends on how the goroutine ranks'
// concurrent requests meet at the tree's nodes, so it is the median of
// three runs, and the bound leaves room for that spread (see
// congestionGap16).
func TestCongestionShape(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 256 goroutine ranks")
	}
	mcfg := divalib.MatSquareConfig{BlockInts: 64, Kernel: divalib.KernelSum}
	var lastFixed float64
	for _, np := range []int{16, 64, 256} {
		hand := runMatSquare(t, np, "hand", mcfg).Congestion.MaxLinkBytes
		fixed := float64(runMatSquare(t, np, "fixed-home", mcfg).Congestion.MaxLinkBytes) / float64(hand)
		var trees []float64
		for range 3 {
			trees = append(trees, float64(runMatSquare(t, np, "tree-4", mcfg).Congestion.MaxLinkBytes)/float64(hand))
		}
		slices.Sort(trees)
		tree := trees[1]
		t.Logf("%v: congestion ratio fixed-home %.2f, tree-4 %.2f", divalib.SquareMesh(np), fixed, tree)
		if fixed <= lastFixed {
			t.Errorf("np=%d: fixed-home ratio %.2f did not grow (was %.2f)", np, fixed, lastFixed)
		}
		if tree >= fixed {
			t.Errorf("np=%d: tree-4 ratio %.2f not below fixed-home %.2f", np, tree, fixed)
		}
		if np == 256 && fixed/tree < congestionGap16 {
			t.Errorf("16x16: fixed-home / tree-4 congestion %.2f, want >= %g", fixed/tree, congestionGap16)
		}
		lastFixed = fixed
	}
}

// TestMatSquareVerifyRefusesWrongBlock: one rank's block that differs
// from the serial product in one entry makes every rank's verdict false.
func TestMatSquareVerifyRefusesWrongBlock(t *testing.T) {
	cfg := divalib.MatSquareConfig{BlockInts: 16, Kernel: divalib.KernelMul, Reps: 1, Verify: true, Seed: 5}
	mesh, err := divalib.NewMesh(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, wrong := range []int{-1, 0, 3} {
		verdicts := make([]bool, 4)
		err := local.Run(4, func(c mpi.Comm) error {
			// The rank's block of the serial product of order 8.
			a := divalib.SerialResult(cfg, 8, 4)
			bi, bj := mesh.Coord(c.Rank())
			block := make([]int32, 16)
			for r := 0; r < 4; r++ {
				copy(block[r*4:], a[(bi*4+r)*8+bj*4:][:4])
			}
			if c.Rank() == wrong {
				block[5]++
			}
			verdicts[c.Rank()], err = divalib.Verify(c, mesh, cfg, block)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for r, v := range verdicts {
			if v != (wrong < 0) {
				t.Errorf("rank %d wrong: rank %d's verdict %v", wrong, r, v)
			}
		}
	}
}

// TestMatSquareMaxTime: a time bound stops the repetitions once 3 (or
// Reps, if fewer) are done, the check compares the squares done, and the
// oracle goes on from a cached step to the same matrix it computes anew.
func TestMatSquareMaxTime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reps     int
		maxTime  float64
		stop     string
		min, max int
	}{
		{"bound stops a long run", patterns.MaxCount, 0.05, results.StopMaxTime, 3, patterns.MaxCount - 1},
		{"fewer reps than 3 all run", 2, 1e-9, results.StopFixed, 2, 2},
		{"no bound", 4, 0, results.StopFixed, 4, 4},
	} {
		for _, st := range []string{"hand", "tree-4"} {
			t.Run(tc.name+"/"+st, func(t *testing.T) {
				res := runMatSquare(t, 4, st, divalib.MatSquareConfig{BlockInts: 64, Reps: tc.reps, MaxTime: tc.maxTime, Verify: true, Seed: 5})
				if n := len(res.CommSec); !res.Verified || res.Stop != tc.stop || n < tc.min || n > tc.max {
					t.Fatalf("verified %v, stop %q after %d repetitions; want verified, %q after %d to %d", res.Verified, res.Stop, n, tc.stop, tc.min, tc.max)
				}
			})
		}
	}
	cfg := divalib.MatSquareConfig{BlockInts: 16, Kernel: divalib.KernelMul, Reps: 3, Seed: 9}
	divalib.SerialResult(cfg, 8, 4)
	cfg.Reps = 5
	onward := slices.Clone(divalib.SerialResult(cfg, 8, 4))
	divalib.SerialResult(divalib.MatSquareConfig{BlockInts: 16, Kernel: divalib.KernelMul, Reps: 1, Seed: 10}, 8, 4)
	if fresh := divalib.SerialResult(cfg, 8, 4); !slices.Equal(onward, fresh) {
		t.Error("the oracle continued from 3 squares differs from 5 squares computed anew")
	}
}

// TestBandStepIsSerial: the product computed in bands of rows, one per
// rank and joined by an allgather, is the serial product, for rank counts
// that do not divide the order and for more ranks than rows.
func TestBandStepIsSerial(t *testing.T) {
	for _, tc := range []struct{ n, p int }{{10, 3}, {12, 4}, {5, 7}, {9, 1}} {
		a := make([]int32, tc.n*tc.n)
		for i := range a {
			a[i] = int32(i*2654435761) ^ int32(i>>3)
		}
		want := divalib.SerialStep(divalib.KernelMul, a, tc.n, 1)
		got := make([][]int32, tc.p)
		if err := local.Run(tc.p, func(c mpi.Comm) error {
			var err error
			got[c.Rank()], err = divalib.BandStep(c, a, tc.n)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for r, g := range got {
			if !slices.Equal(g, want) {
				t.Errorf("n %d on %d ranks: rank %d's product differs from the serial one", tc.n, tc.p, r)
			}
		}
	}
}
