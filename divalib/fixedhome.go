package divalib

import (
	"fmt"
	"slices"

	"github.com/commcost/commcost/mpi"
)

// The fixed-home strategy with the ownership scheme (paper 004, section 2,
// "The fixed home strategy"). Each variable has a home processor, chosen
// uniformly at random, that plays the main memory module: it keeps track of
// all copies and invalidates them. At any time either the home (main
// memory) or one processor owns the variable.
//
//   - A write by the owner is served locally.
//   - Any other write assigns ownership to the writer: the home takes the
//     value back from the previous owner if there is one, invalidates every
//     other copy, and grants ownership; the writer then holds the only copy.
//     The request is a small control message; the value travels to the
//     writer only when it has no copy and writes part of the variable.
//   - A read by a processor without a copy moves ownership back to main
//     memory: if a processor owns the variable, the home fetches the value
//     from it (the owner keeps a copy), then sends a copy to the reader.
//
// The home serialises the transactions of its variable (one at a time; the
// others wait in its queue), and a processor's copy is valid exactly while
// the home lists it, so a write that has returned has invalidated every
// older copy. The home's own accesses are served from main memory.

// fhLocal is a processor's state for a variable whose home is elsewhere.
type fhLocal struct {
	copy, owner bool
}

// fhHome is the home's directory entry.
type fhHome struct {
	owner   int     // -1: main memory (the home) owns; else the owning rank
	copyset []int32 // processors other than the home holding a copy
	busy    bool
	cur     *msg // transaction in progress
	pending int
	queue   []*msg
}

func (s *Store) fhInitHome(x *variable) {
	x.home = &fhHome{owner: -1}
	s.install(x, make([]byte, x.v.Size), true)
	s.fhOffer(x)
}

// The home's side of a read in the engine (mpi.EngineReplier, mpi/native).
// A read by a processor without a copy, while main memory owns the
// variable, only moves a copy to the reader (paper 004, section 2, the
// ownership scheme); with no transaction in progress that is, at the home,
// fhRequest then fhProceed: add the reader to the copy set and send it
// kHData with the value, nothing else. Under mpirun
// that cost the critical path of every uncached read a return from C, the
// transaction in Go and an entry into C to send the copy (more than twice
// the C kernel of the same protocol, scripts/bench_dsm_vs_c.sh).
// So the home offers the engine its value while the variable is in that
// state (fhOffer, at its creation and after every message the home
// handles for it; the home's own local write only withdraws the offer,
// and the next read, served in Go, offers the new value), the engine
// answers such reads itself with the same kHData message, and the store
// does the rest of the transaction afterwards, in arrival order
// (fhServed). The messages, their order per pair of ranks and their
// charges are those of the Go path; every other request, and every read
// while the home is busy, a processor owns the variable or no offer
// stands, still comes to Go.

// fhReplySpec is the engine's description of those reads and answers: a
// kHRead request keyed by its variable (the header's vr field), answered
// with a kHData header naming the variable and the home's value.
func fhReplySpec(s *Store) *mpi.EngineReply {
	var head [headerBytes]byte
	(&msg{kind: kHData}).putHeader(head[:])
	return &mpi.EngineReply{KindOffset: 0, Request: kHRead, KeyOffset: 4, Head: head[:], Served: s.fhServed}
}

// fhOffer tells the engine whether it may answer reads of x, a variable
// whose home is this rank, and with which value: exactly when fhRequest
// would go straight to fhProceed's read branch.
func (s *Store) fhOffer(x *variable) {
	if s.rep == nil || x.home == nil {
		return
	}
	if h := x.home; h.owner < 0 && !h.busy && x.data != nil {
		if err := s.rep.SetReply(x.v.ID, x.data); err != nil {
			s.fail(err)
		}
		return
	}
	s.rep.ClearReply(x.v.ID)
}

