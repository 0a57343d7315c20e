package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/commcost/commcost/model"
)

// WriteKinds lists the fittable model kinds of model's registry, one per
// line with the benches it is fitted from and its summary: the list in
// `commcost fit -h`.
func WriteKinds(w io.Writer) {
	for _, k := range model.Registered() {
		fmt.Fprintf(w, "  %-20s %s\n  %-20s   fitted from %s\n", k.Name, k.Summary, "", strings.Join(k.Benches, ", "))
	}
}

// WritePredictable lists, per model kind (derived kinds included), the
// patterns its models predict: the list in `commcost predict -h`.
func WritePredictable(w io.Writer) {
	for _, k := range model.All() {
		fmt.Fprintf(w, "  %-20s %s\n", k.Name, strings.Join(k.New().Patterns(), ", "))
	}
}
