package report

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
)

var update = flag.Bool("update", false, "rewrite README.md's table of model kinds from the registry and testdata/benchstat from the pinned benchstat")

const (
	kindsBegin = "<!-- model kinds: generated from model.Registered() -->\n"
	kindsEnd   = "<!-- end of model kinds -->"
)

// TestREADMEModelKinds fails when README's table of model kinds is not the
// registry's (it named 8 of 10 kinds before it was generated).
func TestREADMEModelKinds(t *testing.T) {
	const path = "../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, kindsBegin), strings.Index(s, kindsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the markers %q ... %q", kindsBegin, kindsEnd)
	}
	want := KindsMarkdown()
	if got := s[i+len(kindsBegin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(s[:i+len(kindsBegin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's model kinds differ from the registry; run go test ./report -run TestREADMEModelKinds -update\n--- README\n%s--- registry\n%s", got, want)
	}
	for _, k := range model.Kinds() {
		if !strings.Contains(want, "| `"+k+"` |") {
			t.Errorf("table lacks %s", k)
		}
	}
}

// TestWriteKinds: fit -h lists every fittable kind with its benches, and
// predict -h every kind with what it predicts.
func TestWriteKinds(t *testing.T) {
	var b bytes.Buffer
	WriteKinds(&b)
	for _, k := range model.Registered() {
		if !strings.Contains(b.String(), "  "+k.Name+" ") || !strings.Contains(b.String(), "fitted from "+strings.Join(k.Benches, ", ")) {
			t.Errorf("fit -h list lacks %s:\n%s", k.Name, b.String())
		}
	}
	b.Reset()
	WritePredictable(&b)
	for _, want := range []string{"aggregate-table", "loggp                prtt, pingpong, roundtrip, bandwidth"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("predict -h list lacks %q:\n%s", want, b.String())
		}
	}
}
