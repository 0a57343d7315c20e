package permsched_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/internal/recordtest"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// writtenSchedRecords are the records of a small run of both experiments:
// sched comm on 5 ranks (fig7 and uniform, d 1 and 3, two matrices) and
// sched count (n 5 and 8, d 0, 1, 4, fig7 and uniform).
func writtenSchedRecords(t *testing.T) []results.Record {
	t.Helper()
	var mu sync.Mutex
	var recs []results.Record
	for _, gen := range []string{permsched.GenFig7, permsched.GenUniform} {
		err := local.Run(5, func(c mpi.Comm) error {
			return permsched.RunComm(c, permsched.CommConfig{Densities: []int{1, 3}, Sizes: []int{16}, Gen: gen, Matrices: 2,
				Methods: permsched.DefaultMethods(), RepWarmup: noWarmup, MinReps: 2, MaxReps: 2, SchedReps: quickReps, NoPerm1: true},
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
		err = permsched.RunCount(permsched.CountConfig{Ns: []int{5, 8}, Densities: permsched.Densities{0, 1, 4}, Gen: gen, Matrices: 4, MinMatrices: 2},
			func(cell permsched.CountCell) error {
				recs = append(recs, cell.Records(results.Meta{})...)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// readBack writes r as a JSON line and reads it back through every check.
func readBack(r results.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = results.ReadJSONL(strings.NewReader(string(b) + "\n"))
	return err
}

// TestSchedRecordsAsWrittenAreRead: every record the experiments write
// passes the record checks; nothing a run writes is refused.
func TestSchedRecordsAsWrittenAreRead(t *testing.T) {
	for _, r := range writtenSchedRecords(t) {
		if err := readBack(r); err != nil {
			t.Errorf("%s %v: %v", r.Bench, r.Params, err)
		}
	}
}

// TestSchedRecordContradictionsRefused: a written record edited so that
// a parameter names no scheduler or generator, a counter contradicts the
// matrix its parameters name (D, messages, phases, total bytes), a
// schedule length or degree is one no schedule of that cell has, or a key
// no writer writes is added, is refused with the value and what the
// writer writes.
func TestSchedRecordContradictionsRefused(t *testing.T) {
	recs := writtenSchedRecords(t)
	is := func(bench, gen, sched string, d int) func(r results.Record) bool {
		return func(r results.Record) bool {
			pd, _ := r.Params["d"].(int)
			return r.Bench == bench && r.Params["gen"] == gen && (sched == "" || r.Params["scheduler"] == sched) && pd == d
		}
	}
	setSamples := func(r *results.Record, v float64) {
		for i := range r.Samples {
			r.Samples[i] = v
		}
		r.Summary = results.Summarize(r.Samples)
	}
	tests := []struct {
		name string
		pick func(r results.Record) bool
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"comm as written", is(permsched.BenchComm, "fig7", "CGM", 3), func(*results.Record) {}, ""},
		{"uniform schedule as written", is(permsched.BenchSchedule, "uniform", "LP", 3), func(*results.Record) {}, ""},
		{"ss_sched", is(permsched.BenchSchedule, "fig7", "AC", 1), func(r *results.Record) { r.Params["scheduler"] = "nosuch" },
			`impossible parameter scheduler = "nosuch": must be one of AC, LP, GM, CGM, EXACT`},
		{"scc_sched", is(permsched.BenchComm, "fig7", "AC", 1), func(r *results.Record) { r.Params["scheduler"] = "nosuch" },
			`scheduler = "nosuch": must be one of AC, LP, GM, CGM, EXACT, Alltoallv`},
		{"Alltoallv is no scheduler", is(permsched.BenchSchedule, "fig7", "AC", 1), func(r *results.Record) { r.Params["scheduler"] = permsched.AlltoallvName },
			`scheduler = "Alltoallv": must be one of AC, LP, GM, CGM, EXACT`},
		{"sp_sched", is("sched.perms", "fig7", "CGM", 4), func(r *results.Record) { r.Params["scheduler"] = "nosuch" }, `scheduler = "nosuch"`},
		{"st_sched", is("sched.time", "fig7", "CGM", 4), func(r *results.Record) { r.Params["scheduler"] = "nosuch" }, `scheduler = "nosuch"`},
		{"ss_gen", is(permsched.BenchSchedule, "fig7", "AC", 1), func(r *results.Record) { r.Params["gen"] = "nosuch" },
			`impossible parameter gen = "nosuch": must be one of fig7, fig7-noself, uniform, skewed, trace`},
		{"scc_gen", is(permsched.BenchComm, "fig7", "AC", 1), func(r *results.Record) { r.Params["gen"] = "nosuch" }, `gen = "nosuch"`},
		{"sp_gen", is("sched.perms", "fig7", "CGM", 4), func(r *results.Record) { r.Params["gen"] = "nosuch" }, `gen = "nosuch"`},
		{"scc_matrix_big", is(permsched.BenchComm, "fig7", "AC", 1), func(r *results.Record) { r.Params["matrix"] = 1e15 },
			"impossible parameter matrix = 1000000000000000: must be an integer from 0 to 1048575"},
		{"matrix of a trace beyond 0", is(permsched.BenchComm, "fig7", "AC", 1), func(r *results.Record) {
			r.Params["gen"], r.Params["matrix"], r.Counters["D"] = permsched.GenTrace, 1, 1
		}, "matrix = 1 of gen trace"},
		{"ss_D0", is(permsched.BenchSchedule, "fig7", "AC", 1), func(r *results.Record) { r.Counters["D"] = 0 },
			"counters D = 0 with d = 1 on ranks = 5: want = 1 (a fig7 matrix is d-regular)"},
		{"uniform D beyond n-1", is(permsched.BenchSchedule, "uniform", "LP", 3), func(r *results.Record) { r.Counters["D"] = 5 },
			"counters D = 5 with d = 3 on ranks = 5: want from 3 to 4"},
		{"ss_msg", is(permsched.BenchSchedule, "fig7", "AC", 1), func(r *results.Record) { r.Counters["messages"] = 1e15 },
			"counters messages = 1e+15 with d = 1 on ranks = 5: want = 5 (a generated matrix has d messages per rank)"},
		{"ss_ph0", is(permsched.BenchSchedule, "fig7", "AC", 1), func(r *results.Record) { r.Counters["phases"] = 0 },
			"counters phases = 0 of AC with D = 1 on ranks = 5: want = 1"},
		{"phases of CGM below D", is(permsched.BenchSchedule, "fig7", "CGM", 3), func(r *results.Record) { r.Counters["phases"] = 2 },
			"counters phases = 2 of CGM with D = 3 on ranks = 5: want from 3 to 24"},
		{"phases of EXACT beyond D", is(permsched.BenchComm, "fig7", "EXACT", 3), func(r *results.Record) { r.Counters["phases"] = 4 },
			"counters phases = 4 of EXACT with D = 3 on ranks = 5: want = 3"},
		{"phases of Alltoallv", is(permsched.BenchComm, "fig7", permsched.AlltoallvName, 3), func(r *results.Record) { r.Counters["phases"] = 3 },
			"counters phases = 3 of Alltoallv with D = 3 on ranks = 5: want = 0"},
		{"sc_tb", is(permsched.BenchComm, "fig7", "AC", 1), func(r *results.Record) { r.Counters["total_bytes"] = 1e15 },
			"counters total_bytes = 1e+15 disagrees with messages x bytes = 5 x 16 = 80"},
		{"sp_perm2", is("sched.perms", "fig7", "EXACT", 4), func(r *results.Record) { setSamples(r, 2) },
			"schedule lengths from min = 2 to max = 2 of EXACT with d = 4 on ranks = 5: want from 4 to 32"},
		{"sp_perm1e15", is("sched.perms", "fig7", "EXACT", 4), func(r *results.Record) { setSamples(r, 1e15) },
			"schedule lengths from min = 1e+15 to max = 1e+15 of EXACT"},
		{"AC's rounds beside d", is("sched.perms", "uniform", "AC", 4), func(r *results.Record) { setSamples(r, 5) },
			"schedule lengths from min = 5 to max = 5 of AC with d = 4 on ranks = 5: want = 4"},
		{"EXACT's mean beside mean_D", is("sched.perms", "uniform", "EXACT", 1), func(r *results.Record) { r.Derived["mean_D"] = r.Mean + 0.5 },
			"of EXACT disagrees with derived mean_D"},
		{"sp_opt", is("sched.perms", "fig7", "EXACT", 4), func(r *results.Record) { r.Counters["optimal"] = float64(r.N - 1) },
			"matrices of EXACT: every EXACT schedule is optimal"},
		{"sp_meanD", is("sched.perms", "fig7", "EXACT", 4), func(r *results.Record) { r.Derived["mean_D"] = 1e15 },
			"derived mean_D = 1e+15 with d = 4 on ranks = 5: want = 4 (a fig7 matrix is d-regular)"},
		{"sm_deg7", is("sched.maxdeg", "fig7", "", 4), func(r *results.Record) { setSamples(r, 7) },
			"max degree from min = 7 to max = 7 with d = 4 on ranks = 5: want D = 4"},
		{"sm_deg1", is("sched.maxdeg", "uniform", "", 4), func(r *results.Record) { setSamples(r, 1) },
			"max degree from min = 1 to max = 1 with d = 4 on ranks = 5: want D = 4 (every rank sends d messages to distinct other ranks)"},
		{"st_unkctr", is("sched.time", "fig7", "GM", 4), func(r *results.Record) { r.Counters = map[string]float64{"bogus": 1e18} },
			"counters bogus = 1e+18: a sched.time record has no such value (its writer writes none)"},
		{"a derived key no exchange has", is(permsched.BenchComm, "fig7", "CGM", 3), func(r *results.Record) { r.Derived["mean_D"] = 3 },
			"derived mean_D = 3: a sched.comm record has no such value (its writer writes sched_s, sched_over_comm)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(recs, tc.pick)
			if i < 0 {
				t.Fatal("no such record written")
			}
			recordtest.CheckEdited(t, recs[i], tc.edit, tc.want)
		})
	}
}

// TestBreakevenFitStatus: as for `commcost fit`, a break-even input
// without the records a fit needs, or with too few of them to determine
// it (two permutation sizes), is bad input (exit status 2).
func TestBreakevenFitStatus(t *testing.T) {
	perm1 := func(sizes ...int) string {
		var b strings.Builder
		for _, size := range sizes {
			v := 1e-5 + float64(size)*1e-9
			r := results.Record{Schema: 1, Bench: permsched.BenchPerm1, Params: results.Params{"bytes": size}, Ranks: 4, Unit: results.UnitSeconds,
				Summary: results.Summary{N: 1, Min: v, Median: v, Mean: v, Max: v, P90: v, P99: v, CI95: [2]float64{v, v}}, Stop: results.StopMaxReps}
			line, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		return b.String()
	}
	tests := []struct {
		name, file string
		bad        bool // bad input: status 2
		want       string
	}{
		{"no records at all", "", true, "need sched.perm1 records at three or more message sizes"},
		{"perm1 at two sizes", perm1(16, 64), true, "the input has 2"},
		{"perm1 but no exchanges of LP", perm1(16, 64, 256), true, "the input has no sched.comm records of LP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.jsonl")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := (&permsched.Breakeven{In: opts.Strings{path}}).Fit(nil)
			if err == nil {
				t.Fatal("fitted")
			}
			if opts.IsBadInput(err) != tc.bad || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v: bad input %v, want %v and %q", err, opts.IsBadInput(err), tc.bad, tc.want)
			}
		})
	}
}
