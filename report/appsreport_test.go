package report

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// TestWriteAppsReport: the notes come first, one "note: " line each, then
// exactly WriteApps' tables.
func TestWriteAppsReport(t *testing.T) {
	recs := []results.Record{phaseRecord("direct", false, 2, 1e-3, []results.WorkItem{kkItem(10, "read")})}
	var tables bytes.Buffer
	if err := WriteApps(&tables, recs, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		notes []string
		want  string
	}{
		{"no notes", nil, ""},
		{"two notes", []string{"a: b", "c"}, "note: a: b\nnote: c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := WriteAppsReport(&got, recs, tc.notes, false, nil); err != nil {
				t.Fatal(err)
			}
			if want := tc.want + tables.String(); got.String() != want {
				t.Errorf("got\n%s\nwant\n%s", got.String(), want)
			}
		})
	}
}

// TestRepredict: the records' own predictions (pred_*) are replaced by the
// new predictors', other derived values stay, and a phase the new models
// cannot predict keeps none and is noted.
func TestRepredict(t *testing.T) {
	read := phaseRecord("direct", false, 2, 1e-3, []results.WorkItem{kkItem(10, "read")})
	write := phaseRecord("direct", true, 2, 1e-3, []results.WorkItem{kkItem(10, "write")})
	for _, r := range []*results.Record{&read, &write} {
		r.Derived = map[string]float64{"pred_old_s": 5, "pred_err_old": 4, "measured_s": 1e-3}
	}
	// A communication phase without a workload is noted, not dropped in
	// silence.
	none := phaseRecord("direct", false, 2, 1e-3, nil)
	recs := []results.Record{read, write, none}
	prs, err := NewPredictors([]model.Model{tri("read", 2e-4, 0)}, []string{"r.json"}, true)
	if err != nil {
		t.Fatal(err)
	}
	notes := Repredict(recs, prs)
	// The write is the phase's only item: the note names it once, by its
	// place in the phase's workload, and its parameters as a record does.
	if len(notes) > 0 && (strings.Count(notes[0], "workload item") != 1 || !strings.Contains(notes[0], "workload item 1 (kkaccess {k=2 l=1024 op=write r=1}): no model of trilinear describes it")) {
		t.Errorf("note %q, want the item named once, as workload item 1 (kkaccess {k=2 l=1024 op=write r=1})", notes[0])
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "trilinear") ||
		!strings.Contains(notes[1], "on 4 ranks: no workload (the run states no communication for this phase), so no model predicts it and the tables leave it out") {
		t.Errorf("notes %q, want one on the write phase and one on the phase without a workload", notes)
	}
	for i, r := range recs[:2] {
		if _, ok := r.Derived["pred_old_s"]; ok {
			t.Errorf("record %d keeps the old prediction: %v", i, r.Derived)
		}
		if r.Derived["measured_s"] != 1e-3 {
			t.Errorf("record %d lost measured_s: %v", i, r.Derived)
		}
	}
	// 10 reads of 2e-4 s each against 1e-3 s measured: +100%.
	if got := recs[0].Derived["pred_trilinear_s"]; math.Abs(got-2e-3) > 1e-15 {
		t.Errorf("prediction %g, want 2e-3", got)
	}
	if got := recs[0].Derived["pred_err_trilinear"]; math.Abs(got-1) > 1e-12 {
		t.Errorf("error %g, want 1", got)
	}
	if _, ok := recs[1].Derived["pred_trilinear_s"]; ok {
		t.Errorf("the write phase has a prediction by a read model: %v", recs[1].Derived)
	}
}

// TestWriteAppsPlot: a plot of annotated records is written whole in the
// extension's format; records without predictions and an unknown
// extension are errors and write nothing.
func TestWriteAppsPlot(t *testing.T) {
	dir := t.TempDir()
	annotated := []results.Record{phaseRecord("direct", false, 2, 1e-3, []results.WorkItem{kkItem(10, "read")})}
	prs, err := NewPredictors([]model.Model{tri("read", 2e-4, 0)}, []string{"r.json"}, true)
	if err != nil {
		t.Fatal(err)
	}
	AnnotateApps(annotated, prs)
	bare := []results.Record{phaseRecord("direct", false, 2, 1e-3, []results.WorkItem{kkItem(10, "read")})}
	for _, tc := range []struct {
		name, file string
		recs       []results.Record
		err        error // nil: written
		magic      string
	}{
		{"png", "p.png", annotated, nil, "\x89PNG"},
		{"svg", "p.svg", annotated, nil, "<?xml"},
		{"nothing predicted", "none.png", bare, ErrNothingToPlot, ""},
		{"bad extension", "p.txt", annotated, errors.New("plot: file name must end in"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			err := WriteAppsPlot(path, tc.recs)
			data, rerr := os.ReadFile(path)
			if tc.err == nil {
				if err != nil || rerr != nil || !strings.HasPrefix(string(data), tc.magic) {
					t.Fatalf("err %v, read %v, starts %q", err, rerr, data[:min(len(data), 8)])
				}
				return
			}
			if err == nil || !(errors.Is(err, tc.err) || strings.Contains(err.Error(), tc.err.Error())) {
				t.Errorf("err %v, want %v", err, tc.err)
			}
			if rerr == nil {
				t.Errorf("%s written despite the error", tc.file)
			}
		})
	}
}

