package report

import (
	"bytes"
	"errors"
	"math"
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
