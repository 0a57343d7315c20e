// Package divalib is DIVA, the distributed-variables library of paper 004
// (Krick, Meyer auf der Heide, Räcke, Vöcking, Westermann, "Data Management
// in Networks: Experimental Evaluation of a Provably Good Strategy"):
// global variables, fully
// transparent to the caller, kept in the ranks' memories by the access-tree
// strategy or by the fixed-home strategy. Store implements globalvar.Store
// (docs/ARCHITECTURE.md, contract 2), so applications run unchanged over either, and
// over package emulate.
//
// # Strategies (paper 004, section 2)
//
//   - Access tree (accesstree.go): the ranks form a virtual Rows x Cols mesh
//     (Mesh), decomposed recursively by halving the longer side (Tree); every
//     variable has an access tree, a copy of the decomposition tree embedded
//     from a random root with the paper's locality-preserving "i mod m1,
//     j mod m2" rule (Tree.Embedding). Copies form a connected component of
//     the tree; reads copy the value along the tree path from the nearest
//     copy, writes invalidate every other copy and leave copies on the path
//     to the writer. Variants (Variant): 2-, 4- and 16-ary, and l-k-ary.
//   - Fixed home (fixedhome.go): a random home per variable and the ownership
//     scheme (owner or main memory; the home invalidates).
//
// Memory is optionally bounded per rank with least-recently-used
// replacement; the last copy of a variable is never dropped (memory.go).
// Locks are Raymond's token algorithm on the variable's access tree (a star
// around the home for the fixed-home strategy); the barrier combines and
// releases along a randomly embedded decomposition tree, or flat through
// rank 0, or is MPI_Ibarrier where the binding offers it (sync.go).
//
// # Progress: one goroutine per rank, serving while it waits
//
// Every MPI call of a store is made by the rank's one goroutine (MPI_THREAD_
// SERIALIZED; mpi/native keeps it on one OS thread). There is no helper
// goroutine: a rank serves other ranks' requests whenever it is inside the
// library. An access that needs messages sends its request and then runs
// the progress engine (Store.progress) until its own answer has arrived; the
// engine handles whatever arrives, its own answers and other ranks'
// requests alike. Nothing but a message changes what a rank waits for, so
// with nothing to handle it blocks until the next message arrives (Probe,
// or the native engine's wait on its posted receives, on the store's
// private duplicate of the communicator): on mpi/local the
// goroutine parks instead of spinning thousands of ranks on two cores.
// Sends never block (buffered, or Isends completed later), so two ranks
// that access each other's data at once cannot deadlock: each serves the
// other while it waits. A cached access polls once every pollEvery
// accesses, so a rank that only hits its cache still serves others.
// Barrier, Lock and Close wait the same way, and Close runs a barrier
// followed by termination detection (sums of protocol messages sent and
// received, reduced over the barrier tree until they agree) so that it
// keeps serving until no request of any rank is left in flight. Between
// library calls (local computation) a rank serves nobody; requests to it
// wait until its next access, barrier or Close, as on a processor without
// interrupts, or until it calls Poll (globalvar.Poller), which serves what
// has arrived without waiting.
//
// Batches (globalvar.Batcher: ReadBatch, WriteBatch; paper 000's k-access)
// keep up to k accesses in flight: each packet of a group starts an
// ordinary access of the strategy on its variable, and the rank waits once
// for all of them. The state of an access in progress lives with its
// variable, so a rank has at most one per variable: packets of a group on
// a variable already in flight wait for the next round of the group, and
// the others read the copy the first one fetched.
//
// Messages between tree nodes simulated by the same rank go through a local
// FIFO queue, never through MPI, and cost no startup and no link.
//
// # Transports
//
//   - mpi/native (mpi.EngineKernel): the polling, receiving, sending and
//     completion of sends, and the barriers, run in C (mpi/native/engine.c).
//     Go queues its messages and hands them over with the wait that
//     follows, so a barrier costs one cgo crossing and a message one at
//     each end. The fixed home's answer to a read that finds main memory
//     owning and no transaction in progress, its most common request, is
//     sent by the engine itself (mpi.EngineReplier: the home offers its
//     value while the variable is in that state, fhOffer, and does the
//     bookkeeping after, fhServed), so such a read costs the reader one
//     crossing and the home none. Received payloads go into buffers that
//     dropped copies gave back (fresh memory costs a page fault per 4 KiB),
//     and the fixed home's owner writes a value in place once no send reads
//     its buffer (mpi.EngineSendTracker, fhWritten).
//   - mpi/local (mpi.RefSender, mpi.ProcessShared): payloads, immutable
//     once sent, travel by reference, so a block exists once however many
//     ranks hold a copy; the catalogue of variable names is shared by the
//     ranks of a store. A rank makes its state of a variable on first
//     touch (only the root or home does at Create). With P variables and P
//     ranks that is what keeps matsquare at 64x64 within 2.4 GB.
//   - any other Comm: Isend, Iprobe/Probe and Recv.
//
// The barrier is the paper's combining tree by default, whose root sends
// the release of its one child on another rank (where it has one) as soon
// as its other children are in, so at 2 ranks the two messages cross;
// BarrierDissemination (ceil(log2 P) rounds of one message) is the fast
// one on few ranks. Both are counted like any other message, on every
// transport.
//
// # Coherence
//
// Per variable the store is linearizable: an access takes effect at one
// instant inside its call. Writes are serialised (access tree: by the write
// token, held by the last writer; fixed home: by the home), a write returns
// only after every other copy has acknowledged its invalidation, copies
// carry versions so a copy overtaken by an invalidation is never kept, and
// buffers are immutable once shared (a buffer written in place, under
// mpirun, is the writer's own, which no send reads any more and no other
// rank can see), so no read is torn. The argument is in
// the comments of accesstree.go and fixedhome.go; package storecheck checks
// it (versioned values and wall-clock stamps: zero stale, torn or unknown
// reads over 10^5 random operations per strategy, on mpi/local with 64
// ranks and under mpirun with 4).
//
// # Congestion accounting
//
// Every message between different ranks is charged, header (headerBytes)
// and payload, to the directed links of the dimension-order path between
// them in the virtual mesh (Traffic); congestion is the maximum over links,
// load the sum; startups are messages sent. The counts depend only on the
// algorithm, so they are the same on mpi/local (4096 ranks in one
// process) and on a cluster. MatSquareStore and MatSquareHand repeat the
// matrix-square experiment of section 3.1 with it.
//
// # Experiments
//
// RunCheck (the coherence suite), RunMatSquare and RunOverhead run the
// experiments of `commcost dsm check`, `matsquare` and `overhead` over a
// list of strategies on one world and hand over their records
// (experiments.go); the CLI parses flags and writes the records.
//
// Units: sizes and offsets are bytes (matrix blocks are counted in 4-byte
// ints, as in the paper), times seconds.
package divalib
