package report

import (
	"math"
	"math/rand/v2"

	"github.com/commcost/commcost/results"
)

// timeRec is a time record with median y and a CI95 of ±1% (the extremes
// of its repetitions, as Summarize gives for few of them), with the
// metadata a run writes: a launch of its ranks on one host.
func timeRec(bench string, params results.Params, ranks int, y float64) results.Record {
	return results.Record{
		Schema: results.SchemaVersion, Bench: bench, Params: params, Ranks: ranks, Unit: "s",
		Summary: results.Summary{N: 9, Min: 0.99 * y, Median: y, Mean: y, Max: 1.01 * y, P90: y, P99: y, CI95: [2]float64{0.99 * y, 1.01 * y}},
		Meta: results.Meta{MPILibrary: "Open MPI v4.1.4", Hosts: []string{"node1"}, RanksPerHost: []int{max(ranks, 1)},
			Backend: "native", Commit: "0123456789ab", Date: "2025-06-01T12:00:00Z"},
	}
}

// runRecords is a small suite run: ping-pong with a protocol switch at
// 8 KiB and a k-k-access grid from paper 000's Table 1 (BF(3)), with 1%
// fixed-seed noise.
func runRecords() []results.Record {
	rng := rand.New(rand.NewPCG(5, 9))
	noise := func(y float64) float64 { return y * (1 + 0.01*rng.NormFloat64()) }
	var recs []results.Record
	for e := 0; e <= 20; e++ {
		m := math.Ldexp(1, e)
		y := 0.5e-6 + 0.2e-9*m
		if m >= 8192 {
			y = 4e-6 + 0.08e-9*m
		}
		recs = append(recs, timeRec("pingpong", results.Params{"bytes": int(m)}, 2, noise(y)))
	}
	c := [8]float64{0.519, 102.2, 4.989, 2.341, 382.4, 15.23, -51.73, 1242}
	for _, k := range []int{1, 2, 4, 8} {
		for e := 6; e <= 12; e++ {
			l := 1 << e
			for _, r := range []float64{0.25, 0.5, 1} {
				fk, fl := float64(k), float64(l)
				y := (c[0]*fk*fl*r + c[1]*fk*r + c[2]*fk*fl + c[3]*fl*r + c[4]*fk + c[5]*fl + c[6]*r + c[7]) * 1e-6
				recs = append(recs, timeRec("kkaccess", results.Params{"k": k, "l": l, "r": r, "op": "read"}, 8, noise(y)))
			}
		}
	}
	return recs
}

// byBench keeps the records of one bench.
func byBench(recs []results.Record, bench string) []results.Record {
	var out []results.Record
	for _, r := range recs {
		if r.Bench == bench {
			out = append(out, r)
		}
	}
	return out
}
