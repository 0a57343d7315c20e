package permsched_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// TestLargestCell: the densest cell experiment 1 schedules per n and the
// memory it is refused by.
func TestLargestCell(t *testing.T) {
	tests := []struct {
		name      string
		cfg       permsched.CountConfig
		n, wantD  int
		wantBytes float64
	}{
		{"Table 4's column for n = 32", permsched.CountConfig{}, 32, 31, 32 * 31 * permsched.CountEntryBytes},
		{"powers of two up to 256 for n = 1024", permsched.CountConfig{}, 1024, 256, 1024 * 256 * permsched.CountEntryBytes},
		{"explicit densities", permsched.CountConfig{Densities: permsched.Densities{3, 9, 5}}, 100, 9, 100 * 9 * permsched.CountEntryBytes},
		{"n = 2: d = 1", permsched.CountConfig{}, 2, 1, 2 * permsched.CountEntryBytes},
		{"n = 1: no d, counted as one message", permsched.CountConfig{}, 1, 0, permsched.CountEntryBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, bytes := tt.cfg.LargestCell(tt.n)
			if d != tt.wantD || bytes != tt.wantBytes {
				t.Errorf("LargestCell(%d) = %d, %g; want %d, %g", tt.n, d, bytes, tt.wantD, tt.wantBytes)
			}
		})
	}
}

// TestRunCountRecords: every cell's records as the cell finishes, then
// the slopes once all are done; tables-only runs (nil emit) and a failing
// writer still return the cells measured.
func TestRunCountRecords(t *testing.T) {
	cfg := permsched.CountConfig{Ns: []int{16}, Densities: permsched.Densities{2, 4, 8, 12},
		Matrices: 3, Seed: 7, Schedulers: []permsched.Scheduler{permsched.CGM{}, permsched.LP{}}}
	meta := results.Meta{Seed: 7}
	var got []results.Record
	cells, slopes, err := permsched.RunCountRecords(cfg, meta, func(r results.Record) error {
		got = append(got, r)
		return r.Validate()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4", len(cells))
	}
	var want []results.Record
	for _, c := range cells {
		want = append(want, c.Records(meta)...)
	}
	cellRecs := len(want)
	want = append(want, permsched.SlopeRecords(slopes, meta)...)
	if len(slopes) != 2 || len(got) != len(want) {
		t.Fatalf("%d slopes, %d records; want 2 slopes (CGM, LP over 4 cells with d >= 2) and %d records", len(slopes), len(got), len(want))
	}
	for i := range got {
		if got[i].Bench != want[i].Bench || fmt.Sprint(got[i].Params) != fmt.Sprint(want[i].Params) {
			t.Errorf("record %d: %s %v, want %s %v", i, got[i].Bench, got[i].Params, want[i].Bench, want[i].Params)
		}
		if slope := got[i].Bench == "sched.slope"; slope != (i >= cellRecs) {
			t.Errorf("record %d (%s): slopes must follow every cell's records", i, got[i].Bench)
		}
	}

	tablesOnly, _, err := permsched.RunCountRecords(cfg, meta, nil)
	if err != nil || len(tablesOnly) != 4 {
		t.Errorf("nil emit: %d cells, %v", len(tablesOnly), err)
	}
	full := errors.New("disk full")
	n := 0
	partial, _, err := permsched.RunCountRecords(cfg, meta, func(results.Record) error {
		if n++; n > 1 {
			return full
		}
		return nil
	})
	if !errors.Is(err, full) || len(partial) != 1 {
		t.Errorf("failing writer: %d cells, %v; want 1 cell and the writer's error", len(partial), err)
	}
}

// TestBreakevenRecords: one cost-fit record, then one break-even record
// per exchange size of the input, in first-seen order; sizes of other
// benches do not count.
func TestBreakevenRecords(t *testing.T) {
	cm := &permsched.CostModel{N: 8, Tau: 1e-5, Phi: 1e-9, Alpha: 8e-5, C1: 1, C2: 1e-8, C3: 1, Reuse: 1}
	rec := func(bench string, bytes int) results.Record {
		return results.Record{Bench: bench, Params: results.Params{"bytes": bytes, "d": 4}}
	}
	recs := []results.Record{rec(permsched.BenchComm, 1024), rec(permsched.BenchPerm1, 99), rec(permsched.BenchComm, 16),
		rec(permsched.BenchComm, 1024), rec(permsched.BenchSchedule, 7)}
	out := permsched.BreakevenRecords(cm, recs, results.Meta{})
	var got []string
	for _, r := range out {
		got = append(got, fmt.Sprintf("%s %v", r.Bench, r.Params["bytes"]))
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", r.Bench, err)
		}
	}
	want := []string{permsched.BenchCostFit + " <nil>", permsched.BenchBreak + " 1024", permsched.BenchBreak + " 16"}
	if !slices.Equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}

// TestCommKeepSamples: experiment 2's records carry every repetition's
// time only when asked (sched comm --samples).
func TestCommKeepSamples(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprint("keep=", keep), func(t *testing.T) {
			var mu sync.Mutex
			var recs []results.Record
			err := local.Run(4, func(c mpi.Comm) error {
				return permsched.RunComm(c, permsched.CommConfig{Densities: []int{2}, Sizes: []int{64},
					Methods: []string{"CGM", permsched.AlltoallvName}, RepWarmup: noWarmup, MinReps: 2, MaxReps: 2, SchedReps: quickReps, KeepSamples: keep},
					func(r results.Record) error {
						if c.Rank() == 0 {
							mu.Lock()
							recs = append(recs, r)
							mu.Unlock()
						}
						return nil
					})
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				t.Fatal("no records")
			}
			for _, r := range recs {
				if has := len(r.Samples) == r.N && r.N > 0; has != keep {
					t.Errorf("%s %v: %d samples of N = %d, keep %v", r.Bench, r.Params, len(r.Samples), r.N, keep)
				}
			}
		})
	}
}
