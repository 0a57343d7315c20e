package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// Synthetic point-to-point parameters: alpha 2 us, beta 1 ns/B (1 GB/s),
// gamma 0.5 ns/B.
const (
	synAlpha = 2e-6
	synBeta  = 1e-9
	synGamma = 5e-10
)

// TestCollRoundsClosedForms prices each algorithm's rounds with synthetic
// parameters and compares them exactly with the closed forms of Thakur,
// Rabenseifner and Gropp (2005) and Chan et al. (2007), written out here
// from the papers, not from CollRounds.
func TestCollRoundsClosedForms(t *testing.T) {
	a, b, g := synAlpha, synBeta, synGamma
	tests := []struct {
		op, alg string
		p       int
		n       float64
		want    float64
	}{
		{"bcast", "binomial", 2, 1024, a + 1024*b},
		{"bcast", "binomial", 4, 1024, 2*a + 3*1024*b}, // Open MPI: 0 -> {1, 2} at once, then 2 -> 3
		{"bcast", "binomial", 5, 1024, 2*a + 4*1024*b}, // 0 -> {1, 2, 4}, 2 -> 3
		{"bcast", "binomial", 8, 1024, 3*a + 6*1024*b}, // 0 -> {1, 2, 4}, 4 -> {5, 6}, 6 -> 7
		{"bcast", "basic_linear", 4, 100, 3 * (a + 100*b)},
		{"bcast", "scatter_allgather", 4, 4096, 2*2*a + 2*0.75*4096*b},
		{"bcast", "scatter_allgather", 16, 1 << 20, 2*4*a + 2*15.0/16*(1<<20)*b},
		{"bcast", "scatter_allgather_ring", 6, 6000, (3+5)*a + 2*5.0/6*6000*b},
		{"reduce", "binomial", 4, 512, 2 * (a + 512*b + 512*g)},
		{"reduce", "linear", 3, 512, 2 * (a + 512*b + 512*g)},
		{"reduce", "rabenseifner", 8, 8192, 2*3*a + 2*7.0/8*8192*b + 7.0/8*8192*g},
		{"allreduce", "recursive_doubling", 8, 1000, 3 * (a + 1000*b + 1000*g)},
		// p = 6: one fold into 4 ranks, lg 4 rounds, the result back
		// (Thakur et al., section 4.4): 4 alpha + 4 n beta + 3 n gamma.
		{"allreduce", "recursive_doubling", 6, 1000, 4*a + 4*1000*b + 3*1000*g},
		{"allreduce", "rabenseifner", 8, 1 << 16, 2*3*a + 2*7.0/8*(1<<16)*b + 7.0/8*(1<<16)*g},
		{"allreduce", "rabenseifner", 4, 4096, 2*2*a + 2*0.75*4096*b + 0.75*4096*g},
		{"allreduce", "ring", 3, 3000, 4*a + 4000*b + 2000*g},
		{"allreduce", "nonoverlapping", 4, 256, 2*(a+256*b+256*g) + 2*(a+256*b)},
		{"allgather", "recursive_doubling", 8, 64, 3*a + 7*64*b},
		{"allgather", "bruck", 6, 64, 3*a + 5*64*b},
		{"allgather", "ring", 5, 64, 4 * (a + 64*b)},
		{"allgather", "neighbor", 6, 64, 3*a + 5*64*b},
		{"alltoall", "pairwise", 4, 128, 3 * (a + 128*b)},
		{"alltoall", "modified_bruck", 8, 16, 3*a + 3*4*16*b},
		{"alltoall", "modified_bruck", 6, 16, 3*a + 7*16*b},
		{"reduce_scatter", "recursive_halving", 4, 4096, 2*a + 0.75*4096*(b+g)},
		{"reduce_scatter_block", "recursive_halving", 4, 1024, 2*a + 3*1024*(b+g)},
		{"reduce_scatter", "ring", 4, 4096, 3 * (a + 1024*b + 1024*g)},
		{"reduce_scatter_block", "pairwise", 4, 1024, 3 * (a + 1024*b + 1024*g)},
		{"gather", "binomial", 8, 100, 3*a + 7*100*b},
		{"gather", "binomial", 5, 100, 3*a + 4*100*b},
		{"scatter", "basic_linear", 5, 100, 4 * (a + 100*b)},
		{"gatherv", "basic_linear", 3, 10, 2 * (a + 10*b)},
		{"barrier", "dissemination", 5, 0, 3 * a},
		{"barrier", "recursive_doubling", 6, 0, 4 * a},
		{"barrier", "double_ring", 3, 0, 6 * a},
		{"alltoall", "two_proc", 2, 512, a + 512*b},
	}
	for _, tt := range tests {
		rs, err := CollRounds(tt.op, tt.alg, tt.n, tt.p)
		if err != nil {
			t.Errorf("%s %s p=%d n=%g: %v", tt.op, tt.alg, tt.p, tt.n, err)
			continue
		}
		near(t, sprintf("%s %s p=%d n=%g", tt.op, tt.alg, tt.p, tt.n), CollCost(rs, a, b, g), tt.want, 1e-12)
	}
}

