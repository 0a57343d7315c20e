package globalvar

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/commcost/commcost/mpi"
)

// The store registry: each package that implements Store registers the
// family of strategies it offers from its own file (RegisterFamily, as
// database/sql registers drivers), with the spellings it accepts; the
// command line's --store, its usage text and the applications' experiment
// read the strategies from here and nothing else keeps a list.

// Strategy is one way to keep global variables, with its settings: a
// kind of Store that can be opened over a communicator.
type Strategy interface {
	// Name is the records' "store" parameter: direct, fixed-home, tree-4,
	// BF(2).
	Name() string
	// WorldSize is the number of ranks the strategy must be opened on, 0
	// when it runs on any world (an emulated network needs its own size:
	// it is then the only store of a run).
	WorldSize() int
	// AppRanks is the number of ranks the applications run on in a world
	// of world ranks (an emulated network's service ranks only route).
	AppRanks(world int) int
	// Open opens a store over c, runs fn on the application ranks with
	// their communicator and the store, and closes the store. Collective
	// over c. An error of fn is returned without closing the store:
	// closing is collective, and a rank that failed cannot count on the
	// others reaching it.
	Open(c mpi.Comm, fn func(app mpi.Comm, s Store) error) error
}

// Family is a registered set of strategies and how they are spelt.
type Family struct {
	Name string // "direct", "divalib", "emulate"
	// Forms are the spellings for usage texts, in order: "direct";
	// "fixed-home", "tree-2", ...; "emulate:NET".
	Forms []string
	// FormsOf, when set, gives Forms when they are listed instead: for
	// spellings built from a registry that other init functions fill
	// after the family registers (emulate's networks).
	FormsOf func() []string
	// Parse reads one spelling with the seed of the store's random
	// choices. It returns ErrNotMine for a spelling of another family.
	Parse func(s string, seed int64) (Strategy, error)
	// Order places the family in listings (lower first).
	Order int
}

// ErrNotMine is a Family.Parse's answer to a spelling it does not own.
var ErrNotMine = errors.New("globalvar: not a strategy of this family")

var families = map[string]Family{}

// RegisterFamily adds a family; a name registered twice is a programming
// error.
func RegisterFamily(f Family) {
	if f.Name == "" || f.Parse == nil {
		panic("globalvar: RegisterFamily without a name or Parse")
	}
	if _, dup := families[f.Name]; dup {
		panic("globalvar: family registered twice: " + f.Name)
	}
	families[f.Name] = f
}

// Families lists the registered families in Order, then by name.
func Families() []Family {
	out := make([]Family, 0, len(families))
	for _, f := range families {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Forms lists every registered spelling in order.
func Forms() []string {
	var out []string
	for _, f := range Families() {
		if f.FormsOf != nil {
			out = append(out, f.FormsOf()...)
			continue
		}
		out = append(out, f.Forms...)
	}
	return out
}

// FormsText is the accepted form of a list of strategies, for messages and
// usage texts: "a comma list of direct, fixed-home, ..., emulate:NET".
func FormsText() string { return "a comma list of " + strings.Join(Forms(), ", ") }

// ParseStrategy reads one strategy in any registered family's spelling.
// Its error says what is accepted, once: a spelling no family owns is
// answered with every form (FormsText), one a family owns but refuses
// with that family's own reason and forms.
func ParseStrategy(s string, seed int64) (Strategy, error) {
	for _, f := range Families() {
		st, err := f.Parse(s, seed)
		if errors.Is(err, ErrNotMine) {
			continue
		}
		return st, err
	}
	return nil, fmt.Errorf("%q is not a store; accepted: %s", s, FormsText())
}