// fhServed is the home's bookkeeping of a read the engine answered (bytes,
// the value's): what fhRequest and fhProceed do for it, less the send.
// The message counts and the charge are made here, so the counters are
// those of the Go path whenever anyone looks. Adding the reader to the
// copy set waits in fhPending until the home next handles a message for
// one of its variables or writes one (fhSettle), the only code that uses
// copy sets. This log is handled on the way back from C with the rank's
// own next message, often the answer to its own read: the variable's
// state and directory are cold by then, and settling there costs a visible
// part of an 8-byte read (scripts/bench_dsm_vs_c.sh).
func (s *Store) fhServed(id, source, bytes int) {
	s.recvd++
	s.charge(source, headerBytes+bytes)
	s.sent++
	s.fhPending = append(s.fhPending, fhRead{int32(id), int32(source)})
	if len(s.fhPending) >= fhPendingMax {
		s.fhSettle()
	}
}

// fhRead is a read the engine answered: the variable and the reader.
type fhRead struct{ id, source int32 }

// fhPendingMax bounds the answered reads waiting for fhSettle (a home
// only read from would collect them without end).
const fhPendingMax = 256

// fhSettle adds the readers of the reads the engine answered to their
// copy sets, in arrival order: before anything that uses a copy set, a
// message to the home (fhHandle) or the home's own write (fhWrite). No
// other code changes the state the engine answered in (owner main memory,
// no transaction) in between, so each read is still the one fhRequest
// would have served.
func (s *Store) fhSettle() {
	for _, r := range s.fhPending {
		x := s.vars.get(int(r.id))
		if x == nil || x.home == nil || x.home.busy || x.home.owner >= 0 || int(r.source) == s.rank {
			s.fail(fmt.Errorf("divalib: rank %d: the engine answered a read of variable %d by rank %d that the home cannot serve", s.rank, r.id, r.source))
			break
		}
		x.home.copyset = addUnique(x.home.copyset, r.source)
	}
	s.fhPending = s.fhPending[:0]
}

func (s *Store) fhSend(rank int, x *variable, m *msg) {
	m.vr = int32(x.v.ID)
	s.send(rank, m)
}

// fhRead returns this rank's copy of x (hit), or sends the read request to
// the home (the caller awaits it).
func (s *Store) fhRead(x *variable) ([]byte, bool) {
	if h := x.home; h != nil {
		if h.owner < 0 && !h.busy {
			s.stats.ReadHits++
			s.cacheHit(x)
			return x.data, true
		}
	} else if x.fh.copy {
		s.stats.ReadHits++
		s.cacheHit(x)
		return x.data, true
	}
	s.begin(x)
	x.acc.read = true
	s.fhSend(x.root, x, &msg{kind: kHRead, origin: int32(s.rank)})
	return nil, false
}

// fhWrite writes locally (reporting true) when this rank owns x alone, or
// asks the home for ownership (the caller awaits it; data must stay
// unchanged until then).
func (s *Store) fhWrite(x *variable, off int, data []byte) bool {
	if h := x.home; h != nil {
		if len(s.fhPending) > 0 {
			s.fhSettle()
		}
		if h.owner < 0 && !h.busy && len(h.copyset) == 0 {
			nb, inPlace := s.fhWritten(x.data, off, data)
			if s.rep != nil && !inPlace {
				// Offering a new buffer would pin it (about 80 ns, twice
				// this write): the next read of x comes to Go instead,
				// whose fhHandle offers the value then. A value written
				// in place is the offer's own buffer, which the engine
				// answers with from now on.
				s.rep.ClearReply(x.v.ID)
			}
			x.data, x.recycle = nb, false
			s.stats.WriteHits++
			s.cacheHit(x)
			return true
		}
	} else if x.fh.owner {
		x.data, _ = s.fhWritten(x.data, off, data)
		x.recycle = false
		s.stats.WriteHits++
		s.cacheHit(x)
		return true
	}
	s.begin(x)
	x.acc.wOff, x.acc.wData = off, data
	s.fhSend(x.root, x, &msg{kind: kHWrite, origin: int32(s.rank), off: int32(off), a: int64(len(data))})
	return false
}

