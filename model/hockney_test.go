package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

func hockneyRecords(ts, tw, sigma float64, seed uint64, bench string) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	var recs []results.Record
	for _, m := range sizes(0, 22) {
		y := ts + tw*m
		if bench == "roundtrip" {
			y *= 2
		}
		recs = append(recs, rec(bench, results.Params{"bytes": m}, 2, noisy(rng, y, sigma)))
	}
	return recs
}

func TestHockneyRecovery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ts, tw float64
		bench  string
	}{
		{"shared memory", 0.11e-6, 75e-6 / (1 << 20), "pingpong"},
		{"200 Mbit/s link", 14e-6, 8.0 / 200e6 * 1514 / 1448, "pingpong"},
		{"round trips halved", 50e-6, 1e-9, "roundtrip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := FitHockney(hockneyRecords(tc.ts, tc.tw, 0, 1, tc.bench), Options{})
			if err != nil {
				t.Fatal(err)
			}
			near(t, "t_s", h.Ts.Value, tc.ts, 1e-9)
			near(t, "t_w", h.Tw.Value, tc.tw, 1e-9)
			if h.Fit.RSE > 1e-12 || h.Fit.AdjR2 < 1-1e-12 {
				t.Errorf("exact data: RSE %g, adj R^2 %g", h.Fit.RSE, h.Fit.AdjR2)
			}
			if h.Fit.Trimmed != 0 {
				t.Errorf("exact data trimmed %d points: %v", h.Fit.Trimmed, h.Fit.TrimmedPoints)
			}
			got, err := h.Predict(Instance{Pattern: tc.bench, Params: results.Params{"bytes": 4096.0}})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.ts + tc.tw*4096
			if tc.bench == "roundtrip" {
				want *= 2
			}
			near(t, "predict", got, want, 1e-9)
		})
	}
}

// TestHockneyCoverage checks that the Student-t 95% intervals cover the
// true values in about 95% of seeded noisy data sets.
func TestHockneyCoverage(t *testing.T) {
	const runs = 400
	ts, tw := 2e-6, 1e-9
	var covTs, covTw int
	for seed := uint64(0); seed < runs; seed++ {
		h, err := FitHockney(hockneyRecords(ts, tw, 0.02, seed, "pingpong"), Options{TrimSigma: -1})
		if err != nil {
			t.Fatal(err)
		}
		if inCI(h.Ts, ts) {
			covTs++
		}
		if inCI(h.Tw, tw) {
			covTw++
		}
	}
	for name, c := range map[string]int{"t_s": covTs, "t_w": covTw} {
		frac := float64(c) / runs
		t.Logf("coverage of %s: %.3f over %d seeds", name, frac, runs)
		// Binomial sd at 95% over 400 runs is 1.1%; allow 3 sd.
		if frac < 0.917 || frac > 0.983 {
			t.Errorf("coverage of %s = %.3f, want 0.95 +- 0.033", name, frac)
		}
	}
}

