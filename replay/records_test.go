package replay

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
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
