// Package patterns holds commcost's communication patterns, one file each,
// written against mpi.Comm, and the repetition harness they share. The
// patterns, by paper (README.md's references):
//
//   - pingpong.go, bandwidth.go: OSU-style latency and bandwidth;
//   - kkaccess.go, kaccess.go (engine in access.go): the k-k-access
//     (Definition 2) and the k-access with receive hot spot and asynchrony
//     (section 5) of paper 000;
//   - roundtrip.go, alltoall.go, pairwise.go, rowcontention.go: the
//     measurement patterns of the hyperbolic model, paper 001 section 3;
//   - prtt.go: netgauge's parametrised round trips for LogGP;
//   - permutations.go: the random permutations of paper 002, Table 1;
//   - aggregate.go: the aggregate communication operations of paper 003
//     (the paper's own word; bench "aggregate"), through MPI's collectives
//     and through the algorithms of its cost table.
//
// Each pattern owns its record: it exports its bench name (Bench* constants)
// and builds the record's parameters (Params, used also to name a point in
// an application's workload, results.WorkItem) and the whole record from a
// Measurement (Record). Callers never spell a pattern's parameters; so a
// record of the same point is the same whether the CLI, the suite, optimize
// or emulate measured it.
//
// The harness (harness.go and batch.go, with the synchronised clock in
// syncclock.go and the traffic counts in counts.go) applies the timing
// rules of docs/MEASURE.md:
//
//   - untimed warm-up repetitions first;
//   - adaptive repetitions: repeat until the nonparametric 95% confidence
//     interval of the median is within RelCI of the median, or a cap on
//     repetitions or time is hit; the record says which stopped it
//     (results.Stop*);
//   - a repetition's time is a rank reduction of the per-rank times
//     (results.Reduction*): the maximum over ranks (ReduceMax), or the
//     initiator's time for two-party patterns measured from one side as OSU
//     does (ReduceRank0), or, with the synchronised window start, the
//     latest end minus the common start on a synchronised clock;
//   - the synchronised clock (syncclock.go) re-measures the ranks' offsets
//     every Reps.ResyncSec and fits a linear drift to them (ReproMPI's
//     linear clock model), so a long point keeps its start in step; a
//     repetition some rank started late is redone, not kept, and counted
//     (Measurement.Late, the record counter "late_redone");
//   - every repetition's time is kept (but late window starts); ranks'
//     per-rank medians are reported as min/avg/max across the ranks that
//     take part.
//
// The patterns run their repetitions through MeasureBatch (batch.go): a
// batch of repetitions per call of the backend, which on the native
// backend runs the barrier, the timed kernel and the reduction of every
// repetition in C (mpi.BatchKernels), so no Go code runs between a
// repetition's barrier and its timer, as in a C benchmark; the stopping
// rule is applied between batches. Backends without batch kernels run
// the same repetitions in Go (SerialBatch). Patterns made of a short
// program of MPI operations (aggregate.go's textbook algorithms, a
// permutation) build it once as mpi.Steps (program.go), for the native
// backend to replay in C and any other to run with mpi.RunSteps.
//
// Patterns that also count their traffic report it per rank and repetition
// in Counts and reduce it over ranks with CountersOf; the Measurement
// carries both (Mine, Counters).
//
// Units: seconds and bytes.
package patterns
