package emulate

import (
	"strings"
	"testing"
)

// TestNetworkRegistry: every family of Kind is registered once, its
// example and every alias parse to a network of the family, and the
// listing is the registry's forms in order.
func TestNetworkRegistry(t *testing.T) {
	kinds := []Kind{KindSE, KindCCC, KindHC, KindBF, KindMesh, KindTorus}
	defs := Networks()
	if len(defs) != len(kinds) {
		t.Fatalf("%d networks registered, want the %d kinds", len(defs), len(kinds))
	}
	var forms []string
	for i, d := range defs {
		if d.Kind != kinds[i] {
			t.Errorf("network %d is %s, want %s (the order of the listing)", i, d.Kind, kinds[i])
		}
		forms = append(forms, d.Form())
		for _, name := range d.names() {
			spec := name + strings.TrimPrefix(d.Example(), string(d.Kind))
			top, err := Parse(spec)
			if err != nil || top.Kind() != d.Kind || top.Name() != d.Example() {
				t.Errorf("Parse(%q) = %v, %v; want %s", spec, top, err, d.Example())
			}
		}
	}
	if got, want := NetworkForms(), strings.Join(forms, ", "); got != want || want != "SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC)" {
		t.Errorf("NetworkForms() = %q, want %q", got, want)
	}
}

// TestNetworkListings: every message and help text that lists the
// networks lists the registry's forms.
func TestNetworkListings(t *testing.T) {
	forms := NetworkForms()
	listings := map[string]string{"NetUsage": NetUsage()}
	for _, spec := range []string{"ring(4)", "BF(2", "(2)"} {
		_, err := Parse(spec)
		if err == nil {
			t.Fatalf("Parse(%q) accepted", spec)
		}
		listings["Parse("+spec+")"] = err.Error()
	}
	for name, text := range listings {
		if !strings.HasSuffix(text, forms) {
			t.Errorf("%s = %q does not end in the registry's forms %q", name, text, forms)
		}
	}
}

// TestNetFlagValue: --net's value parses through the registry and prints
// as the canonical name.
func TestNetFlagValue(t *testing.T) {
	var n Net
	if n.String() != "" {
		t.Errorf("zero Net prints %q", n.String())
	}
	if err := n.UnmarshalText([]byte("butterfly2")); err != nil || n.String() != "BF(2)" || n.Ranks() != 16 {
		t.Fatalf("butterfly2: %v, %q", err, n.String())
	}
	if err := n.UnmarshalText([]byte("BF(12)")); err == nil || !strings.Contains(err.Error(), "dimension out of range") || n.String() != "BF(2)" {
		t.Errorf("BF(12): %v, kept %q", err, n.String())
	}
}
