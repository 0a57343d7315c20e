package mpi

import (
	"errors"
	"fmt"
)

// Batches of timed repetitions in the backend's language.
//
// A pattern's repetition (patterns.Measure) is: a barrier, this rank's
// timed kernel, and a max-reduction of the ranks' times. When the barrier
// and the reduction are Go calls around a foreign kernel call, every
// repetition crosses into Go between the barrier's exit and the start of
// the timer, and the Go code run there (the harness, the next random
// instance, the garbage collector) widens the skew between the ranks'
// starts and evicts the cache lines the messages use. At sub-microsecond
// repetitions that is visible against a C program of the same protocol
// (scripts/bench_vs_c.sh). BatchKernels run a
// whole batch of repetitions, barrier and reduction included, in one
// foreign call; the harness applies its stopping rule between batches.

// Batch describes one batch of repetitions and receives their times.
type Batch struct {
	// Own receives this rank's time of every repetition in seconds, 0 for
	// a repetition it takes no part in; len(Own) is the batch's size.
	Own []float64
	// Samples receives every repetition's time reduced over the ranks (the
	// maximum of Own, or rank 0's with Rank0) when Sync is set; it must be
	// at least as long as Own then, and is not touched otherwise.
	Samples []float64
	// Sync makes every repetition the harness's SyncBarrier repetition: an
	// MPI barrier right before the timed kernel, and after it an
	// MPI_Allreduce (max) of the ranks' times and of a failure flag, so
	// that all ranks stop after the same repetition when one fails.
	// Without Sync the repetitions run back to back on this rank alone
	// (the synchronised-window start calls one at a time, having waited
	// for its start time).
	Sync bool
	// Rank0 makes a repetition's sample rank 0's time (the initiator of a
	// two-party pattern) instead of the maximum over ranks.
	Rank0 bool
}

// Reps is the number of repetitions in the batch.
func (b Batch) Reps() int { return len(b.Own) }

// Check reports a batch no backend can run: none, or too few Samples.
func (b Batch) Check() error {
	switch {
	case len(b.Own) < 1 || len(b.Own) > MaxCount:
		return fmt.Errorf("batch of %d repetitions: need 1..%d", len(b.Own), MaxCount)
	case b.Sync && len(b.Samples) < len(b.Own):
		return fmt.Errorf("batch of %d repetitions with %d samples: Samples must hold one per repetition", len(b.Own), len(b.Samples))
	}
	return nil
}

// ErrPeerFailed is returned by a synchronised batch on the ranks whose
// repetition went well when another rank's failed in the same repetition;
// the failing rank returns its own error.
var ErrPeerFailed = errors.New("another rank failed in the same repetition")

// NoPeer is the peer of a rank that takes no part in a two-party batch
// (PingPongBatch, BandwidthBatch, PRTTBatch): it joins the barriers and
// reductions and reports 0.
const NoPeer = -1

// PRTTReport selects the time a rank reports from PRTTBatch.
type PRTTReport int

const (
	PRTTElapsed  PRTTReport = iota // the elapsed time of the exchanges
	PRTTArrivals                   // the server's first-to-last arrival times, summed
	PRTTNothing                    // 0: the rank runs its side but is not timed
)

// BatchKernels is implemented by backends that run the patterns' timed
// kernels a batch of repetitions per foreign call (mpi/native). Every
// method runs b.Reps() repetitions of the kernel its name gives, with the
// same arguments as the single-call kernels (Kernels, PRTTKernel,
// AllToAllKernel), and writes the times into b. It is collective over the
// communicator when b.Sync is set: every rank calls the same method with
// the same batch size, idle ranks included. Patterns use it when present
// and fall back to repetitions in Go otherwise.
type BatchKernels interface {
	// PingPongBatch: iters round trips per repetition (Kernels.PingPong);
	// a rank with peer NoPeer takes no part.
	PingPongBatch(b Batch, send, recv []byte, peer, tag, iters int, initiator bool) error
	// BandwidthBatch: iters windows per repetition (Kernels.Bandwidth); a
	// rank with peer NoPeer takes no part.
	BandwidthBatch(b Batch, buf []byte, peer, tag, window, iters int, sender bool) error
	// PRTTBatch: iters PRTT(n, d, s) exchanges per repetition
	// (PRTTKernel.PRTT), reporting the time report selects; a rank with
	// peer NoPeer takes no part.
	PRTTBatch(b Batch, buf []byte, peer, tag, n int, delay float64, iters int, client, serverDelay bool, report PRTTReport) error
	// AllToAllBatch: iters exchanges among ranks 0..n-1 per repetition
	// (AllToAllKernel.AllToAllPt2Pt); ranks from n on take no part.
	AllToAllBatch(b Batch, send, recv []byte, block, n, tag, iters int) error
	// StepsBatch runs a program of Steps over bufs iters times per
	// repetition: progs[0] in every repetition when len(progs) is 1,
	// else progs[i] in repetition i (len(progs) = b.Reps()). A rank whose
	// program is empty takes no part.
	StepsBatch(b Batch, bufs [][]byte, progs [][]Step, iters int) error
}