// TestDefaultCollAlg: MPICH's selection (Thakur et al., sections 3-4).
func TestDefaultCollAlg(t *testing.T) {
	tests := []struct {
		op   string
		n    float64
		p    int
		want string
	}{
		{"allreduce", 2048, 4, "recursive_doubling"},
		{"allreduce", 4096, 4, "rabenseifner"},
		{"reduce", 1 << 20, 3, "rabenseifner"},
		{"bcast", 1 << 20, 4, "binomial"},
		{"bcast", 1 << 20, 16, "scatter_allgather"},
		{"bcast", 1 << 20, 12, "scatter_allgather_ring"},
		{"allgather", 1024, 8, "recursive_doubling"},
		{"allgather", 1024, 6, "bruck"},
		{"allgather", 1 << 20, 6, "ring"},
		{"alltoall", 64, 8, "modified_bruck"},
		{"alltoall", 64, 4, "pairwise"},
		{"reduce_scatter_block", 1 << 18, 4, "pairwise"},
		{"reduce_scatter", 1 << 18, 4, "recursive_halving"},
		{"barrier", 0, 7, "dissemination"},
	}
	for _, tt := range tests {
		if got := DefaultCollAlg(tt.op, tt.n, tt.p); got != tt.want {
			t.Errorf("%s n=%g p=%d: %s, want %s", tt.op, tt.n, tt.p, got, tt.want)
		}
		if _, err := CollRounds(tt.op, "default", tt.n, tt.p); err != nil {
			t.Errorf("%s default: %v", tt.op, err)
		}
	}
}

// TestCollRoundsRefuses: an algorithm without a closed form, an unknown
// collective and one rank are errors, the first two ErrUnsupportedPattern.
func TestCollRoundsRefuses(t *testing.T) {
	for _, tt := range []struct{ op, alg string }{{"bcast", "pipeline"}, {"alltoallw", "default"}, {"barrier", "two_proc"}} {
		if _, err := CollRounds(tt.op, tt.alg, 8, 4); !errors.Is(err, ErrUnsupportedPattern) {
			t.Errorf("%s %s: %v, want ErrUnsupportedPattern", tt.op, tt.alg, err)
		}
	}
	if _, err := CollRounds("bcast", "binomial", 8, 1); err == nil {
		t.Error("bcast on one rank: no error")
	}
}

// TestFitCollAlg recovers alpha, beta, gamma and delta exactly from
// synthetic ping-pong and local-reduction records, and prices a collective
// record's instance by its algorithm.
func TestFitCollAlg(t *testing.T) {
	const delta = 3e-8
	var recs []results.Record
	for _, m := range sizes(0, 20) {
		recs = append(recs, rec("pingpong", results.Params{"bytes": m}, 2, synAlpha+synBeta*m))
	}
	for _, m := range sizes(2, 20) {
		recs = append(recs, rec("reducelocal", results.Params{"bytes": m, "type": "float", "reduction": "sum", "iters": 100}, 2, delta+synGamma*m))
	}
	m, err := FitCollAlg(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "alpha", m.Alpha.Value, synAlpha, 1e-9)
	near(t, "beta", m.Beta.Value, synBeta, 1e-9)
	near(t, "gamma", m.Gamma.Value, synGamma, 1e-9)
	near(t, "delta", m.Delta.Value, delta, 1e-7)
	in := Instance{Pattern: "collective", Params: results.Params{"op": "allreduce", "alg": "ring", "bytes": 3000}, Ranks: 3}
	got, err := m.Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "allreduce ring", got, 4*synAlpha+4000*synBeta+2000*synGamma, 1e-9)
	if _, err := Fit("collalg", recs, Options{}); err != nil {
		t.Errorf("Fit through the registry: %v", err)
	}
	// Without reducelocal records there is no gamma: no fit.
	if _, err := FitCollAlg(recs[:21], Options{}); !errors.Is(err, ErrNoRecords) {
		t.Errorf("fit without reducelocal records: %v, want ErrNoRecords", err)
	}
}

