package divalib

import (
	"encoding/binary"
	"fmt"
)

// Message kinds. Every protocol message names the tree node it is addressed
// to (dst) and the one that sent it (src); for the fixed-home strategy the
// nodes are those of a star (node 0 the home, node 1+r rank r).
const (
	kRead       uint8 = iota + 1 // access tree: read request travelling toward the nearest copy
	kWrite                       // access tree: write request travelling toward the token holder
	kData                        // access tree: a copy travelling to the requester's leaf
	kInv                         // invalidation (both strategies)
	kAck                         // invalidation acknowledgement (both strategies)
	kDrop                        // a copy was evicted: forget the edge / the copy holder
	kHRead                       // fixed home: read request to the home
	kHWrite                      // fixed home: write request to the home
	kHFetch                      // fixed home: home asks the owner for the value (read: owner keeps a copy)
	kHFetchInv                   // fixed home: home takes value and ownership from the owner (write)
	kHFetched                    // fixed home: owner's answer to a fetch
	kHData                       // fixed home: home sends a copy to a reader
	kHGrant                      // fixed home: home grants ownership to a writer
	kLockReq                     // Raymond's lock: request travelling toward the token
	kLockTok                     // Raymond's lock: the token
	kBarArrive                   // barrier / tree reduction: a subtree has arrived
	kBarRelease                  // barrier: release travelling down
	kDis                         // dissemination barrier: round a of epoch off
)

// barrierKind reports whether m belongs to a barrier (not counted by the
// termination detection of Close, which runs on barriers itself).
func (m *msg) barrierKind() bool {
	return m.kind == kBarArrive || m.kind == kBarRelease || m.kind == kDis
}

// Flags.
const (
	fStore    uint8 = 1 << iota // kData: nodes on the way keep copies
	fToken                      // kData: carries the write token (answer to a write)
	fNeedData                   // kHFetchInv: the writer needs the value
	fHasData                    // kHGrant, kHFetched: the payload is the value
	fSum                        // kBarArrive, kBarRelease: a termination count wave
	fEarly                      // kBarRelease: sent before the child's arrival, with the sums of the root's other children
)

// headerBytes is the fixed header in front of every payload.
const headerBytes = 40

// msg is a decoded protocol message. data is immutable once a message is
// built: copies are stored by reference, writes build new buffers.
type msg struct {
	kind, flags uint8
	vr          int32 // variable ID (-1 for barriers)
	dst, src    int32 // tree nodes
	origin      int32 // rank that issued the access
	off         int32 // byte offset of a write
	a, b        int64 // barrier epoch / counts
	data        []byte
}

func (m *msg) encode() []byte {
	buf := make([]byte, headerBytes+len(m.data))
	m.putHeader(buf)
	copy(buf[headerBytes:], m.data)
	return buf
}

// putHeader writes m's header into buf[:headerBytes].
func (m *msg) putHeader(buf []byte) {
	_ = buf[headerBytes-1]
	buf[0], buf[1], buf[2], buf[3] = m.kind, m.flags, 0, 0
	le := binary.LittleEndian
	le.PutUint32(buf[4:], uint32(m.vr))
	le.PutUint32(buf[8:], uint32(m.dst))
	le.PutUint32(buf[12:], uint32(m.src))
	le.PutUint32(buf[16:], uint32(m.origin))
	le.PutUint32(buf[20:], uint32(m.off))
	le.PutUint64(buf[24:], uint64(m.a))
	le.PutUint64(buf[32:], uint64(m.b))
}

func decode(buf []byte) (*msg, error) {
	if len(buf) < headerBytes {
		return nil, fmt.Errorf("divalib: short protocol message (%d bytes)", len(buf))
	}
	m := decodeHeader(buf)
	if len(buf) > headerBytes {
		m.data = buf[headerBytes:]
	}
	return m, nil
}

// decodeHeader reads a header of headerBytes bytes into a new message.
func decodeHeader(buf []byte) *msg {
	m := new(msg)
	m.decodeHeader(buf)
	return m
}

// decodeHeader overwrites m with the header in buf[:headerBytes] (data
// cleared).
func (m *msg) decodeHeader(buf []byte) {
	_ = buf[headerBytes-1]
	le := binary.LittleEndian
	*m = msg{
		kind: buf[0], flags: buf[1],
		vr:     int32(le.Uint32(buf[4:])),
		dst:    int32(le.Uint32(buf[8:])),
		src:    int32(le.Uint32(buf[12:])),
		origin: int32(le.Uint32(buf[16:])),
		off:    int32(le.Uint32(buf[20:])),
		a:      int64(le.Uint64(buf[24:])),
		b:      int64(le.Uint64(buf[32:])),
	}
}

// keep returns m for a handler that holds on to it beyond its return (a
// request deferred behind a write wave, a fixed home's transaction): a
// copy of its own if m is the store's one receive buffer (Store.rmsg),
// which the next receive overwrites; other messages (local, deferred,
// queued) are the handler's already.
func (s *Store) keep(m *msg) *msg {
	if m != &s.rmsg {
		return m
	}
	c := *m
	return &c
}
