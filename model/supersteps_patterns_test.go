package model_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
)

// TestSuperstepsOfPatterns: the supersteps model.Supersteps states for an
// aggregate record are the rounds its implementation runs: as many as the
// pattern's rounds counter, and, summed over them, the pairs are the
// messages the pattern sends (counted on goroutine ranks).
func TestSuperstepsOfPatterns(t *testing.T) {
	quick := patterns.Reps{Warmup: -1, MinReps: 1, MaxReps: 1, MaxTime: 30}
	for _, p := range []int{4, 5, 6, 8, 9} {
		for _, impl := range []patterns.AggImpl{patterns.ImplTextbook, patterns.ImplMesh1D, patterns.ImplMesh2D} {
			for _, op := range patterns.AggKinds {
				if op == patterns.AggNEWS {
					continue // self-shifts of a one-row torus are rounds the pattern counts and no message
				}
				for _, q := range []int{1, p/2 + 1} {
					if op != patterns.AggQShift && q > 1 {
						continue
					}
					a := patterns.AggregateOp{Op: op, Impl: impl, Bytes: 8, Q: q, Iters: 1, Reps: quick}
					t.Run(fmt.Sprintf("p%d/%v/%v/q%d", p, impl, op, q), func(t *testing.T) {
						var mu sync.Mutex
						var sent float64
						var rounds float64
						err := local.Run(p, func(c mpi.Comm) error {
							m, err := a.Run(c)
							mu.Lock()
							sent += m.Mine.MsgsSent
							rounds = m.Counters[patterns.CounterTextbookRounds]
							mu.Unlock()
							return err
						})
						if err != nil {
							t.Fatal(err)
						}
						in := model.Instance{Pattern: "aggregate", Params: a.Params(p), Ranks: p}
						steps, err := model.Supersteps(in)
						if err != nil {
							t.Fatal(err)
						}
						var n, pairs float64
						for _, s := range steps {
							n += s.Count
							pairs += s.Count * float64(s.Pairs)
						}
						if n != rounds {
							t.Errorf("%v supersteps, the pattern runs %v rounds", n, rounds)
						}
						if pairs != sent {
							t.Errorf("%v messages over the supersteps, the pattern sent %v", pairs, sent)
						}
					})
				}
			}
		}
	}
}
