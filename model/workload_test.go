package model

import (
	"errors"
	"math"
	"testing"

	"github.com/commcost/commcost/results"
)

func TestPredictWorkload(t *testing.T) {
	h := &Hockney{Ts: fixedParam("t_s", "s", 1e-6), Tw: fixedParam("t_w", "s/B", 1e-9)}
	w := []results.WorkItem{
		{Count: 3, Bench: "pingpong", Params: results.Params{"bytes": 1000}},
		{Count: 0.5, Bench: "pingpong", Params: results.Params{"bytes": 0}},
		{Count: 0, Bench: "kkaccess", Params: results.Params{"k": 1}}, // zero count: not asked
	}
	got, err := PredictWorkload(h, w)
	if err != nil {
		t.Fatal(err)
	}
	want := 3*(1e-6+1000e-9) + 0.5*1e-6
	if math.Abs(got-want) > 1e-15 {
		t.Errorf("PredictWorkload = %g, want %g", got, want)
	}
	if v, err := PredictWorkload(h, nil); err != nil || v != 0 {
		t.Errorf("empty workload: %g, %v", v, err)
	}
	_, err = PredictWorkload(h, []results.WorkItem{{Count: 1, Bench: "kkaccess", Params: results.Params{"k": 1, "l": 8, "r": 1}}})
	if !errors.Is(err, ErrUnsupportedPattern) {
		t.Errorf("unsupported pattern: %v, want ErrUnsupportedPattern", err)
	}
	if _, err = PredictWorkload(h, []results.WorkItem{{Count: -1, Bench: "pingpong", Params: results.Params{"bytes": 8}}}); err == nil {
		t.Error("negative count accepted")
	}
}

// TestPredictWorkloadViews: each model predicts from the first view it
// describes completely, and a model describing none says why for each.
func TestPredictWorkloadViews(t *testing.T) {
	h := &Hockney{Ts: fixedParam("t_s", "s", 1e-6), Tw: fixedParam("t_w", "s/B", 1e-9)}
	tl := &TwoLevel{Ts: fixedParam("t_s", "s", 2e-6), Tw: fixedParam("t_w", "s/B", 2e-9)}
	agg := results.Params{"op": "allgather", "impl": "textbook", "bytes": 1000, "q": 0, "neighbors": 0}
	w := []results.WorkItem{
		{Count: 2, Bench: "aggregate", Params: agg, Ranks: 4, View: "aggregate"},
		{Count: 2, Bench: "pingpong", Params: results.Params{"bytes": 1000}, View: "p2p"},
		{Count: 2, Bench: "pingpong", Params: results.Params{"bytes": 2000}, View: "p2p"},
	}
	for _, tc := range []struct {
		name string
		m    Model
		want float64
		view string
	}{
		{"hockney skips aggregate", h, 2*(1e-6+1000e-9) + 2*(1e-6+2000e-9), "p2p"},
		{"twolevel takes aggregate", tl, 2 * (2e-6 + 2e-9*3*1000), "aggregate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, view, err := PredictWorkloadView(tc.m, w)
			if err != nil {
				t.Fatal(err)
			}
			if view != tc.view || math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("got %g from view %q, want %g from %q", got, view, tc.want, tc.view)
			}
		})
	}
	_, _, err := PredictWorkloadView(h, w[:1])
	if !errors.Is(err, ErrUnsupportedPattern) {
		t.Errorf("no view described: %v, want ErrUnsupportedPattern", err)
	}
	bad := append([]results.WorkItem{{Count: -1, Bench: "pingpong", View: "p2p"}}, w...)
	if _, _, err := PredictWorkloadView(h, bad); err == nil || errors.Is(err, ErrUnsupportedPattern) {
		t.Errorf("malformed item: %v, want a plain error", err)
	}
}
