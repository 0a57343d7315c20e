package apps

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// The program registry: each application's file registers its program
// (RegisterProgram, from init) with the configuration its command reads;
// 'commcost app', its list and the README read the programs from here and
// nothing else keeps a list.

// Program is a registered application.
type Program struct {
	Name    string
	Paper   string // the source: "000 sec. 6.1", "003 (Cannon 1969)"
	Summary string // one line
	// OverStore is true for a program written against globalvar.Store
	// (run once per store strategy), false for one over mpi.Comm.
	OverStore bool
	// New returns a zero configuration (a pointer to a struct whose tagged
	// fields are the program's own flags, package opts).
	New func() Config
	// Phases names the phases a run with the given record parameters
	// times: 'app table' names from it the phases a run's records lack.
	Phases func(params results.Params) []string
}

// PhasesOf is the phases a run of the registered program app with record
// params times (Program.Phases); nil for a program not registered.
func PhasesOf(app string, params results.Params) []string {
	if p, ok := programs[app]; ok && p.Phases != nil {
		return p.Phases(params)
	}
	return nil
}

// withSync is phases with sync inserted at i when the record parameters
// ask for the synchronous variant ("variant": "sync", or matmul's
// "sync": true), which alone times it.
func withSync(params results.Params, phases []string, i int, sync string) []string {
	if v, b := params["variant"], params["sync"]; v == "sync" || b == true {
		return slices.Insert(slices.Clone(phases), i, sync)
	}
	return phases
}

// Config is a program's configuration: the runs it asks for (every value
// of its list fields combined). Errors are bad input naming the field.
type Config interface {
	Apps() ([]App, error)
}

// Inputer is a program whose input can be refused before anything runs
// (Gauss: a singular matrix drawn from the seed).
type Inputer interface {
	Input(seed int64) error
}

var programs = map[string]Program{}

// RegisterProgram adds a program; a name registered twice is a programming
// error.
func RegisterProgram(p Program) {
	switch {
	case p.Name == "" || p.New == nil:
		panic("apps: RegisterProgram without a name or New")
	case programs[p.Name].Name != "":
		panic("apps: program registered twice: " + p.Name)
	}
	programs[p.Name] = p
}

// Programs lists the registered programs in the papers' order: by paper
// and section, then by name.
func Programs() []Program {
	out := make([]Program, 0, len(programs))
	for _, p := range programs {
		out = append(out, p)
	}
	key := func(p Program) string {
		return strings.TrimSpace(strings.FieldsFunc(p.Paper, func(r rune) bool { return r == ';' || r == '(' })[0])
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := key(out[i]), key(out[j]); a != b {
			return a < b
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LookupProgram returns the program registered as name.
func LookupProgram(name string) (Program, bool) {
	p, ok := programs[name]
	return p, ok
}

// AccessFlags are the access shape paper 000's programs share: every block
// access is ceil(D/(k l)) k-k-accesses of k packets of l bytes.
type AccessFlags struct {
	K opts.Ints `flag:"k" default:"1,4" usage:"send hot spots k (packets in flight per rank): a list; k l must not exceed any block the application accesses"`
	L opts.Ints `flag:"l" default:"256,1K" usage:"packet sizes l in bytes: a list; K = 1024"`
}

// each calls build for every n x k x l, in order.
func (a AccessFlags) each(ns []int, build func(n int, acc Access) []App) ([]App, error) {
	for _, f := range []struct {
		name string
		vals []int
	}{{"N", ns}, {"K", a.K}, {"L", a.L}} {
		for _, v := range f.vals {
			if v < 1 {
				return nil, opts.Item(f.name, v, "is not positive; the value must be positive (an integer >= 1)")
			}
		}
	}
	var out []App
	for _, n := range ns {
		for _, k := range a.K {
			for _, l := range a.L {
				out = append(out, build(n, Access{K: k, L: l})...)
			}
		}
	}
	if len(out) == 0 {
		return nil, opts.Badf("{N}, {K}, {L}: no configuration to run")
	}
	return out, nil
}

// Variant is a message-passing program's variant: "async" (the program as
// it runs) or "sync" (a barrier before every exchange).
type Variant string

// UnmarshalText accepts async and sync.
func (v *Variant) UnmarshalText(b []byte) error {
	if s := string(b); s == "async" || s == "sync" {
		*v = Variant(s)
		return nil
	}
	return fmt.Errorf("%q is not async or sync; accepted form: async, sync or async,sync", b)
}

// Variants are the variants a program runs, one run each.
type Variants struct {
	Variant []Variant `flag:"variant" default:"async" usage:"async (as the program runs), sync (a barrier before every exchange), or async,sync"`
}

// UnmarshalText parses ROWSxCOLS with positive integers.
func (g *Grid) UnmarshalText(b []byte) error {
	v, err := ParseGrid(string(b))
	if err != nil {
		return fmt.Errorf("accepted form ROWSxCOLS with positive integers, e.g. 2x3")
	}
	*g = v
	return nil
}

func positive(field string, v int) error {
	if v < 1 {
		return opts.Field(field, v, "must be a positive integer")
	}
	return nil
}
