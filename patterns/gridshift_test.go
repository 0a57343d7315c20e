package patterns

import (
	"fmt"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// TestGridShiftPartners checks the partners of every mode against
// Cannon's algorithm and the recursive-doubling all-to-all broadcast,
// written out by hand on a 3 x 4 grid (rank 4r + c).
func TestGridShiftPartners(t *testing.T) {
	type pr struct{ dst, src int }
	for _, tc := range []struct {
		name string
		g    GridShift
		want map[int]pr // rank -> partners; absent ranks idle
	}{
		{"row shift left one (Cannon A)", GridShift{Rows: 3, Cols: 4, Along: GridAlongRow, Mode: GridModeShift, D: 3},
			map[int]pr{0: {3, 1}, 1: {0, 2}, 5: {4, 6}, 11: {10, 8}}},
		{"col shift up one (Cannon B)", GridShift{Rows: 3, Cols: 4, Along: GridAlongCol, Mode: GridModeShift, D: 2},
			map[int]pr{0: {8, 4}, 4: {0, 8}, 9: {5, 1}}},
		{"row xor 2", GridShift{Rows: 3, Cols: 4, Along: GridAlongRow, Mode: GridModeXOR, D: 2},
			map[int]pr{0: {2, 2}, 1: {3, 3}, 6: {4, 4}}},
		{"row align: row r by r left", GridShift{Rows: 3, Cols: 4, Along: GridAlongRow, Mode: GridModeAlign},
			map[int]pr{4: {7, 5}, 8: {10, 10}, 9: {11, 11}, 11: {9, 9}}},
		{"col align: col c by c up", GridShift{Rows: 3, Cols: 4, Along: GridAlongCol, Mode: GridModeAlign},
			map[int]pr{1: {9, 5}, 5: {1, 9}, 2: {6, 10}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.g.Check(12); err != nil {
				t.Fatal(err)
			}
			for rank, w := range tc.want {
				dst, src, ok := tc.g.Partners(rank)
				if !ok || dst != w.dst || src != w.src {
					t.Errorf("rank %d: partners (%d, %d, %v), want (%d, %d)", rank, dst, src, ok, w.dst, w.src)
				}
			}
			if tc.g.Mode == GridModeAlign { // line 0 idles
				if _, _, ok := tc.g.Partners(0); ok {
					t.Errorf("rank 0 exchanges in an alignment, want idle")
				}
			}
		})
	}
}

// TestGridShiftBothPartners: the row+col step's exchanges are the row
// step's, then the column step's, with the same mode and distance.
func TestGridShiftBothPartners(t *testing.T) {
	for _, mode := range []struct {
		m string
		d int
	}{{GridModeAlign, 0}, {GridModeShift, 1}} {
		g := GridShift{Rows: 3, Cols: 3, Along: GridAlongBoth, Mode: mode.m, D: mode.d}
		if err := g.Check(9); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{GridAlongRow, GridAlongCol} {
			one := g
			one.Along = a
			for rank := range 9 {
				d0, s0, ok0 := g.PartnersAlong(rank, a)
				d1, s1, ok1 := one.Partners(rank)
				if d0 != d1 || s0 != s1 || ok0 != ok1 {
					t.Errorf("%s %s rank %d: (%d, %d, %v), the %s step alone (%d, %d, %v)", g.Along, g.Mode, rank, d0, s0, ok0, a, d1, s1, ok1)
				}
			}
		}
		// Rank 1 (row 0, column 1) idles in the row alignment and not in
		// the column one.
		if mode.m == GridModeAlign {
			_, _, okRow := g.PartnersAlong(1, GridAlongRow)
			_, _, okCol := g.PartnersAlong(1, GridAlongCol)
			if okRow || !okCol {
				t.Errorf("align rank 1: row active %v, column active %v; want idle then active", okRow, okCol)
			}
		}
	}
}

// TestGridShiftCheck: configurations that cannot run name what is wrong
// (each on the ranks its grid holds, but the first).
func TestGridShiftCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    GridShift
	}{
		{"grid size", GridShift{Rows: 2, Cols: 3, Along: GridAlongRow, Mode: GridModeShift, D: 1}},
		{"along", GridShift{Rows: 2, Cols: 2, Along: "diag", Mode: GridModeShift, D: 1}},
		{"row+col shift too far for the columns", GridShift{Rows: 2, Cols: 3, Along: GridAlongBoth, Mode: GridModeShift, D: 2}},
		{"row+col xor on 3 columns", GridShift{Rows: 2, Cols: 3, Along: GridAlongBoth, Mode: GridModeXOR, D: 1}},
		{"mode", GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: "rotate", D: 1}},
		{"shift 0", GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeShift}},
		{"shift n", GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeShift, D: 2}},
		{"xor on 3", GridShift{Rows: 1, Cols: 3, Along: GridAlongRow, Mode: GridModeXOR, D: 1}},
		{"xor 3", GridShift{Rows: 1, Cols: 4, Along: GridAlongRow, Mode: GridModeXOR, D: 3}},
		{"align d", GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeAlign, D: 1}},
		{"bytes", GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeShift, D: 1, Bytes: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.g.Rows * tc.g.Cols
			if tc.name == "grid size" {
				p = 4
			}
			if err := tc.g.Check(p); err == nil {
				t.Errorf("%+v on %d ranks: no error", tc.g, p)
			}
		})
	}
}

