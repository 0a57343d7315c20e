package optsplit

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestAround checks the k the sweep measures.
func TestAround(t *testing.T) {
	tests := []struct {
		name     string
		asked    []int
		k0       float64
		kInt, d  int
		want     []int
		distinct int // ranks for Distinct, 0: not applied
		dropped  []int
	}{
		{"around k0", nil, 38.08, 38, 40000, []int{1, 5, 10, 19, 38, 76, 152, 305}, 0, nil},
		{"k0 below 1", nil, 0.42, 1, 40000, []int{1, 2, 4, 8}, 0, nil},
		{"clipped to D", nil, 3.2, 3, 10, []int{1, 2, 3, 6, 10}, 0, nil},
		{"asked, deduplicated and clipped", []int{8, 1, 8, 64}, 5, 5, 32, []int{1, 8, 32}, 0, nil},
		{"distinct on 4 ranks", nil, 1.9, 2, 100, []int{1, 2}, 4, []int{4, 8, 15}},
		{"clipped to the packet limit", nil, 2e5, 200000, 1 << 30, []int{1, 25000, 50000, 65535}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Around(tt.asked, tt.k0, tt.kInt, tt.d)
			var dropped []int
			if tt.distinct > 0 {
				got, dropped = Distinct(got, tt.distinct)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(dropped, tt.dropped) {
				t.Errorf("k = %v dropped %v, want %v dropped %v", got, dropped, tt.want, tt.dropped)
			}
		})
	}
	for _, c := range []struct{ d, k, l int }{{40000, 3, 13333}, {40000, 38, 1053}, {10, 20, 1}, {100, 8, 13}} {
		if got := PacketBytes(c.d, c.k); got != c.l {
			t.Errorf("PacketBytes(%d, %d) = %d, want %d", c.d, c.k, got, c.l)
		}
	}
}

// TestVerdict checks the summary line on fixed measurements.
func TestVerdict(t *testing.T) {
	pt := func(k int, med, lo, hi float64) Measured {
		return Measured{Point: Point{K: k, L: 40000 / k}, Summary: results.Summary{Median: med, CI95: [2]float64{lo, hi}}}
	}
	pts := []Measured{pt(1, 30, 29, 31), pt(4, 12, 11, 13), pt(8, 10, 9, 11.5), pt(16, 14, 13, 15)}
	tests := []struct {
		kInt int
		want string
	}{
		{8, "predicted optimum k=8 (l=5000 bytes) is the measured best"},
		{4, "predicted optimum k=4 (l=10000 bytes) measures 20.0% above the best measured split k=8 (l=5000 bytes); their 95% CIs overlap"},
		{16, "predicted optimum k=16 (l=2500 bytes) measures 40.0% above the best measured split k=8 (l=5000 bytes); their 95% CIs do not overlap"},
		{32, "predicted optimum k=32 was not measured; the best measured split is k=8 (l=5000 bytes)"},
	}
	for _, tt := range tests {
		if got := Verdict(pts, tt.kInt); got != tt.want {
			t.Errorf("kInt %d:\n got %s\nwant %s", tt.kInt, got, tt.want)
		}
	}
	if got := Verdict(nil, 1); got != "no split measured" {
		t.Errorf("no points: %q", got)
	}
}

// TestOptimize runs the Figure 13 sweep on goroutine ranks (an exercise of
// the plain k-k-access path, not a network measurement) with Table 1's
// model given on rank 0: D = 100 bytes puts k0 = sqrt(a2/a1 D) at 1.9, so
// the sweep is 1, 2, 4, 8, 15, of which 4 ranks with distinct targets keep
// k = 1 and 2; then the plot.
func TestOptimize(t *testing.T) {
	const p, d = 4, 100
	truth := tableModel()
	type out struct {
		res  *OptimizeResult
		recs []results.Record
	}
	outs, errs := perRank(t, p, func(c mpi.Comm) (out, error) {
		var o out
		cfg := OptimizeConfig{DataBytes: d, Distinct: true, Op: patterns.AccessRead, Seed: 1, Validate: true,
			Reps: patterns.Reps{Warmup: -1, MinReps: 3, MaxReps: 3, MaxTime: 1, RelCI: 0.03}}
		if c.Rank() == 0 {
			cfg.Model = truth
		}
		res, err := Optimize(c, cfg, func(rec results.Record) error {
			o.recs = append(o.recs, rec)
			return nil
		})
		o.res = res
		return o, err
	})
	want, err := model.BestSplit(truth, d, MaxPackets)
	if err != nil {
		t.Fatal(err)
	}
	for r, o := range outs {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		if o.res.Split.KInt != want.KInt || !slices.Equal(o.res.Dropped, []int{4, 8, 15}) || len(o.recs) != 2 {
			t.Fatalf("rank %d: whole k %d (want %d), dropped %v, %d records", r, o.res.Split.KInt, want.KInt, o.res.Dropped, len(o.recs))
		}
		for i, rec := range o.recs {
			k := []int{1, 2}[i]
			l := PacketBytes(d, k)
			pred := truth.Time(float64(k), float64(l), 1)
			if rec.Bench != BenchOptimize || rec.Params["k"] != k || rec.Params["l"] != l || rec.Params["d_bytes"] != d ||
				rec.Params["distinct"] != true || rec.Params["r"] != 1.0 || rec.Counters[CounterVolume] != float64(k*l) ||
				!scalar.EqualWithinRel(rec.Derived[DerivedPredicted], pred, 1e-12) || !(rec.Median > 0) {
				t.Errorf("rank %d record %d: %+v", r, i, rec)
			}
			// What Optimize writes passes the records' checks.
			if r == 0 {
				if err := results.CheckBenchParams(rec.Bench, rec.Params); err != nil {
					t.Errorf("record %d refused: %v", i, err)
				}
				if err := checkOptimizeRecord(&rec); err != nil {
					t.Errorf("record %d refused: %v", i, err)
				}
			}
		}
	}
	var rep strings.Builder
	if err := WriteOptimizeReport(&rep, outs[0].res, "Table 1"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"optimal split of D = 100 bytes (25 integers of 4 bytes) at r = 1, op read, 4 ranks",
		"model: trilinear fit of Table 1", "k0 = sqrt(a2/a1 D) = 1.904", "--distinct: k = 4,8,15 not measured", "predicted optimum k=2"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.String())
		}
	}
	png := filepath.Join(t.TempDir(), "fig13.png")
	if err := PlotFigure13(png, outs[0].res); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("%s not written: %v", png, err)
	}
}

// TestOptimizeNegativeModel: a model that predicts a negative time at a
// planned split is refused before any split is measured, on every rank.
func TestOptimizeNegativeModel(t *testing.T) {
	neg := tableModel()
	for j := range neg.C {
		neg.C[j].Value = -neg.C[j].Value
	}
	var recs [2]int
	_, errs := perRank(t, 2, func(c mpi.Comm) (struct{}, error) {
		cfg := OptimizeConfig{DataBytes: 100, Op: patterns.AccessRead, Seed: 1,
			Reps: patterns.Reps{Warmup: -1, MinReps: 3, MaxReps: 3, MaxTime: 1, RelCI: 0.03}}
		if c.Rank() == 0 {
			cfg.Model = neg
		}
		_, err := Optimize(c, cfg, func(results.Record) error { recs[c.Rank()]++; return nil })
		return struct{}{}, err
	})
	for r, err := range errs {
		var me *ModelError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "s, not a time: it does not describe these accesses") || recs[r] != 0 {
			t.Errorf("rank %d: %v after %d records, want a ModelError naming the prediction", r, err, recs[r])
		}
	}
}
