package permsched_test

import (
	"testing"

	"github.com/commcost/commcost/internal/recordtest"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// TestSlopeRecordValuesChecked: a sched.slope record as SlopeRecords
// writes it is read back; edited so that its fit values are none a
// least-squares fit gives (r2 beyond [0, 1], a negative standard error, a
// slope other than the median, cells no run has, ranks, a regressor the
// writer does not fit), it is refused naming the value.
func TestSlopeRecordValuesChecked(t *testing.T) {
	fit := &model.LinearFit{Names: []string{"intercept_s", "slope_s"}, Coef: []float64{1.2e-6, -1.86e-8}, SE: []float64{1e-7, 5.45e-9}, R2: 0.85, RSE: 0.1}
	slope := func() results.Record {
		return permsched.SlopeRecords([]permsched.TimeSlope{{Scheduler: "AC", Fit: fit, Cells: 4}}, results.Meta{})[0]
	}
	tests := []struct {
		name string
		edit func(r *results.Record)
		want string // "" accepted
	}{
		{"as written", func(*results.Record) {}, ""},
		{"sl_r2", func(r *results.Record) { r.Derived["r2"] = 5 }, "derived r2 = 5: the R^2 of a least-squares fit with an intercept is in [0, 1]"},
		{"sl_rse", func(r *results.Record) { r.Derived["rel_rse"] = -3 }, "derived rel_rse = -3: a standard error is >= 0"},
		{"sl_se", func(r *results.Record) { r.Derived["slope_se_s"] = -1 }, "derived slope_se_s = -1: a standard error is >= 0"},
		{"sl_med", func(r *results.Record) { r.Derived["slope_s"] = 5 }, "derived slope_s = 5 disagrees with the median"},
		{"sl_cells", func(r *results.Record) { r.Counters["cells"] = 1e15 }, "counters cells = 1e+15: a slope is fitted on 3 to"},
		{"sl_cells_few", func(r *results.Record) { r.Counters["cells"] = 2 }, "counters cells = 2: a slope is fitted on 3 to"},
		{"sl_ranks", func(r *results.Record) { r.Ranks = 3 }, "ranks = 3: a sched.slope record is a fit over cells of many rank counts"},
		{"sl_x", func(r *results.Record) { r.Params["x"] = "nosuch" }, `impossible parameter x = "nosuch": must be one of d*n*ln(d)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recordtest.CheckEdited(t, slope(), tc.edit, tc.want)
		})
	}
}
