package model

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/commcost/commcost/results"
)

// kkSwitchRecords samples two trilinear regimes on k in {1,2,4,8},
// l = 64..16K, r in rs: below switchL the coefficients lo, from it on hi
// (microseconds, Table 1 order), with relative noise sigma.
func kkSwitchRecords(lo, hi [8]float64, switchL, sigma float64, seed uint64, rs []float64) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 9))
	var tl, th Trilinear
	for j := range lo {
		tl.C[j].Value, th.C[j].Value = lo[j]*1e-6, hi[j]*1e-6
	}
	var recs []results.Record
	for _, k := range []float64{1, 2, 4, 8} {
		for _, l := range sizes(6, 14) {
			for _, r := range rs {
				y := tl.Time(k, l, r)
				if l >= switchL {
					y = th.Time(k, l, r)
				}
				recs = append(recs, rec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, 8, noisy(rng, y, sigma)))
			}
		}
	}
	return recs
}

// A protocol switch at 1 KiB: the start-up per packet triples and every
// byte costs half again as much (c5, c2), as eager -> rendezvous does.
var (
	pwLo = table1[0].c
	pwHi = [8]float64{pwLo[0], pwLo[1], 1.5 * pwLo[2], pwLo[3], 3 * pwLo[4], 1.5 * pwLo[5], pwLo[6], pwLo[7] + 2000}
)

