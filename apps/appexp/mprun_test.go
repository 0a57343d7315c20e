package appexp

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// TestPrograms: each message-passing program's registered configuration
// lists its runs, one per variant.
func TestPrograms(t *testing.T) {
	async, sync := apps.Variants{Variant: []apps.Variant{"async"}}, apps.Variants{Variant: []apps.Variant{"sync"}}
	both := apps.Variants{Variant: []apps.Variant{"async", "sync"}}
	for _, tc := range []struct {
		name   string
		cfg    apps.Config
		params []string // each program's params, in order
	}{
		{"multigrid", &apps.MultigridConfig{N: 15, Iterations: 3, Cycles: 2, Variants: both}, []string{
			"cycles=2 iters=3 n=15 plane_bytes=1800 variant=async", "cycles=2 iters=3 n=15 plane_bytes=1800 variant=sync"}},
		{"cannon", &apps.CannonConfig{N: 32, Variants: async}, []string{"n=32 variant=async"}},
		{"cannon", &apps.CannonConfig{N: 32, Variants: both}, []string{"n=32 variant=async", "n=32 variant=sync"}},
		{"checkerboard", &apps.CheckerboardConfig{N: 24, Grid: apps.Grid{Rows: 2, Cols: 3}, Variants: async}, []string{"grid=2x3 n=24 variant=async"}},
		{"checkerboard", &apps.CheckerboardConfig{N: 24, Grid: apps.Grid{Rows: 2, Cols: 3}, Variants: sync}, []string{"grid=2x3 n=24 variant=sync"}},
		{"gauss", &apps.GaussConfig{N: 16, Matrix: "hilbert", Variants: async}, []string{"matrix=hilbert n=16 variant=async"}},
		{"gauss", &apps.GaussConfig{N: 16, Matrix: "dd", Variants: both}, []string{"matrix=dd n=16 variant=async", "matrix=dd n=16 variant=sync"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p, ok := apps.LookupProgram(tc.name); !ok || p.OverStore {
				t.Fatalf("%s is not a registered message-passing program", tc.name)
			}
			progs, err := tc.cfg.Apps()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range progs {
				if p.Name() != tc.name {
					t.Errorf("program %s, want %s", p.Name(), tc.name)
				}
				got = append(got, paramString(p.Params()))
			}
			if !slices.Equal(got, tc.params) {
				t.Errorf("params %q, want %q", got, tc.params)
			}
		})
	}
	if _, err := (&apps.GaussConfig{N: 8, Matrix: "magic"}).Apps(); err == nil {
		t.Error("gauss accepted the matrix magic")
	}
}

// paramString is "k=v ..." in key order, leaving out what depends on the
// rank count.
func paramString(ps results.Params) string {
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range ps {
			if !yield(k) {
				return
			}
		}
	}) {
		if k == "block_bytes" || k == "row_bytes" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, ps[k]))
	}
	return strings.Join(parts, " ")
}