// TestFitCollFit recovers the coefficients of synthetic allreduce and
// bcast records exactly, predicts a held-out rank count and size exactly
// (the data follow the model's form), drops the terms one rank count cannot
// separate, and refuses an (op, alg) it has no curve of.
func TestFitCollFit(t *testing.T) {
	truth := func(op string, b float64, p int) float64 {
		l, v := float64(ceilLg(p)), CollVolume(op, b, p)
		return 3e-6 + 1.5e-6*l + 4e-10*v + 2e-10*v*l
	}
	var recs []results.Record
	for _, op := range []string{"allreduce", "allgather"} {
		for _, p := range []int{2, 3, 4} {
			for _, b := range sizes(2, 20) {
				recs = append(recs, rec("collective", results.Params{"op": op, "alg": "default", "bytes": b}, p, truth(op, b, p)))
			}
		}
	}
	m, err := FitCollFit(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Curves) != 2 {
		t.Fatalf("%d curves, want 2", len(m.Curves))
	}
	for _, c := range m.Curves {
		want := []float64{3e-6, 1.5e-6, 4e-10, 2e-10}
		for j, p := range c.Coef {
			near(t, c.Op+" "+p.Name, p.Value, want[j], 1e-6)
		}
	}
	for _, tt := range []struct {
		op string
		b  float64
		p  int
	}{{"allreduce", 3000, 8}, {"allgather", 1 << 21, 6}} {
		got, err := m.Predict(Instance{Pattern: "collective", Params: results.Params{"op": tt.op, "bytes": tt.b}, Ranks: tt.p})
		if err != nil {
			t.Fatal(err)
		}
		near(t, sprintf("held-out %s %g B on %d", tt.op, tt.b, tt.p), got, truth(tt.op, tt.b, tt.p), 1e-6)
	}
	if _, err := m.Predict(Instance{Pattern: "collective", Params: results.Params{"op": "allreduce", "alg": "ring", "bytes": 8}, Ranks: 4}); !errors.Is(err, ErrUnsupportedPattern) {
		t.Errorf("allreduce/ring: %v, want ErrUnsupportedPattern", err)
	}
	one, err := FitCollFit(recs[:19], Options{}) // allreduce on 2 ranks only
	if err != nil {
		t.Fatal(err)
	}
	if got := len(one.Curves[0].Coef); got != 2 {
		t.Errorf("one rank count: %d coefficients, want 2 (c0, c_v)", got)
	}
}

