package permsched_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/results"
)

// TestConfigDefaults: the zero configurations, after opts.FillDefaults,
// are the paper's setting and validate.
func TestConfigDefaults(t *testing.T) {
	var count permsched.CountConfig
	opts.FillDefaults(&count)
	if !slices.Equal(count.Ns, []int{32, 128, 512, 1024}) || count.Densities != nil || count.Matrices != 300 || count.Gen != permsched.GenFig7 ||
		count.Entries != permsched.EntryBytes || count.CellSeconds != 5 || count.MinMatrices != 30 || count.Seed != 1 {
		t.Errorf("experiment 1's defaults: %+v", count)
	}
	var comm permsched.CommConfig
	opts.FillDefaults(&comm)
	if comm.Densities != nil || comm.Gen != permsched.GenFig7 || comm.Matrices != 1 || comm.MinReps != 10 || comm.MaxReps != 200 ||
		comm.RelCI != 0.03 || comm.MaxTime != 1 || comm.Warmup.Given || comm.NoPerm1 {
		t.Errorf("experiment 2's defaults: %+v", comm)
	}
	var be permsched.Breakeven
	opts.FillDefaults(&be)
	if be.Reuse != 1 || be.MaxReps != 200 {
		t.Errorf("experiment 3's defaults: reuse %v, max-reps %d", be.Reuse, be.MaxReps)
	}
	var gen permsched.GenConfig
	opts.FillDefaults(&gen)
	if gen.Gen != permsched.GenFig7 || gen.N != 16 || gen.D != 4 || gen.Keys != 1000 || gen.Seed != 1 || len(gen.Set) != 0 {
		t.Errorf("sched gen's defaults: %+v", gen)
	}
	for name, v := range map[string]opts.Validator{"count": &count, "comm": &comm, "breakeven": &be, "gen": &gen} {
		if err := v.Validate(); err != nil {
			t.Errorf("%s: the defaults do not validate: %v", name, err)
		}
	}
}

// TestConfigValidate: every refusal names its field (or the rule, as bad
// input naming no field), in the library's terms.
func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	five := filepath.Join(dir, "five.txt")
	if err := os.WriteFile(five, []byte("0 1 0 0 0\n0 0 1 0 0\n0 0 0 1 0\n0 0 0 0 1\n1 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(f func(*permsched.CountConfig)) opts.Validator {
		var c permsched.CountConfig
		opts.FillDefaults(&c)
		f(&c)
		return &c
	}
	comm := func(f func(*permsched.CommConfig)) opts.Validator {
		var c permsched.CommConfig
		opts.FillDefaults(&c)
		f(&c)
		return &c
	}
	be := func(f func(*permsched.Breakeven)) opts.Validator {
		var c permsched.Breakeven
		opts.FillDefaults(&c)
		f(&c)
		return &c
	}
	gen := func(f func(*permsched.GenConfig)) opts.Validator {
		var c permsched.GenConfig
		opts.FillDefaults(&c)
		f(&c)
		return &c
	}
	tests := []struct {
		name  string
		cfg   opts.Validator
		field string // the FieldError's field; "" for bad input naming none
		want  string // in the message
	}{
		{"n = 0", count(func(c *permsched.CountConfig) { c.Ns = []int{4, 0} }), "Ns", "n = 0"},
		{"d above one n's n-1", count(func(c *permsched.CountConfig) { c.Ns, c.Densities = []int{64, 16}, permsched.Densities{4, 20} }), "Densities", "d = 20 exceeds n-1 = 15 for n = 16"},
		{"negative d", count(func(c *permsched.CountConfig) { c.Densities = permsched.Densities{-1} }), "Densities", "negative"},
		{"no matrices", count(func(c *permsched.CountConfig) { c.Matrices = 0 }), "Matrices", "must be positive"},
		{"unknown generator", count(func(c *permsched.CountConfig) { c.Gen = "torus" }), "Gen", "fig7, fig7-noself, uniform, skewed"},
		{"negative cell time", count(func(c *permsched.CountConfig) { c.CellSeconds = -1 }), "CellSeconds", ">= 0"},
		{"min matrices 0", count(func(c *permsched.CountConfig) { c.MinMatrices = 0 }), "MinMatrices", "positive"},
		{"min matrices MaxInt64", count(func(c *permsched.CountConfig) { c.MinMatrices = math.MaxInt64 }), "MinMatrices", "must be at most 1048576 matrices per cell"},
		{"missing matrix file", count(func(c *permsched.CountConfig) { c.MatrixFile = filepath.Join(dir, "none") }), "MatrixFile", "no such file"},
		{"matrix file with n", count(func(c *permsched.CountConfig) { c.MatrixFile, c.Given = five, opts.Given{"Ns": true} }), "", "MatrixFile and Ns exclude each other"},
		{"comm generator", comm(func(c *permsched.CommConfig) { c.Gen = "ring" }), "Gen", "accepted generators"},
		{"comm matrices 0", comm(func(c *permsched.CommConfig) { c.Matrices = 0 }), "Matrices", "positive"},
		{"comm max below min reps", comm(func(c *permsched.CommConfig) { c.MaxReps = 5 }), "", "MinReps with MaxReps: the fewest repetitions, 10, are more than the most, 5"},
		{"comm rel-ci", comm(func(c *permsched.CommConfig) { c.RelCI = 2 }), "RelCI", "(0, 1)"},
		{"comm negative warm-up", comm(func(c *permsched.CommConfig) { c.Warmup = opts.Int(-1) }), "Warmup", "negative"},
		{"comm matrix with densities", comm(func(c *permsched.CommConfig) { c.MatrixFile, c.Given = five, opts.Given{"Densities": true} }), "", "exclude each other"},
		{"breakeven reuse", be(func(c *permsched.Breakeven) { c.Reuse = 0.5 }), "Reuse", ">= 1"},
		{"breakeven without LP", be(func(c *permsched.Breakeven) { c.Methods = permsched.MethodList{"CGM"} }), "Methods", "LP and CGM"},
		{"breakeven without perm1", be(func(c *permsched.Breakeven) { c.NoPerm1 = true }), "", "NoPerm1: breakeven needs"},
		{"breakeven with In reads no measurement", be(func(c *permsched.Breakeven) { c.In, c.Gen = opts.Strings{"x"}, "ring" }), "-", ""},
		{"gen n", gen(func(c *permsched.GenConfig) { c.N = 0 }), "N", "1..65536"},
		{"gen d", gen(func(c *permsched.GenConfig) { c.D = 16 }), "D", "n-1 = 15"},
		{"gen kind", gen(func(c *permsched.GenConfig) { c.Gen = "ring" }), "Gen", "samplesort"},
		{"gen keys", gen(func(c *permsched.GenConfig) { c.Gen, c.Keys = permsched.GenSampleSort, 0 }), "Keys", "positive"},
		{"gen samplesort ignores d", gen(func(c *permsched.GenConfig) { c.Gen, c.D = permsched.GenSampleSort, 99 }), "-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "-" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !opts.IsBadInput(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want bad input holding %q", err, tt.want)
			}
			var fe *opts.FieldError
			if got := errors.As(err, &fe); got != (tt.field != "") || got && fe.Field != tt.field {
				t.Errorf("error %#v, want field %q", err, tt.field)
			}
		})
	}
}