// AccessBatcher is implemented by access runners (AccessRunner) that run a
// batch of repetitions per foreign call: runs[i] is repetition i, as Run
// takes it. Served then lists the requests served in the last repetition.
// After an error the runner must not be used, as after Run.
type AccessBatcher interface {
	RunBatch(b Batch, runs []AccessRun) error
}

// StepOp is the operation of one Step.
type StepOp uint8

// Step operations. Spans name byte ranges of a program's buffers.
const (
	StepSend      StepOp = iota + 1 // MPI_Send of Send to Peer
	StepRecv                        // MPI_Recv into Recv from From
	StepSendrecv                    // MPI_Sendrecv: Send to Peer, Recv from From
	StepCopy                        // local copy of Send into Recv (equal lengths)
	StepBcast                       // MPI_Bcast of the buffer Send from root Peer
	StepAllgather                   // MPI_Allgather of Send into Recv (Size()*Send.Len bytes)
	StepScatter                     // MPI_Scatter of Send (at root Peer: Size()*Recv.Len bytes) into Recv
	StepAlltoall                    // MPI_Alltoall of Send into Recv, Send.Len/Size() bytes per block
	StepAlltoallv                   // MPI_Alltoallv of Send into Recv with Counts
	stepEnd
)

var stepNames = [...]string{StepSend: "send", StepRecv: "recv", StepSendrecv: "sendrecv", StepCopy: "copy",
	StepBcast: "bcast", StepAllgather: "allgather", StepScatter: "scatter", StepAlltoall: "alltoall", StepAlltoallv: "alltoallv"}

func (o StepOp) String() string {
	if o > 0 && o < stepEnd {
		return stepNames[o]
	}
	return fmt.Sprintf("StepOp(%d)", int(o))
}

// Span is Len bytes at offset Off of buffer Buf of a program.
type Span struct{ Buf, Off, Len int }

// Step is one operation of a program that a pattern builds once and a
// backend replays (StepsBatch, or RunSteps on any Comm): the textbook
// algorithms of aggregate operations, the exchange of a permutation.
type Step struct {
	Op         StepOp
	Send, Recv Span
	Peer       int // destination of a send; the root of Bcast and Scatter
	From       int // source of a receive
	Tag        int
	// Counts holds Alltoallv's send counts, send displacements, receive
	// counts and receive displacements, Size() each, in bytes relative to
	// Send.Off and Recv.Off.
	Counts []int
}

// MaxStepBuffers is the most buffers a program may use.
const MaxStepBuffers = 4

