package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/commcost/commcost/model"
)

func init() {
	registerTables("hyperbolic", kindTables{write: hyperbolicTables})
}

// hyperbolicTables lists the per-n curves the network blocks come from
// and the convergence of a_c (paper 001, rule 4).
func hyperbolicTables(w io.Writer, f *Fit) error {
	t := f.Model.(*model.Hyperbolic)
	if len(t.Curves) == 0 {
		return nil
	}
	var rows [][]string
	for _, c := range t.Curves {
		a, _ := Value(c.A.Value, "s")
		b, _ := Value(c.B.Value, "s/B")
		rows = append(rows, []string{c.Pattern, strconv.Itoa(c.N), a, b, Pct(c.Fit.RSE)})
	}
	fmt.Fprintf(w, "per-n fits T(x; a(n), b(n)) of %s (paper 001, rule 4):\n", t.Source)
	if err := Table(w, []string{"pattern", "n", "a(n) us", "b(n) ns/B", "RSE"}, rows); err != nil {
		return err
	}
	al, _ := Value(t.AcLimit, "s")
	fmt.Fprintf(w, "a_c: paper's limit quotient at the largest n %s us; change over the last node %s (converged: %v)\n",
		al, Pct(t.AcChange), t.AcConverged)
	return nil
}