func TestHockneyTrimsOneSided(t *testing.T) {
	recs := hockneyRecords(2e-6, 1e-9, 0.01, 7, "pingpong")
	recs[5].Median *= 3 // interference: much slower
	recs[9].Median /= 3 // faster than the model: information, kept
	h, err := FitHockney(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Fit.Trimmed != 1 || !strings.Contains(h.Fit.TrimmedPoints[0], "bytes=32 ") {
		t.Errorf("trimmed %d %v, want the slow point at 32 bytes only", h.Fit.Trimmed, h.Fit.TrimmedPoints)
	}
}

func TestHockneyPerPointMedian(t *testing.T) {
	recs := hockneyRecords(1e-6, 1e-9, 0, 1, "pingpong")
	// Two more records at 1024 bytes: the median of the three is the truth.
	y := 1e-6 + 1e-9*1024
	recs = append(recs, rec("pingpong", results.Params{"bytes": 1024.0}, 2, y*1.5), rec("pingpong", results.Params{"bytes": 1024.0}, 2, y*0.9))
	h, err := FitHockney(recs, Options{TrimSigma: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The 1024-byte point is the median (0.9 y, y, 1.5 y) = y: exact.
	near(t, "t_w", h.Tw.Value, 1e-9, 1e-9)
	if h.Fit.N != 23 {
		t.Errorf("N = %d, want 23 per-size points", h.Fit.N)
	}
}

func TestHockneyBadInput(t *testing.T) {
	nan := hockneyRecords(1e-6, 1e-9, 0, 1, "pingpong")
	nan[3].Median = math.NaN()
	inf := hockneyRecords(1e-6, 1e-9, 0, 1, "pingpong")
	inf[2].Params["bytes"] = math.Inf(1)
	unit := hockneyRecords(1e-6, 1e-9, 0, 1, "pingpong")
	unit[0].Unit = "us"
	for _, tc := range []struct {
		name string
		recs []results.Record
		is   error
		msg  string
	}{
		{"empty", nil, ErrNoRecords, "needs pingpong or roundtrip"},
		{"wrong pattern", []results.Record{rec("kkaccess", results.Params{"k": 1.0}, 4, 1)}, ErrNoRecords, "kkaccess (1)"},
		{"NaN median", nan, ErrBadRecord, "median NaN"},
		{"Inf size", inf, ErrBadRecord, `"bytes" is +Inf`},
		{"wrong unit", unit, ErrBadRecord, `unit "us"`},
		{"one size", []results.Record{rec("pingpong", results.Params{"bytes": 8.0}, 2, 1e-6), rec("pingpong", results.Params{"bytes": 8.0}, 2, 1e-6)},
			ErrIllConditioned, "bytes = 8"},
		{"missing bytes", []results.Record{rec("pingpong", results.Params{"size": 8.0}, 2, 1e-6)}, ErrBadRecord, `no parameter "bytes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitHockney(tc.recs, Options{})
			if err == nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tc.is, tc.msg)
			}
		})
	}
}

func TestHockneyUnsupportedPattern(t *testing.T) {
	h, err := FitHockney(hockneyRecords(1e-6, 1e-9, 0, 1, "pingpong"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Predict(Instance{Pattern: "kkaccess", Params: results.Params{"bytes": 1.0}}); !errors.Is(err, ErrUnsupportedPattern) {
		t.Errorf("err = %v, want ErrUnsupportedPattern", err)
	}
}

func TestSizeWindow(t *testing.T) {
	// Small messages ride a burst (ENVIRONMENT.md): fit the slope over
	// large messages only.
	var recs []results.Record
	for _, m := range sizes(0, 22) {
		y := 20e-6 + 4e-8*m
		if m < 65536 {
			y = 20e-6 + 1e-9*m
		}
		recs = append(recs, rec("pingpong", results.Params{"bytes": m}, 2, y))
	}
	h, err := FitHockney(recs, Options{MinBytes: 65536})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t_w", h.Tw.Value, 4e-8, 1e-9)
	if h.MinBytes != 65536 {
		t.Errorf("MinBytes = %g", h.MinBytes)
	}
}

func TestPredictSum(t *testing.T) {
	h, err := FitHockney(hockneyRecords(1e-6, 1e-9, 0, 1, "pingpong"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ins := []Instance{
		{Pattern: "pingpong", Params: results.Params{"bytes": 1000}},
		{Pattern: "roundtrip", Params: results.Params{"bytes": 1000}},
	}
	got, err := PredictSum(h, ins)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "sum", got, 3*(1e-6+1e-9*1000), 1e-9)
	if _, err := PredictSum(h, append(ins, Instance{Pattern: "kkaccess"})); err == nil || !strings.Contains(err.Error(), "instance 3 (kkaccess") {
		t.Errorf("err = %v", err)
	}
}

func TestTCPWireSecPerByte(t *testing.T) {
	// ENVIRONMENT.md: 200 Mbit/s, 1500-byte MTU: 8/R x 1514/1448.
	near(t, "t_w", TCPWireSecPerByte(200e6, 1500), 8.0/200e6*1514/1448, 1e-15)
}
