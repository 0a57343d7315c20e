// Package permsched schedules all-to-many personalized communication as an
// ordered list of partial permutations, and carries schedules out over
// mpi.Comm. It reproduces Ranka, Wang and Fox, "Static and Runtime Algorithms
// for All-to-Many Personalized Communication on Permutation Networks"
// (CRPC-TR94501, 1994; "the paper" below) and adds an optimal scheduler.
//
// # Model
//
// A communication Matrix is the paper's COM (Section 2) generalised to a
// bipartite multigraph: rank i sends any number of messages to rank j
// (COM(i,j) counts them), self-sends i -> i are allowed, and a message may
// carry its own size in bytes (the non-uniform case the paper leaves open).
// Messages are numbered 0..Len()-1 in row order; a Schedule names messages
// by these ids.
//
// A Schedule is an ordered list of phases. In a phased schedule every phase
// is a partial permutation: each rank sends at most one and receives at most
// one message in it (a self-send uses both of its rank's slots). Together the
// phases send every message exactly once. Validate checks both properties;
// every test runs it.
//
// # Schedulers
//
//   - AC: asynchronous send/receive (paper Section 3.1, Fig. 2). Its
//     schedule is Async: the phases are posting rounds, not permutations,
//     and the executor posts everything at once.
//   - LP: linear permutation (Section 3.2, Fig. 3), pairwise XOR exchange in
//     P-1 phases, P the next power of two >= n.
//   - GM: global masking (Section 3.3, Fig. 4), dense row scans.
//   - CGM: compact global masking (Section 4, Figs. 5 and 6), expected
//     d + log2 d phases (eq. 4) in O(d n ln d) time (eq. 1).
//   - EXACT: beyond the paper. By Konig's edge-colouring theorem a bipartite
//     multigraph whose maximum degree is D splits into exactly D matchings;
//     EXACT computes such a colouring (see Exact).
//
// Each scheduler is deterministic for a given seed. Scheduling runs either
// sequentially on a Matrix (the paper's static case) or at runtime with
// ScheduleParallel: each rank contributes (and for CGM compacts, Fig. 5) its
// own row, the rows are concatenated with Allgatherv, and every rank then
// computes the same schedule (Section 4, "Step 1 ... we can parallelize").
//
// # Execution and units
//
// An Exchange carries one schedule out over mpi.Comm with every message's
// bytes checked on arrival; MPI_Alltoallv of the installed MPI is the
// comparison baseline. Sizes are bytes, times are seconds.
//
// The experiments of the paper's Section 5 (Table 4 counts, Tables 2/3
// communication times, the Section 5.1 break-even analysis) live in
// experiment*.go and are driven by `commcost sched`.
//
// # Reproduction notes
//
// CGM's mean permutation count reproduces Table 4 (the figures are in
// docs/findings/scheduling.md). CGM's count depends on column labels
// only through equality, so Fig. 7's row and column swaps matter only
// through the row order; Fig7 uses uniformly random permutations, the
// limit of the paper's "ManyTimes" swaps.
//
// GM's Fig. 4 leaves the start of a row scan open; see GM for why the
// default starts row x at column x (it reproduces Tables 2 and 3, column 0
// does not).
package permsched
