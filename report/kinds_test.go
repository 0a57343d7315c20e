package report

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
)

var update = flag.Bool("update", false, "rewrite testdata/benchstat from the pinned benchstat")

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
