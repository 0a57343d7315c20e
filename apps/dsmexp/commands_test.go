package dsmexp

import (
	"bytes"
	"errors"
	"flag"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// TestCheckOutputTags: CheckOutput's flags are job.Output's, word for word
// (one vocabulary), less Samples.
func TestCheckOutputTags(t *testing.T) {
	mine, theirs := reflect.TypeFor[CheckOutput](), reflect.TypeFor[job.Output]()
	for i := range mine.NumField() {
		f := mine.Field(i)
		g, ok := theirs.FieldByName(f.Name)
		if !ok || f.Tag != g.Tag || f.Type != g.Type {
			t.Errorf("CheckOutput.%s %s `%s`, job.Output has %v `%s`", f.Name, f.Type, f.Tag, g.Type, g.Tag)
		}
	}
}

// TestDefsConfig: every experiment's default configuration (Def.Config,
// the command line's defaults) is valid as it stands on the local
// backend, its strategies come from the registry, and the defaults of
// Defs name existing flags.
func TestDefsConfig(t *testing.T) {
	var order []string
	for _, d := range Defs() {
		order = append(order, d.Name)
		t.Run(d.Name, func(t *testing.T) {
			cfg := d.Config()
			fs := flag.NewFlagSet(d.Name, flag.ContinueOnError)
			opts.Bind(fs, d.New())
			for name := range d.Defaults {
				if fs.Lookup(name) == nil {
					t.Errorf("default of --%s, which %s does not have", name, d.Name)
				}
			}
			for name := range d.Usage {
				if fs.Lookup(name) == nil {
					t.Errorf("help of --%s, which %s does not have", name, d.Name)
				}
			}
			if p, ok := cfg.(*Plot); ok {
				p.SetArgs([]string{"x.jsonl"})
			}
			if sf := fs.Lookup("strategies"); sf != nil {
				for _, s := range strings.Split(d.Defaults["strategies"], ",") {
					if s != Hand && !strings.Contains(","+strings.Join(divalib.Evaluated(), ",")+",", ","+s+",") {
						t.Errorf("default strategy %s is not one the paper evaluates", s)
					}
				}
			}
			if l := fs.Lookup("backend"); l != nil {
				reflect.ValueOf(cfg).Elem().FieldByName("Backend").SetString(job.Local)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("the default configuration is refused: %v", err)
			}
		})
	}
	if got := strings.Join(order, ","); got != "check,matsquare,overhead,bitonic,barneshut,plot" {
		t.Errorf("Defs in the order %s", got)
	}
}

// TestValidateNamesFields: a library caller's bad configuration is
// refused with the field named (not a flag), for each shared rule.
func TestValidateNamesFields(t *testing.T) {
	def := func(name string) Experiment { return localConfig(t, name) }
	tests := []struct {
		name  string
		cfg   func() Experiment
		field string
		want  string
	}{
		{"hand without a hand version", func() Experiment {
			e := def("barneshut").(*BarnesHutSweep)
			e.Strategies = StrategyNames{Hand}
			return e
		}, "Strategies", `strategy "hand"`},
		{"mesh against np", func() Experiment {
			e := def("check").(*Check)
			e.Mesh, e.NP = "2x3", 4
			return e
		}, "", "Mesh 2x3 has 6 processors but NP is 4"},
		{"meshes with mesh", func() Experiment {
			e := def("bitonic").(*BitonicSweep)
			e.Meshes, e.Mesh = MeshList{{Rows: 2, Cols: 2}}, "2x2"
			return e
		}, "", "Meshes with Mesh: give either Meshes or Mesh, not both"},
		{"block not square", func() Experiment {
			e := def("matsquare").(*MatSquareSweep)
			e.Blocks = opts.Ints{64, 128}
			return e
		}, "Blocks", "128 is not a perfect square"},
		{"block a square beyond a message", func() Experiment {
			e := def("matsquare").(*MatSquareSweep)
			e.Blocks = opts.Ints{64, 23171 * 23171}
			return e
		}, "Blocks", "a block of 536895241 ints does not fit one message (at most 536870895)"},
		{"keys beyond a message", func() Experiment {
			e := def("bitonic").(*BitonicSweep)
			e.Keys = opts.Ints{1 << 30}
			return e
		}, "Keys", "do not fit one message"},
		{"measured beyond steps", func() Experiment {
			e := def("barneshut").(*BarnesHutSweep)
			e.Measured, e.Given = 9, opts.Given{"Measured": true}
			return e
		}, "Measured", "1..Steps (7)"},
		{"plot csv", func() Experiment {
			p := &Plot{Files: []string{"a"}, Format: results.FormatCSV}
			return p
		}, "Format", "prints tables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg().Validate()
			if err == nil || !opts.IsBadInput(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate: %v, want bad input with %q", err, tt.want)
			}
			var fe *opts.FieldError
			if tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
				t.Errorf("error %v names field %v, want %s", err, fe, tt.field)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("a library error names a flag: %v", err)
			}
		})
	}
}

// TestBitonicRunLocal runs a library configuration end to end on
// goroutine ranks, a sweep of two meshes, with nothing of the command
// line: records to --out's file, the tables on stdout.
func TestBitonicRunLocal(t *testing.T) {
	e := localConfig(t, "bitonic").(*BitonicSweep)
	out := filepath.Join(t.TempDir(), "b.jsonl")
	e.Meshes, e.Keys, e.Reps, e.Out = MeshList{{Rows: 1, Cols: 2}, {Rows: 2, Cols: 2}}, opts.Ints{16}, 1, out
	e.Strategies = StrategyNames{Hand, "tree-2"}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := e.Run(IO{Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	recs, err := results.ReadJSONLFile(out)
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records (%v), want 2 strategies x 2 meshes", len(recs), err)
	}
	if !strings.Contains(stdout.String(), "congestion ratio to hand-optimised") {
		t.Errorf("no ratio tables:\n%s", stdout.String())
	}
}

// localConfig is the default configuration of dsm name on the local
// backend.
func localConfig(t *testing.T, name string) Experiment {
	t.Helper()
	for _, d := range Defs() {
		if d.Name == name {
			cfg := d.Config()
			if f := reflect.ValueOf(cfg).Elem().FieldByName("Backend"); f.IsValid() {
				f.SetString(job.Local)
			}
			return cfg
		}
	}
	t.Fatalf("no dsm %s", name)
	return nil
}

// TestMeasuredDefaultFollowsSteps: the default --measured 5 measures every
// step of a shorter run (--steps 2) instead of refusing a flag the user
// did not give.
func TestMeasuredDefaultFollowsSteps(t *testing.T) {
	e := localConfig(t, "barneshut").(*BarnesHutSweep)
	e.Steps = 2
	if err := e.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := e.config().Measured; got != 2 {
		t.Errorf("measured steps %d, want all 2", got)
	}
}
