package patterns

import (
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// BenchRowContention is the bench name of row-contention records: param
// bytes, ranks 2n.
const BenchRowContention = "rowcontention"

// RowContention configures the fourth pattern of paper 001 (file
// 001_f25f9102f0478dfd.txt), section 3.4 (Intel Paragon, Figure 5): of 2n
// ranks placed along one row of the mesh, node i sends to node 2n - i + 1
// (the paper numbers from 1; here rank i < n exchanges with rank
// 2n - 1 - i), so the pairs are nested and all n messages cross the links
// in the middle of the row. The hyperbolic model reduces it to eq. 12,
//
//	a(n) = 2 a_p + 2n a_c,   b(n) = max{b_p, n b_c},
//
// and eqs. 13-14 give the network block. Where the ranks sit is up to the
// launcher: place consecutive ranks along the row (mpirun --map-by with a
// host file in row order) to get the paper's contention. Timing is as for
// Pairwise: half the round trip of concurrent ping-pongs, maximum over
// ranks. Ranks beyond 2n wait.
type RowContention struct {
	Bytes    int
	Pairs    int // n; 0 means p/2
	Iters    int // round trips per repetition; 0 = OSU-derived (Iterations), capped by CapIters
	Warmup   int // untimed round trips; 0 = OSU default, negative = none
	Validate bool
	Reps     Reps
}

// Check reports a configuration that cannot run on p ranks.
func (rc RowContention) Check(p int) error {
	return Pairwise{Bytes: rc.Bytes, Pairs: rc.Pairs, Reps: rc.Reps}.checkAs("rowcontention", p)
}

// Run measures T(Bytes, n) of the row pattern (collective over c); Ranks of
// the record is 2n.
func (rc RowContention) Run(c mpi.Comm) (Measurement, error) {
	if err := rc.Check(c.Size()); err != nil {
		return Measurement{}, err
	}
	n := pairsOrAll(rc.Pairs, c.Size())
	return concurrentPingPongs(c, rc.Bytes, rc.Iters, rc.Warmup, rowPairs(n), rc.Validate, rc.Reps)
}

// Params are the record parameters: the message size x (2n is the record's
// Ranks).
func (rc RowContention) Params(int) results.Params { return results.Params{"bytes": rc.Bytes} }

// Bench is the bench name of the records.
func (RowContention) Bench() string { return BenchRowContention }

// Record is the row-contention record of m; its Ranks is 2n.
func (rc RowContention) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchRowContention, rc.Params(m.CommSize), 2*pairsOrAll(rc.Pairs, m.CommSize), meta)
}

// rowPairs pairs rank i < n with rank 2n - 1 - i (nested pairs); ranks from
// 2n on wait.
func rowPairs(n int) pairFunc {
	return func(r int) (int, bool, bool) {
		if r >= 2*n {
			return 0, false, false
		}
		return 2*n - 1 - r, r < n, true
	}
}
