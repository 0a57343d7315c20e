package globalvar

import (
	"errors"
	"fmt"
)

// Batched access: the k-access of paper 000 (Fischer, Rethmann, Wachsmann,
// Definition 1) as a store
// operation. The paper's programs read and write a block of D bytes as
// ceil(D/(k l)) successive k-k-accesses of k packets of l bytes each: the k
// packets of one access leave one after another without waiting for answers
// ("all k packets of a processor are sent successively", the send hot spot
// k), and the next access starts when all k answers are in (section 6.1:
// "each k-k-access delivers k l matrix elements"). A batch is that sequence:
// packets in order, in groups of k, a group in flight at once, groups one
// after another with no synchronisation between them.

// Packet is one packet of a batched access: the len(Buf) bytes of Var at
// Off (read into Buf, or written from it).
type Packet struct {
	Var Var
	Off int
	Buf []byte
}

// Batcher is the optional batched access a Store implements natively when
// it can keep several packets in flight. ReadBatch and WriteBatch of this
// package use it when present and otherwise fall back to one Read or Write
// per packet.
type Batcher interface {
	// ReadBatch reads every packet into its Buf: the packets leave in
	// order in groups of k (the last group may be smaller); the packets of a
	// group are in flight at once and the next group leaves when every
	// answer of the previous one is in. It returns when all packets are
	// read. k >= 1.
	ReadBatch(pk []Packet, k int) error
	// WriteBatch writes every packet's Buf, grouped as ReadBatch; it
	// returns when every packet has been acknowledged (stored at its home).
	WriteBatch(pk []Packet, k int) error
}

// Placer is the optional placement a Store offers: a variable created on a
// given home (memory module), as paper 000 places the global array A_i on
// module i (section 6: "one-dimensional arrays ... in each of the p shared
// memory modules"). Stores without it decide placement themselves (divalib:
// random homes or access trees), which is part of what distinguishes them.
type Placer interface {
	// CreateAt is Create with the variable kept whole on module home
	// (0 <= home < the number of modules). Collective like Create.
	CreateAt(name string, size, home int) (Var, error)
}

// Keeper is the optional query of a store that can say whether the
// calling rank keeps a variable whole in its own memory (directstore: the
// variable's home is this rank). An access to such a variable is a copy
// within the rank and sends no message, so a program that states its
// communication as pattern instances leaves it out (paper 000, section
// 6.5, data locality: the paper's formulas count every access as crossing
// the network, as on its machine processor i and module i are distinct
// nodes).
type Keeper interface {
	Keeps(v Var) bool
}

// Keeps reports whether s is a Keeper that keeps v on the calling rank;
// on any other store every access is taken to cross the network.
func Keeps(s Store, v Var) bool {
	k, ok := s.(Keeper)
	return ok && k.Keeps(v)
}

// Poller is the optional progress call of a store whose ranks serve other
// ranks' requests only while they are inside the store (directstore): Poll
// serves whatever requests have arrived and returns without waiting. A
// long local computation calls it now and then, so that a rank that
// computes still answers the others, as the paper's memory modules answer
// while their application processor computes.
type Poller interface {
	Poll() error
}

// Poll calls s.Poll when s is a Poller and does nothing otherwise.
func Poll(s Store) error {
	if p, ok := s.(Poller); ok {
		return p.Poll()
	}
	return nil
}

// ErrBatch is wrapped by errors about the shape of a batch (k < 1, a
// packet length below 1).
var ErrBatch = errors.New("globalvar: bad batch")

// CreateAt creates v on module home when s is a Placer, else with s.Create
// (the store places it). It reports whether the placement was honoured.
func CreateAt(s Store, name string, size, home int) (Var, bool, error) {
	if p, ok := s.(Placer); ok {
		v, err := p.CreateAt(name, size, home)
		return v, true, err
	}
	v, err := s.Create(name, size)
	return v, false, err
}

