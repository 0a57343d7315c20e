package report

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// tri is a trilinear model T = c0 + c2 l (seconds, bytes) for op.
func tri(op string, c0, c2 float64) *model.Trilinear {
	t := &model.Trilinear{Op: op}
	t.C[7].Value, t.C[5].Value = c0, c2
	return t
}

func TestNewPredictors(t *testing.T) {
	hock := &model.Hockney{}
	for _, tc := range []struct {
		name   string
		models []model.Model
		want   []string // predictor names
		err    error
	}{
		{"read and write pair", []model.Model{tri("read", 1, 0), tri("write", 2, 0)}, []string{"trilinear"}, nil},
		{"two reads stay apart", []model.Model{tri("read", 1, 0), tri("read", 2, 0), tri("write", 3, 0)}, []string{"trilinear", "trilinear-2"}, nil},
		{"any op covers both", []model.Model{tri("", 1, 0), tri("write", 2, 0)}, []string{"trilinear", "trilinear-2"}, nil},
		{"no k-k-access", []model.Model{hock}, nil, ErrNoKKAccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := make([]string, len(tc.models))
			for i := range src {
				src[i] = "m" + string(rune('0'+i))
			}
			prs, err := NewPredictors(tc.models, src, true)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			var names []string
			for _, p := range prs {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("predictors %v, want %v", names, tc.want)
			}
		})
	}
}

// phaseRecord is a communication phase measured at median seconds.
func phaseRecord(store string, sync bool, k, median float64, items []results.WorkItem) results.Record {
	return results.Record{Schema: results.SchemaVersion, Bench: results.BenchApp, Unit: "s", Ranks: 4,
		Params:   results.Params{"app": "matmul", "phase": "mm", "kind": results.PhaseKindComm, "store": store, "n": 64, "k": k, "l": 1024, "sync": sync},
		Summary:  results.Summary{N: 5, Median: median, CI95: [2]float64{median * 0.9, median * 1.1}},
		Workload: items}
}

// TestAnnotateAndTable2: the predictions sum count x T per item (reads by
// the read model, writes by the write model), the error is (T_pred -
// T_meas)/T_meas, and Table 2 averages it over configurations per store and
// column.
func TestAnnotateAndTable2(t *testing.T) {
	prs, err := NewPredictors([]model.Model{tri("read", 1e-3, 0), tri("write", 2e-3, 0)}, []string{"r.json", "w.json"}, true)
	if err != nil {
		t.Fatal(err)
	}
	items := []results.WorkItem{kkItem(5, "read"), kkItem(1, "write")}
	// Predicted: 5 ms + 2 ms = 7 ms.
	recs := []results.Record{
		phaseRecord("direct", true, 2, 7e-3, items),   // error 0
		phaseRecord("direct", true, 4, 3.5e-3, items), // error +100%
		phaseRecord("direct", false, 2, 14e-3, items), // error -50%
		phaseRecord("BF(2)", true, 2, 5.6e-3, items),  // error +25%
		{Bench: results.BenchApp, Params: results.Params{"app": "matmul", "phase": "compute", "kind": results.PhaseKindComp}},
	}
	if notes := AnnotateApps(recs, prs); len(notes) > 0 {
		t.Fatal(notes)
	}
	const tol = 1e-12
	if got := recs[0].Derived["pred_trilinear_s"]; math.Abs(got-7e-3) > tol {
		t.Errorf("prediction %v, want 7e-3", got)
	}
	if recs[4].Derived != nil {
		t.Error("a computation phase got a prediction")
	}
	tabs := BuildTable2(recs)
	if len(tabs) != 1 {
		t.Fatalf("%d tables", len(tabs))
	}
	tab := tabs[0]
	want := map[[2]string]float64{
		{"direct", "matmul mm (sync=true)"}:  0.5,
		{"direct", "matmul mm (sync=false)"}: -0.5,
		{"BF(2)", "matmul mm (sync=true)"}:   0.25,
	}
	for key, w := range want {
		i, j := indexOf(tab.Stores, key[0]), indexOf(tab.Columns, key[1])
		if i < 0 || j < 0 || math.Abs(tab.Mean[i][j]-w) > tol {
			t.Errorf("%v: %v, want %v (stores %v, columns %v)", key, cell(tab, i, j), w, tab.Stores, tab.Columns)
		}
	}
	if i, j := indexOf(tab.Stores, "BF(2)"), indexOf(tab.Columns, "matmul mm (sync=false)"); !math.IsNaN(tab.Mean[i][j]) || tab.N[i][j] != 0 {
		t.Errorf("an unmeasured cell holds %v", tab.Mean[i][j])
	}
	var buf bytes.Buffer
	if err := WriteApps(&buf, recs, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Table 2", "+100.0%", "-50.0%", "25.0% (1)"} {
		if !strings.Contains(buf.String(), strings.TrimPrefix(s, "+")) {
			t.Errorf("report lacks %q:\n%s", s, buf.String())
		}
	}
	img, err := PlotApps(recs, "png")
	if err != nil || len(img) == 0 {
		t.Errorf("plot: %d bytes, %v", len(img), err)
	}
	// A workload item no model describes is a note, not a silent zero.
	bad := []results.Record{phaseRecord("direct", true, 2, 1e-3, []results.WorkItem{{Count: 1, Bench: "pingpong", Params: results.Params{"bytes": 8}}})}
	if notes := AnnotateApps(bad, prs); len(notes) != 1 || bad[0].Derived != nil {
		t.Errorf("notes %v, derived %v", notes, bad[0].Derived)
	}
}

