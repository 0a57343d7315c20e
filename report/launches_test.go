package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/results"
)

func TestKruskalWallis(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups [][]float64
		want   float64 // NaN: undefined
		tol    float64
	}{
		// R's kruskal.test example (Hollander and Wolfe 1973, p. 116):
		// H = 0.77143 on 2 degrees of freedom, p = exp(-H/2) = 0.68.
		{"Hollander-Wolfe", [][]float64{{2.9, 3.0, 2.5, 2.6, 3.2}, {3.8, 2.7, 4.0, 2.4}, {2.8, 3.4, 3.7, 2.2, 2.0}},
			math.Exp(-0.7714285714285714 / 2), 1e-12},
		// Two groups, no ties, fully separated, 5 + 5: H = 12/(10*11)*(15^2/5 + 40^2/5) - 33 = 6.818...,
		// p = P(chi2_1 > H) = erfc(sqrt(H/2)).
		{"separated", [][]float64{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}, math.Erfc(math.Sqrt(12.0 / 110 * (225.0/5 + 1600.0/5 - 33*110/12.0) / 2)), 1e-12},
		{"one group", [][]float64{{1, 2}, nil}, math.NaN(), 0},
		{"all equal", [][]float64{{1, 1}, {1, 1}}, math.NaN(), 0},
	} {
		got := KruskalWallis(tc.groups)
		if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && !scalar.EqualWithinAbs(got, tc.want, tc.tol) {
			t.Errorf("%s: p = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLaunchSpreads: four launches whose medians differ by ±10% while
// each launch's repetitions vary by 1%: between is about ten times
// within and the launches differ significantly; a point measured in one
// launch only has no spread.
func TestLaunchSpreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []results.Record
	offsets := []float64{1.0, 1.1, 0.9, 1.05}
	for i, off := range offsets {
		for _, b := range []int{8, 1024} {
			s := make([]float64, 20)
			for j := range s {
				s[j] = 1e-6 * off * (1 + 0.01*rng.NormFloat64())
			}
			recs = append(recs, results.Record{Schema: 1, Bench: "pingpong", Params: results.Params{"bytes": b}, Ranks: 2, Unit: "s",
				Summary: results.Summarize(s), Samples: s, Meta: results.Meta{Launch: []string{"1", "2", "3", "10"}[i]}})
		}
	}
	recs = append(recs, results.Record{Schema: 1, Bench: "pingpong", Params: results.Params{"bytes": 64}, Ranks: 2, Unit: "s",
		Summary: results.Summarize([]float64{1, 2, 3}), Meta: results.Meta{Launch: "1"}})
	sp := LaunchSpreads(recs)
	if len(sp) != 2 {
		t.Fatalf("%d spreads, want 2 (bytes 8 and 1024)", len(sp))
	}
	for _, s := range sp {
		if strings.Join(s.Launches, ",") != "1,2,3,10" {
			t.Errorf("launch order %v", s.Launches)
		}
		if !scalar.EqualWithinAbs(s.Between, 0.1, 0.01) {
			t.Errorf("bytes=%v: between %.4f, want about 0.10 (half of 1.1 - 0.9)", s.Params["bytes"], s.Between)
		}
		if !(s.Within > 0.001 && s.Within < 0.01) {
			t.Errorf("bytes=%v: within %.4f, want about 0.005", s.Params["bytes"], s.Within)
		}
		if !(s.P < 1e-6) {
			t.Errorf("bytes=%v: launches' p %g, want tiny", s.Params["bytes"], s.P)
		}
	}
	var buf bytes.Buffer
	if err := WriteLaunchSpreads(&buf, sp, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pingpong: spread between launches", "between ±", "within ±", "Kruskal-Wallis", "0.9016 .. 1.098", "<0.001"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	if LaunchSpreads(recs[:2]) != nil {
		t.Error("records of one launch have a spread")
	}
}

// TestBuildRunLaunches: a run report of records from two launches has the
// spread section; one of a single launch has none.
func TestBuildRunLaunches(t *testing.T) {
	var recs []results.Record
	for i, launch := range []string{"1", "2"} {
		for _, b := range []int{8, 64, 512, 4096} {
			s := []float64{1, 1.01, 1.02, 0.99, 1.0, 1.03}
			for j := range s {
				s[j] *= (1e-6 + 1e-9*float64(b)) * (1 + 0.1*float64(i))
			}
			recs = append(recs, results.Record{Schema: 1, Bench: "pingpong", Params: results.Params{"bytes": b}, Ranks: 2, Unit: "s",
				Summary: results.Summarize(s), Samples: s, Meta: results.Meta{Launch: launch}})
		}
	}
	run, err := BuildRun(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(run.Markdown, []byte("## Spread between launches")) || !bytes.Contains(run.Markdown, []byte("between ±")) {
		t.Errorf("report.md lacks the launch spread:\n%s", run.Markdown)
	}
	run, err = BuildRun(recs[:4], false)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(run.Markdown, []byte("Spread between launches")) {
		t.Error("one launch has a spread section")
	}
}
