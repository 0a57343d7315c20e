package model

import (
	"math/rand/v2"
	"testing"

	"github.com/commcost/commcost/results"
)

// protocolRecords simulates a point-to-point curve with protocol switches:
// segment i covers sizes from breaks[i-1] with its own (t_s, t_w).
func protocolRecords(breaks []float64, ts, tw []float64, sigma float64, seed uint64) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 2))
	var recs []results.Record
	for _, m := range sizes(0, 22) {
		seg := 0
		for i, b := range breaks {
			if m >= b {
				seg = i + 1
			}
		}
		y := ts[seg] + tw[seg]*m
		recs = append(recs, rec("pingpong", results.Params{"bytes": m}, 2, noisy(rng, y, sigma)))
	}
	return recs
}

func TestPiecewiseBreakpoints(t *testing.T) {
	// Eager up to 4 KiB, a copy-in/copy-out protocol to 64 KiB, then
	// rendezvous with a higher start-up but a faster copy.
	breaks := []float64{4096, 65536}
	ts := []float64{0.3e-6, 2e-6, 15e-6}
	tw := []float64{0.2e-9, 0.25e-9, 0.07e-9}
	for _, tc := range []struct {
		name  string
		sigma float64
		seeds int
	}{
		{"exact", 0, 1},
		{"1% noise", 0.01, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := 0; seed < tc.seeds; seed++ {
				pw, err := FitPiecewise(protocolRecords(breaks, ts, tw, tc.sigma, uint64(seed)), Options{TrimSigma: -1})
				if err != nil {
					t.Fatal(err)
				}
				if len(pw.Breakpoints) != 2 || pw.Breakpoints[0] != 4096 || pw.Breakpoints[1] != 65536 {
					t.Fatalf("seed %d: breakpoints %v, want [4096 65536] (candidates %+v)", seed, pw.Breakpoints, pw.Candidates)
				}
				for i, s := range pw.Segments {
					tol := 1e-9
					if tc.sigma > 0 {
						// Noisy: the truth inside the 95% CI most of the
						// time; check a loose 5-sigma band every time.
						if d := s.Tw.Value - tw[i]; d*d > 25*s.Tw.SE*s.Tw.SE {
							t.Errorf("seed %d segment %d: t_w %g +- %g, true %g", seed, i+1, s.Tw.Value, s.Tw.SE, tw[i])
						}
						continue
					}
					near(t, "t_s", s.Ts.Value, ts[i], tol)
					near(t, "t_w", s.Tw.Value, tw[i], tol)
				}
			}
		})
	}
}

// TestPiecewiseFalseSplits bounds how often noise alone is split and how
// often a real but mild switch is missed (the calibration of
// segmentPenalty).
func TestPiecewiseFalseSplits(t *testing.T) {
	const runs = 200
	var falseSplits, misses int
	for seed := uint64(0); seed < runs; seed++ {
		pw, err := FitPiecewise(hockneyRecords(2e-6, 1e-9, 0.02, seed, "pingpong"), Options{TrimSigma: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(pw.Segments) != 1 {
			falseSplits++
		}
		// A 50% start-up jump at 4 KiB, same slope.
		pw, err = FitPiecewise(protocolRecords([]float64{4096}, []float64{2e-6, 3e-6}, []float64{1e-9, 1e-9}, 0.02, seed), Options{TrimSigma: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(pw.Breakpoints) != 1 || pw.Breakpoints[0] != 4096 {
			misses++
		}
	}
	t.Logf("2%% noise, %d seeds: straight line split %d times; 50%% jump at 4 KiB missed %d times", runs, falseSplits, misses)
	if falseSplits > runs/50 || misses > runs/50 {
		t.Errorf("false splits %d, misses %d of %d; want at most 2%% each", falseSplits, misses, runs)
	}
}

func TestPiecewisePredict(t *testing.T) {
	pw, err := FitPiecewise(protocolRecords([]float64{4096}, []float64{1e-6, 10e-6}, []float64{1e-9, 0.5e-9}, 0, 1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ m, want float64 }{
		{100, 1e-6 + 1e-9*100},
		{3000, 1e-6 + 1e-9*3000}, // between 2048 and 4096: the lower segment
		{1 << 20, 10e-6 + 0.5e-9*(1<<20)},
	} {
		got, err := pw.Predict(Instance{Pattern: "roundtrip", Params: results.Params{"bytes": tc.m}})
		if err != nil {
			t.Fatal(err)
		}
		near(t, "roundtrip", got, 2*tc.want, 1e-9)
	}
}
