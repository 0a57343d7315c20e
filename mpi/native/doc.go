// Package native is the cgo binding to the system MPI library: it implements
// mpi.Comm (and mpi.Describer, mpi.Kernels, mpi.AccessKernel,
// mpi.BatchKernels, mpi.Reducer, mpi.NonBlockingCollectives) for programs
// run under mpirun or srun. Every time
// commcost reports as a network measurement comes from here.
//
// The library is found with pkg-config: Open MPI (ompi-c) by default, MPICH
// (mpich) with the build tag "mpich". This is the only package of commcost
// that imports "C"; the C side lives in shim.c/shim.h, access.c and
// harness.c/harness.h.
//
// # Life cycle
//
// A program calls Start once, uses World (and communicators made from it by
// Split and Dup), and calls Stop before exiting, from the same goroutine as
// Start (ideally main). The API follows gompi where that is cheap:
//
//	if err := native.Start(native.ThreadSingle); err != nil { ... }
//	defer native.Stop()
//	c := native.World()
//
// # Thread levels
//
// Start locks its goroutine to its OS thread (runtime.LockOSThread): MPI
// wants MPI_Finalize on the thread that called MPI_Init_thread, and under
// the thread-bound levels every call must come from that thread.
//
//   - ThreadSingle and ThreadFunneled (thread-bound): only the goroutine
//     that called Start may use MPI. The Go runtime's own threads never call
//     MPI, so a Go program meets what these levels ask of the library.
//     The C side checks the rule on every call that enters MPI (a
//     thread-local load, about a nanosecond) and returns an *mpi.Error of
//     class mpi.ErrOther ("called from another OS thread ...") instead of
//     calling the library from another thread; a refused Wait leaves its
//     request in flight. The commcost command uses ThreadSingle: everything
//     it does runs on one goroutine, and it is the level MPI_Init gives
//     OSU's benchmarks. It matters for the numbers: on Open MPI 4.1.4 here
//     a C ping-pong with osu_latency's loop takes 0.14-0.19 us
//     per 8-byte message under SINGLE and 0.20-0.25 us under FUNNELED or
//     SERIALIZED (12 alternated runs of each).
//   - ThreadSerialized: any goroutine may call MPI, one at a time. Go
//     moves goroutines between OS threads, and `go test` runs every test on
//     a new goroutine, so this package's own tests use this level. The rule
//     "one goroutine at a time" of mpi.Comm then covers the whole process:
//     no two MPI calls may overlap, even on different communicators.
//   - ThreadMultiple: anything goes, at the cost of a lock inside the
//     library on every call.
//
// Below ThreadMultiple the binding checks that no two calls overlap with an
// atomic flag (a few ns per call) and returns an *mpi.Error with class
// mpi.ErrOther instead of letting two calls corrupt the library's state.
// The ordering between goroutines that the rule requires is given by
// whatever Go synchronisation hands the Comm from one goroutine to the next
// (channel, WaitGroup, mutex). Wtime and Wtick are exempt from both checks
// (they only read a clock).
//
// # Errors
//
// MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, MPI_COMM_SELF and every
// communicator this package creates, so a bad rank, tag, root or count comes
// back as *mpi.Error{Op: "MPI_Send", Class, Code, Msg} and never aborts the
// job. Class is translated to the mpi.Err* numbering by name, because the
// libraries number their classes differently (MPICH's MPI_ERR_ROOT is 7,
// Open MPI's 8). Arguments the library cannot see correctly are checked
// here first and reported with the library's code and text for the class:
// negative ranks (their values are the library's MPI_ANY_SOURCE,
// MPI_PROC_NULL or MPI_ROOT), byte counts above mpi.MaxCount (the C int
// count argument; never truncated), and the lengths and bounds of the
// counts/displacements of the v-collectives against Size() and the buffers.
// Such local checks return before any communication; in a collective the
// other ranks may then wait for the failing one, as in MPI itself.
//
// # Buffers
//
// Units are bytes for buffers, counts and displacements, elements for the
// typed reductions, seconds for times. A blocking call passes &buf[0] to C
// for the duration of the call (cgo rules allow it). A non-blocking call
// pins its buffer with a runtime.Pinner and keeps the request in a
// package-level table until Wait or Test reports completion, so the buffer
// stays reachable and in place while MPI may still read or write it, even if
// the caller drops every reference to the request. Zero-length buffers are
// legal (a valid static C address is passed with count 0).
//
// # Kernels
//
// PingPong and Bandwidth run their whole timed loop in C, one cgo call per
// batch, timed with MPI_Wtime inside C (MEASURE.md: a cgo crossing is a
// large part of a shared-memory ping-pong). They follow OSU's osu_latency
// and osu_bw, including separate send and receive buffers for the
// ping-pong (see PingPong), so their figures match OSU's
// (scripts/bench_vs_osu.sh).
// Measured here (2 cores, Open MPI 4.1.4 shared memory): a cgo call costs
// about 30 ns, Wtime about 60 ns, the serialisation check about 5 ns, a
// complete non-communicating call (Iprobe) about 100 ns.
//
// NewAccess (mpi.AccessKernel) runs one repetition of paper 000's
// k-k-access / k-access protocol per cgo call (access.c), with its buffers
// in C memory. A request through the Go path (Isend, Irecv, Wait) costs
// several times what MPI takes: BenchmarkSelfRoundTrip, one message to
// oneself, about 650 ns against 99 ns for the same loop in C, and
// BenchmarkWaitany8 about 5 us against 0.85 us; a pattern that posts
// requests per packet in Go measures the binding, not the network, unless
// it has a kernel.
//
// NewEngine (mpi.EngineKernel) is the transport of a protocol that serves
// other ranks while it waits (divalib's store): engine.c polls, receives,
// sends and completes sends, and runs a combining-tree and a dissemination
// barrier, in C; Go queues its sends and hands them over with the wait
// that follows, so each protocol message costs one crossing on each side
// (two for a payload sent as a message of its own), and a barrier one.
// Requests of one kind can be answered by the engine itself, from a table
// of bodies that Go keeps up to date without crossing (mpi.EngineReplier:
// divalib's fixed-home reads), which costs the answering side no crossing.
// The engine counts the sends not yet completed from every Go body it was
// given and tells whether one still reads a buffer (mpi.EngineSendTracker:
// one MPI_Testsome when it might), so its owner may write it in place.
//
// # Batches
//
// The batch kernels (mpi.BatchKernels, mpi.AccessBatcher; batch.go and
// harness.c) run a batch of the harness's repetitions per cgo call: for
// every repetition an MPI_Barrier, the kernel timed from right after the
// barrier returns, and one MPI_Allreduce (max) of the ranks' times and a
// failure flag, the times written into the caller's arrays. So no Go code
// runs between a repetition's barrier and its timer, or between two
// repetitions, as in a C benchmark; the patterns apply their stopping rule
// between batches (patterns.MeasureBatch). StepsBatch replays a program of
// mpi.Steps (an aggregate operation's textbook algorithm, a permutation)
// with a switch per step in C instead of a cgo call per message.
// scripts/bench_vs_c.sh compares every pattern with a C program of the
// same protocol (scripts/ref).
package native