// TestCommCheckRanks: the checks that need the world's size.
func TestCommCheckRanks(t *testing.T) {
	m, err := permsched.Fig7NoSelf(5, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cfg   permsched.CommConfig
		n     int
		field string // "-": accepted; "": bad input naming no field
	}{
		{"the paper's densities on 2 ranks", permsched.CommConfig{}, 2, "-"},
		{"one rank", permsched.CommConfig{}, 1, ""},
		{"d above n-1", permsched.CommConfig{Densities: permsched.Densities{2, 4}}, 4, "Densities"},
		{"d = n-1", permsched.CommConfig{Densities: permsched.Densities{3}}, 4, "-"},
		{"a file's matrix of another size", permsched.CommConfig{MatrixFile: "five.txt", Matrix: m}, 4, "MatrixFile"},
		{"a caller's matrix of another size", permsched.CommConfig{Matrix: m}, 6, ""},
		{"a matrix of the world's size", permsched.CommConfig{Matrix: m}, 5, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.CheckRanks(tt.n)
			var fe *opts.FieldError
			switch {
			case tt.field == "-" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.field != "-" && !opts.IsBadInput(err):
				t.Errorf("error %v, want bad input", err)
			case tt.field != "-" && errors.As(err, &fe) != (tt.field != ""):
				t.Errorf("error %#v, want field %q", err, tt.field)
			case tt.field != "-" && tt.field != "" && fe.Field != tt.field:
				t.Errorf("field %q, want %q", fe.Field, tt.field)
			}
		})
	}
}

// TestFlagValues: the list flags parse, print back as typed, and refuse
// what no experiment takes.
func TestFlagValues(t *testing.T) {
	var d permsched.Densities
	if err := d.Set("paper"); err != nil || d != nil || d.String() != "paper" {
		t.Errorf("paper: %v %v %q", d, err, d.String())
	}
	if err := d.Set("2,4:16"); err != nil || !slices.Equal(d, permsched.Densities{2, 4, 8, 16}) || d.String() != "2,4,8,16" {
		t.Errorf("2,4:16: %v %v", d, err)
	}
	var s permsched.SchedulerList
	if err := s.Set("cgm,LP"); err != nil || s.String() != "CGM,LP" {
		t.Errorf("cgm,LP: %q %v", s.String(), err)
	}
	var m permsched.MethodList
	if err := m.Set("alltoallv,exact"); err != nil || m.String() != "Alltoallv,EXACT" {
		t.Errorf("alltoallv,exact: %q %v", m.String(), err)
	}
	var e permsched.EntryKind
	if err := e.UnmarshalText([]byte("count")); err != nil || e != permsched.EntryCount {
		t.Errorf("count: %v %v", e, err)
	}
	for name, set := range map[string]func() error{
		"paper in a list":      func() error { return d.Set("paper,3") },
		"a density twice":      func() error { return d.Set("3,3") },
		"unknown scheduler":    func() error { return s.Set("CGM,XYZ") },
		"a scheduler twice":    func() error { return s.Set("CGM,cgm") },
		"Alltoallv scheduling": func() error { return s.Set("Alltoallv") },
		"unknown method":       func() error { return m.Set("MPI") },
		"unknown entries":      func() error { return e.UnmarshalText([]byte("words")) },
	} {
		if err := set(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := permsched.CheckFormat(results.FormatCSV); err == nil {
		t.Error("csv accepted for the tables")
	}
}