// TestPredictedVsMeasured: only points positive on both axes are drawn
// (a NaN prediction is "unsupported"); with none, the look's own error.
func TestPredictedVsMeasured(t *testing.T) {
	empty := errors.New("empty")
	look := predPlot{title: "t", diag: "d", width: 3 * vg.Inch, height: 3 * vg.Inch, dash: vg.Points(3), gap: vg.Points(3), empty: empty}
	for _, tc := range []struct {
		name   string
		series []predSeries
		err    error
	}{
		{"one point", []predSeries{{name: "m", pts: plotter.XYs{{X: 1e-3, Y: 2e-3}}}}, nil},
		{"with its CI", []predSeries{{name: "m", pts: plotter.XYs{{X: 1e-3, Y: 2e-3}}, xerr: []struct{ Low, High float64 }{{1e-4, 2e-4}}}}, nil},
		{"second series only", []predSeries{{name: "a", pts: plotter.XYs{{X: 1e-3, Y: math.NaN()}}}, {name: "b", pts: plotter.XYs{{X: 1e-3, Y: 1e-3}}}}, nil},
		{"NaN, zero and negative only", []predSeries{{name: "m", pts: plotter.XYs{{X: 1e-3, Y: math.NaN()}, {X: 0, Y: 1}, {X: 1, Y: -1}}}}, empty},
		{"no series", nil, empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := predictedVsMeasured(look, tc.series, "png")
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err == nil && !bytes.HasPrefix(img, []byte("\x89PNG")) {
				t.Errorf("not a PNG: %q", img[:min(len(img), 8)])
			}
		})
	}
}

// TestMissingPhases: a run whose records hold fewer phases than it timed
// is named, once, with the phases that are there; complete runs, repeated
// runs of one configuration and records without the count are not.
func TestMissingPhases(t *testing.T) {
	rec := func(app string, n int, phase string, runPhases float64) results.Record {
		r := results.Record{Bench: results.BenchApp, Ranks: 2,
			Params:  results.Params{"app": app, "n": n, "phase": phase, "kind": results.PhaseKindComm},
			Derived: map[string]float64{}}
		if runPhases > 0 {
			r.Derived[results.DerivedRunPhases] = runPhases
		}
		return r
	}
	tests := []struct {
		name string
		recs []results.Record
		want []string // substrings, one per note
	}{
		{"complete", []results.Record{rec("gauss", 64, "a", 2), rec("gauss", 64, "b", 2)}, nil},
		{"one missing", []results.Record{rec("gauss", 64, "a", 3), rec("gauss", 64, "b", 3)},
			[]string{"mpi gauss [n=64] on 2 ranks: records of 2 of the run's 3 phases (a, b); 1 phase is missing"}},
		{"repeated run counts each phase once", []results.Record{rec("gauss", 64, "a", 2), rec("gauss", 64, "a", 2)},
			[]string{"records of 1 of the run's 2 phases (a)"}},
		{"two runs told apart by n", []results.Record{rec("gauss", 64, "a", 1), rec("gauss", 128, "a", 2)},
			[]string{"mpi gauss [n=128] on 2 ranks: records of 1 of the run's 2 phases"}},
		{"records without the count", []results.Record{rec("gauss", 64, "a", 0)}, nil},
		{"records that disagree on the count", []results.Record{rec("gauss", 64, "a", 1), rec("gauss", 64, "b", 2)},
			[]string{"mpi gauss [n=64] on 2 ranks: its records disagree on the run's phase count (1 to 2)"}},
		// The program's phase list names what is missing.
		{"named from the program's phases", []results.Record{rec("listed", 64, "a", 3), rec("listed", 64, "b", 3)},
			[]string{"records of 2 of the run's 3 phases (a, b); c is missing (no record names it), and every total of this run leaves it out"}},
		{"two named", []results.Record{rec("listed", 64, "b", 3)},
			[]string{"records of 1 of the run's 3 phases (b); a, c are missing (no record names them)"}},
		{"more listed than missing", []results.Record{rec("listed4", 64, "a", 3), rec("listed4", 64, "b", 3)},
			[]string{"records of 2 of the run's 3 phases (a, b); 1 of c, d is missing (the records do not say which)"}},
	}
	known := func(app string, _ results.Params) []string {
		switch app {
		case "listed":
			return []string{"a", "b", "c"}
		case "listed4":
			return []string{"a", "b", "c", "d"}
		}
		return nil
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MissingPhases(tt.recs, known)
			if len(got) != len(tt.want) {
				t.Fatalf("notes %q; want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("note %q; want it to contain %q", got[i], w)
				}
			}
		})
	}
}
