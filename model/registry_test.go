package model

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestRegistry checks what every registered kind promises: its models
// report its name, a fitted kind names its benches and a derived one none,
// and its options are known groups.
func TestRegistry(t *testing.T) {
	known := []Option{OptWeighting, OptTrim, OptSizeRange, OptOp, OptNetwork, OptImpl, OptSegments, OptPacketBytes}
	for _, name := range []string{"bsp", "bspstar", "c3", "cgm", "hockney", "hyperbolic", "loggp", "logp", "piecewise", "postal", "qsm", "trilinear", "trilinear-piecewise", "twolevel"} {
		if !slices.Contains(Kinds(), name) {
			t.Errorf("Kinds() = %v lacks %s", Kinds(), name)
		}
	}
	if _, ok := Lookup("aggregate-table"); !ok || slices.Contains(Kinds(), "aggregate-table") {
		t.Errorf("the derived aggregate-table: registered %v, listed as fittable %v", ok, slices.Contains(Kinds(), "aggregate-table"))
	}
	if !slices.IsSorted(Kinds()) {
		t.Errorf("Kinds() = %v is not sorted", Kinds())
	}
	for _, k := range All() {
		t.Run(k.Name, func(t *testing.T) {
			m := k.New()
			if m.Kind() != k.Name {
				t.Errorf("New().Kind() = %q", m.Kind())
			}
			if k.Summary == "" {
				t.Error("no summary")
			}
			if (k.Fit == nil) != (len(k.Benches) == 0) {
				t.Errorf("fitter %v but benches %v", k.Fit != nil, k.Benches)
			}
			for _, o := range k.Options {
				if !slices.Contains(known, o) {
					t.Errorf("unknown option group %q", o)
				}
			}
		})
	}
}

func TestRegisterMisuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    Kind
		want string
	}{
		{"empty name", Kind{New: func() Model { return &Hockney{} }}, "empty name"},
		{"no constructor", Kind{Name: "x"}, "without New"},
		{"no benches", Kind{Name: "x", New: func() Model { return &Hockney{} }, Fit: func([]results.Record, Options) (Model, error) { return nil, nil }}, "without the benches"},
		{"duplicate", Kind{Name: "hockney", New: func() Model { return &Hockney{} }}, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tc.want)
				}
			}()
			Register(tc.k)
		})
	}
}

// TestFitRefusesUnreadOptions: an option the kind's fitter does not read is
// an error naming the kinds that do, not silently ignored.
func TestFitRefusesUnreadOptions(t *testing.T) {
	pp := make([]results.Record, 0, 8)
	for _, s := range sizes(0, 7) {
		pp = append(pp, rec("pingpong", results.Params{"bytes": s}, 2, 1e-6+1e-9*s))
	}
	for _, tc := range []struct {
		name string
		kind string
		opt  Options
		want string // "" = accepted
	}{
		{"op on hockney", "hockney", Options{Op: "read"}, "models that do: trilinear, trilinear-piecewise"},
		{"impl on hockney", "hockney", Options{Impl: "mpi"}, "models that do: bsp, bspstar, c3, cgm, qsm, twolevel"},
		{"segments on hockney", "hockney", Options{MaxSegments: 2}, "models that do: piecewise, trilinear-piecewise"},
		{"packet bytes on hockney", "hockney", Options{PacketBytes: 8}, "logp, postal"},
		{"segments on piecewise", "piecewise", Options{MaxSegments: 2}, ""},
		{"weighting none on hockney", "hockney", Options{Weighting: WeightNone}, ""},
		{"size range on hockney", "hockney", Options{MinBytes: 2}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(tc.kind, pp, tc.opt)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrOption naming %q", err, tc.want)
			}
		})
	}
}

// TestCrossValidateFittedBenches: BSP fitted from k-k-accesses (it reads
// ping-pong records only when no multi-rank pattern is present) is not
// validated on ping-pong points it never saw.
func TestCrossValidateFittedBenches(t *testing.T) {
	var recs []results.Record
	for _, s := range sizes(0, 10) {
		recs = append(recs, rec("pingpong", results.Params{"bytes": s}, 2, 1e-6+1e-9*s))
	}
	for _, k := range []float64{1, 2, 4} {
		for _, l := range sizes(6, 10) {
			recs = append(recs, rec("kkaccess", results.Params{"k": k, "l": l, "r": 1.0, "op": "read"}, 4, 50e-6+2e-9*k*l))
		}
	}
	v, err := CrossValidate("bsp", recs, Options{}, Holdout{Every: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range v.Points {
		if !strings.HasPrefix(p.Point, "kkaccess ") {
			t.Errorf("held out %s", p.Point)
		}
	}
	if v.MaxRelErr > 1e-9 {
		t.Errorf("exact BSP data: max held-out error %g", v.MaxRelErr)
	}
}
