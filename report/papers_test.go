package report

import (
	"bytes"
	"image/png"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// figureRecords holds the records of every paper figure, synthetic and
// with fixed-seed noise: k-k-accesses (paper 000, Table 1's BF(3)
// coefficients), k-accesses, the optimal split, packet splitting,
// permutations with their samples, scheduler communication and CGM
// scheduling times, and matrix squares on two meshes.
func figureRecords() []results.Record {
	rng := rand.New(rand.NewPCG(11, 12))
	noise := func(y float64) float64 { return y * (1 + 0.01*rng.NormFloat64()) }
	rec := func(bench string, p results.Params, ranks int, y float64) results.Record {
		r := timeRec(bench, p, ranks, y)
		return r
	}
	var recs []results.Record
	c := [8]float64{0.519, 102.2, 4.989, 2.341, 382.4, 15.23, -51.73, 1242}
	for _, k := range []int{1, 2, 4, 8} {
		for _, l := range []int{64, 256, 1024, 4096} {
			for _, r := range []float64{0.125, 0.5, 1} {
				fk, fl := float64(k), float64(l)
				y := (c[0]*fk*fl*r + c[1]*fk*r + c[2]*fk*fl + c[3]*fl*r + c[4]*fk + c[5]*fl + c[6]*r + c[7]) * 1e-6
				recs = append(recs, rec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, 16, noise(y)))
			}
		}
	}
	for _, k := range []int{1, 5} {
		for _, h := range []float64{1.0 / 16, 0.25, 0.5, 1} {
			for _, a := range []int{1, 2, 4, 8} {
				for _, es := range []bool{false, true} {
					if es && a == 1 {
						continue
					}
					y := 1e-3 * float64(k) * (1 + h*4) / (1 + math.Log2(float64(a)))
					recs = append(recs, rec("kaccess", results.Params{"k": k, "l": 256, "h": h, "a": a, "es": es, "op": "read"}, 16, noise(y)))
				}
			}
		}
	}
	for _, k := range []int{1, 2, 4, 8, 16, 32} {
		d := 40000.0
		y := 0.5e-9*d + 20e-6*float64(k) + 0.2e-9*d/float64(k)*50
		r := rec("optimize", results.Params{"k": k, "l": int(d) / k, "r": 1, "op": "read", "d_bytes": int(d)}, 16, noise(y))
		r.Derived = map[string]float64{"predicted_s": y}
		recs = append(recs, r)
	}
	for _, n := range []int{16, 256, 4096, 65536} {
		for v, f := range map[int]float64{1: 1, 2: 0.8, 3: 0.6} {
			recs = append(recs, rec("packetsplit", results.Params{"ints": n, "bytes": 4 * n, "version": v, "op": "read", "network": "SE(3)"}, 16, noise(1e-4*float64(n)*f)))
		}
	}
	perm := rec("permutations", results.Params{"bytes": 1024, "count": 500}, 32, 0)
	for i := 0; i < 500; i++ {
		perm.Samples = append(perm.Samples, 0.543e-3*(1+0.02*rng.NormFloat64()))
	}
	perm.Summary = results.Summarize(perm.Samples)
	recs = append(recs, perm)
	for _, s := range []string{"AC", "LP", "GM", "CGM", "Alltoallv"} {
		for _, d := range []int{2, 8, 16} {
			for _, b := range []int{16, 1024, 4096, 16384} {
				r := rec("sched.comm", results.Params{"scheduler": s, "d": d, "bytes": b, "gen": "fig7", "matrix": 0}, 32, noise(1e-5*float64(d)+1e-9*float64(d*b)))
				if s != "Alltoallv" {
					r.Derived = map[string]float64{"sched_s": 1e-5, "sched_over_comm": 1e-5 / r.Median}
				}
				recs = append(recs, r)
			}
		}
	}
	for _, n := range []int{32, 64} {
		for _, d := range []int{2, 4, 8, 16, 32} {
			recs = append(recs, rec("sched.time", results.Params{"scheduler": "CGM", "n": n, "d": d, "gen": "fig7"}, n, noise(1e-8*float64(n)*float64(d)*math.Log(float64(d)))))
		}
	}
	for _, mesh := range []string{"4x4", "8x8", "16x16"} {
		blocks := []int{4096}
		if mesh == "16x16" {
			blocks = []int{64, 256, 1024, 4096}
		}
		for _, b := range blocks {
			for s, f := range map[string]float64{"hand": 1, "fixed-home": 3, "tree-4": 1.5} {
				r := rec("dsm-matsquare", results.Params{"strategy": s, "mesh": mesh, "block_ints": b, "kernel": "mul"}, 16, noise(1e-3*f))
				r.Derived = map[string]float64{"congestion_ratio": f, "time_ratio": f * 0.9}
				recs = append(recs, r)
			}
		}
	}
	for _, p := range []int{2, 4, 8, 16} {
		r := rec("app", results.Params{"app": "multigrid", "phase": "exchange", "kind": "comm"}, p, noise(1e-5*float64(p)))
		r.Workload = []results.WorkItem{{Count: float64(2 * p), Bench: "pingpong", Params: results.Params{"bytes": 4096}, Ranks: 2}}
		recs = append(recs, r)
	}
	return recs
}

