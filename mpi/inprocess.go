package mpi

// Optional interfaces of a backend whose ranks share one address space
// (mpi/local). With P goroutine ranks in one process, state that every rank
// derives identically, and message payloads that nobody modifies, need not
// exist P times: a count-based study at 4096 ranks fits in memory only if
// they do not. Callers test for these interfaces and fall back to plain
// Comm calls otherwise (mpi/native, where every rank has its own process).

// ProcessShared is implemented by communicators whose ranks in this process
// can share a value.
type ProcessShared interface {
	// ProcessShared returns the value stored under key for this
	// communicator, made by mk on the first call from any of its ranks in
	// this process; later calls, from any rank, return the same value
	// (mk is not called again). The value is shared by goroutines: it must
	// be immutable or synchronise itself. key must be comparable.
	ProcessShared(key any, mk func() any) any
}

// RefSender is implemented by communicators that can pass a message's
// payload by reference instead of copying it.
type RefSender interface {
	// IsendRef sends head followed by body as one message of
	// len(head)+len(body) bytes, like Isend. head is copied before it
	// returns; body is not copied: the receiver may get the same memory,
	// so nobody may modify body after the call, ever. The request is
	// complete when returned.
	IsendRef(head, body []byte, dest, tag int) (Request, error)
	// RecvRef receives a message like Recv: its first len(head) bytes
	// into head, the rest returned as body, which may be the memory the
	// sender passed to IsendRef and must never be modified. Any message
	// can be received this way, and a message sent by IsendRef by any
	// receive. A message shorter than head fills a prefix of head
	// (Status.Count tells) and returns an empty body.
	RecvRef(head []byte, source, tag int) (body []byte, st Status, err error)
}
