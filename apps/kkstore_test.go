package apps

import (
	"fmt"
	"testing"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestStoreKKAccess: the store driver's records name the point as kkaccess
// records do, with the realised r and the store as the network.
func TestStoreKKAccess(t *testing.T) {
	for _, ts := range testStores[:3] {
		for _, op := range []patterns.AccessOp{patterns.AccessRead, patterns.AccessWrite} {
			t.Run(fmt.Sprintf("%s/%s", ts.name, op), func(t *testing.T) {
				err := ts.run(4, func(env Env) error {
					for _, r := range []float64{0.5, 1} {
						kk := patterns.KKAccess{K: 3, L: 100, R: r, Op: op, Seed: 2, Reps: patterns.Reps{MinReps: 3, MaxReps: 3, Warmup: -1}}
						rec, err := StoreKKAccess(env, kk, ts.name, results.Meta{Backend: "local"})
						if err != nil {
							return err
						}
						if err := rec.Validate(); err != nil {
							return err
						}
						want := results.Params{"k": 3, "l": 100, "r": r, "op": op.String(), "network": ts.name}
						if fmt.Sprint(rec.Params) != fmt.Sprint(want) || rec.Bench != "kkaccess" || rec.N != 3 || !(rec.Median > 0) {
							return fmt.Errorf("record %s %v n=%d median %v, want %v", rec.Bench, rec.Params, rec.N, rec.Median, want)
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
