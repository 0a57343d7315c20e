package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// table1 is paper 000's Table 1 (coefficients c7..c0, µs; l in bytes).
var table1 = []struct {
	network string
	c       [8]float64
}{
	{"BF(3)", [8]float64{0.519, 102.2, 4.989, 2.341, 382.4, 15.23, -51.73, 1242}},
	{"BF(4)", [8]float64{0.475, 108.8, 5.203, 2.760, 371.9, 20.78, -27.32, 1619}},
	{"BF(5)", [8]float64{0.056, 111.0, 5.419, 3.583, 373.5, 26.49, -1.924, 1969}},
	{"SE(3)", [8]float64{3.371, 715.5, 2.304, 11.22, 312.4, 9.413, -51.72, 1242}},
	{"SE(4)", [8]float64{6.896, 1198, 2.569, 17.13, 199.0, 21.55, -710.0, 1765}},
	{"SE(5)", [8]float64{10.28, 1852, 2.205, 10.52, 90.98, 32.24, -1388, 2426}},
	{"SE(6)", [8]float64{14.62, 2321, 1.879, 7.360, 86.71, 44.53, -1776, 2986}},
	{"CCC(3)", [8]float64{7.631, 1051, 2.401, 9.169, 239.0, 26.75, -579.7, 1927}},
	{"CCC(4)", [8]float64{14.53, 1983, 1.398, -0.285, 159.9, 43.23, -1335, 2681}},
}

// kkRecords samples T(k,l,r) on the sweep: k in {1,2,4,8},
// l in 64..16K, r in {0.25,0.5,0.75,1}.
func kkRecords(cMicro [8]float64, sigma float64, seed uint64, rs []float64) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 4))
	t := &Trilinear{}
	for j := range cMicro {
		t.C[j].Value = cMicro[j] * 1e-6
	}
	var recs []results.Record
	for _, k := range []float64{1, 2, 4, 8} {
		for _, l := range sizes(6, 14) {
			for _, r := range rs {
				recs = append(recs, rec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, 8,
					noisy(rng, t.Time(k, l, r), sigma)))
			}
		}
	}
	return recs
}

var allR = []float64{0.25, 0.5, 0.75, 1}