// Batched reports whether s keeps several packets of a batch in flight
// (implements Batcher), as opposed to the one-at-a-time fallback.
func Batched(s Store) bool {
	_, ok := s.(Batcher)
	return ok
}

// ReadBatch reads the packets with k in flight per group on a Batcher. On
// any other Store it is the fallback: one s.Read per packet, in order, so
// only one packet is ever in flight and a batch of n packets costs n
// successive 1-accesses rather than ceil(n/k) k-accesses; a workload that
// declares k-k-accesses of k > 1 then describes the program, not what that
// store does with it. The fallback is correct (every packet is read) and
// keeps the store's own consistency per packet.
func ReadBatch(s Store, pk []Packet, k int) error {
	if err := checkBatch(pk, k); err != nil {
		return err
	}
	if b, ok := s.(Batcher); ok {
		return b.ReadBatch(pk, k)
	}
	for i, p := range pk {
		if err := s.Read(p.Var, p.Off, p.Buf); err != nil {
			return fmt.Errorf("packet %d of %d: %w", i+1, len(pk), err)
		}
	}
	return nil
}

// WriteBatch writes the packets with k in flight per group on a Batcher;
// on any other Store it is the one-at-a-time fallback of ReadBatch (one
// s.Write per packet, in order).
func WriteBatch(s Store, pk []Packet, k int) error {
	if err := checkBatch(pk, k); err != nil {
		return err
	}
	if b, ok := s.(Batcher); ok {
		return b.WriteBatch(pk, k)
	}
	for i, p := range pk {
		if err := s.Write(p.Var, p.Off, p.Buf); err != nil {
			return fmt.Errorf("packet %d of %d: %w", i+1, len(pk), err)
		}
	}
	return nil
}

func checkBatch(pk []Packet, k int) error {
	if k < 1 {
		return fmt.Errorf("%w: k = %d packets in flight; want k >= 1", ErrBatch, k)
	}
	for i, p := range pk {
		if err := CheckRange(p.Var, p.Off, len(p.Buf)); err != nil {
			return fmt.Errorf("packet %d of %d (%d bytes at %d of %q, %d bytes): %w", i+1, len(pk), len(p.Buf), p.Off, p.Var.Name, p.Var.Size, err)
		}
	}
	return nil
}

// Split cuts the access of len(buf) bytes of v at off into packets of l
// bytes, the last one shorter when l does not divide len(buf); the packets'
// Bufs are consecutive sub-slices of buf, each keeping buf's capacity after
// it, so a store can see that they are the pieces of one buffer (the direct
// store then hands MPI one buffer instead of pinning every packet). An
// empty buf gives no packet. l must be >= 1.
func Split(v Var, off int, buf []byte, l int) ([]Packet, error) {
	if l < 1 {
		return nil, fmt.Errorf("%w: packet length l = %d; want l >= 1 byte", ErrBatch, l)
	}
	if err := CheckRange(v, off, len(buf)); err != nil {
		return nil, err
	}
	pk := make([]Packet, 0, Packets(len(buf), l))
	for lo := 0; lo < len(buf); lo += l {
		hi := min(lo+l, len(buf))
		pk = append(pk, Packet{Var: v, Off: off + lo, Buf: buf[lo:hi]})
	}
	return pk, nil
}

// Packets is the number of packets of l bytes an access of n bytes takes,
// ceil(n/l) (0 for n = 0).
func Packets(n, l int) int {
	if n <= 0 {
		return 0
	}
	return (n + l - 1) / l
}

// Groups is the number of k-accesses a batch of n packets takes,
// ceil(n/k). For the n = ceil(D/l) packets of D bytes it is paper 000's
// ceil(D/(k l)) exactly (ceil(ceil(D/l)/k) = ceil(D/(k l)) for integers).
func Groups(n, k int) int {
	if n <= 0 {
		return 0
	}
	return (n + k - 1) / k
}
