package patterns

import (
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// Pattern is one configured instance of a pattern of this package. Each
// pattern owns the schema of its records: Params names the point (the
// same parameters in the pattern's records and in an application's
// workload items, results.WorkItem), and Record builds the whole record of
// a measurement, bench name included.
type Pattern interface {
	// Run measures the instance on every rank of c (collective); every
	// rank gets the same Measurement except its own traffic (Mine).
	Run(c mpi.Comm) (Measurement, error)
	// Bench is the bench name of the pattern's records.
	Bench() string
	// Params are the record parameters of the instance on a communicator
	// of p ranks (some, such as the realised portion r of a k-k-access,
	// depend on p).
	Params(p int) results.Params
	// Demand is what the instance asks of one rank on a communicator of
	// p ranks (memory, and the fewest messages a repetition moves),
	// from its parameters alone: callers check it against the machine
	// and the time budget before anything is allocated (demand.go).
	Demand(p int) Demand
	// Record is the pattern's record of m, a Measurement its Run returned.
	Record(m Measurement, meta results.Meta) results.Record
}

// withCounter returns rec with one more counter: the asked value of a
// parameter whose realised value the record's params hold.
func withCounter(rec results.Record, name string, v float64) results.Record {
	if rec.Counters == nil {
		rec.Counters = map[string]float64{}
	}
	rec.Counters[name] = v
	return rec
}

var (
	_ Pattern = PingPong{}
	_ Pattern = Bandwidth{}
	_ Pattern = KKAccess{}
	_ Pattern = KAccess{}
	_ Pattern = RoundTrip{}
	_ Pattern = AllToAll{}
	_ Pattern = Pairwise{}
	_ Pattern = RowContention{}
	_ Pattern = PRTT{}
	_ Pattern = Permutations{}
	_ Pattern = AggregateOp{}
	_ Pattern = GridShift{}
	_ Pattern = Collective{}
	_ Pattern = Bibw{}
	_ Pattern = MultiBandwidth{}
	_ Pattern = MultiLatency{}
	_ Pattern = NonBlocking{}
	_ Pattern = OneSided{}
	_ Pattern = ReduceLocal{}
)
