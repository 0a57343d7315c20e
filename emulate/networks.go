package emulate

import (
	"fmt"
	"strconv"
	"strings"
)

// The network registry: each family of service networks registers itself
// next to its constructor (RegisterNetwork, from init), with the name and
// aliases Parse reads and the form its argument takes; Parse, the --net
// help and every message that lists the networks are generated from it
// (NetworkForms), so no list of networks is written out anywhere else.

// NetworkArg is the form of a network's size argument.
type NetworkArg string

const (
	ArgDim   NetworkArg = "d"   // one dimension: SE(3)
	ArgSides NetworkArg = "RxC" // rows x columns, one side for a square: mesh(4x4), torus(4)
)

// NetworkDef is a registered family of service networks.
type NetworkDef struct {
	Kind Kind // the canonical name, as Topology.Name spells it
	// Aliases are other names Parse accepts, lower case ("butterfly").
	Aliases []string
	Arg     NetworkArg
	// New builds the network of the given sizes: {d} for ArgDim, {rows,
	// cols} for ArgSides.
	New func(dims []int) (*Topology, error)
}

// Form is how the family is written: "SE(d)", "mesh(RxC)".
func (d NetworkDef) Form() string { return fmt.Sprintf("%s(%s)", d.Kind, d.Arg) }

// Example is a network of the family: "SE(3)", "mesh(4x4)".
func (d NetworkDef) Example() string {
	if d.Arg == ArgSides {
		return string(d.Kind) + "(4x4)"
	}
	return string(d.Kind) + "(3)"
}

var networks []NetworkDef

// RegisterNetwork adds a family; a name registered twice, or a definition
// without a kind, an argument form or a constructor, is a programming
// error.
func RegisterNetwork(d NetworkDef) {
	if d.Kind == "" || d.New == nil || (d.Arg != ArgDim && d.Arg != ArgSides) {
		panic(fmt.Sprintf("emulate: RegisterNetwork(%+v): kind, argument form and constructor are required", d))
	}
	for _, name := range d.names() {
		if _, ok := lookupNetwork(name); ok {
			panic("emulate: network name registered twice: " + name)
		}
	}
	networks = append(networks, d)
}

// names are the lower-case names Parse accepts for the family.
func (d NetworkDef) names() []string {
	return append([]string{strings.ToLower(string(d.Kind))}, d.Aliases...)
}

// Networks lists the registered families in registration order.
func Networks() []NetworkDef { return append([]NetworkDef(nil), networks...) }

// NetworkForms is the list of accepted forms for help texts and messages:
// "SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC)".
func NetworkForms() string {
	forms := make([]string, len(networks))
	for i, d := range networks {
		forms[i] = d.Form()
	}
	return strings.Join(forms, ", ")
}

// NetUsage is the help text of a --net flag.
func NetUsage() string { return "service `network`: " + NetworkForms() }

func lookupNetwork(name string) (NetworkDef, bool) {
	for _, d := range networks {
		for _, n := range d.names() {
			if n == name {
				return d, true
			}
		}
	}
	return NetworkDef{}, false
}

// Parse reads a topology name in one of the registered forms
// (NetworkForms); case-insensitive, parentheses optional ("bf3",
// "mesh4x4"), a square mesh may give one side ("torus(4)").
func Parse(spec string) (*Topology, error) {
	d, dims, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	return d.New(dims)
}

// parseSpec reads spec as Parse does to its family and sizes ({d} or
// {rows, cols}) without building the network, so every spelling of one
// network ("mesh(064x64)", "MESH64") yields the same family and sizes.
func parseSpec(spec string) (NetworkDef, []int, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	s = strings.ReplaceAll(s, " ", "")
	// NAME(ARG) with one pair of parentheses closing at the end, or NAME
	// and ARG run together; a parenthesis left open ("BF(2") or doubled
	// is refused rather than read as the network it almost names.
	name := s
	if i := strings.IndexFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z') }); i >= 0 {
		name = s[:i]
	}
	arg := s[len(name):]
	if strings.ContainsAny(arg, "()") {
		if !strings.HasPrefix(arg, "(") || !strings.HasSuffix(arg, ")") || strings.Count(arg, "(") != 1 || strings.Count(arg, ")") != 1 {
			return NetworkDef{}, nil, fmt.Errorf("topology %q: accepted forms are %s", spec, NetworkForms())
		}
		arg = arg[1 : len(arg)-1]
	}
	d, ok := lookupNetwork(name)
	if !ok {
		return NetworkDef{}, nil, fmt.Errorf("topology %q: unknown network %q; accepted: %s", spec, name, NetworkForms())
	}
	if d.Arg == ArgSides {
		parts := strings.Split(arg, "x")
		if len(parts) == 1 {
			parts = append(parts, parts[0])
		}
		if len(parts) != 2 {
			return NetworkDef{}, nil, fmt.Errorf("topology %q: %s needs RxC, e.g. %s", spec, d.Kind, d.Example())
		}
		r, err1 := strconv.Atoi(parts[0])
		c, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return NetworkDef{}, nil, fmt.Errorf("topology %q: %s needs RxC with integer sides, e.g. %s", spec, d.Kind, d.Example())
		}
		return d, []int{r, c}, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil {
		return NetworkDef{}, nil, fmt.Errorf("topology %q: %s needs an integer dimension, e.g. %s", spec, d.Kind, d.Example())
	}
	return d, []int{n}, nil
}

// Net is a service network as a --net flag gives it: *Net parses a name
// of NetworkForms (encoding.TextUnmarshaler), and prints as the network's
// canonical name.
type Net struct{ *Topology }

// UnmarshalText parses a network name (Parse).
func (n *Net) UnmarshalText(b []byte) error {
	t, err := Parse(string(b))
	if err != nil {
		return err
	}
	n.Topology = t
	return nil
}

// String is the canonical name, "" for none.
func (n Net) String() string {
	if n.Topology == nil {
		return ""
	}
	return n.Name()
}
