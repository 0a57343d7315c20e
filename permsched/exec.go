package permsched

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/commcost/commcost/mpi"
)

// AlltoallvName is the name of the MPI_Alltoallv baseline in tables and
// records.
const AlltoallvName = "Alltoallv"

// execTag is the tag of every schedule message. One tag suffices: a rank
// receives from one source in phase order and MPI's non-overtaking rule
// delivers that source's messages in the order they were sent.
const execTag = 0x5c4d

// SizeError is a schedule run on a communicator whose size differs from the
// matrix's: bad input (the CLI reports it as a usage error).
type SizeError struct {
	Matrix, Comm int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("the matrix has %d ranks but the run has %d: run with mpirun -np %d (or a matrix of %d ranks)", e.Matrix, e.Comm, e.Matrix, e.Comm)
}

// Exchange is one rank's prepared part of carrying out one all-to-many
// exchange: a schedule's phases, AC's post-everything, or MPI_Alltoallv.
// Buffers are allocated and filled once by NewExchange; Run moves the
// bytes, Verify checks every received message against the pattern its
// sender wrote, Clear zeroes the receive buffer so the next Run is checked
// afresh.
type Exchange struct {
	c        mpi.Comm
	name     string
	m        *Matrix
	s        *Schedule // nil for Alltoallv
	msgBytes int
	plan     []Step

	send, recv []byte
	sendOff    []int // by message id: offset in send, -1 if not ours
	recvOff    []int // by message id: offset in recv, -1 if not ours
	incoming   []int32

	// Alltoallv layout, by rank.
	sendCounts, sendDispls, recvCounts, recvDispls []int

	reqs []mpi.Request
}

// NewExchange prepares this rank's part of schedule s with msgBytes per
// message (ignored for a weighted matrix, whose messages carry sizes).
// It returns a *SizeError when the communicator's size is not the
// matrix's. Local (not collective).
func NewExchange(c mpi.Comm, s *Schedule, msgBytes int) (*Exchange, error) {
	x, err := newExchange(c, s.M, msgBytes, s.Scheduler)
	if err != nil {
		return nil, err
	}
	x.s = s
	x.plan = s.Plan(c.Rank())
	return x, nil
}

// NewAlltoallv prepares this rank's part of m carried out by one
// MPI_Alltoallv: the messages to one destination are concatenated in id
// order, the comparison baseline of experiment 2.
func NewAlltoallv(c mpi.Comm, m *Matrix, msgBytes int) (*Exchange, error) {
	return newExchange(c, m, msgBytes, AlltoallvName)
}

func newExchange(c mpi.Comm, m *Matrix, msgBytes int, name string) (*Exchange, error) {
	if c.Size() != m.N() {
		return nil, &SizeError{Matrix: m.N(), Comm: c.Size()}
	}
	if msgBytes < 0 || msgBytes > maxMessageBytes {
		return nil, fmt.Errorf("permsched: message size %d bytes, want 0..%d", msgBytes, maxMessageBytes)
	}
	n, me := m.N(), c.Rank()
	x := &Exchange{c: c, name: name, m: m, msgBytes: msgBytes,
		sendOff: make([]int, m.Len()), recvOff: make([]int, m.Len()),
		sendCounts: make([]int, n), sendDispls: make([]int, n),
		recvCounts: make([]int, n), recvDispls: make([]int, n),
	}
	for i := range x.sendOff {
		x.sendOff[i], x.recvOff[i] = -1, -1
	}
	// Send layout: grouped by destination, id order within a destination
	// (what Alltoallv needs; the schedules index it by id).
	byDst := make([][]int32, n)
	for id := m.RowStart(me); id < m.RowStart(me+1); id++ {
		byDst[m.Dst(id)] = append(byDst[m.Dst(id)], int32(id))
	}
	off := 0
	for j, ids := range byDst {
		x.sendDispls[j] = off
		for _, id := range ids {
			x.sendOff[id] = off
			off += m.Bytes(int(id), msgBytes)
		}
		x.sendCounts[j] = off - x.sendDispls[j]
	}
	if off > maxMessageBytes {
		return nil, fmt.Errorf("permsched: rank %d sends %d bytes in total, more than one MPI call carries (%d)", me, off, maxMessageBytes)
	}
	x.send = make([]byte, off)
	// Receive layout: grouped by source (ids are in source order already).
	off = 0
	prev := -1
	for id := 0; id < m.Len(); id++ {
		if m.Dst(id) != me {
			continue
		}
		src := m.Src(id)
		if src != prev {
			x.recvDispls[src] = off
			prev = src
		}
		x.recvOff[id] = off
		x.incoming = append(x.incoming, int32(id))
		off += m.Bytes(id, msgBytes)
		x.recvCounts[src] = off - x.recvDispls[src]
	}
	if off > maxMessageBytes {
		return nil, fmt.Errorf("permsched: rank %d receives %d bytes in total, more than one MPI call carries (%d)", me, off, maxMessageBytes)
	}
	x.recv = make([]byte, off)
	for id := m.RowStart(me); id < m.RowStart(me+1); id++ {
		fillPattern(x.sendBuf(int32(id)), int32(id))
	}
	return x, nil
}

// Name is the scheduler's name, or AlltoallvName.
func (x *Exchange) Name() string { return x.name }

// Phases is the number of phases of the schedule (0 for Alltoallv).
func (x *Exchange) Phases() int {
	if x.s == nil {
		return 0
	}
	return x.s.Phases()
}