// kkItem is count k-k-accesses (2, 1024, 1, op) on 4 ranks.
func kkItem(count float64, op string) results.WorkItem {
	return results.WorkItem{Count: count, Bench: "kkaccess", Params: results.Params{"k": 2, "l": 1024, "r": 1, "op": op}, Ranks: 4}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func cell(t Table2, i, j int) float64 {
	if i < 0 || j < 0 {
		return math.NaN()
	}
	return t.Mean[i][j]
}

// TestOpFallback: with a read model only, writes are unpredictable unless
// the predictor falls back to reads, which the notes count.
func TestOpFallback(t *testing.T) {
	items := []results.WorkItem{kkItem(5, "read"), kkItem(1, "write")}
	read := []model.Model{tri("read", 1e-3, 0)}
	strict := Predictor{Name: "trilinear", Models: read}
	if _, err := strict.Predict(items); !errors.Is(err, model.ErrUnsupportedPattern) {
		t.Errorf("a write without a write model: %v", err)
	}
	lax := Predictor{Name: "trilinear", Models: read, OpFallback: "read"}
	recs := []results.Record{phaseRecord("direct", true, 2, 6e-3, items)}
	notes := AnnotateApps(recs, []Predictor{lax})
	if got := recs[0].Derived["pred_trilinear_s"]; math.Abs(got-6e-3) > 1e-12 {
		t.Errorf("prediction %v, want 6 reads of 1 ms", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1 workload items") {
		t.Errorf("notes %q", notes)
	}
}

// TestBuildRunApps: a run with application records gets an Applications
// section: its phases predicted by the k-k-access models fitted from the
// run's own (read) records, writes as reads, Table 2 and plots/apps.png,
// the same bytes again from the same records.
func TestBuildRunApps(t *testing.T) {
	recs := runRecords()
	// The synthetic BF(3) trilinear at (4, 1024, 1): the phase takes
	// exactly 10 such accesses (8 reads, 2 writes as reads).
	c := [8]float64{0.519, 102.2, 4.989, 2.341, 382.4, 15.23, -51.73, 1242}
	k, l, r := 4.0, 1024.0, 1.0
	one := (c[0]*k*l*r + c[1]*k*r + c[2]*k*l + c[3]*l*r + c[4]*k + c[5]*l + c[6]*r + c[7]) * 1e-6
	items := []results.WorkItem{
		{Count: 8, Bench: "kkaccess", Params: results.Params{"k": 4, "l": 1024, "r": 1, "op": "read"}, Ranks: 8},
		{Count: 2, Bench: "kkaccess", Params: results.Params{"k": 4, "l": 1024, "r": 1, "op": "write"}, Ranks: 8},
	}
	ph := timeRec(results.BenchApp, results.Params{"app": "bitonic", "phase": "bitonic", "kind": results.PhaseKindComm, "store": "direct", "n": 4096, "k": 4, "l": 1024}, 8, 10*one*1.1)
	ph.Workload = items
	comp := timeRec(results.BenchApp, results.Params{"app": "bitonic", "phase": "compute", "kind": results.PhaseKindComp, "store": "direct", "n": 4096, "k": 4, "l": 1024}, 8, 1e-3)
	recs = append(recs, ph, comp)
	a, err := BuildRun(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	md := string(a.Markdown)
	for _, want := range []string{"## Applications", "Table 2", "bitonic bitonic", "predicted as read", "plots/apps.png"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if i := strings.Index(md, "## Applications"); i < 0 || !strings.Contains(md[i:], "-9.") {
		t.Errorf("the phase measured 10%% above 10 accesses is not predicted about -9%%:\n%s", md[max(i, 0):])
	}
	names := []string{}
	for _, p := range a.Plots {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "apps.png") {
		t.Errorf("plots %v lack apps.png", names)
	}
	b, err := BuildRun(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Markdown, b.Markdown) {
		t.Error("report.md differs between two builds from the same records")
	}
}
