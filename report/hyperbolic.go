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

// Medium is what a hyperbolic prediction of an all-to-all or a chain
// assumed about the medium: the model's decision, its evidence, and the
// prediction on each medium.
type Medium struct {
	Decision string       `json:"decision"`
	Evidence *model.Param `json:"evidence,omitempty"`
	DuplexS  float64      `json:"full_duplex_s"`
	SharedS  float64      `json:"shared_s"`
}

// MediumOf is the medium of h's prediction of in, or nil when in does not
// depend on it.
func MediumOf(h *model.Hyperbolic, in model.Instance) *Medium {
	d, s, _, err := h.MediumPredictions(in)
	if err != nil {
		return nil
	}
	dec := h.Medium
	if dec == "" {
		dec = model.MediumShared
		if h.Duplex {
			dec = model.MediumDuplex
		}
	}
	return &Medium{Decision: dec, Evidence: h.DuplexRatio, DuplexS: d, SharedS: s}
}

// String says which medium the prediction used, with both predictions.
func (m *Medium) String() string {
	ev := ""
	if m.Evidence != nil {
		ev = fmt.Sprintf(" (b(n) = %.3g (n-1) b_w, 95%% CI [%.3g, %.3g])", m.Evidence.Value, m.Evidence.CI95[0], m.Evidence.CI95[1])
	}
	what := map[string]string{model.MediumDuplex: "full-duplex nodes used", model.MediumShared: "a shared medium used",
		model.MediumUndecided: "undecided: the prediction is the mean of both"}[m.Decision]
	return fmt.Sprintf("medium: %s%s; full duplex %s, shared medium %s", what, ev, secText(m.DuplexS), secText(m.SharedS))
}

func secText(s float64) string {
	v, u := Value(s, "s")
	return v + " " + u
}