// TestPiecewiseTrilinearRegimes: the switch is found at the first size of
// the second regime, both coefficient sets are recovered exactly without
// noise, and with 2% noise held-out cells are predicted within a few
// percent where the plain trilinear model is far off.
func TestPiecewiseTrilinearRegimes(t *testing.T) {
	exact, err := FitPiecewiseTrilinear(kkSwitchRecords(pwLo, pwHi, 1024, 0, 1, allR), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(exact.Segments) != 2 || len(exact.Breakpoints) != 1 || exact.Breakpoints[0] != 1024 {
		t.Fatalf("segments %d, breakpoints %v, want one at 1024 (candidates %+v)", len(exact.Segments), exact.Breakpoints, exact.Candidates)
	}
	for s, want := range [][8]float64{pwLo, pwHi} {
		for j := range want {
			near(t, exact.Segments[s].Model.C[j].Name, exact.Segments[s].Model.C[j].Value*1e6, want[j], 1e-6)
		}
	}
	noisyRecs := kkSwitchRecords(pwLo, pwHi, 1024, 0.02, 2, allR)
	pw, err := CrossValidate("trilinear-piecewise", noisyRecs, Options{}, Holdout{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := CrossValidate("trilinear", noisyRecs, Options{}, Holdout{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out median: piecewise %.4f, plain %.4f", pw.MedianRelErr, plain.MedianRelErr)
	if pw.MedianRelErr > 0.03 || plain.MedianRelErr < 2*pw.MedianRelErr {
		t.Errorf("held-out median: piecewise %.4f, plain %.4f", pw.MedianRelErr, plain.MedianRelErr)
	}
	// Predictions use the regime of l; a size between regimes the lower one.
	m := &PiecewiseTrilinear{}
	*m = *exact
	for _, tc := range []struct{ l, want float64 }{{512, m.Segments[0].Model.Time(2, 512, 0.5)}, {1024, m.Segments[1].Model.Time(2, 1024, 0.5)}, {900, m.Segments[0].Model.Time(2, 900, 0.5)}} {
		got, err := m.Predict(Instance{Pattern: "kkaccess", Params: results.Params{"k": 2, "l": tc.l, "r": 0.5}})
		if err != nil || got != tc.want {
			t.Errorf("l = %g: %g, %v; want %g", tc.l, got, err, tc.want)
		}
	}
	if _, err := m.Predict(Instance{Pattern: "pingpong", Params: results.Params{"bytes": 8}}); err == nil {
		t.Error("predicted a ping-pong")
	}
	// The model survives the JSON form commcost predict reads.
	b, err := Marshal(exact, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	in := Instance{Pattern: "kkaccess", Params: results.Params{"k": 4, "l": 4096, "r": 1}}
	g1, _ := exact.Predict(in)
	g2, err := back.Predict(in)
	if err != nil || g1 != g2 {
		t.Errorf("after JSON: %g, %v; want %g", g2, err, g1)
	}
	if _, err := json.Marshal(back.Params()); err != nil || len(back.Params()) != 16 {
		t.Errorf("params: %d, %v", len(back.Params()), err)
	}
}

// TestPiecewiseTrilinearNoSwitch: records of one regime stay one segment
// (the doubled-penalty criterion rarely buys a split with noise alone), and
// then the fit is the plain trilinear fit.
func TestPiecewiseTrilinearNoSwitch(t *testing.T) {
	splits := 0
	const seeds = 40
	for seed := range uint64(seeds) {
		recs := kkRecords(table1[0].c, 0.03, seed+100, allR)
		pw, err := FitPiecewiseTrilinear(recs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pw.Segments) > 1 {
			splits++
			continue
		}
		plain, err := FitTrilinear(recs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range plain.C {
			if got := pw.Segments[0].Model.C[j]; math.Abs(got.Value-c.Value) > 1e-9*math.Abs(c.Value) || math.Abs(got.SE-c.SE) > 1e-6*c.SE {
				t.Fatalf("seed %d: %s of the one segment %+v, plain fit %+v", seed, c.Name, got, c)
			}
		}
	}
	t.Logf("%d of %d noise-only sweeps split", splits, seeds)
	if splits > 2 {
		t.Errorf("%d of %d noise-only sweeps were split", splits, seeds)
	}
}

// TestPiecewiseTrilinearRefuses: too few sizes or levels get the plain
// fit's error naming the missing levels.
func TestPiecewiseTrilinearRefuses(t *testing.T) {
	recs := kkRecords(table1[0].c, 0, 1, []float64{1})
	if _, err := FitPiecewiseTrilinear(recs, Options{}); err == nil {
		t.Error("one level of r was fitted")
	}
	if _, err := FitPiecewiseTrilinear(nil, Options{}); err == nil {
		t.Error("no records were fitted")
	}
}

// TestPiecewiseTrilinearJSONChecked: a model file without usable segments
// is refused when read, not a panic in Predict.
func TestPiecewiseTrilinearJSONChecked(t *testing.T) {
	for _, body := range []string{
		`{"model":"trilinear-piecewise","fit":{"segments":[]}}`,
		`{"model":"trilinear-piecewise","fit":{"segments":[{"from_bytes":64,"model":null}]}}`,
		`{"model":"trilinear-piecewise","fit":{"segments":[{"from_bytes":4096,"model":{"c":[]}},{"from_bytes":64,"model":{"c":[]}}]}}`,
	} {
		if m, _, err := Unmarshal([]byte(body)); err == nil {
			t.Errorf("%s was accepted as %+v", body, m)
		}
	}
}

// TestCVSizeBSP: BSP's size range applies to the h-relation, as in its fit.
func TestCVSizeBSP(t *testing.T) {
	r := rec("alltoall", results.Params{"bytes": 1024.0}, 4, 1e-5)
	h, err := HRelationBytes(InstanceOf(r))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cvSize("bsp", r); !ok || got != h || h == 1024 {
		t.Errorf("bsp size %g (%v), want the h-relation %g", got, ok, h)
	}
	if got, ok := cvSize("hyperbolic", r); !ok || got != 1024 {
		t.Errorf("hyperbolic size %g (%v), want 1024", got, ok)
	}
}

// TestPiecewiseTrilinearWeakSwitch: a switch of 30% in c0 and 20% in the
// per-byte terms (c2, c5) at 1 KiB is found under 5% noise.
func TestPiecewiseTrilinearWeakSwitch(t *testing.T) {
	weak := pwLo
	weak[7] *= 1.3
	weak[2] *= 1.2
	weak[5] *= 1.2
	found := 0
	const seeds = 20
	for seed := range uint64(seeds) {
		pw, err := FitPiecewiseTrilinear(kkSwitchRecords(pwLo, weak, 1024, 0.05, seed+5000, allR), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pw.Breakpoints) == 1 && pw.Breakpoints[0] == 1024 {
			found++
		}
	}
	if found < seeds-1 {
		t.Errorf("weak switch found in %d of %d sweeps", found, seeds)
	}
}