// TestFigures: every paper figure is drawn from its records, as a PNG
// with a caption naming the paper figure; records of none of their
// benches give no figure.
func TestFigures(t *testing.T) {
	recs := figureRecords()
	tri, err := model.Fit("trilinear", byBench(recs, "kkaccess"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pp := []results.Record{timeRec("pingpong", results.Params{"bytes": 8}, 2, 1e-6), timeRec("pingpong", results.Params{"bytes": 65536}, 2, 2e-5),
		timeRec("pingpong", results.Params{"bytes": 1024}, 2, 1.3e-6)}
	hock, err := model.Fit("hockney", pp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(recs, []NamedModel{{Label: "trilinear", Model: tri}, {Label: "hockney", Model: hock}})
	if err != nil {
		t.Fatal(err)
	}
	// COMMCOST_FIGURES_DIR=DIR keeps the PNGs, to look at them.
	keep := os.Getenv("COMMCOST_FIGURES_DIR")
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
		if keep != "" {
			if err := os.WriteFile(filepath.Join(keep, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		img, err := png.Decode(bytes.NewReader(f.Data))
		if err != nil {
			t.Errorf("%s: not a PNG: %v", f.Name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 400 {
			t.Errorf("%s: %v is too small", f.Name, b)
		}
		if !strings.HasPrefix(f.Caption, "Paper 00") || !strings.Contains(f.Caption, "Fig") {
			t.Errorf("%s: caption %q does not name the paper figure", f.Name, f.Caption)
		}
	}
	for _, want := range []string{
		"paper000-fig05-kk-l.png", "paper000-fig06-kk-r.png", "paper000-fig07-kk-k.png", "paper000-fig08-kk-r1-rmin.png",
		"paper000-fig09-ka-h.png", "paper000-fig10-ka-amortised-h.png", "paper000-fig11-ka-a.png",
		"paper000-fig13-split.png", "paper000-fig14-split-speedups.png", "paper001-fig07-apps.png",
		"paper002-fig01-hist-1K-p32.png", "paper002-fig08-comm-cost.png", "paper002-fig09-sched-overhead.png", "paper002-fig10-cgm-sched-time.png",
		"paper004-fig03-matsquare-blocks.png", "paper004-fig04-matsquare-meshes.png",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %v", want, names)
		}
	}
	// The histogram's caption gives the share within 5% of the mean:
	// with 2% normal noise, P(|Z| < 2.5) = 98.8%.
	for _, f := range figs {
		if strings.HasPrefix(f.Name, "paper002-fig01") && !strings.Contains(f.Caption, "within 5% of the mean") {
			t.Errorf("histogram caption %q", f.Caption)
		}
	}

	none, err := Figures(byBench(recs, "pingpong"), nil)
	if err != nil || len(none) != 0 {
		t.Errorf("figures from no records: %v %v", none, err)
	}
}

// TestFigureCurves: the curves of Fig. 5 hold the medians at r = 1, one
// per k, ordered k = 1, 2, 4, 8.
func TestFigureCurves(t *testing.T) {
	recs := byBench(figureRecords(), "kkaccess")
	figs := fig000KKAgainstL(recs, nil)
	if len(figs) != 1 {
		t.Fatalf("%d figures", len(figs))
	}
	var labels []string
	for _, s := range figs[0].series {
		labels = append(labels, s.label)
		if len(s.pts) != 4 {
			t.Errorf("%s: %d points, want 4 packet sizes", s.label, len(s.pts))
		}
	}
	if strings.Join(labels, ",") != "k=1,k=2,k=4,k=8" {
		t.Errorf("series %v", labels)
	}
	for _, r := range recs {
		if r.Params["r"] != 1.0 || r.Params["k"] != 1 {
			continue
		}
		l, _ := toFloat(r.Params["l"])
		found := false
		for _, p := range figs[0].series[0].pts {
			if p.X == l && p.Y == r.Median {
				found = true
			}
		}
		if !found {
			t.Errorf("k=1 l=%v: median %g not plotted", l, r.Median)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	got := []string{"k=10", "k=2", "k=1", "a", "l=64K", "l=1K", "l=256", "h=0.25 k=1", "h=0.0625 k=5"}
	slices.SortFunc(got, func(a, b string) int {
		if naturalLess(a, b) {
			return -1
		}
		if naturalLess(b, a) {
			return 1
		}
		return 0
	})
	if strings.Join(got, " ") != "a h=0.0625 k=5 h=0.25 k=1 k=1 k=2 k=10 l=256 l=1K l=64K" {
		t.Errorf("order %v", got)
	}
}

// TestFig001Annotated: application records that commcost app annotated
// are drawn as their runs judged them, one series per variant: the
// statistic judged on (measured_s, named by measured_STAT_s) against every
// model of the run's own calibration (pred_NAME_s), not this directory's
// fits; records without annotations keep their medians.
func TestFig001Annotated(t *testing.T) {
	var recs []results.Record
	for _, p := range []int{2, 3, 4} {
		for _, v := range []string{"async", "sync"} {
			r := timeRec("app", results.Params{"app": "multigrid", "phase": "exchange", "kind": "comm", "variant": v}, p, 0.060)
			r.Workload = []results.WorkItem{{Count: 10, Bench: "chainshift", Params: results.Params{"bytes": 129032}, Ranks: p, View: "contention"}}
			r.Derived = map[string]float64{"measured_s": 0.048 + 0.001*float64(p), "measured_envelope_s": 0.048 + 0.001*float64(p),
				"pred_hyperbolic_s": 0.050, "pred_err_hyperbolic": 0.05}
			recs = append(recs, r)
		}
	}
	figs := fig001MeasuredPredicted(recs, nil)
	if len(figs) == 0 {
		t.Fatal("no figure")
	}
	got := map[string]map[float64]float64{}
	for _, s := range figs[0].series {
		got[s.label] = map[float64]float64{}
		for _, pt := range s.pts {
			got[s.label][pt.X] = pt.Y
		}
	}
	for _, v := range []string{"async", "sync"} {
		meas, pred := got["multigrid exchange "+v+" measured (envelope)"], got["multigrid exchange "+v+" hyperbolic"]
		for _, p := range []float64{2, 3, 4} {
			if want := 0.048 + 0.001*p; math.Abs(meas[p]-want) > 1e-12 {
				t.Errorf("%s, p = %g: measured %g, want the envelope %g (series %v)", v, p, meas[p], want, slices.Sorted(maps.Keys(got)))
			}
			if pred[p] != 0.050 {
				t.Errorf("%s, p = %g: hyperbolic %g, want the run's own 0.050", v, p, pred[p])
			}
		}
	}
	if len(got) != 4 {
		t.Errorf("series %v, want measured and hyperbolic per variant (no pred_err_ series)", slices.Sorted(maps.Keys(got)))
	}
}
