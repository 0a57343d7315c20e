package patterns

import (
	"flag"
	"strings"
	"testing"

	"github.com/commcost/commcost/opts"
)

// TestRepFlagsDefaults: the flags' defaults are the harness's (one owner
// each: the constants of harness.go).
func TestRepFlagsDefaults(t *testing.T) {
	var r RepFlags
	opts.FillDefaults(&r)
	want := RepFlags{RepLimits: RepLimits{RelCI: DefaultRelCI, MinReps: DefaultMinReps, MaxReps: DefaultMaxReps, MaxTime: DefaultMaxTimeSec}}
	if r != want {
		t.Errorf("RepFlags defaults %+v, want %+v", r, want)
	}
	var b BandwidthSweep
	opts.FillDefaults(&b)
	if b.Window != OSUWindow {
		t.Errorf("bandwidth window default %d, want OSUWindow %d", b.Window, OSUWindow)
	}
	var pm PermutationsSweep
	opts.FillDefaults(&pm)
	if pm.Count != DefaultPermutations {
		t.Errorf("permutations count default %d, want %d", pm.Count, DefaultPermutations)
	}
}

// TestRegistry: every registered sweep binds (its tags parse), validates
// at its defaults and plans a non-empty sweep on 4 ranks whose instances
// are of registered benches with checked parameters and declare a demand;
// the shared flags' overrides name flags the sweep has.
func TestRegistry(t *testing.T) {
	defs := Defs()
	if len(defs) < 11 {
		t.Fatalf("%d sweeps registered", len(defs))
	}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			sw := d.New()
			fs := flag.NewFlagSet(d.Name, flag.ContinueOnError)
			b := opts.Bind(fs, sw)
			for name, v := range d.Defaults {
				f := fs.Lookup(name)
				if f == nil {
					t.Fatalf("Defaults names --%s, which the sweep has not", name)
				}
				if err := f.Value.Set(v); err != nil {
					t.Fatalf("default %s=%s: %v", name, v, err)
				}
			}
			for name := range d.Usage {
				if fs.Lookup(name) == nil {
					t.Errorf("Usage names --%s, which the sweep has not", name)
				}
			}
			fs.VisitAll(func(f *flag.Flag) {
				if strings.Contains(f.Usage, "not used") {
					t.Errorf("--%s: help says it is not used", f.Name)
				}
			})
			b.Finish()
			if v, ok := sw.(opts.Validator); ok {
				if err := v.Validate(); err != nil {
					t.Fatalf("defaults do not validate: %v", err)
				}
			}
			p := 4
			pts, err := sw.Plan(p)
			if err != nil {
				// A two-party pattern: it must plan on 2 ranks then.
				p = 2
				if pts, err = sw.Plan(p); err != nil {
					t.Fatalf("plan on 4 and 2 ranks: %v", err)
				}
			}
			if len(pts) == 0 {
				t.Fatal("empty plan")
			}
			for _, pt := range pts {
				if SpecsOf(pt.Bench()) == nil {
					t.Errorf("bench %s has no parameter specs", pt.Bench())
				}
				if err := CheckParams(pt.Bench(), pt.Params(p), false); err != nil {
					t.Errorf("%s: %v", pt.Bench(), err)
				}
				if d := pt.Demand(p); !(d.RepFloorSec() > 0) {
					t.Errorf("%s %v: no demand declared", pt.Bench(), pt.Params(p))
				}
			}
		})
	}
}
