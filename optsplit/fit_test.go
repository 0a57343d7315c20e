package optsplit

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// sweepRecords samples tableModel exactly on a 4 x 4 x 4 grid of (k, l, r)
// as k-k-access records with the given op and network (none: "").
func sweepRecords(m *model.Trilinear, op, network string) []results.Record {
	var recs []results.Record
	for _, k := range []float64{1, 2, 4, 8} {
		for _, l := range []float64{64, 1024, 8192, 65536} {
			for _, r := range []float64{0.25, 0.5, 0.75, 1} {
				p := results.Params{"k": k, "l": l, "r": r, "op": op}
				if network != "" {
					p["network"] = network
				}
				rec := timeRec(patterns.BenchKKAccess, p, m.Time(k, l, r))
				rec.Ranks = 8
				recs = append(recs, rec)
			}
		}
	}
	return recs
}

// recovers reports whether tr has want's coefficients, to fit precision.
func recovers(t *testing.T, tr, want *model.Trilinear) {
	t.Helper()
	for i := range trilinearCoefs {
		if !scalar.EqualWithinAbsOrRel(tr.Coef(i), want.Coef(i), 1e-12, 1e-6) {
			t.Errorf("c%d = %g, want %g", i, tr.Coef(i), want.Coef(i))
		}
	}
}

// TestFitOptimum: the model of optimize --fit, recovered from exact
// records of paper 000's Table 1 (BF(3)), with the bad-input and finding
// errors told apart as the CLI needs them.
func TestFitOptimum(t *testing.T) {
	want := tableModel()
	reads := sweepRecords(want, "read", "")
	noisy := append(reads[:0:0], reads...)
	noisy = append(noisy, timeRec("pingpong", results.Params{"bytes": 8}, 1e-6)) // skipped: another bench
	var oneK []results.Record                                                    // k = 1 only: the design cannot separate k from the constant
	for _, r := range reads {
		if r.Params["k"] == 1.0 {
			oneK = append(oneK, r)
		}
	}
	tests := []struct {
		name      string
		recs      []results.Record
		op        patterns.AccessOp
		dataBytes int
		badInput  bool // wraps model.ErrNoRecords or ErrBadRecord
		fails     bool
	}{
		{"Table 1 reads, D = 40000", reads, patterns.AccessRead, 40000, false, false},
		{"other benches skipped", noisy, patterns.AccessRead, 40000, false, false},
		{"one k level: a finding, not bad input", oneK, patterns.AccessRead, 40000, false, true},
		{"no records of the op", reads, patterns.AccessWrite, 40000, true, true},
		{"no records at all", nil, patterns.AccessRead, 40000, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := FitOptimum(tt.recs, tt.op, tt.dataBytes)
			if tt.fails != (err != nil) {
				t.Fatalf("err = %v, want failure %v", err, tt.fails)
			}
			bad := errors.Is(err, model.ErrNoRecords) || errors.Is(err, model.ErrBadRecord)
			if bad != tt.badInput {
				t.Errorf("err = %v: bad input %v, want %v", err, bad, tt.badInput)
			}
			if err == nil {
				recovers(t, tr, want)
			}
		})
	}
}

// TestFitNetwork: version 3's model from the records of one network among
// several; a network without records is ErrNoNetworkRecords.
func TestFitNetwork(t *testing.T) {
	want := tableModel()
	other := tableModel()
	other.C[0].Value *= 3 // another network, other coefficients
	recs := append(sweepRecords(want, "read", "BF(3)"), sweepRecords(other, "read", "SE(3)")...)
	recs = append(recs, sweepRecords(want, "write", "BF(2)")...)
	tests := []struct {
		name, network string
		want          *model.Trilinear
		err           error // errors.Is target; nil: fits
		anyErr        bool
	}{
		{"BF(3) of two networks", "BF(3)", want, nil, false},
		{"SE(3) of two networks", "SE(3)", other, nil, false},
		{"network absent", "HC(4)", nil, ErrNoNetworkRecords, true},
		{"writes only: no reads to fit", "BF(2)", nil, model.ErrNoRecords, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := FitNetwork(recs, tt.network)
			if tt.anyErr != (err != nil) || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err == nil {
				recovers(t, tr, tt.want)
			}
		})
	}
}
