package emulate

import (
	"encoding/binary"
	"fmt"
)

// kind is a packet type.
type kind uint8

const (
	kRead      kind = iota + 1 // request: read n bytes at off of a variable
	kWrite                     // request carrying the bytes to store
	kReadData                  // reply: the bytes read
	kWriteAck                  // reply: the write is done
	kLock                      // request: acquire a variable's lock
	kUnlock                    // request: release it
	kLockGrant                 // reply to kLock
	kUnlockAck                 // reply to kUnlock
	kBarrier                   // synchronisation packet towards the root; aux2 = combined count
	kRelease                   // barrier release, broadcast down the root's tree
	kShutdown                  // request to the root, then broadcast: stop serving
	kStats                     // request to the root, then broadcast: report counters out of band
	kCredit                    // link level only: returns buffer credits to the sender
)

var kindNames = [...]string{"?", "read", "write", "read-data", "write-ack", "lock", "unlock",
	"lock-grant", "unlock-ack", "barrier", "release", "shutdown", "stats", "credit"}

func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// isReply reports whether packets of kind k travel back to an application
// rank (to the entry node of hdr.src, then over the application link).
func (k kind) isReply() bool {
	return k == kReadData || k == kWriteAck || k == kLockGrant || k == kUnlockAck
}

// isBroadcast reports whether packets of kind k go down the root's tree.
func (k kind) isBroadcast() bool { return k == kRelease || k == kShutdown || k == kStats }

// counted reports whether packets of kind k are application traffic that
// the per-link counters record. Control traffic for the emulation itself
// (shutdown, counter collection, credits) is left out so that the counters
// describe the pattern that was measured.
func (k kind) counted() bool { return k != kShutdown && k != kStats && k != kCredit }

// Reply status codes.
const (
	stOK uint8 = iota
	stRange
	stUnknownVar
	stNotLocked
	stModuleFull
)

// header is the fixed part of every packet. The paper's header is "at most
// 12 Bytes" (paper 000, section 3.2); ours is headerBytes plus one credit
// byte per buffer class, because it also carries the link-level flow control.
type header struct {
	kind   kind
	class  uint8  // buffer class the packet occupies at the receiving node
	status uint8  // replies: stOK or an error code
	src    int32  // application rank the request came from (reply address)
	dst    int32  // destination service node; -1 for broadcasts
	v      int32  // variable ID
	vsize  uint32 // variable size, so a module allocates it on first touch
	off    uint32 // byte offset in the variable
	n      uint32 // bytes requested (read) or carried (write, read-data)
	id     uint32 // request ID at the application rank
	aux    uint32 // barrier epoch; stats: 1 = reset after reporting
	aux2   uint32 // barrier: number of combined synchronisation packets
}

// headerBytes is the encoded size of header; the credit vector follows it.
const headerBytes = 40

// packetTag is the MPI tag of every packet on the network communicator;
// tagStats and tagAbort are out-of-band messages outside the emulated network.
const (
	packetTag = 1
	tagStats  = 2
	tagAbort  = 3
)

func (h *header) encode(b []byte) {
	b[0] = byte(h.kind)
	b[1] = h.class
	b[2] = h.status
	b[3] = 0
	le := binary.LittleEndian
	le.PutUint32(b[4:], uint32(h.src))
	le.PutUint32(b[8:], uint32(h.dst))
	le.PutUint32(b[12:], uint32(h.v))
	le.PutUint32(b[16:], h.vsize)
	le.PutUint32(b[20:], h.off)
	le.PutUint32(b[24:], h.n)
	le.PutUint32(b[28:], h.id)
	le.PutUint32(b[32:], h.aux)
	le.PutUint32(b[36:], h.aux2)
}

func (h *header) decode(b []byte) {
	le := binary.LittleEndian
	h.kind = kind(b[0])
	h.class = b[1]
	h.status = b[2]
	h.src = int32(le.Uint32(b[4:]))
	h.dst = int32(le.Uint32(b[8:]))
	h.v = int32(le.Uint32(b[12:]))
	h.vsize = le.Uint32(b[16:])
	h.off = le.Uint32(b[20:])
	h.n = le.Uint32(b[24:])
	h.id = le.Uint32(b[28:])
	h.aux = le.Uint32(b[32:])
	h.aux2 = le.Uint32(b[36:])
}

// Packet layout: header | credit vector (classes bytes) | payload.
func prefixLen(classes int) int { return headerBytes + classes }

// setClass rewrites the class byte of an encoded packet in place.
func setClass(b []byte, c int) { b[1] = uint8(c) }

// packetAux2 reads and writes aux2 of an encoded packet (barrier combining).
func packetAux2(b []byte) uint32 { return binary.LittleEndian.Uint32(b[36:]) }
func setPacketAux2(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b[36:], v)
}

// bufPool recycles packet buffers by power-of-two size class, so that a
// service node forwarding large packets does not allocate per hop.
type bufPool struct {
	free [32][][]byte
}

func sizeClass(n int) int {
	c := 6 // 64 bytes at least
	for 1<<c < n {
		c++
	}
	return c
}

func (p *bufPool) get(n int) []byte {
	c := sizeClass(n)
	if c >= len(p.free) {
		return make([]byte, n)
	}
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c] = p.free[c][:l-1]
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

// maxPooled bounds the buffers kept per size class.
const maxPooled = 64

func (p *bufPool) put(b []byte) {
	c := sizeClass(cap(b))
	if c >= len(p.free) || 1<<c != cap(b) || len(p.free[c]) >= maxPooled {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
}