func (x *Exchange) sendBuf(id int32) []byte {
	o := x.sendOff[id]
	return x.send[o : o+x.m.Bytes(int(id), x.msgBytes)]
}

func (x *Exchange) recvBuf(id int32) []byte {
	o := x.recvOff[id]
	return x.recv[o : o+x.m.Bytes(int(id), x.msgBytes)]
}

// Run carries the exchange out once. Phased schedules run their phases in
// order without barriers (loosely synchronous, paper Section 5): in each
// phase the rank exchanges with Sendrecv, or only sends or only receives;
// a self-send is a local copy. Async (AC, Fig. 2) posts every receive, then
// every send in round order, then waits for all. Alltoallv is one call.
//
// Blocking Send and Recv cannot deadlock here even when the MPI library
// uses rendezvous: by induction on the phase, every rank finishes phase
// k-1; a phase is a partial permutation, so its operations pair up exactly
// (i's send to j with j's receive from i, posted as soon as j enters the
// phase), and Sendrecv never blocks on its own two halves.
func (x *Exchange) Run() error {
	c, me := x.c, x.c.Rank()
	switch {
	case x.s == nil:
		return c.Alltoallv(x.send, x.sendCounts, x.sendDispls, x.recv, x.recvCounts, x.recvDispls)
	case x.s.Async:
		x.reqs = x.reqs[:0]
		for _, st := range x.plan {
			if st.RecvID >= 0 && st.RecvFrom != me {
				r, err := c.Irecv(x.recvBuf(st.RecvID), st.RecvFrom, execTag)
				if err != nil {
					return errors.Join(err, x.drain())
				}
				x.reqs = append(x.reqs, r)
			}
		}
		for _, st := range x.plan {
			switch {
			case st.SendID < 0:
			case st.SendTo == me:
				copy(x.recvBuf(st.SendID), x.sendBuf(st.SendID))
			default:
				r, err := c.Isend(x.sendBuf(st.SendID), st.SendTo, execTag)
				if err != nil {
					return errors.Join(err, x.drain())
				}
				x.reqs = append(x.reqs, r)
			}
		}
		return x.drain()
	}
	for _, st := range x.plan {
		send := st.SendID >= 0 && st.SendTo != me
		recv := st.RecvID >= 0 && st.RecvFrom != me
		if st.SendID >= 0 && st.SendTo == me {
			copy(x.recvBuf(st.SendID), x.sendBuf(st.SendID))
		}
		var err error
		switch {
		case send && recv:
			_, err = c.Sendrecv(x.sendBuf(st.SendID), st.SendTo, execTag, x.recvBuf(st.RecvID), st.RecvFrom, execTag)
		case send:
			err = c.Send(x.sendBuf(st.SendID), st.SendTo, execTag)
		case recv:
			_, err = c.Recv(x.recvBuf(st.RecvID), st.RecvFrom, execTag)
		}
		if err != nil {
			return fmt.Errorf("permsched: %s phase %d: %w", x.name, st.Phase, err)
		}
	}
	return nil
}

// drain waits for every outstanding request.
func (x *Exchange) drain() error {
	_, err := mpi.Waitall(x.reqs)
	x.reqs = x.reqs[:0]
	if err != nil {
		return fmt.Errorf("permsched: %s: %w", x.name, err)
	}
	return nil
}

// releaseGCBytes is the size of an exchange's buffers from which the
// memory it leaves behind is collected at once (release, TimeExchange):
// below it the collector's own pace costs little memory, and a sweep of
// small exchanges is not slowed by collections.
const releaseGCBytes = 32 << 20

// big reports whether x's buffers reach releaseGCBytes.
func (x *Exchange) big() bool { return len(x.send)+len(x.recv) >= releaseGCBytes }

// release gives x's buffers back; x must not be used again. The next
// exchange (another method of the same matrix and size) needs as much
// again, and the collector, left to its pace, lets the heap grow to twice
// what is live before it frees the last one: without the collection here
// a trace of 300 MB messages holds two exchanges at once, twice what
// CommDemand allows for.
func (x *Exchange) release() {
	big := x.big()
	*x = Exchange{c: x.c, name: x.name}
	if big {
		runtime.GC()
	}
}

// Clear zeroes the receive buffer.
func (x *Exchange) Clear() { clear(x.recv) }

// Verify checks that every message addressed to this rank arrived with the
// bytes its sender wrote.
func (x *Exchange) Verify() error {
	for _, id := range x.incoming {
		if k := checkPattern(x.recvBuf(id), id); k >= 0 {
			return fmt.Errorf("permsched: %s: rank %d: message %d from rank %d is wrong at byte %d of %d",
				x.name, x.c.Rank(), id, x.m.Src(int(id)), k, len(x.recvBuf(id)))
		}
	}
	return nil
}

// fillPattern writes message id's content: a linear congruential sequence
// seeded by the id, so a message delivered to the wrong buffer or
// truncated is detected.
func fillPattern(b []byte, id int32) {
	s := uint32(id)*0x9e3779b1 + 0x7f4a7c15
	for i := range b {
		b[i] = byte(s >> 24)
		s = s*1664525 + 1013904223
	}
}

// checkPattern returns the first byte of b that differs from fillPattern's,
// or -1.
func checkPattern(b []byte, id int32) int {
	s := uint32(id)*0x9e3779b1 + 0x7f4a7c15
	for i := range b {
		if b[i] != byte(s>>24) {
			return i
		}
		s = s*1664525 + 1013904223
	}
	return -1
}