// CheckSteps reports the first step of steps that is not a well-formed
// operation on size ranks over buffers of the given lengths: a span
// outside its buffer, a rank outside [0, size), sizes a collective cannot
// take. Both executors check a program with it before running any step, so
// a bad program is an error on every rank that holds it instead of a panic
// or a buffer overrun.
func CheckSteps(size int, bufLens []int, steps []Step) error {
	if len(bufLens) > MaxStepBuffers {
		return fmt.Errorf("%d buffers: a program takes at most %d", len(bufLens), MaxStepBuffers)
	}
	span := func(i int, what string, s Span) error {
		if s.Buf < 0 || s.Buf >= len(bufLens) || s.Off < 0 || s.Len < 0 || s.Len > MaxCount || s.Off > bufLens[s.Buf]-s.Len {
			return fmt.Errorf("step %d: %s span %+v outside the program's buffers %v", i, what, s, bufLens)
		}
		return nil
	}
	rank := func(i int, what string, r int) error {
		if r < 0 || r >= size {
			return fmt.Errorf("step %d: %s %d outside [0, %d)", i, what, r, size)
		}
		return nil
	}
	for i, s := range steps {
		var err error
		switch s.Op {
		case StepSend:
			err = errors.Join(span(i, "send", s.Send), rank(i, "destination", s.Peer))
		case StepRecv:
			err = errors.Join(span(i, "receive", s.Recv), rank(i, "source", s.From))
		case StepSendrecv:
			err = errors.Join(span(i, "send", s.Send), span(i, "receive", s.Recv), rank(i, "destination", s.Peer), rank(i, "source", s.From))
		case StepCopy:
			err = errors.Join(span(i, "send", s.Send), span(i, "receive", s.Recv))
			if err == nil && s.Send.Len != s.Recv.Len {
				err = fmt.Errorf("step %d: copy of %d bytes into %d", i, s.Send.Len, s.Recv.Len)
			}
		case StepBcast:
			err = errors.Join(span(i, "buffer", s.Send), rank(i, "root", s.Peer))
		case StepAllgather:
			err = errors.Join(span(i, "send", s.Send), span(i, "receive", s.Recv))
			if err == nil && s.Recv.Len != size*s.Send.Len {
				err = fmt.Errorf("step %d: allgather of %d bytes into %d, want %d x %d", i, s.Send.Len, s.Recv.Len, size, s.Send.Len)
			}
		case StepScatter:
			err = errors.Join(span(i, "send", s.Send), span(i, "receive", s.Recv), rank(i, "root", s.Peer))
			if err == nil && s.Send.Len < size*s.Recv.Len {
				err = fmt.Errorf("step %d: scatter of %d bytes, want at least %d x %d", i, s.Send.Len, size, s.Recv.Len)
			}
		case StepAlltoall:
			err = errors.Join(span(i, "send", s.Send), span(i, "receive", s.Recv))
			if err == nil && (s.Send.Len%size != 0 || s.Recv.Len != s.Send.Len) {
				err = fmt.Errorf("step %d: alltoall of %d bytes into %d: want equal lengths, a multiple of %d", i, s.Send.Len, s.Recv.Len, size)
			}
		case StepAlltoallv:
			err = errors.Join(span(i, "send", s.Send), span(i, "receive", s.Recv))
			if err == nil {
				err = checkAlltoallv(i, size, s)
			}
		default:
			err = fmt.Errorf("step %d: unknown operation %v", i, s.Op)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkAlltoallv checks Counts against the step's spans.
func checkAlltoallv(i, size int, s Step) error {
	if len(s.Counts) != 4*size {
		return fmt.Errorf("step %d: alltoallv with %d counts, want 4 x %d", i, len(s.Counts), size)
	}
	for part, n := range []int{s.Send.Len, s.Recv.Len} {
		counts, displs := s.Counts[2*part*size:][:size], s.Counts[(2*part+1)*size:][:size]
		for r := range size {
			if counts[r] < 0 || displs[r] < 0 || displs[r] > n-counts[r] {
				return fmt.Errorf("step %d: alltoallv block %d of %d bytes at %d outside a span of %d", i, r, counts[r], displs[r], n)
			}
		}
	}
	return nil
}

// RunSteps runs steps once on c over bufs, each step through the Comm's
// own call: the executor of backends without StepsBatch, and of the
// native backend where a pattern must see every step (validation). It
// checks the program first (CheckSteps).
func RunSteps(c Comm, bufs [][]byte, steps []Step) error {
	lens := make([]int, len(bufs))
	for i, b := range bufs {
		lens[i] = len(b)
	}
	if err := CheckSteps(c.Size(), lens, steps); err != nil {
		return err
	}
	at := func(s Span) []byte { return bufs[s.Buf][s.Off : s.Off+s.Len] }
	for _, s := range steps {
		var err error
		switch s.Op {
		case StepSend:
			err = c.Send(at(s.Send), s.Peer, s.Tag)
		case StepRecv:
			_, err = c.Recv(at(s.Recv), s.From, s.Tag)
		case StepSendrecv:
			_, err = c.Sendrecv(at(s.Send), s.Peer, s.Tag, at(s.Recv), s.From, s.Tag)
		case StepCopy:
			copy(at(s.Recv), at(s.Send))
		case StepBcast:
			err = c.Bcast(at(s.Send), s.Peer)
		case StepAllgather:
			err = c.Allgather(at(s.Send), at(s.Recv))
		case StepScatter:
			err = c.Scatter(at(s.Send), at(s.Recv), s.Peer)
		case StepAlltoall:
			err = c.Alltoall(at(s.Send), at(s.Recv))
		case StepAlltoallv:
			p := c.Size()
			err = c.Alltoallv(at(s.Send), s.Counts[:p], s.Counts[p:2*p], at(s.Recv), s.Counts[2*p:3*p], s.Counts[3*p:])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// BibwKernels is implemented by backends that run osu_bibw's loop in the
// MPI library's language, a batch of repetitions per foreign call (as
// BatchKernels).
type BibwKernels interface {
	// BibwBatch runs iters windows per repetition between this rank and
	// peer: both post window Irecvs into recv and window Isends of
	// len(send) bytes from send, then wait for them, the first rank for
	// its sends first (OSU's rank 0), the other for its receives first. A
	// rank with peer NoPeer takes no part.
	BibwBatch(b Batch, send, recv []byte, peer, tag, window, iters int, first bool) error
}