func (s *Store) fhHandle(x *variable, m *msg) {
	if x.home != nil {
		if len(s.fhPending) > 0 {
			s.fhSettle()
		}
		// Whatever the message did to the home's state, the engine's
		// offer follows it before the next receive.
		defer s.fhOffer(x)
	}
	switch m.kind {
	// At the home.
	case kHRead, kHWrite:
		s.fhRequest(x, m)
	case kHFetched:
		s.fhFetched(x, m)
	case kAck:
		h := x.home
		h.pending--
		if h.pending == 0 {
			s.fhGrant(x)
		}
	case kDrop:
		x.home.copyset = remove(x.home.copyset, m.origin)
	// At a processor.
	case kHFetch:
		// Ownership goes back to main memory; the old owner keeps a copy.
		x.fh.owner = false
		s.fhSend(x.root, x, &msg{kind: kHFetched, flags: fHasData, origin: int32(s.rank), data: x.data})
	case kHFetchInv:
		var data []byte
		fl := uint8(0)
		if m.flags&fNeedData != 0 {
			data, fl = x.data, fHasData
		}
		x.fh = fhLocal{}
		s.release(x)
		s.fhSend(x.root, x, &msg{kind: kHFetched, flags: fl, origin: int32(s.rank), data: data})
	case kInv:
		x.fh.copy = false
		s.release(x)
		s.fhSend(x.root, x, &msg{kind: kAck, origin: int32(s.rank)})
	case kHData:
		if s.install(x, m.data, false) {
			x.fh.copy = true
			// A reader's copy, received into its own buffer (engine) and
			// never sent on by this rank (only owners send the value):
			// its buffer may be reused once the copy is dropped.
			x.recycle = s.eng != nil && len(m.data) > 0 && &x.data[0] == &m.data[0]
		} else {
			s.fhSend(x.root, x, &msg{kind: kDrop, origin: int32(s.rank)})
		}
		s.complete(x, m.data)
	case kHGrant:
		var nb []byte
		switch {
		case m.flags&fHasData != 0:
			nb, _ = s.fhWritten(m.data, x.acc.wOff, x.acc.wData)
		case x.data != nil:
			nb, _ = s.fhWritten(x.data, x.acc.wOff, x.acc.wData)
		case len(x.acc.wData) == x.v.Size:
			nb = s.fhFirst(x, x.acc.wOff, x.acc.wData) // a whole write needs no old value
		default:
			s.fail(fmt.Errorf("divalib: fixed home %q: ownership granted to rank %d without a value", x.v.Name, s.rank))
			return
		}
		s.install(x, nb, true) // the owner's copy is the only one
		x.fh = fhLocal{copy: true, owner: true}
		s.complete(x, nil)
	default:
		s.fail(fmt.Errorf("divalib: fixed home: unexpected message kind %d", m.kind))
	}
}

// fhRequest starts (or queues) a transaction at the home.
func (s *Store) fhRequest(x *variable, m *msg) {
	h := x.home
	if h.busy {
		h.queue = append(h.queue, s.keep(m))
		return
	}
	h.busy, h.cur = true, s.keep(m)
	r := int(m.origin)
	if h.owner >= 0 && h.owner != r || (h.owner == r && m.kind == kHRead) {
		if m.kind == kHRead {
			s.fhSend(h.owner, x, &msg{kind: kHFetch})
		} else {
			var fl uint8
			if int(m.a) < x.v.Size && !slices.Contains(h.copyset, m.origin) {
				fl = fNeedData
			}
			s.fhSend(h.owner, x, &msg{kind: kHFetchInv, flags: fl})
		}
		return
	}
	s.fhProceed(x)
}

// fhFetched: the previous owner answered; main memory owns again.
func (s *Store) fhFetched(x *variable, m *msg) {
	h := x.home
	if m.flags&fHasData != 0 {
		s.install(x, m.data, true)
	}
	if h.cur.kind == kHWrite {
		h.copyset = remove(h.copyset, m.origin)
	}
	h.owner = -1
	s.fhProceed(x)
}

// fhProceed continues the current transaction once main memory owns.
func (s *Store) fhProceed(x *variable) {
	h := x.home
	m := h.cur
	r := m.origin
	if m.kind == kHRead {
		if int(r) != s.rank {
			h.copyset = addUnique(h.copyset, r)
			s.fhSend(int(r), x, &msg{kind: kHData, data: x.data})
		} else {
			s.complete(x, x.data)
		}
		s.fhDone(x)
		return
	}
	// A write: invalidate every copy but the writer's.
	targets := remove(h.copyset, r)
	h.pending = len(targets)
	for _, t := range targets {
		s.fhSend(int(t), x, &msg{kind: kInv})
	}
	if h.pending == 0 {
		s.fhGrant(x)
	}
}