func TestTrilinearTable1Recovery(t *testing.T) {
	for _, row := range table1 {
		t.Run(row.network, func(t *testing.T) {
			tl, err := FitTrilinear(kkRecords(row.c, 0, 1, allR), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for j, name := range trilinearNames {
				near(t, name, tl.C[j].Value*1e6, row.c[j], 1e-7)
			}
			if tl.Fit.Cond > 1e4 {
				t.Errorf("condition number %g: the sweep should be well conditioned", tl.Fit.Cond)
			}
		})
	}
}

func TestTrilinearCoverage(t *testing.T) {
	const runs = 200
	var hits, total int
	for seed := uint64(0); seed < runs; seed++ {
		tl, err := FitTrilinear(kkRecords(table1[0].c, 0.03, seed, allR), Options{TrimSigma: -1})
		if err != nil {
			t.Fatal(err)
		}
		for j := range trilinearNames {
			total++
			if inCI(tl.C[j], table1[0].c[j]*1e-6) {
				hits++
			}
		}
	}
	frac := float64(hits) / float64(total)
	t.Logf("per-coefficient 95%% CI coverage, BF(3) with 3%% noise: %.3f (%d intervals)", frac, total)
	if frac < 0.93 || frac > 0.97 {
		t.Errorf("coverage %.3f, want 0.95 +- 0.02", frac)
	}
}

func TestTrilinearRefusesRankDeficient(t *testing.T) {
	oneR := kkRecords(table1[0].c, 0, 1, []float64{1})
	var oneK []results.Record
	for _, r := range kkRecords(table1[0].c, 0, 1, allR) {
		if r.Params["k"].(float64) == 4 {
			oneK = append(oneK, r)
		}
	}
	for _, tc := range []struct {
		name string
		recs []results.Record
		msg  string
	}{
		{"one level of r", oneR, "r has 1 level(s) (r = 1)"},
		{"one level of k", oneK, "k has 1 level(s) (k = 4)"},
		{"2x2x2 cells", func() []results.Record {
			var out []results.Record
			for _, r := range kkRecords(table1[0].c, 0, 1, []float64{0.5, 1}) {
				if k, l := r.Params["k"].(float64), r.Params["l"].(float64); (k == 1 || k == 8) && (l == 64 || l == 16384) {
					out = append(out, r)
				}
			}
			return out
		}(), "more than 8 (k, l, r) cells"},
		{"mixed ops", append(kkRecords(table1[0].c, 0, 1, allR), rec("kkaccess", results.Params{"k": 1.0, "l": 8.0, "r": 1.0, "op": "write"}, 8, 1e-3)),
			`mix ops "read", "write"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitTrilinear(tc.recs, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %q", err, tc.msg)
			}
		})
	}
	// Collinear but with two levels each: l proportional to k.
	var coll []results.Record
	for _, k := range []float64{1, 2, 4, 8} {
		for _, r := range []float64{0.5, 1} {
			coll = append(coll, rec("kkaccess", results.Params{"k": k, "l": 64 * k, "r": r, "op": "read"}, 8, 1e-3*k*r+1e-4))
		}
	}
	coll = append(coll, rec("kkaccess", results.Params{"k": 3.0, "l": 192.0, "r": 0.75, "op": "read"}, 8, 1e-3))
	if _, err := FitTrilinear(coll, Options{}); !errors.Is(err, ErrIllConditioned) {
		t.Errorf("collinear design: err = %v, want ErrIllConditioned", err)
	}
}

func TestOptimalSplit(t *testing.T) {
	tl, err := FitTrilinear(kkRecords(table1[0].c, 0, 1, allR), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := table1[0].c // c[0] = c7
	// Paper 000, section 7: a2 = c4 + c2, a1 = c6 + c3.
	a2, a1 := (c[3]+c[5])*1e-6, (c[1]+c[4])*1e-6
	const D = 10000 // paper 000, Fig. 13
	s, err := OptimalSplit(tl, D)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "k0", s.K0, math.Sqrt(a2/a1*D), 1e-7)
	near(t, "l0", s.L0, math.Sqrt(a1/a2*D), 1e-7)
	near(t, "k0 l0", s.K0*s.L0, D, 1e-9)
	near(t, "T(k0,l0,1)", s.PredictedSec, tl.Time(s.K0, s.L0, 1), 1e-9)
	// The optimum is a minimum along k l = D.
	for _, f := range []float64{0.5, 0.9, 1.1, 2} {
		if v := tl.Time(s.K0*f, s.L0/f, 1); v < s.PredictedSec {
			t.Errorf("T at k0*%g = %g below the optimum %g", f, v, s.PredictedSec)
		}
	}
	if s.KInt < 1 || math.Abs(float64(s.KInt)-s.K0) >= 1 {
		t.Errorf("integer k %d far from k0 %g", s.KInt, s.K0)
	}
	// No interior optimum when a1 <= 0.
	neg := *tl
	neg.C[1].Value, neg.C[4].Value = -1, 0 // c6, c3
	if _, err := OptimalSplit(&neg, D); err == nil || !strings.Contains(err.Error(), "a1 = c6 + c3") || !errors.Is(err, ErrNoInteriorOptimum) {
		t.Errorf("err = %v", err)
	}
	// BestSplit: the interior optimum where there is one, else the better
	// end of [1, maxK]: with a1 <= 0 < a2, T falls with k, so the top end.
	if b, err := BestSplit(tl, D, 1<<16); err != nil || b.Boundary || b.K0 != s.K0 {
		t.Errorf("BestSplit with an interior optimum = %+v, %v; want OptimalSplit's %+v", b, err, s)
	}
	b, err := BestSplit(&neg, D, 100)
	if err != nil || !b.Boundary || b.KInt != 100 || b.K0 != 100 || b.LInt != D/100 {
		t.Fatalf("BestSplit with a1 <= 0: %+v, %v; want the boundary k = 100", b, err)
	}
	if want := neg.Time(100, D/100, 1); b.PredictedSec != want || !(want < neg.Time(1, D, 1)) {
		t.Errorf("boundary time %g, want T(100) = %g below T(1) = %g", b.PredictedSec, want, neg.Time(1, D, 1))
	}
	// a2 <= 0 < a1: one packet is best.
	flat := *tl
	flat.C[3].Value, flat.C[5].Value = -1e-9, 0 // c4, c2
	if b, err := BestSplit(&flat, D, 100); err != nil || !b.Boundary || b.KInt != 1 || b.LInt != D {
		t.Errorf("BestSplit with a2 <= 0: %+v, %v; want k = 1", b, err)
	}
}

// TestFitTrilinearRefusesMixedNetworks: k-k-access records of two emulated
// networks are two machines; the fit must be told which one.
func TestFitTrilinearRefusesMixedNetworks(t *testing.T) {
	var recs []results.Record
	for _, net := range []string{"BF(2)", "SE(2)"} {
		for _, k := range []int{1, 2, 4} {
			for _, l := range []int{64, 256, 1024} {
				for _, r := range []float64{0.5, 1} {
					y := 1e-6 * (1 + float64(k) + float64(l)/100 + r)
					recs = append(recs, results.Record{Schema: results.SchemaVersion, Bench: "kkaccess", Unit: "s",
						Params:  results.Params{"k": k, "l": l, "r": r, "op": "read", "network": net},
						Summary: results.Summary{N: 10, Median: y, Min: y, Max: y, Mean: y}})
				}
			}
		}
	}
	if _, err := FitTrilinear(recs, Options{}); err == nil || !strings.Contains(err.Error(), "mix networks") {
		t.Fatalf("mixed networks: err = %v, want a refusal naming them", err)
	}
	tr, err := FitTrilinear(recs, Options{Network: "SE(2)"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Fit.N != 18 {
		t.Errorf("fitted %d points, want the 18 of SE(2)", tr.Fit.N)
	}
}

// TestTrilinearOneAsynchrony: records of one a (accesses back to back,
// patterns.KKAccess.A) fit, whether a is absent, 1 or 8; records mixing
// a = 1 (absent) with a = 8 are refused with a message naming both, since
// a cell merged from single and sequential accesses is neither cost.
func TestTrilinearOneAsynchrony(t *testing.T) {
	base := kkRecords(table1[0].c, 0, 1, allR)
	with := func(a any) []results.Record {
		out := make([]results.Record, len(base))
		for i, r := range base {
			ps := results.Params{}
			for k, v := range r.Params {
				ps[k] = v
			}
			ps["a"] = a
			r.Params = ps
			out[i] = r
		}
		return out
	}
	for _, recs := range [][]results.Record{base, with(1), with(8), with(8.0)} {
		if _, err := FitTrilinear(recs, Options{}); err != nil {
			t.Errorf("a = %v: %v", recs[0].Params["a"], err)
		}
	}
	_, err := FitTrilinear(append(slices.Clone(base), with(8)...), Options{})
	if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "a = 1, 8") {
		t.Errorf("mixed a: error %v, want ErrBadRecord naming a = 1, 8", err)
	}
}

// TestTrilinearOneDraw: block accesses (every packet of a rank to one
// module) fit alone, spread ones alone, and the two mixed are refused.
func TestTrilinearOneDraw(t *testing.T) {
	base := kkRecords(table1[0].c, 0, 1, allR)
	block := make([]results.Record, len(base))
	for i, r := range base {
		ps := results.Params{"block": true}
		for k, v := range r.Params {
			ps[k] = v
		}
		r.Params = ps
		block[i] = r
	}
	for name, recs := range map[string][]results.Record{"spread": base, "block": block} {
		if _, err := FitTrilinear(recs, Options{}); err != nil {
			t.Errorf("%s alone: %v", name, err)
		}
	}
	_, err := FitTrilinear(append(slices.Clone(base), block...), Options{})
	if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "mix block accesses") {
		t.Errorf("mixed: error %v, want ErrBadRecord saying they mix block accesses", err)
	}
}