// TestGridShiftRun runs every mode on goroutine ranks with validation (each
// rank checks the block it received came from its source) and checks the
// messages counted: one per active rank and repetition each way.
func TestGridShiftRun(t *testing.T) {
	for _, g := range []GridShift{
		{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeShift, D: 1},
		{Rows: 2, Cols: 3, Along: GridAlongRow, Mode: GridModeShift, D: 2},
		{Rows: 3, Cols: 2, Along: GridAlongCol, Mode: GridModeShift, D: 2},
		{Rows: 2, Cols: 4, Along: GridAlongRow, Mode: GridModeXOR, D: 2},
		{Rows: 3, Cols: 3, Along: GridAlongRow, Mode: GridModeAlign},
		{Rows: 3, Cols: 3, Along: GridAlongCol, Mode: GridModeAlign},
		{Rows: 3, Cols: 3, Along: GridAlongBoth, Mode: GridModeAlign},
		{Rows: 2, Cols: 3, Along: GridAlongBoth, Mode: GridModeShift, D: 1},
	} {
		g.Bytes, g.Iters, g.Validate, g.Reps = 40, 2, true, quickReps
		p := g.Rows * g.Cols
		t.Run(fmt.Sprintf("%dx%d_%s_%s_%d", g.Rows, g.Cols, g.Along, g.Mode, g.D), func(t *testing.T) {
			rs := runRanks(t, p, func(c mpi.Comm) (Measurement, error) { return g.Run(c) })
			checkMeasured(t, rs, quickReps.MinReps)
			active := 0 // exchanges per repetition and iteration
			alongs, _ := g.alongs()
			for rank := 0; rank < p; rank++ {
				for _, a := range alongs {
					if _, _, ok := g.PartnersAlong(rank, a); ok {
						active++
					}
				}
			}
			var sent float64
			for _, r := range rs {
				sent += r.Mine.MsgsSent
			}
			// Mine counts per repetition; Iters exchanges in each.
			if want := float64(active * g.Iters); !near(sent, want) {
				t.Errorf("%v messages per repetition, want %v", sent, want)
			}
			rec := g.Record(rs[0], results.Meta{})
			if err := CheckParams(BenchGridShift, rec.Params, true); err != nil {
				t.Error(err)
			}
			if err := rec.CheckValues(); err != nil {
				t.Errorf("the step's own record: %v", err)
			}
			// The same record with its traffic edited is refused.
			for key, v := range map[string]float64{
				CounterMsgsSentMax: rec.Counters[CounterMsgsSentMax] + 0.5, CounterMsgsTotal: rec.Counters[CounterMsgsTotal] + 1,
				CounterBytesRecvMax: rec.Counters[CounterBytesRecvMax] * 2, CounterBytesTotal: rec.Counters[CounterBytesTotal] + 40,
			} {
				ed := rec
				ed.Counters = clone(rec.Counters)
				ed.Counters[key] = v
				if err := ed.CheckValues(); err == nil || !strings.Contains(err.Error(), "counters "+key) {
					t.Errorf("%s edited to %v: %v, want a refusal naming it", key, v, err)
				}
			}
		})
	}
}

// TestGridShiftCanonical: an XOR by d on lines of 2d members is the shift
// by d (same partners for every rank); other XORs stay.
func TestGridShiftCanonical(t *testing.T) {
	for _, tc := range []struct {
		g    GridShift
		mode string
	}{
		{GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeXOR, D: 1}, GridModeShift},
		{GridShift{Rows: 4, Cols: 2, Along: GridAlongCol, Mode: GridModeXOR, D: 2}, GridModeShift},
		{GridShift{Rows: 4, Cols: 2, Along: GridAlongCol, Mode: GridModeXOR, D: 1}, GridModeXOR},
		{GridShift{Rows: 2, Cols: 2, Along: GridAlongRow, Mode: GridModeShift, D: 1}, GridModeShift},
		{GridShift{Rows: 2, Cols: 2, Along: GridAlongBoth, Mode: GridModeXOR, D: 1}, GridModeShift},
		{GridShift{Rows: 2, Cols: 4, Along: GridAlongBoth, Mode: GridModeXOR, D: 1}, GridModeXOR},
	} {
		c := tc.g.Canonical()
		if c.Mode != tc.mode {
			t.Errorf("%+v: canonical mode %s, want %s", tc.g, c.Mode, tc.mode)
		}
		for rank := 0; rank < tc.g.Rows*tc.g.Cols; rank++ {
			d0, s0, _ := tc.g.Partners(rank)
			d1, s1, _ := c.Partners(rank)
			if d0 != d1 || s0 != s1 {
				t.Errorf("%+v rank %d: partners (%d, %d) became (%d, %d)", tc.g, rank, d0, s0, d1, s1)
			}
		}
	}
}
