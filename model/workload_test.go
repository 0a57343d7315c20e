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
