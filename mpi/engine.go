package mpi

// EngineKernel is implemented by communicators that can run a message
// protocol's transport in the MPI library's own language (mpi/native): a
// library that serves other ranks' requests while it waits (package
// divalib) otherwise pays a cgo crossing for every Isend, Iprobe, Recv and
// Test, and a Go polling loop, per message; the engine polls, receives,
// sends, completes sends and runs a combining-tree barrier in C and
// returns to Go once per message. Callers fall back to plain Comm calls on
// backends without it.
type EngineKernel interface {
	NewEngine(spec EngineSpec) (Engine, error)
}

// EngineSpec configures an Engine.
type EngineSpec struct {
	// Tag carries every message of the engine and Tag+1 the bodies sent
	// apart (over InlineBytes), on a communicator the caller uses for
	// nothing else while the engine is open.
	Tag int
	// HeadBytes is the fixed header of every message.
	HeadBytes int
	// InlineBytes: a body up to this many bytes travels in its header's
	// message (copied); a longer one follows in a message of its own, sent
	// from the caller's memory and received into a buffer of its size.
	InlineBytes int
	// Alloc, if set, returns the buffers bodies are received into (a
	// caller that recycles its buffers avoids fresh memory, which costs a
	// page fault per 4 KiB when first written); nil allocates.
	Alloc func(n int) []byte
	// Barrier is this rank's part of a combining-tree barrier, the nodes it
	// simulates from its leaf upward; empty when the engine has no barrier.
	Barrier []BarrierNode
	// Reply, if set, lets the engine answer one kind of request itself
	// (EngineReplier); nil answers none.
	Reply *EngineReply
}

// EngineReply describes the requests an EngineReplier answers without
// returning to the caller, and the answer it sends. A request is a message
// without a body whose head has the byte Request at KindOffset; its key is
// the little-endian int32 at KeyOffset. If the caller has set a body for
// that key (EngineReplier.SetReply), the engine sends the source a message
// with head Head, the key written at KeyOffset, and that body; then it
// calls Served. Other messages, and requests for keys without a body, are
// returned to the caller as usual.
//
// A request served so costs no return to the caller and no entry into the
// engine between its arrival and the answer's departure: divalib's
// fixed-home read, whose home otherwise returns from C, runs its
// transaction in Go and enters C again to send the copy.
type EngineReply struct {
	KindOffset int
	Request    byte
	KeyOffset  int
	Head       []byte // HeadBytes
	// Served is called, on the caller's goroutine, for every request the
	// engine answered (with the answer's body bytes), in the order they
	// arrived, before the engine returns the message that arrived after
	// them (or the call returns); the caller does there what answering
	// the request would have done in its own code (its bookkeeping,
	// nothing to send).
	Served func(key, source, bytes int)
}

// EngineReplier is an Engine that answers requests itself (EngineSpec's
// Reply).
type EngineReplier interface {
	Engine
	// SetReply makes body the answer to requests with key (>= 0) until
	// ClearReply or the next SetReply of key. The engine sends from body's
	// memory (and keeps it alive while it does), so nobody may modify it
	// afterwards. Setting the body a key has already is cheap, also after
	// ClearReply; a new body costs about 80 ns (mpi/native pins it).
	SetReply(key int, body []byte) error
	// ClearReply returns requests with key to the caller again. It is
	// cheap: the engine may keep the key's body until the key's next
	// SetReply or Close.
	ClearReply(key int)
}

// EngineSendTracker is an Engine that tells whether MPI may still read
// memory it was given to send, so that its owner may reuse the memory
// instead of allocating anew (divalib writes a variable's value in place
// when no send reads it).
type EngineSendTracker interface {
	Engine
	// Sending reports whether a send from memory overlapping body (a
	// Send's body, or an answer from a SetReply body) has not completed;
	// it first completes the sends that have finished. Memory for which
	// it reports false, and that no reply offers (SetReply without a
	// ClearReply since), nobody else reads: its owner may modify it. On
	// an error it reports true.
	Sending(body []byte) (bool, error)
}

// BarrierNode is one node of a combining-tree barrier that this rank
// simulates. Arrivals combine up the tree (a node is complete when Need
// arrivals, with their sums, are in; a leaf's one arrival is its rank's
// own), the root releases down it with the sums.
type BarrierNode struct {
	ID         int32
	Need       int   // arrivals that complete the node: its children, or 1 at a leaf
	Parent     int32 // parent node, -1 at the root
	ParentRank int   // the rank simulating Parent (this rank: the next node of the list)
	Kids       []int32
	KidRanks   []int // children simulated by other ranks, released by message
}

// EngineMessage is a message an Engine received.
type EngineMessage struct {
	Source int
	Head   []byte // HeadBytes, valid until the engine's next call
	Body   []byte // a new slice, the caller's
}

// Engine is a message protocol's transport. Its methods are called by one
// goroutine, the rank's.
type Engine interface {
	// Send sends head (HeadBytes) followed by body to dest. head is
	// copied; body may be sent from its own memory after Send returns, so
	// nobody may modify it afterwards. A message may be queued until the
	// engine's next Next, Barrier, Dissemination, Flush or Close, which
	// then sends it first (messages to one rank keep their order).
	Send(head, body []byte, dest int) error
	// Flush sends the queued messages.
	Flush() error
	// Next returns the next message. Without block it only checks; with
	// block it waits until a message arrives or the barrier completes.
	// ok is false when there was no message.
	Next(block bool) (m EngineMessage, ok bool, err error)
	// Barrier enters the next barrier, contributing a and b to its sums,
	// and waits as Next(true) does: it returns when the barrier completed
	// at this rank (ok false) or a message arrived first (ok true; then
	// Next progresses the barrier). BarrierDone reports the sums once it
	// has completed.
	Barrier(a, b int64) (m EngineMessage, ok bool, err error)
	BarrierDone() (a, b int64, done bool)
	// Dissemination is a barrier without sums by the dissemination
	// algorithm (ceil(log2 P) rounds; in round k every rank notifies rank
	// me + 2^k mod P and waits for me - 2^k): one message latency per round
	// where the tree needs two per level. It waits like Barrier;
	// DisseminationDone reports completion.
	Dissemination() (m EngineMessage, ok bool, err error)
	DisseminationDone() bool
	// Close waits for the engine's sends to complete and releases it.
	Close() error
}
