package divalib_test

import (
	"strings"
	"testing"

	"github.com/commcost/commcost/divalib"
)

// TestStrategyRegistry: every evaluated name parses back to the strategy
// it names, Config.Name gives it back, and the texts made from the list
// (forms, parse errors) name every strategy and variant in order.
func TestStrategyRegistry(t *testing.T) {
	names := divalib.Evaluated()
	if len(names) != 1+len(divalib.Variants()) || names[0] != divalib.FixedHomeName {
		t.Fatalf("Evaluated() = %v: want the fixed home, then one access tree per variant", names)
	}
	for _, name := range names {
		st, v, err := divalib.ParseStrategy(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := (divalib.Config{Strategy: st, Variant: v}).Name(); got != name {
			t.Errorf("%s parses to a store named %s", name, got)
		}
	}
	if got, want := divalib.StrategyList(), "fixed-home, tree-2, tree-4, tree-16, tree-2-4, tree-4-16"; got != want {
		t.Errorf("StrategyList() = %q, want %q (the paper's strategies, in its order)", got, want)
	}
	if got := divalib.StrategyForms(); !strings.HasPrefix(got, divalib.StrategyList()+" (any tree-L-K with L in {2,4}, K >= L)") {
		t.Errorf("StrategyForms() = %q", got)
	}
	_, _, err := divalib.ParseStrategy("home")
	for _, v := range divalib.Variants() {
		if !strings.Contains(err.Error(), v.String()) {
			t.Errorf("the parse error %q does not offer variant %s", err, v)
		}
	}
}

// TestVariantErrors: what the parser and Validate accept, and that their
// messages say so with the registry's variants.
func TestVariantErrors(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want string
	}{
		{"2", true, ""},
		{"16", true, ""},
		{"2-8", true, ""},
		{"4-64", true, ""},
		{"3", false, `tree degree "3" is not supported: accepted are 2, 4, 16 (l-ary) and L-K with L in {2,4} and K >= L (l-k-ary, e.g. 2-4, 4-16)`},
		{"16-64", false, `tree degree "16-64" is not supported`},
		{"4-2", false, `tree degree "4-2" is not supported`},
		{"x", false, `tree degree "x": accepted are 2, 4, 16, or L-K such as 2-4 and 4-16`},
		{"2-", false, `tree degree "2-": accepted are`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := divalib.ParseVariant(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseVariant(%q): %v, want ok %v", tt.in, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("message %q, want %q", err, tt.want)
			}
		})
	}
}
