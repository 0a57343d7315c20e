package model

import (
	"math"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// trueLogGP is a LogGP machine with per-byte overheads (LogGOPS-like).
func trueLogGP() *LogGP {
	p := func(name string, v float64) Param { return Param{Name: name, Value: v} }
	return &LogGP{
		L: p("L", 1.2e-6), Os: p("o_s", 0.4e-6), Or: p("o_r", 0.6e-6),
		G: p("g", 0.5e-6), BG: p("G", 0.1e-9), OsB: p("O_s", 0.02e-9), OrB: p("O_r", 0.03e-9),
	}
}

// prttRecords produces netgauge's measurement set from m: PRTT(1,0,s),
// PRTT(n,0,s), PRTT(n,d,s) with d = PRTT(1,0,s), and the server's time.
func prttRecords(m *LogGP, n float64, server bool) []results.Record {
	var recs []results.Record
	for _, s := range sizes(0, 16) {
		p1 := m.PRTT(1, 0, s)
		recs = append(recs,
			rec("prtt", results.Params{"bytes": s, "n": 1.0, "delay_s": 0.0}, 2, p1),
			rec("prtt", results.Params{"bytes": s, "n": n, "delay_s": 0.0}, 2, m.PRTT(n, 0, s)),
			rec("prtt", results.Params{"bytes": s, "n": n, "delay_s": p1}, 2, m.PRTT(n, p1, s)))
		if server {
			recs = append(recs, rec("prtt", results.Params{"bytes": s, "n": n, "delay_s": p1, "side": "server"}, 2,
				(n-1)*(p1+m.RecvOverhead(s))))
		}
	}
	return recs
}

func TestLogGPRecovery(t *testing.T) {
	truth := trueLogGP()
	got, err := FitLogGP(prttRecords(truth, 10, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want Param
	}{
		{"L", got.L, truth.L}, {"o_s", got.Os, truth.Os}, {"o_r", got.Or, truth.Or},
		{"g", got.G, truth.G}, {"G", got.BG, truth.BG}, {"O_s", got.OsB, truth.OsB}, {"O_r", got.OrB, truth.OrB},
	} {
		near(t, tc.name, tc.got.Value, tc.want.Value, 1e-8)
	}
	if len(got.Fit.Notes) != 0 {
		t.Errorf("notes on exact data: %v", got.Fit.Notes)
	}
	// Predictions reproduce the generating model.
	for _, in := range []Instance{
		{Pattern: "prtt", Params: results.Params{"bytes": 1000.0, "n": 5.0, "delay_s": 3e-6}},
		{Pattern: "pingpong", Params: results.Params{"bytes": 8.0}},
		{Pattern: "roundtrip", Params: results.Params{"bytes": 1e5}},
		{Pattern: "bandwidth", Params: results.Params{"bytes": 1 << 20, "window": 64.0}},
	} {
		a, err := got.Predict(in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := truth.Predict(in)
		near(t, in.Pattern, a, b, 1e-8)
	}
}

func TestLogGPWithoutServer(t *testing.T) {
	truth := trueLogGP()
	truth.Or, truth.OrB = truth.Os, truth.OsB // LogGP's single o
	got, err := FitLogGP(prttRecords(truth, 8, false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "o_r", got.Or.Value, truth.Os.Value, 1e-8)
	near(t, "L", got.L.Value, truth.L.Value, 1e-8)
	if !strings.Contains(strings.Join(got.Fit.Notes, "\n"), "o_r set to o_s") {
		t.Errorf("notes %v", got.Fit.Notes)
	}
}

func TestLogGPMissingSeries(t *testing.T) {
	var only1 []results.Record
	for _, r := range prttRecords(trueLogGP(), 8, false) {
		if r.Params["n"].(float64) == 1 {
			only1 = append(only1, r)
		}
	}
	_, err := FitLogGP(only1, Options{})
	if err == nil || !strings.Contains(err.Error(), "PRTT(n,0,s)") {
		t.Errorf("err = %v", err)
	}
}

func TestLogPAndPostal(t *testing.T) {
	truth := trueLogGP()
	g, err := FitLogGP(prttRecords(truth, 10, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lp := LogPFromLogGP(g, 1024)
	// A one-packet message: LogP and LogGP agree on the one-way time
	// up to the averaging of o_s and o_r (equal sums).
	near(t, "LogP one packet", lp.OneWay(1024), g.OneWay(1024), 1e-9)
	// paper 003: o + (k-1) max{g, o} + L + o for k packets.
	k := 5.0
	want := 2*lp.O.Value + (k-1)*math.Max(lp.G.Value, lp.O.Value) + lp.L.Value
	near(t, "LogP 5 packets", lp.OneWay(5*1024), want, 1e-12)

	ps := PostalFromLogP(lp)
	near(t, "postal one-way", ps.Lambda.Value*ps.Unit.Value, lp.OneWay(1024), 1e-9)
}

func TestPostalBroadcast(t *testing.T) {
	// λ = 1: the telephone model, ceil(log2 p) rounds.
	for _, tc := range []struct {
		lambda float64
		p      int
		want   float64
	}{
		{1, 1, 0}, {1, 2, 1}, {1, 8, 3}, {1, 9, 4}, {1, 1024, 10},
		// λ = 2: N(t) = N(t-1) + N(t-2) (Fibonacci): 1,1,2,3,5,8,13 at t=0..6;
		// first t with N(t) >= p.
		{2, 2, 2}, {2, 3, 3}, {2, 5, 4}, {2, 8, 5}, {2, 13, 6}, {2, 14, 7},
	} {
		near(t, sprintf("B(%g, %d)", tc.lambda, tc.p), PostalBroadcastUnits(tc.lambda, tc.p), tc.want, 1e-12)
	}
}

// TestLogGPWeighting: Options.Weighting reaches the g, G fit (it used to be
// fixed to relative whatever the caller asked). One PRTT(n,0,s) is 30% too
// slow but carries a CI95 a hundred times wider than the others: weighted by
// the CIs it hardly moves g, weighted relatively or not at all it drags g
// off. Trimming is off so that only the weights decide.
func TestLogGPWeighting(t *testing.T) {
	truth := trueLogGP()
	withCI := func(recs []results.Record, bad float64) []results.Record {
		out := make([]results.Record, len(recs))
		for i, r := range recs {
			y, c := r.Median, 0.005
			if r.Params["n"].(float64) > 1 && r.Params["delay_s"].(float64) == 0 && r.Params["bytes"].(float64) == bad {
				y, c = 1.3*y, 0.5
			}
			r.Summary = results.Summary{N: 30, Min: y, Median: y, Mean: y, Max: y, P90: y, P99: y, CI95: [2]float64{y * (1 - c), y * (1 + c)}}
			out[i] = r
		}
		return out
	}
	recs := withCI(prttRecords(truth, 10, true), 1024)
	noCI := prttRecords(truth, 10, true) // rec gives every record a zero-width CI95
	for _, tc := range []struct {
		name      string
		recs      []results.Record
		w         Weighting
		want      string  // Quality.Weighting
		gTol      float64 // |g - true g| / true g at most ...
		gMinErr   float64 // ... and at least (the corrupted point must matter)
		wantNote  string
		rseUnitIs string
	}{
		{"ci", recs, WeightCI, "ci", 0.002, 0, "", "standard errors"},
		{"relative", recs, WeightRelative, "relative", 1, 0.005, "", "relative"},
		{"none", recs, WeightNone, "none", 1, 0.005, "", "s"},
		{"ci without intervals", noCI, WeightCI, "relative", 1e-8, 0, "fell back to relative", "relative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FitLogGP(tc.recs, Options{Weighting: tc.w, TrimSigma: -1})
			if err != nil {
				t.Fatal(err)
			}
			if got.Fit.Weighting != tc.want || got.Fit.RSEUnit != tc.rseUnitIs {
				t.Errorf("weighting %q, RSE unit %q; want %q, %q", got.Fit.Weighting, got.Fit.RSEUnit, tc.want, tc.rseUnitIs)
			}
			rel := math.Abs(got.G.Value-truth.G.Value) / truth.G.Value
			if rel > tc.gTol || rel < tc.gMinErr {
				t.Errorf("g = %.6g, relative error %.3g; want between %g and %g", got.G.Value, rel, tc.gMinErr, tc.gTol)
			}
			if notes := strings.Join(got.Fit.Notes, "\n"); !strings.Contains(notes, tc.wantNote) {
				t.Errorf("notes %q lack %q", notes, tc.wantNote)
			}
		})
	}
}
