package dsmexp

import (
	"slices"
	"sync"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

var allStrategies = []string{Hand, "fixed-home", "tree-2", "tree-4", "tree-16", "tree-2-4", "tree-4-16"}

// runBitonic runs the experiment on np local ranks and returns rank 0's
// records.
func runBitonic(t testing.TB, np int, s Setup, keys []int) []results.Record {
	t.Helper()
	var mu sync.Mutex
	var recs []results.Record
	err := local.Run(np, func(c mpi.Comm) error {
		return Bitonic(c, s, keys, func(r Result, hand *Result) error {
			if c.Rank() == 0 {
				mu.Lock()
				recs = append(recs, BitonicRecord(r, c.Size(), results.Meta{Backend: "local"}, hand))
				mu.Unlock()
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestWireOrder(t *testing.T) {
	tests := []struct {
		mesh divalib.Mesh
		want []int
	}{
		{divalib.Mesh{Rows: 1, Cols: 4}, []int{0, 1, 2, 3}},
		// 2x2: the square splits across its rows, then each row in two.
		{divalib.Mesh{Rows: 2, Cols: 2}, []int{0, 1, 2, 3}},
		// 4x4: quadrants in the order top-left, top-right, bottom-left,
		// bottom-right, each a 2x2 in row order.
		{divalib.Mesh{Rows: 4, Cols: 4}, []int{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15}},
		// 2x4: the longer side (columns) is halved first.
		{divalib.Mesh{Rows: 2, Cols: 4}, []int{0, 1, 4, 5, 2, 3, 6, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.mesh.String(), func(t *testing.T) {
			got, err := WireOrder(tt.mesh)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBitonicRatios runs every strategy on a 4x4 mesh: all verified, the
// hand version has the least congestion, and the congestion is the same in
// a second run (counts do not depend on timing).
func TestBitonicRatios(t *testing.T) {
	s := Setup{Strategies: allStrategies, Reps: 2, Seed: 3, Store: divalib.Config{Seed: 5}}
	a := runBitonic(t, 16, s, []int{64, 256})
	b := runBitonic(t, 16, s, []int{64, 256})
	if len(a) != 2*len(allStrategies) {
		t.Fatalf("%d records, want %d", len(a), 2*len(allStrategies))
	}
	for i, rec := range a {
		if err := rec.Validate(); err != nil {
			t.Fatal(err)
		}
		if rec.Counters[KeyVerified] != 1 || rec.N != 2 || rec.Params["mesh"] != "4x4" {
			t.Errorf("%v: %+v", rec.Params, rec)
		}
		if got, again := rec.Counters[KeyCongestionBytes], b[i].Counters[KeyCongestionBytes]; got != again || got <= 0 {
			t.Errorf("%v: congestion %v then %v", rec.Params, got, again)
		}
		ratio := rec.Derived[KeyCongestionRatio]
		if rec.Params["strategy"] == Hand {
			if ratio != 1 {
				t.Errorf("hand ratio %v", ratio)
			}
		} else if ratio <= 1 {
			t.Errorf("%v: congestion ratio %v, want > 1 (hand is optimal)", rec.Params, ratio)
		}
		t.Logf("%v keys=%v: congestion %v B ratio %.2f", rec.Params["strategy"], rec.Params["keys"], rec.Counters[KeyCongestionBytes], ratio)
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{0, 26, []string{"0", "5", "10", "15", "20", "25"}},
		{0, 1.3, []string{"0", "0.2", "0.4", "0.6", "0.8", "1", "1.2"}},
		{0, 0.05, []string{"0", "0.01", "0.02", "0.03", "0.04", "0.05"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (niceTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("[%v, %v]: labels %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestCounterKeys: the keys the tables and figures read are the ones
// divalib writes.
func TestCounterKeys(t *testing.T) {
	c := divalib.Congestion{MaxLinkBytes: 1, MaxLinkMessages: 2, LoadBytes: 3, LoadMessages: 4, Startups: 5, MaxStartups: 6, BytesSent: 7}.Counters()
	for k, want := range map[string]float64{KeyCongestionBytes: 1, KeyCongestionMessages: 2, KeyLoadBytes: 3, KeyLoadMessages: 4, KeyStartups: 5, KeyMaxStartups: 6, KeyBytesSent: 7} {
		if c[k] != want {
			t.Errorf("%s = %v, want %v", k, c[k], want)
		}
	}
}

// TestBitonicCountsIgnoreWarmup: a warm-up run before the counted one
// leaves the counts unchanged (every run starts from the same state).
func TestBitonicCountsIgnoreWarmup(t *testing.T) {
	for _, st := range []string{"fixed-home", "tree-2", "tree-4-16"} {
		cold := runBitonic(t, 16, Setup{Strategies: []string{st}, Seed: 3}, []int{32})
		warm := runBitonic(t, 16, Setup{Strategies: []string{st}, Seed: 3, Warmup: 1}, []int{32})
		for _, k := range []string{KeyCongestionBytes, KeyStartups, KeyLoadMessages} {
			if a, b := cold[0].Counters[k], warm[0].Counters[k]; a != b {
				t.Errorf("%s: %s %v without warm-up, %v after one", st, k, a, b)
			}
		}
	}
}

// TestSetupMaxTime: the time bound stops each strategy's repetitions once
// 3 (or Reps, if fewer) are done, says so in the record, bounds the
// warm-up runs too, and leaves a run without it whole.
func TestSetupMaxTime(t *testing.T) {
	for _, tc := range []struct {
		name         string
		reps, warmup int
		maxTime      float64
		stop         string
		minN, maxN   int
	}{
		{"bound stops a long run", patterns.MaxCount, patterns.MaxCount, 0.05, results.StopMaxTime, 3, patterns.MaxCount - 1},
		{"fewer reps than 3 all run", 2, 1, 1e-9, results.StopFixed, 2, 2},
		{"no bound", 4, 1, 0, results.StopFixed, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Setup{Strategies: []string{Hand, "tree-4"}, Reps: tc.reps, Warmup: tc.warmup, MaxTime: tc.maxTime, Seed: 3}
			recs := runBitonic(t, 4, s, []int{64})
			if len(recs) != 2 {
				t.Fatalf("%d records, want 2", len(recs))
			}
			for _, r := range recs {
				if r.Stop != tc.stop || r.N < tc.minN || r.N > tc.maxN || r.Counters[KeyVerified] != 1 {
					t.Errorf("%v: stop %q after %d repetitions, verified %v; want %q after %d to %d, verified", r.Params["strategy"], r.Stop, r.N, r.Counters[KeyVerified], tc.stop, tc.minN, tc.maxN)
				}
			}
		})
	}
}
