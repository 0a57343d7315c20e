package apps

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Views of a collective's workload (CollectiveWorkload), beside
// ViewAggregate and ViewP2P.
const (
	// ViewCollective states the collective as itself: the point of its
	// own "collective" records, which the models of the collectives read
	// (collalg prices its algorithm's closed form, collfit its curve).
	ViewCollective = "collective"
	// ViewP2PReduce states it as the rounds of single messages of its
	// algorithm ("pingpong" points) and the local reductions between them
	// ("reducelocal" points).
	ViewP2PReduce = "p2p+reduce"
)

// reduceLocalIters is the iters of the reducelocal points the workloads
// name: the pattern's default.
const reduceLocalIters = patterns.DefaultReduceLocalIters

// CollectiveWorkload states one call of MPI's collective op on p ranks, at
// the bytes its "collective" records carry, with algorithm alg ("default":
// model.DefaultCollAlg), as workload items every model kind reads one view
// of, in this order:
//
//   - ViewCollective: the collective's own point (op, bytes, alg, float sums
//     for the reductions);
//   - ViewAggregate: paper 003's operation for bcast, allgather, scatter
//     and alltoall (the two-level model, BSP, postal);
//   - ViewP2PReduce (reductions only): the algorithm's rounds
//     (model.CollRounds) as one-way messages and the local reductions
//     between them;
//   - ViewP2P: the same messages alone, for the point-to-point models,
//     which have no reduction term (a reduction's compute is left out).
//
// Priced by a Hockney fit (alpha = t_s, beta = t_w) the p2p view is the
// closed form with gamma = 0, message sizes rounded to whole bytes.
func CollectiveWorkload(op, alg string, bytes, p int) ([]results.WorkItem, error) {
	cop, err := mpi.ParseCollOp(op)
	if err != nil {
		return nil, err
	}
	rounds, err := model.CollRounds(op, alg, float64(bytes), p)
	if err != nil {
		return nil, err
	}
	if alg == "" {
		alg = patterns.AlgDefault
	}
	k := patterns.Collective{Op: cop, Alg: alg, Bytes: bytes, Type: mpi.Float32, Reduce: mpi.OpSum}
	if err := k.Check(p); err != nil {
		return nil, err
	}
	items := []results.WorkItem{{Count: 1, Bench: patterns.BenchCollective, Params: k.Params(p), Ranks: p, View: ViewCollective}}
	switch op {
	case "bcast", "allgather", "scatter", "alltoall":
		items = append(items, aggItem(1, op, bytes, p, 0))
	}
	var msgs, reds []results.WorkItem
	for _, r := range rounds {
		m := results.WorkItem{Count: r.Count, Bench: patterns.BenchPingPong, Params: results.Params{"bytes": int(math.Round(r.Bytes))}}
		msgs = append(msgs, m)
		if r.ReduceBytes > 0 {
			rb := int(math.Round(r.ReduceBytes))
			reds = append(reds, results.WorkItem{Count: r.Count, Bench: patterns.BenchReduceLocal,
				Params: results.Params{"bytes": rb - rb%4, "type": "float", "reduction": "sum", "iters": reduceLocalIters}, Ranks: p})
		}
	}
	var w workload
	for _, it := range append(msgs, reds...) {
		if len(reds) == 0 {
			break // the p2p view says it all
		}
		it.View = ViewP2PReduce
		w.add(it)
	}
	for _, it := range msgs {
		it.View = ViewP2P
		w.add(it)
	}
	items = append(items, w.list()...)
	for i, it := range items {
		if err := it.Validate(); err != nil {
			return nil, fmt.Errorf("apps: collective workload item %d: %w", i, err)
		}
	}
	return items, nil
}