func TestNameModels(t *testing.T) {
	h, tr := hockney(1e-6, 1e-9), tri("read", 1e-6, 0)
	for _, tc := range []struct {
		name   string
		models []model.Model
		paths  []string
		want   []string
	}{
		{"one file: the kind", []model.Model{h}, []string{"/x/h.json"}, []string{"hockney"}},
		{"several: kind and file", []model.Model{h, tr}, []string{"/x/h.json", "y/t.json"}, []string{"hockney (h.json)", "trilinear (t.json)"}},
		{"none", nil, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			for _, nm := range NameModels(tc.models, tc.paths) {
				got = append(got, nm.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("names %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWorkloads(t *testing.T) {
	progs := []apps.App{apps.Cannon{N: 16}, apps.Checkerboard{N: 16}}
	work := Workloads(progs, 4)
	var keys []string
	for k := range work {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	cannon := apps.Cannon{N: 16}.Workload(4)
	if !slices.Contains(keys, "0/align") || !slices.Contains(keys, "0/shift") || len(work["0/shift"]) != len(cannon["shift"]) {
		t.Errorf("keys %q: want Cannon's phases under 0/", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "0/") && !strings.HasPrefix(k, "1/") {
			t.Errorf("key %q is not INDEX/PHASE", k)
		}
	}
}

func TestSlidesParams(t *testing.T) {
	h := apps.NamedModel{Name: "hockney (h.json)", Model: hockney(20e-6, 1e-9)}
	tr := apps.NamedModel{Name: "trilinear", Model: tri("read", 1, 0)}
	for _, tc := range []struct {
		name   string
		models []apps.NamedModel
		ok     bool
		ts, tw float64
		source string
	}{
		{"hockney", []apps.NamedModel{tr, h}, true, 20e-6, 1e-9, "hockney (h.json)"},
		{"no t_s, t_w", []apps.NamedModel{tr}, false, 0, 0, ""},
		{"none", nil, false, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, tw, src, ok := SlidesParams(tc.models)
			if ok != tc.ok || ts != tc.ts || tw != tc.tw || src != tc.source {
				t.Errorf("got %g %g %q %v, want %g %g %q %v", ts, tw, src, ok, tc.ts, tc.tw, tc.source, tc.ok)
			}
		})
	}
}

// TestMPRunCheck: the programs' own checks and gauss's input are refused
// before anything runs, and so is a model set that predicts no phase.
func TestMPRunCheck(t *testing.T) {
	h := []apps.NamedModel{{Name: "hockney", Model: hockney(20e-6, 1e-9)}}
	tr := []apps.NamedModel{{Name: "trilinear", Model: tri("read", 1e-6, 0)}}
	for _, tc := range []struct {
		name     string
		progs    []apps.App
		p        int
		models   []apps.NamedModel
		err      string // of Check
		modelErr string // of CheckModels
	}{
		{"cannon on a square", []apps.App{apps.Cannon{N: 16}}, 4, h, "", ""},
		{"cannon on 3 ranks", []apps.App{apps.Cannon{N: 15}}, 3, h, "square", ""},
		{"gauss singular", []apps.App{&apps.Gauss{N: 8, Matrix: "singular"}}, 4, h, "singular", ""},
		{"a model of k-k-accesses only", []apps.App{apps.Cannon{N: 16}}, 4, tr, "", "no model predicts any communication phase"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := MPRun{Programs: tc.progs, Seed: 1}
			for _, c := range []struct {
				err  error
				want string
			}{{r.Check(tc.p), tc.err}, {r.CheckModels(tc.p, tc.models), tc.modelErr}} {
				if (c.err == nil) != (c.want == "") || c.err != nil && !strings.Contains(c.err.Error(), c.want) {
					t.Errorf("error %v, want %q", c.err, c.want)
				}
			}
		})
	}
}

// TestMPRunModels: with models, each program is measured, its records
// annotated and emitted on rank 0 only, and its result handed to each on
// rank 0, which prints the ranking and paper 003's closed forms.
func TestMPRunModels(t *testing.T) {
	r := MPRun{
		Programs: []apps.App{apps.Cannon{N: 16}, apps.Checkerboard{N: 16}},
		Models:   []apps.NamedModel{{Name: "hockney", Model: hockney(20e-6, 1e-9)}},
		Reps:     quick, Seed: 1,
	}
	var rec recorder
	var got []MPResult
	var out bytes.Buffer
	err := local.Run(4, func(c mpi.Comm) error {
		return r.Run(c, results.Meta{Backend: "local"}, rec.emit(c.Rank()), func(n string) { t.Errorf("note %q", n) }, func(res MPResult) error {
			if c.Rank() != 0 {
				t.Errorf("each on rank %d", c.Rank())
			}
			got = append(got, res)
			return res.Write(&out, false)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Program.Name() != "cannon" || got[1].Program.Name() != "checkerboard" {
		t.Fatalf("results %v", got)
	}
	if len(rec.recs) != 1 || len(rec.recs[0]) != len(got[0].Records)+len(got[1].Records) {
		t.Errorf("emitted per rank: %d ranks, want rank 0 only with every record", len(rec.recs))
	}
	for _, res := range got {
		if res.Ranks != 4 || res.Table.App != res.Program.Name() || len(res.Table.Models) != 1 {
			t.Errorf("%s: ranks %d, table %+v", res.Program.Name(), res.Ranks, res.Table)
		}
		for _, x := range res.Records {
			if x.Params["kind"] == apps.KindComm && len(x.Workload) > 0 && !(x.Derived["pred_hockney_s"] > 0) {
				t.Errorf("%s %v: no prediction: %v", res.Program.Name(), x.Params["phase"], x.Derived)
			}
		}
	}
	text := out.String()
	for _, want := range []string{"cannon n=16 variant=async on 4 ranks", "checkerboard", "* best per column", "paper 003's closed forms", "t_s, t_w from hockney"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestMPRunNoSlidesParams: a model without t_s and t_w gives no closed
// forms, and the output says what would.
func TestMPRunNoSlidesParams(t *testing.T) {
	res := MPResult{Program: apps.Cannon{N: 16}, Ranks: 4, Ranking: &apps.Ranking{}}
	var out bytes.Buffer
	if err := res.Write(&out, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "closed forms need t_s and t_w") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestMPRunCalibrated: without models, the patterns the program names are
// measured, every kind asked for fitted (the notes say which could not
// be), and the program ranked by the fitted models.
func TestMPRunCalibrated(t *testing.T) {
	calReps := quick
	calReps.MaxTime = 0.05
	r := MPRun{
		Programs:        []apps.App{apps.Cannon{N: 16}},
		CalibrationReps: calReps, Kinds: []string{"hockney", "logp"},
		Reps: quick, Seed: 1,
	}
	var rec recorder
	var got []MPResult
	var notes []string
	err := local.Run(4, func(c mpi.Comm) error {
		return r.Run(c, results.Meta{Backend: "local"}, rec.emit(c.Rank()), func(n string) { notes = append(notes, n) }, func(res MPResult) error {
			got = append(got, res)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d results", len(got))
	}
	cal := 0
	for _, x := range rec.recs[0] {
		if x.Bench != apps.Bench {
			cal++
		}
	}
	var names []string
	for _, m := range got[0].Models {
		names = append(names, m.Name)
	}
	if cal == 0 || !slices.Contains(names, "hockney") || len(names)+len(notes) != 2 {
		t.Errorf("%d calibration records, models %q, notes %q: want calibration records, hockney, and logp fitted or noted", cal, names, notes)
	}
}

func TestSuiteStorePrograms(t *testing.T) {
	for _, tc := range []struct {
		p       int
		run     int
		skipped []string // names of the programs left out
		n       int      // matrix order
	}{
		{4, 5, nil, 128},
		{3, 3, []string{apps.ConnComp{}.Name(), apps.BitonicSort{}.Name()}, 129},
		{8, 5, nil, 128},
		{6, 3, []string{apps.ConnComp{}.Name(), apps.BitonicSort{}.Name()}, 132},
	} {
		run, skipped := SuiteStorePrograms(tc.p)
		if len(run) != tc.run || len(skipped) != len(tc.skipped) {
			t.Errorf("p = %d: %d run, skipped %q; want %d run, %q skipped", tc.p, len(run), skipped, tc.run, tc.skipped)
			continue
		}
		for i, s := range skipped {
			if !strings.HasPrefix(s, tc.skipped[i]+" (") {
				t.Errorf("p = %d: skipped %q, want %s (why)", tc.p, s, tc.skipped[i])
			}
		}
		if mm, ok := run[0].(apps.MatMul); !ok || mm.N != tc.n || mm.K != SuiteAppK || mm.L != SuiteAppL {
			t.Errorf("p = %d: first program %+v, want matmul n=%d", tc.p, run[0], tc.n)
		}
	}
}

func TestSuiteMPPrograms(t *testing.T) {
	for _, tc := range []struct {
		p     int
		names []string
		n     int
	}{
		{4, []string{"cannon", "checkerboard", "gauss", "multigrid", "multigrid"}, 128},
		{6, []string{"checkerboard", "gauss", "multigrid", "multigrid"}, 132},
		{2, []string{"checkerboard", "gauss", "multigrid", "multigrid"}, 128},
	} {
		var names []string
		n := 0
		for _, prog := range SuiteMPPrograms(tc.p) {
			names = append(names, prog.Name())
			if err := prog.Check(tc.p); err != nil {
				t.Errorf("p = %d: %s does not run: %v", tc.p, prog.Name(), err)
			}
			if g, ok := prog.(*apps.Gauss); ok {
				n = g.N
			}
		}
		if !slices.Equal(names, tc.names) || n != tc.n {
			t.Errorf("p = %d: %q of order %d, want %q of order %d", tc.p, names, n, tc.names, tc.n)
		}
	}
}

// TestSuiteStoreSweep: every program that runs on the ranks is measured
// on the direct store; every phase record reaches emit on every rank, and
// done follows each program.
func TestSuiteStoreSweep(t *testing.T) {
	var rec recorder
	var mu sync.Mutex
	done := map[int]int{}
	err := local.Run(4, func(c mpi.Comm) error {
		return SuiteStoreSweep(c, quick, 1, results.Meta{Backend: "local"}, rec.emit(c.Rank()), func() {
			mu.Lock()
			done[c.Rank()]++
			mu.Unlock()
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := SuiteStorePrograms(4)
	apps0 := map[string]bool{}
	for _, x := range rec.recs[0] {
		if x.Params["store"] != "direct" || x.Meta.Seed != 1 {
			t.Errorf("record %v seed %d", x.Params, x.Meta.Seed)
		}
		apps0[x.Params["app"].(string)] = true
	}
	if len(apps0) != 4 || done[0] != len(run) || done[3] != len(run) || len(rec.recs[3]) != len(rec.recs[0]) {
		t.Errorf("applications %v, done %v, records %d/%d", apps0, done, len(rec.recs[0]), len(rec.recs[3]))
	}
}

// TestSuiteMP: the suite's message-passing part writes a calibration and
// every program's phases on rank 0, and the phases carry predictions, so
// report.md can rank the models from the records alone.
func TestSuiteMP(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates every model kind")
	}
	var rec recorder
	reps := quick
	reps.MaxTime = 0.05
	err := local.Run(4, func(c mpi.Comm) error {
		return SuiteMP(c, reps, 1, true, results.Meta{Backend: "local"}, rec.emit(c.Rank()))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.recs) != 1 {
		t.Errorf("emit on %d ranks, want rank 0 only", len(rec.recs))
	}
	cal, predicted := 0, map[string]bool{}
	for _, x := range rec.recs[0] {
		if x.Bench != apps.Bench {
			cal++
			continue
		}
		for k := range x.Derived {
			if strings.HasPrefix(k, "pred_") {
				predicted[x.Params["app"].(string)] = true
			}
		}
	}
	if cal == 0 || len(predicted) != 4 {
		t.Errorf("%d calibration records; programs with predictions %v, want all four", cal, predicted)
	}
}

// TestMPRunDemand: the demand of a run that measures its calibration is
// the larger of the programs' own and the calibration's largest point
// (whose message sizes reach twice the programs' largest, rounded up to a
// power of two); with models or an earlier calibration it is the
// programs' alone.
func TestMPRunDemand(t *testing.T) {
	h := []apps.NamedModel{{Name: "hockney", Model: hockney(20e-6, 1e-9)}}
	const mib = 1 << 20
	for _, tc := range []struct {
		name  string
		r     MPRun
		p     int
		what  string  // in the need's What
		bytes float64 // Bytes + InFlight, within 1%
	}{
		// cannon's 26.8 MB blocks are calibrated up to 64 MiB; prtt's four
		// messages in flight make the largest point.
		{"cannon calibrated", MPRun{Programs: []apps.App{apps.Cannon{N: 3662}}}, 4, "the calibration's prtt bytes=67108864", 320 * mib},
		{"cannon with models", MPRun{Programs: []apps.App{apps.Cannon{N: 3662}}, Models: h}, 4, "cannon's blocks", 8 * (5*1831*1831 + 1831*3662 + 3662 + 2*1831*1831)},
		{"cannon with calibration records", MPRun{Programs: []apps.App{apps.Cannon{N: 3662}}, Calibration: []results.Record{{Bench: "pingpong"}}}, 4, "cannon's blocks", 8 * (5*1831*1831 + 1831*3662 + 3662 + 2*1831*1831)},
		// hockney reads the ping-pong only: 192 MiB, below the program's.
		{"cannon kinds without prtt", MPRun{Programs: []apps.App{apps.Cannon{N: 3662}}, Kinds: []string{"hockney"}}, 4, "cannon's blocks", 8 * (5*1831*1831 + 1831*3662 + 3662 + 2*1831*1831)},
		{"cannon validated ping-pong", MPRun{Programs: []apps.App{apps.Cannon{N: 3662}}, Kinds: []string{"hockney"}, Validate: true}, 4, "the calibration's pingpong bytes=67108864", 320 * mib},
		{"cannon small", MPRun{Programs: []apps.App{apps.Cannon{N: 16}}}, 4, "the calibration's prtt bytes=1024", 5 << 10},
		{"cannon on 3 ranks: no workload", MPRun{Programs: []apps.App{apps.Cannon{N: 3662}}}, 3, "cannon's blocks", -1},
		{"checkerboard calibrated", MPRun{Programs: []apps.App{apps.Checkerboard{N: 3418}}}, 4, "the calibration's prtt bytes=67108864", 320 * mib},
		{"gauss: the oracle's", MPRun{Programs: []apps.App{&apps.Gauss{N: 512}}}, 4, "gauss of order 512", 0},
		{"multigrid: the planes'", MPRun{Programs: []apps.App{&apps.Multigrid{N: 2047, Iters: 3}}}, 4, "multigrid's planes", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.r.Demand(tc.p)
			t.Logf("%s: %.4g + %.4g", n.What, n.Bytes, n.InFlight)
			if !strings.Contains(n.What, tc.what) {
				t.Errorf("need %q, want %q", n.What, tc.what)
			}
			if got := n.Bytes + n.InFlight; tc.bytes > 0 && (got < 0.99*tc.bytes || got > 1.01*tc.bytes) {
				t.Errorf("need %.4g bytes, want %.4g", got, tc.bytes)
			}
		})
	}
}