// TestFitCollFitClosedForm: a forced algorithm's curve has its closed
// form's shape, so records its closed form made on 2 and 4 ranks predict
// 3 ranks (4/3 of the bytes and 4 rounds for the ring, a fold and an
// unfold around one exchange for recursive doubling), and the terms the
// records cannot separate are dropped: on 2 and 4 ranks every one of these
// algorithms reduces a fixed share of the bytes it sends (all of them in
// recursive doubling, half in the others), so beta and gamma come as one
// c_b. Exact for the ring, Rabenseifner and the linear algorithm, whose
// share is the same on 3 ranks; recursive doubling on 3 ranks sends its
// unfold's n bytes without reducing them, which c_b prices as reduced: the
// prediction is gamma n high, exactly.
func TestFitCollFitClosedForm(t *testing.T) {
	const c0 = 2e-6
	price := func(alg string, b float64, p int) float64 {
		rs, err := CollRounds("allreduce", alg, b, p)
		if err != nil {
			t.Fatal(err)
		}
		return c0 + CollCost(rs, synAlpha, synBeta, synGamma)
	}
	algs := []string{"recursive_doubling", "ring", "rabenseifner", "basic_linear"}
	var recs []results.Record
	for _, alg := range algs {
		for _, p := range []int{2, 4} {
			for _, b := range sizes(10, 20) {
				recs = append(recs, rec("collective", results.Params{"op": "allreduce", "alg": alg, "bytes": b}, p, price(alg, b, p)))
			}
		}
	}
	m, err := FitCollFit(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Curves {
		if got := strings.Join(c.terms(), " "); got != "c0 c_r c_b" {
			t.Errorf("%s: terms %q, want c0 c_r c_b", c.Alg, got)
		}
	}
	for _, alg := range algs {
		for _, b := range []float64{3000, 700000} {
			got, err := m.Predict(Instance{Pattern: "collective", Params: results.Params{"op": "allreduce", "alg": alg, "bytes": b}, Ranks: 3})
			if err != nil {
				t.Fatal(err)
			}
			want := price(alg, b, 3)
			if alg == "recursive_doubling" {
				want += synGamma * b
			}
			near(t, sprintf("%s %g B on 3 ranks", alg, b), got, want, 1e-6)
		}
	}
}

// TestCheckCollAlg: forced-algorithm points are priced by their own closed
// form (exactly, on records the closed forms made), and the default's point
// is matched with the forced algorithm and the closed form nearest it.
func TestCheckCollAlg(t *testing.T) {
	m := &CollAlg{Alpha: fixedParam("alpha", "s", synAlpha), Beta: fixedParam("beta", "s/B", synBeta), Gamma: fixedParam("gamma", "s/B", synGamma)}
	const n, p = 1 << 18, 4
	price := func(alg string) float64 {
		rs, err := CollRounds("allreduce", alg, n, p)
		if err != nil {
			t.Fatal(err)
		}
		return CollCost(rs, synAlpha, synBeta, synGamma)
	}
	var recs []results.Record
	for _, alg := range []string{"ring", "rabenseifner", "recursive_doubling", "segmented_ring"} {
		recs = append(recs, rec("collective", results.Params{"op": "allreduce", "alg": alg, "bytes": n}, p, price(alg)*1.1))
	}
	recs = append(recs, rec("collective", results.Params{"op": "allreduce", "alg": "pipeline_unknown", "bytes": n}, p, 1))
	recs = append(recs, rec("collective", results.Params{"op": "allreduce", "alg": "default", "bytes": n}, p, price("rabenseifner")*1.002))
	checks := CheckCollAlg(m, recs)
	if len(checks) != 4 {
		t.Fatalf("%d checks, want the 4 algorithms with closed forms: %+v", len(checks), checks)
	}
	for _, c := range checks {
		near(t, "error of "+c.Alg, c.RelErr, 1/1.1-1, 1e-9)
	}
	picks := DefaultPicks(m, recs)
	if len(picks) != 1 || picks[0].Nearest != "rabenseifner" || picks[0].Modelled != "rabenseifner" {
		t.Errorf("default picks %+v, want rabenseifner measured and modelled", picks)
	}
}

// TestCollExchanges: an exchange round's bytes are priced at beta_x, a
// one-way round's at beta, and beta_x is fitted from the bidirectional
// bandwidth (2 / rate, the median over sizes in the range).
func TestCollExchanges(t *testing.T) {
	a, b, bx, g := synAlpha, synBeta, 1.25*synBeta, synGamma
	const n = 1 << 16
	for _, tt := range []struct {
		op, alg string
		p       int
		want    float64
	}{
		{"allreduce", "ring", 4, 6*a + 6*n/4*bx + 3*n/4*g},
		{"allreduce", "recursive_doubling", 4, 2 * (a + n*bx + n*g)},
		{"allreduce", "recursive_doubling", 3, (a + n*b + n*g) + (a + n*bx + n*g) + (a + n*b)}, // fold, exchange, send back
		{"bcast", "binomial", 4, 2*a + 3*n*b},
		{"bcast", "scatter_allgather", 4, 2*a + 0.75*n*b + 2*a + 0.75*n*bx},
	} {
		rs, err := CollRounds(tt.op, tt.alg, n, tt.p)
		if err != nil {
			t.Fatal(err)
		}
		near(t, sprintf("%s %s p=%d", tt.op, tt.alg, tt.p), CollCostX(rs, a, b, bx, g), tt.want, 1e-12)
	}
	var recs []results.Record
	for i, rate := range []float64{40e6, 45e6, 50e6, 1e6} {
		recs = append(recs, rec("bibw", results.Params{"bytes": float64(int(64<<10) << i)}, 2, rate))
	}
	p, note, err := fitBetaX(recs, Options{MaxBytes: 256 << 10})
	if err != nil || note != "" {
		t.Fatalf("fitBetaX: %v %q", err, note)
	}
	near(t, "beta_x", p.Value, 2/45e6, 1e-15)
	if p.CI95 != [2]float64{2 / 50e6, 2 / 40e6} {
		t.Errorf("beta_x CI95 %v, want the range over sizes", p.CI95)
	}
	if _, note, _ := fitBetaX(nil, Options{}); !strings.Contains(note, "beta_x = beta") {
		t.Errorf("no records: note %q", note)
	}
	if _, _, err := fitBetaX([]results.Record{rec("bibw", results.Params{"bytes": 1024.0}, 2, -1)}, Options{}); err == nil {
		t.Error("a negative rate: no error")
	}
}
