// Package job is the runtime of one commcost job under mpirun or srun (or
// on the local backend's goroutine ranks): everything between a parsed
// command line and a library's Run(comm, emit).
//
//   - World starts the ranks: MPI_Init through the native binding the
//     program installs (UseNative; this package builds without MPI
//     headers), or n goroutine ranks of mpi/local; then the check that
//     every rank runs the same command, under a watchdog.
//   - The error policy: a step that may fail on some ranks only is agreed
//     (Agree), so the lowest failing rank prints the one message and every
//     rank exits alike; bad input (opts.IsBadInput) exits 2, a runtime
//     failure 1; an error only this rank has ends the job with MPI_Abort
//     (Main), so no peer waits for it forever.
//   - Demand: what a run's pattern instances (patterns.Demand) or its
//     structures ask of a rank, checked against the memory this host has
//     for its ranks and the time budget, before anything is allocated.
//   - Outputs: the --out file and stdout in a record format (Sink), every
//     record flushed as it completes; a progress line on a terminal's
//     stderr (Meter).
//   - Measure: the skeleton of a measuring subcommand (ranks checked,
//     demand checked, outputs opened, then the body).
//
// Messages name flags only through what callers pass (the flag text of a
// demand, the rank rule's error): the command line owns its flag names.
package job