// fhGrant hands ownership to the writer (all other copies are gone).
func (s *Store) fhGrant(x *variable) {
	h := x.home
	m := h.cur
	r := int(m.origin)
	if r == s.rank {
		// The home writes its own main memory. After a whole write took
		// ownership back without the value, there is none to start from.
		var nb []byte
		if x.data != nil {
			nb, _ = s.fhWritten(x.data, x.acc.wOff, x.acc.wData)
		} else {
			nb = s.fhFirst(x, x.acc.wOff, x.acc.wData)
		}
		s.install(x, nb, true)
		h.copyset = h.copyset[:0]
		s.complete(x, nil)
		s.fhDone(x)
		return
	}
	// The value travels only if the writer has no copy and overwrites part
	// of the variable; a whole write needs none.
	var data []byte
	var fl uint8
	if !slices.Contains(h.copyset, m.origin) && int(m.a) < x.v.Size {
		data, fl = x.data, fHasData
	}
	s.fhSend(r, x, &msg{kind: kHGrant, flags: fl, data: data})
	h.owner = r
	h.copyset = append(h.copyset[:0], m.origin)
	// Main memory is stale while a processor owns the variable.
	s.release(x)
	s.fhDone(x)
}

func (s *Store) fhDone(x *variable) {
	h := x.home
	h.busy, h.cur = false, nil
	for !h.busy && len(h.queue) > 0 {
		m := h.queue[0]
		h.queue = h.queue[1:]
		s.fhRequest(x, m)
	}
}

// fhEvict drops a cached copy; owners' copies and main memory are never
// dropped (they may be the last copy).
func (s *Store) fhEvict(x *variable) bool {
	if x.home != nil || !x.fh.copy || x.fh.owner {
		return false
	}
	x.fh.copy = false
	s.release(x)
	s.fhSend(x.root, x, &msg{kind: kDrop, origin: int32(s.rank)})
	return true
}

// fhWritten returns base with data written at off, for a write of the
// fixed home's owner (main memory at the home, or a processor's copy)
// that this rank's access has exclusively: base itself (inPlace) when
// nobody else reads it, else a new buffer.
//
// Under mpirun base is this rank's own memory (the engine receives every
// body into a buffer of its own, and sends between ranks copy), so only a
// send that MPI has not finished may still read it: the engine tells
// (mpi.EngineSendTracker), and then the value is written in place. That
// saves what a new buffer costs a large variable: a page fault per 4 KiB
// of fresh memory, the copy of the old value and garbage for the
// collector, which then runs beside the ranks (the home's 64 KiB writes
// between scripts/bench_dsm_vs_c.sh's reads made the reads themselves
// slower). The engine's offer of the home's value
// (fhOffer) is that same buffer, so it answers with the new value. On
// goroutine ranks (mpi/local) payloads travel by reference and a copy
// may be another rank's value: always a new buffer there.
func (s *Store) fhWritten(base []byte, off int, data []byte) (nb []byte, inPlace bool) {
	if s.track != nil && len(base) > 0 {
		busy, err := s.track.Sending(base)
		if err != nil {
			s.fail(err)
		} else if !busy {
			copy(base[off:], data)
			s.stats.WritesInPlace++
			return base, true
		}
	}
	nb = s.fresh(len(base))
	copy(nb, base)
	copy(nb[off:], data)
	return nb, false
}

// fhFirst is the value of a write to x where this rank has no value to
// start from: only a whole write can be granted so (zeros around a
// partial one, as a new buffer always had).
func (s *Store) fhFirst(x *variable, off int, data []byte) []byte {
	var nb []byte
	if off == 0 && len(data) == x.v.Size {
		nb = s.fresh(x.v.Size)
	} else {
		nb = make([]byte, x.v.Size)
	}
	copy(nb[off:], data)
	return nb
}

// fresh returns a buffer of n bytes that nothing refers to, never nil (a
// nil value means "no copy"): a dropped copy's from the pool (memory
// already touched, no page faults) or new. Its contents are arbitrary.
func (s *Store) fresh(n int) []byte {
	if b := s.pool.get(n); b != nil && len(b) == n {
		return b
	}
	return make([]byte, n)
}
