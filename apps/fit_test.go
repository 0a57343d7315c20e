package apps

import (
	"math"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// TestFitHyperbolicAbsolute: Fit weights the hyperbolic model's residuals
// absolutely (see Fit). The round trips are what a calibration measures
// (8 bytes to 256 KiB) on a link whose token bucket lets a message's first
// 25 KB go at once, one way lat + max(0, x - burst) tw, as the test
// cluster's shaped links do. The program's message of 126 KiB must be
// priced by the large sizes: the relative fit lets the three small ones
// pull b down and misses it by a third.
func TestFitHyperbolicAbsolute(t *testing.T) {
	const lat, burst, tw = 12e-6, 25e3, 41.8e-9
	oneWay := func(x float64) float64 { return lat + math.Max(0, x-burst)*tw }
	var recs []results.Record
	for _, x := range []int{8, 1 << 10, 8 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10} {
		y := 2 * oneWay(float64(x))
		recs = append(recs, results.Record{Schema: 1, Bench: "roundtrip", Params: results.Params{"bytes": x}, Ranks: 2, Unit: "s",
			Summary: results.Summary{N: 10, Min: y, Median: y, Mean: y, Max: y, CI95: [2]float64{y, y}}})
	}
	const plane = 129032
	want := oneWay(plane)
	ms, notes := Fit(recs, []string{"hyperbolic"})
	if len(ms) != 1 {
		t.Fatalf("hyperbolic not fitted: %v", notes)
	}
	in := model.Instance{Pattern: "pingpong", Params: results.Params{"bytes": plane}, Ranks: 2}
	got, err := ms[0].Model.Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	if q := ms[0].Model.Quality().Weighting; q != model.WeightNone.String() {
		t.Errorf("Fit's hyperbolic weighting %q, want %q", q, model.WeightNone)
	}
	if e := got/want - 1; math.Abs(e) > 0.10 {
		t.Errorf("Fit's hyperbolic prices %d bytes at %.3g s, the link takes %.3g s (%+.1f%%); want within 10%%", plane, got, want, 100*e)
	}
	rel, err := model.Fit("hyperbolic", recs, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rel.Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes: link %.3g s, absolute fit %.3g s (%+.1f%%), relative fit %.3g s (%+.1f%%)", plane, want, got, 100*(got/want-1), r, 100*(r/want-1))
	if math.Abs(r/want-1) < 0.2 {
		t.Errorf("the relative fit prices %d bytes within 20%% (%.3g s against %.3g s): this test no longer shows why Fit weights absolutely", plane, r, want)
	}
}
