package replay

import (
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/trace"
)

// TestRecordCheckedOnRead: a replay record whose derived times, errors or
// best mark contradict each other, or whose unit is not s, is refused on
// read; a record as Run writes it is read.
func TestRecordCheckedOnRead(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"as written", func(r *results.Record) {}, ""},
		{"error of 1e300", func(r *results.Record) { r.Derived["error_mpi_max"] = 1e300 }, "derived error_mpi_max = 1e+300 disagrees with (predicted_mpi_max_s - measured_mpi_max_s) / measured_mpi_max_s = 0.5"},
		{"error below -100%", func(r *results.Record) { r.Derived["error_mpi_max"] = -3 }, "derived error_mpi_max = -3 disagrees"},
		{"negative measured time", func(r *results.Record) { r.Derived["measured_wall_max_s"] = -1 }, "derived measured_wall_max_s = -1: a time is 0 or at least"},
		{"a prediction of 1e-300 s", func(r *results.Record) { r.Derived["predicted_mpi_mean_s"] = 1e-300 }, "derived predicted_mpi_mean_s = 1e-300"},
		{"error without a measured time", func(r *results.Record) { r.Derived["measured_mpi_max_s"] = 0 }, "derived error_mpi_max = 0.5 without a positive measured_mpi_max_s"},
		{"best 7", func(r *results.Record) { r.Derived["best"] = 7 }, "derived best = 7"},
		{"unit ms", func(r *results.Record) { r.Unit = "ms" }, `unit "ms": a replay record is a time in "s"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := results.Record{Schema: 1, Bench: Bench, Ranks: 2, Unit: results.UnitSeconds,
				Params:  results.Params{"trace": "tr", "model": "hock", "kind": "hockney", "eager_bytes": 4096},
				Summary: results.Summarize([]float64{3e-6, 3e-6}),
				Derived: map[string]float64{"predicted_mpi_max_s": 3e-6, "measured_mpi_max_s": 2e-6, "error_mpi_max": 0.5,
					"predicted_wall_max_s": 4e-6, "measured_wall_max_s": 4e-6, "error_wall_max": 0, "best": 1}}
			tc.edit(&r)
			err := r.CheckValues() // what every reader and writer runs
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRecordsCarryTheLaunch: a replay's records carry this process's
// metadata as every writer's do, the launch identifier too, with the
// traced run's hosts and ranks per host, and pass the record check.
func TestRecordsCarryTheLaunch(t *testing.T) {
	t.Setenv(results.LaunchEnv, "4711.3")
	o := &Outcome{Dir: "tr", Ranks: 2, Events: 10, Hosts: []string{"h0", "h1"}, RanksPerHost: []int{1, 1},
		Measured: &trace.Summary{Ranks: []trace.RankSummary{{Rank: 0, WallSec: 4e-6, MPISec: 2e-6}, {Rank: 1, WallSec: 4e-6, MPISec: 2e-6}}},
		Predictions: []Prediction{{Model: "hock", Kind: "hockney", Eager: 4096, Best: true, MPIMaxErr: 0.5, MPIMeanErr: 0.5,
			Result: &Result{WallSec: []float64{4e-6, 4e-6}, MPISec: []float64{3e-6, 3e-6}}}}}
	recs := o.Records([]string{"commcost", "replay", "tr"})
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	m := recs[0].Meta
	if m.Launch != "4711.3" || m.Backend != "replay" || m.Date == "" || m.GoVersion == "" || len(m.Command) != 3 {
		t.Errorf("meta %+v: want launch 4711.3, backend replay, a date, the Go version and the command", m)
	}
	if !slices.Equal(m.Hosts, o.Hosts) || !slices.Equal(m.RanksPerHost, o.RanksPerHost) {
		t.Errorf("hosts %v, ranks per host %v: want the traced run's %v, %v", m.Hosts, m.RanksPerHost, o.Hosts, o.RanksPerHost)
	}
	if err := recs[0].CheckValues(); err != nil {
		t.Errorf("the record is refused: %v", err)
	}
}
