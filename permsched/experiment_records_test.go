package permsched_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/opts"

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

// fitRecords are experiment 2's records of a small run on n ranks that
// the cost model fits: three sizes of one permutation, LP and CGM at
// three densities, CGM's scheduling.
func fitRecords(n int) []results.Record {
	rec := func(bench string, p results.Params, v float64) results.Record {
		return results.Record{Schema: results.SchemaVersion, Bench: bench, Params: p, Ranks: n, Unit: results.UnitSeconds,
			Summary: results.Summary{N: 1, Min: v, Median: v, Mean: v, Max: v, P90: v, P99: v, CI95: [2]float64{v, v}}, Stop: results.StopMaxReps}
	}
	var recs []results.Record
	for i, b := range []int{16, 1024, 8192} {
		recs = append(recs, rec(permsched.BenchPerm1, results.Params{"bytes": b}, (1e-5+float64(b)*1e-9)*(1+0.01*float64(i%2))))
	}
	for i, d := range []int{2, 3, 5} {
		noise := 1 + 0.02*float64(i%2)
		recs = append(recs, rec(permsched.BenchSchedule, results.Params{"d": d, "gen": "fig7", "matrix": 0, "scheduler": "CGM"}, 1e-5*float64(d)*noise))
		for _, b := range []int{16, 1024, 8192} {
			p := func(s string) results.Params {
				return results.Params{"d": d, "gen": "fig7", "matrix": 0, "bytes": b, "scheduler": s}
			}
			recs = append(recs, rec(permsched.BenchComm, p("LP"), (3e-5+float64(d*b)*1e-9)*noise),
				rec(permsched.BenchComm, p("CGM"), float64(d)*(1e-5+float64(b)*1e-9)*noise))
		}
	}
	return recs
}

// TestBreakevenFitRefusesRecords: the fit refuses records no run of
// experiment 2 writes, naming the file, the line and the field, before
// its scans over 1..n-1 run: a rank count outside 2..MaxRanks, records of
// two rank counts, a generated matrix's density beyond n-1; and records
// that fit a constant of the model at or below 0 (NotPositiveError).
func TestBreakevenFitRefusesRecords(t *testing.T) {
	dir := t.TempDir()
	write := func(t *testing.T, name string, recs []results.Record, blank int) string {
		var buf bytes.Buffer
		buf.WriteString(strings.Repeat("\n", blank))
		for _, r := range recs { // as they are: the reader's checks are tested, not the writer's
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edit := func(i int, f func(*results.Record)) []results.Record {
		recs := fitRecords(8)
		f(&recs[i])
		return recs
	}
	comm := 4 // the first sched.comm record (line 5)
	// retime is a run's records with those of bench (and scheduler, for
	// sched.comm) taking the median v(d, bytes), a single repetition.
	retime := func(bench, scheduler string, v func(d, b float64) float64) []results.Record {
		recs := fitRecords(8)
		for i := range recs {
			r := &recs[i]
			if r.Bench != bench || scheduler != "" && r.Params["scheduler"] != scheduler {
				continue
			}
			d, _ := r.Params["d"].(int)
			b, _ := r.Params["bytes"].(int)
			m := v(float64(d), float64(b))
			r.Min, r.Median, r.Mean, r.Max, r.P90, r.P99, r.CI95 = m, m, m, m, m, m, [2]float64{m, m}
		}
		return recs
	}
	tests := []struct {
		name  string
		files [][]results.Record
		blank int    // blank lines before the records
		want  string // "" accepted; else in the error, after "--in FILE: "
	}{
		{"a run's records", [][]results.Record{fitRecords(8)}, 0, ""},
		{"absurd rank count", [][]results.Record{edit(0, func(r *results.Record) { r.Ranks = 1e6 })}, 0,
			"line 1: sched.perm1 has ranks = 1000000; want 2..65536"},
		{"one rank", [][]results.Record{edit(0, func(r *results.Record) { r.Ranks = 1 })}, 0, "line 1: sched.perm1 has ranks = 1; want 2..65536"},
		{"MaxRanks + 1 after blank lines", [][]results.Record{edit(comm, func(r *results.Record) { r.Ranks = permsched.MaxRanks + 1 })}, 2,
			"line 7: sched.comm has ranks = 65537; want 2..65536"},
		{"two rank counts", [][]results.Record{edit(comm, func(r *results.Record) { r.Ranks = 16 })}, 0,
			"line 5: sched.comm has ranks = 16; want ranks = 8: the fit models one rank count, so its records must come from runs of one size (line 1 has ranks = 8)"},
		{"two rank counts in two files", [][]results.Record{fitRecords(8), fitRecords(16)}, 0, "line 1: sched.perm1 has ranks = 16; want ranks = 8"},
		{"d beyond n-1", [][]results.Record{edit(3, func(r *results.Record) { r.Params["d"] = 200 })}, 0,
			"line 4: record sched.schedule d=200 gen=fig7 matrix=0 scheduler=CGM: d = 200 at ranks = 8: want 0 <= d <= n-1 = 7"},
		{"d = n-1", [][]results.Record{edit(comm, func(r *results.Record) { r.Params["d"] = 7 })}, 0, ""},
		{"a trace's degree beyond n-1", [][]results.Record{edit(comm, func(r *results.Record) { r.Params["d"], r.Params["gen"] = 12, "trace" })}, 0, ""},
		// Records whose fit gives a constant of the model at or below 0.
		{"a permutation's time falling with its bytes", [][]results.Record{retime(permsched.BenchPerm1, "", func(_, b float64) float64 { return 3e-5 - 2.5e-9*b })}, 0,
			"break-even: the sched.perm1 records fit phi = -2.5e-09 s/B ± "},
		{"a permutation of negative latency", [][]results.Record{retime(permsched.BenchPerm1, "", func(_, b float64) float64 { return 1e-9*b - 1e-8 })}, 0,
			"break-even: the sched.perm1 records fit tau = -1e-08 s ± "},
		{"an LP falling with d M phi", [][]results.Record{retime(permsched.BenchComm, "LP", func(d, b float64) float64 { return 5e-5 - 1e-9*d*b })}, 0,
			"the sched.comm records of LP fit C1 = -1"},
		{"an LP of negative fixed cost", [][]results.Record{retime(permsched.BenchComm, "LP", func(d, b float64) float64 { return 1.2e-9*d*b - 3e-8 })}, 0,
			"the sched.comm records of LP fit A = -3e-08 s ± "},
		{"another bench's rank count is not read", [][]results.Record{edit(comm, func(r *results.Record) { r.Bench, r.Ranks = "pt2pt.latency", 1e6 })}, 0, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []string
			for k, recs := range tt.files {
				in = append(in, write(t, fmt.Sprintf("%d-%d.jsonl", i, k), recs, tt.blank))
			}
			cm, _, err := (&permsched.Breakeven{In: in, Reuse: 1}).Fit(nil)
			if tt.want == "" {
				if err != nil || cm.N != 8 {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			file := "In = " + in[len(in)-1] + ": "
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tt.want) || !opts.IsBadInput(err) {
				t.Fatalf("error %v, want bad input holding %q and %q", err, file, tt.want)
			}
			if len(tt.files) > 1 && !strings.Contains(err.Error(), "(line 1 of "+in[0]+" has ranks = 8)") {
				t.Errorf("error %v does not name the other file", err)
			}
		})
	}
}
