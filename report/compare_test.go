package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// TestComparisonSummaries checks the per-model statistics on hand-made
// rows: relative errors, medians over the rows each model predicts, and
// the closest model per row (ties to the first).
func TestComparisonSummaries(t *testing.T) {
	nan := math.NaN()
	c := Comparison{PointColumns: []string{"bytes"}, Unit: "s", Models: []string{"a", "b"}}
	c.Add([]string{"8"}, 10, []float64{11, 9.5})  // a 10%, b 5%: b
	c.Add([]string{"16"}, 20, []float64{20, 30})  // a 0%, b 50%: a
	c.Add([]string{"32"}, 40, []float64{44, nan}) // a 10%, b none: a
	c.Add([]string{"64"}, 80, []float64{72, 88})  // a 10%, b 10%: tie, a
	want := []ModelSummary{
		{Model: "a", N: 4, MedianRelErr: 0.1, MaxRelErr: 0.1, Best: 3},
		{Model: "b", N: 3, MedianRelErr: 0.1, MaxRelErr: 0.5, Best: 1},
	}
	got := c.Summaries()
	for i, w := range want {
		g := got[i]
		if g.Model != w.Model || g.N != w.N || g.Best != w.Best ||
			!scalar.EqualWithinAbs(g.MedianRelErr, w.MedianRelErr, 1e-12) || !scalar.EqualWithinAbs(g.MaxRelErr, w.MaxRelErr, 1e-12) {
			t.Errorf("summary %d = %+v, want %+v", i, g, w)
		}
	}
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"measured us", "a us", "b us", "9500000 *", "20000000 *", "│ -", "median err", "10.00%", "closest (*)", "3 of 4", "1 of 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestComparisonOneModel: with one model nothing is marked and no summary
// rows are added (the caller prints its own summary).
func TestComparisonOneModel(t *testing.T) {
	c := Comparison{PointColumns: []string{"point"}, Unit: "B/s", Models: []string{"loggp"}}
	c.Add([]string{"bandwidth bytes=1024"}, 2e9, []float64{1.9e9})
	var b bytes.Buffer
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "*") || strings.Contains(out, "median err") {
		t.Errorf("one model marked or summarised:\n%s", out)
	}
	for _, want := range []string{"measured MB/s", "2000", "1900", "5.00%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestComparisonAddMisuse(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("a row with the wrong number of predictions was accepted")
		}
	}()
	c := Comparison{PointColumns: []string{"p"}, Models: []string{"a", "b"}}
	c.Add([]string{"x"}, 1, []float64{1})
}

func TestRelErr(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pred, mea float64
		want      float64 // NaN: undefined
	}{
		{"over", 11, 10, 0.1},
		{"under", 9, 10, 0.1},
		{"exact", 3, 3, 0},
		{"measured zero", 1, 0, math.NaN()},
		{"no prediction", math.NaN(), 1, math.NaN()},
		{"infinite", math.Inf(1), 1, math.NaN()},
	} {
		got := RelErr(tc.pred, tc.mea)
		if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && !scalar.EqualWithinAbs(got, tc.want, 1e-12) {
			t.Errorf("%s: RelErr(%g, %g) = %g, want %g", tc.name, tc.pred, tc.mea, got, tc.want)
		}
	}
}
