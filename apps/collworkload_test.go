package apps

import (
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

// TestCollectiveWorkload prices the workload of collectives with
// synthetic models and checks the view each reads and the value: Hockney
// reads the messages (the closed form with gamma = 0), the classic
// algorithms' model the collective itself (the closed form with gamma),
// and its rounds and reductions (p2p+reduce) give the same; the fitted
// curve reads the collective too.
func TestCollectiveWorkload(t *testing.T) {
	const alpha, beta, gamma = 2e-6, 1e-9, 5e-10
	fixed := func(name string, v float64) model.Param {
		return model.Param{Name: name, Value: v, CI95: [2]float64{v, v}, Fixed: true}
	}
	h := &model.Hockney{Ts: fixed("t_s", alpha), Tw: fixed("t_w", beta)}
	ca := &model.CollAlg{Alpha: fixed("alpha", alpha), Beta: fixed("beta", beta), Gamma: fixed("gamma", gamma), Delta: fixed("delta", 0)}
	tests := []struct {
		op, alg string
		bytes   int
		p       int
	}{
		{"allreduce", "rabenseifner", 1 << 16, 4},
		{"allreduce", "recursive_doubling", 1024, 6},
		{"allreduce", "ring", 3 << 10, 3},
		{"bcast", "default", 1 << 20, 4},
		{"alltoall", "pairwise", 4096, 5},
		{"reduce_scatter_block", "recursive_halving", 1024, 8},
		{"barrier", "default", 0, 7},
	}
	for _, tt := range tests {
		t.Run(tt.op+"_"+tt.alg, func(t *testing.T) {
			w, err := CollectiveWorkload(tt.op, tt.alg, tt.bytes, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := model.CollRounds(tt.op, tt.alg, float64(tt.bytes), tt.p)
			if err != nil {
				t.Fatal(err)
			}
			check := func(m model.Model, w []results.WorkItem, view string, want float64) {
				t.Helper()
				got, v, err := model.PredictWorkloadView(m, w)
				if err != nil || v != view || !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-9) {
					t.Errorf("%s: %g from view %q (%v), want %g from %q", m.Kind(), got, v, err, want, view)
				}
			}
			check(h, w, ViewP2P, model.CollCost(rs, alpha, beta, 0))
			check(ca, w, ViewCollective, model.CollCost(rs, alpha, beta, gamma))
			var rest []results.WorkItem
			for _, it := range w {
				if it.View != ViewCollective {
					rest = append(rest, it)
				}
			}
			if tt.op == "allreduce" || tt.op == "reduce_scatter_block" {
				check(ca, rest, ViewP2PReduce, model.CollCost(rs, alpha, beta, gamma))
			}
			cf := &model.CollFit{Curves: []model.CollCurve{{Op: tt.op, Alg: w[0].Params["alg"].(string), Coef: []model.Param{fixed("c0", 1e-5)}}}}
			check(cf, w, ViewCollective, 1e-5)
		})
	}
	if _, err := CollectiveWorkload("bcast", "pipeline", 8, 4); err == nil {
		t.Error("bcast pipeline: no error")
	}
}
