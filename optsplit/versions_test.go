package optsplit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestVersions runs Figure 14's sweep through an emulated SE(2) on
// goroutine ranks (the emulation's path, not a network measurement) with
// Table 1's model given on application rank 0: every application rank cuts
// version 3 as emulate.ModelSplit of that model does, and every record
// carries its speedups over the versions before it and the prediction.
func TestVersions(t *testing.T) {
	top, err := emulate.Parse("SE(2)")
	if err != nil {
		t.Fatal(err)
	}
	truth := tableModel()
	const minPacket = 64
	ints := []int{16, 2048}
	recs := make([][]results.Record, top.Apps())
	pts := make([][]Measured, top.Apps())
	_, errs := perRank(t, top.Ranks(), func(c mpi.Comm) (struct{}, error) {
		cfg := emulate.Config{Topology: top, PacketBytes: 1024, StallTimeout: 20 * time.Second}
		return struct{}{}, emulate.Run(c, cfg, func(s *emulate.Store) error {
			vc := VersionsConfig{Ints: ints, Versions: []emulate.SplitVersion{3, 1, 2}, MinPacket: minPacket,
				Bench: emulate.BenchConfig{Reps: patterns.Reps{Warmup: -1, MinReps: 2, MaxReps: 2, MaxTime: 1, RelCI: 0.03}, Seed: 1}}
			if s.Rank() == 0 {
				vc.Model = truth
			}
			res, err := Versions(s, vc, func(rec results.Record) error {
				recs[s.Rank()] = append(recs[s.Rank()], rec)
				return nil
			})
			if err == nil {
				pts[s.Rank()] = res.Points
			}
			return err
		})
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	split := emulate.ModelSplit(truth, minPacket)
	var rep strings.Builder
	if err := WriteVersionsReport(&rep, "SE(2)", &Result{Model: truth, Points: pts[0]}); err != nil {
		t.Fatal(err)
	}
	for _, n := range ints {
		k, l := split(n * emulate.IntBytes)
		if want := fmt.Sprintf("version 3: %d integers (%d B) as k0=%d packets of l0=%d B", n, n*emulate.IntBytes, k, l); !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.String())
		}
	}
	for a := range top.Apps() {
		if len(recs[a]) != 6 || len(pts[a]) != 6 {
			t.Fatalf("application rank %d: %d records, %d points; want 2 sizes x 3 versions", a, len(recs[a]), len(pts[a]))
		}
		for i, rec := range recs[a] {
			pt := pts[a][i]
			n, v := ints[i/3], i%3+1
			k, l := 1, n*emulate.IntBytes
			switch v {
			case 2:
				k, l = (n*emulate.IntBytes+1023)/1024, 1024
			case 3:
				k, l = split(n * emulate.IntBytes)
			}
			if l > n*emulate.IntBytes {
				k, l = 1, n*emulate.IntBytes
			}
			if rec.Bench != emulate.BenchSplit || rec.Params["ints"] != n || rec.Params["version"] != v || pt.K != k || pt.L != l ||
				rec.Derived["k"] != float64(k) || rec.Derived["l"] != float64(l) {
				t.Errorf("rank %d record %d: params %v derived %v point %+v; want %d integers, version %d, %d x %d", a, i, rec.Params, rec.Derived, pt.Point, n, v, k, l)
			}
			if pred := truth.Time(float64(k), float64(l), 1); !scalar.EqualWithinRel(rec.Derived[DerivedPredicted], pred, 1e-12) {
				t.Errorf("rank %d record %d: predicted %g, want %g", a, i, rec.Derived[DerivedPredicted], pred)
			}
			want := map[int][]string{2: {DerivedSpeedupV2V1}, 3: {DerivedSpeedupV3V2, DerivedSpeedupTotal}}[v]
			for _, key := range want {
				if !(rec.Derived[key] > 0) {
					t.Errorf("rank %d, %d integers, version %d: no %s in %v", a, n, v, key, rec.Derived)
				}
			}
		}
	}
}
