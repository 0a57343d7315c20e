package divalib

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// Strategy is the data management strategy of a Store.
type Strategy int

const (
	// AccessTree is the access-tree strategy (paper 004, section 2).
	AccessTree Strategy = iota
	// FixedHome is the fixed-home strategy with the ownership scheme
	// (paper 004, section 2, "The fixed home strategy").
	FixedHome
)

func (s Strategy) String() string {
	if s == FixedHome {
		return "fixed-home"
	}
	return "access-tree"
}

// BarrierKind selects the algorithm behind Store.Barrier.
type BarrierKind int

const (
	// BarrierTree combines arrivals up the decomposition tree (embedded
	// from a random root like a variable's access tree) and releases down
	// it: the paper's barrier "that uses access trees, too".
	BarrierTree BarrierKind = iota
	// BarrierCentral is the flat barrier: every rank reports to rank 0,
	// which releases everybody (the P-ary tree).
	BarrierCentral
	// BarrierDissemination is the dissemination barrier (Hensgen, Finkel
	// and Manber, "Two algorithms for barrier synchronization", IJPP
	// 17(1), 1988): in round k = 0..ceil(log2 P)-1 every rank notifies
	// rank me + 2^k mod P and waits for the notice of me - 2^k. Each round
	// costs one message latency, where the tree needs one up and one down
	// per level, so it is the fast barrier on few ranks; it sends
	// P*ceil(log2 P) messages against the tree's 2(P-1), which the
	// congestion counts show.
	BarrierDissemination
	// BarrierMPI uses MPI_Ibarrier and serves requests while it completes.
	// It needs a Comm with an Ibarrier method (see Ibarrierer); New refuses
	// it otherwise. A blocking MPI_Barrier cannot be used inside a store: a
	// rank blocked in it cannot serve the accesses of ranks that have not
	// reached the barrier yet, which then never reach it.
	BarrierMPI
)

func (b BarrierKind) String() string {
	switch b {
	case BarrierCentral:
		return "central"
	case BarrierMPI:
		return "mpi"
	case BarrierDissemination:
		return "dissemination"
	}
	return "tree"
}

// ParseBarrier parses "tree", "central", "dissemination" or "mpi".
func ParseBarrier(s string) (BarrierKind, error) {
	switch s {
	case "tree", "":
		return BarrierTree, nil
	case "central":
		return BarrierCentral, nil
	case "dissemination":
		return BarrierDissemination, nil
	case "mpi":
		return BarrierMPI, nil
	}
	return 0, fmt.Errorf("barrier %q: accepted are tree, central, dissemination and mpi", s)
}

// UnmarshalText sets b from its name (ParseBarrier), so that a
// configuration's barrier binds to a flag.
func (b *BarrierKind) UnmarshalText(text []byte) error {
	k, err := ParseBarrier(string(text))
	if err != nil {
		return err
	}
	*b = k
	return nil
}

// Ibarrierer is the optional non-blocking barrier a Comm may offer
// (MPI_Ibarrier; both backends have it, as part of
// mpi.NonBlockingCollectives). mpi.Comm does not have it; BarrierMPI needs
// it.
type Ibarrierer interface {
	Ibarrier() (mpi.Request, error)
}

// Config configures a Store. The zero value is the 4-ary access tree on the
// most nearly square mesh, unbounded memory, tree barrier, seed 0.
type Config struct {
	Strategy Strategy
	// Variant is the access-tree shape; the zero value means Tree4, the
	// paper's best compromise between congestion and startups.
	Variant Variant
	// Rows, Cols is the virtual mesh; both zero picks SquareMesh(size).
	Rows, Cols int
	// Seed drives the random embeddings (access-tree roots) and random
	// homes; every rank must pass the same seed.
	Seed int64
	// MemoryBytes bounds the bytes of variable copies one rank holds
	// (0 = unbounded). Copies are replaced in least-recently-used order;
	// a copy that is the last one of its variable (the access tree's token
	// holder, the fixed home's owner or home memory) is never dropped.
	MemoryBytes int
	// Barrier selects the barrier algorithm.
	Barrier BarrierKind
}

// Name is the strategy's name in reports: "fixed-home" or "tree-4",
// "tree-2-4", ...
func (c Config) Name() string {
	if c.Strategy == FixedHome {
		return FixedHomeName
	}
	v := c.Variant
	if v == (Variant{}) {
		v = Tree4
	}
	return TreeName(v)
}

// ErrMemory reports a memory bound that cannot hold one variable.
var ErrMemory = errors.New("divalib: memory bound smaller than one variable")

// protoTag is the tag of every protocol message, on the store's own
// duplicate of the communicator (so it never matches application traffic).
const protoTag = 0x5d1a

// engineInlineBytes is the largest payload that travels in its header's
// message through an mpi.Engine (copied once into C memory); a longer one
// is sent from the Go buffer in a message of its own and received straight
// into a buffer of its size. 3 KiB keeps header and payload within the
// eager limit of shared memory (Open MPI's vader: 4096 bytes with the
// library's own header): a 4 KiB copy inline would be a 4144-byte
// rendezvous message, slower than a 48-byte header plus a 4 KiB message,
// and copying 64 KiB in and out of C memory costs more than the second
// message.
const engineInlineBytes = 3 << 10

// pollEvery is how many cached accesses run between two polls of the
// network: a rank that only hits its cache still serves others now and then,
// at a cost of one Iprobe per pollEvery accesses.
const pollEvery = 64

// Store is a DIVA store: global variables under the access-tree or the
// fixed-home strategy. It implements globalvar.Store. All methods are called
// by the rank's one goroutine; see the package documentation for the
// progress and coherence design.
type Store struct {
	comm       mpi.Comm
	rank, size int
	cfg        Config
	mesh       Mesh
	tree       *Tree // access-tree shape, also the barrier tree
	traffic    *Traffic

	// vars holds this rank's state of each variable by ID, none until the
	// rank touches the variable (only the root or home gets state at
	// Create): untouched variables must cost a rank no more than a slot of
	// the table, or nothing once it is sparse (varTable). Names and sizes
	// are in cat.
	vars varTable
	cat  *catalogue
	// ops are finished accesses' records for reuse (variable.acc).
	ops []*op

	// localq holds messages between tree nodes on this rank, FIFO, by
	// value: send copies m, so a message built for another rank does not
	// escape to the heap (pollOnce handles a local one in rmsg).
	localq  []msg
	localHd int
	sends   []mpi.Request
	// ref is the comm's by-reference path, nil where there is none
	// (mpi/native); sendHdr and recvHdr are its header buffers.
	ref              mpi.RefSender
	sendHdr, recvHdr [headerBytes]byte
	// rmsg is the message receive decodes into and pollOnce copies a
	// local one into: no allocation per handled message (millions in a count-based run on mpi/local, where
	// those allocated while the collector marks survive the cycle and
	// raise the heap goal). Handlers that keep a message copy it (keep).
	rmsg msg
	// probeTag is the tag polls look for: protoTag, or any tag with ref,
	// where the store's duplicate carries nothing else and mpi/local then
	// keeps no per-tag index of pending messages.
	probeTag int
	// eng is the library's message engine (mpi.EngineKernel: the C
	// transport of mpi/native), nil where there is none. With it every
	// protocol message and the barrier go through eng, and received
	// payloads come from pool.
	eng  mpi.Engine
	pool bufPool
	// track is eng where it tells whether a send still reads a buffer
	// (the fixed home then writes values in place, fhWritten), else nil.
	track mpi.EngineSendTracker
	// rep is eng where it answers the fixed home's reads itself (the
	// home's copy offered with fhOffer), else nil; fhPending are the
	// reads it answered whose readers are not in their copy sets yet.
	rep       mpi.EngineReplier
	fhPending []fhRead
	err       error // sticky failure of the progress engine

	bar   barrier
	ibarr Ibarrierer

	// LRU list of variables with a copy on this rank, most recent first.
	lruHead, lruTail *variable
	resident         int

	sent, recvd int64 // protocol messages, for termination detection at Close
	polls       int
	inFlight    int // this rank's accesses in progress
	closed      bool
	stats       Stats
}

// Stats are this rank's counters since New (or ResetStats).
type Stats struct {
	Reads, Writes       int64 // accesses issued
	ReadHits, WriteHits int64 // served without a message
	Locks, Barriers     int64
	Messages, Bytes     int64 // protocol messages / bytes sent to other ranks
	Evictions           int64 // copies dropped by the LRU replacement
	Uncached            int64 // read copies not kept for lack of memory
	ResidentBytes       int   // copy bytes held now
	PeakResidentBytes   int   // most copy bytes held at once
	OverflowBytes       int   // largest excess over MemoryBytes (only last copies can cause it)
	VariablesWithCopy   int   // variables with a copy on this rank now
	PeakInFlight        int   // most accesses of this rank in flight at once (k of a batch)
	WritesInPlace       int64 // writes that changed this rank's buffer instead of a copy of it (fixed home under mpirun, fhWritten)
}

// variable is this rank's view of one global variable.
//
// A rank of a count-based run on mpi/local holds thousands of these, and
// the process P times as many (Barnes-Hut at P = 512: about 4 million), so
// what only some variables or only some moments need hangs off pointers:
// the access in progress (acc), the home's directory (home), the lock
// nodes (locks). 160 bytes; it was 288 with the access inline and a map of
// lock nodes.
type variable struct {
	v    globalvar.Var
	root int // access tree: processor of the root; fixed home: the home

	// data is this rank's copy (nil: none). It is immutable once shared: a
	// write builds a new slice, so messages and copies can share it
	// without copying; only the fixed home's owner under mpirun writes it
	// in place, when no send reads it (fhWritten).
	data []byte

	// Access tree: states of the tree nodes of this variable on this rank,
	// made on first use. They lie on the path from this rank's leaf to the
	// root (a node sits on a processor of its own submesh), so there are
	// at most height+1 of them, usually one: a short list beats a map.
	nodes  []*atNode
	copies int32 // nodes here that hold a copy (all share data)

	// Fixed home.
	fh fhLocal
	// recycle: data is a buffer only this variable refers to, which
	// release may hand to the pool (set for fixed-home reader copies).
	recycle bool
	inLRU   bool

	ver    int64 // access tree: version of data (writes are numbered by the token holder)
	maxInv int64 // access tree: newest version an invalidation seen here announced

	home  *fhHome   // only on the home rank
	locks *lockNode // lock-tree nodes on this rank, a list (usually one)

	prev, next *variable // LRU links

	// acc is this rank's access of the variable in progress (one at
	// most), nil when there is none.
	acc *op
}

// op is an access of this rank to one variable that it waits for. A rank
// has at most one per variable, and several on different variables while a
// batch (ReadBatch, WriteBatch) keeps k in flight.
type op struct {
	read   bool
	done   bool
	pkt    int    // the batch packet the access serves
	result []byte // the value delivered to a read
	// A fixed-home write keeps its data here while ownership is obtained:
	// the request to the home is a small control message (paper 004,
	// section 3.1: "the write phase sends only small invalidation messages").
	wOff  int
	wData []byte
}

// New creates a store over c (collective: it duplicates c, so its traffic
// never mixes with the caller's).
func New(c mpi.Comm, cfg Config) (*Store, error) {
	if cfg.Variant == (Variant{}) {
		cfg.Variant = Tree4
	}
	if err := cfg.Variant.Validate(); err != nil {
		return nil, err
	}
	if cfg.Strategy != AccessTree && cfg.Strategy != FixedHome {
		return nil, fmt.Errorf("divalib: unknown strategy %d", int(cfg.Strategy))
	}
	if cfg.MemoryBytes < 0 {
		return nil, fmt.Errorf("divalib: memory bound %d bytes is negative", cfg.MemoryBytes)
	}
	m, err := NewMesh(cfg.Rows, cfg.Cols, c.Size())
	if err != nil {
		return nil, err
	}
	cfg.Rows, cfg.Cols = m.Rows, m.Cols
	t, err := TreeFor(m, cfg.Variant)
	if err != nil {
		return nil, err
	}
	s := &Store{rank: c.Rank(), size: c.Size(), cfg: cfg, mesh: m, tree: t,
		traffic: NewTraffic(m)}
	switch cfg.Barrier {
	case BarrierTree, BarrierCentral, BarrierDissemination:
	case BarrierMPI:
		if _, ok := c.(Ibarrierer); !ok {
			return nil, fmt.Errorf("divalib: barrier mpi needs MPI_Ibarrier, which the %s backend's Comm does not offer; use tree or central", c.Backend())
		}
	default:
		return nil, fmt.Errorf("divalib: unknown barrier kind %d", int(cfg.Barrier))
	}
	dup, err := c.Dup()
	if err != nil {
		return nil, err
	}
	s.comm = dup
	s.cat = catalogueFor(dup)
	s.vars = newVarTable(dup)
	s.ref, _ = dup.(mpi.RefSender)
	s.probeTag = protoTag
	if s.ref != nil {
		s.probeTag = mpi.AnyTag
	}
	if cfg.Barrier == BarrierMPI {
		ib, ok := dup.(Ibarrierer)
		if !ok {
			dup.Free()
			return nil, fmt.Errorf("divalib: barrier mpi: the duplicated %s communicator has no Ibarrier", c.Backend())
		}
		s.ibarr = ib
	}
	s.bar.init(s)
	if ek, ok := dup.(mpi.EngineKernel); ok && cfg.Barrier != BarrierMPI {
		spec := mpi.EngineSpec{Tag: protoTag, HeadBytes: headerBytes, InlineBytes: engineInlineBytes, Barrier: s.bar.schedule(), Alloc: s.pool.get}
		if cfg.Strategy == FixedHome {
			spec.Reply = fhReplySpec(s)
		}
		eng, err := ek.NewEngine(spec)
		if err != nil {
			dup.Free()
			return nil, err
		}
		s.eng = eng
		s.track, _ = eng.(mpi.EngineSendTracker)
		if spec.Reply != nil {
			s.rep, _ = eng.(mpi.EngineReplier)
		}
	}
	return s, nil
}

// Config returns the configuration in effect (defaults filled in).
func (s *Store) Config() Config { return s.cfg }

// Mesh returns the virtual mesh.
func (s *Store) Mesh() Mesh { return s.mesh }

// Traffic returns this rank's congestion counters (reset with
// Traffic().Reset(); combine with CongestionReport).
func (s *Store) Traffic() *Traffic { return s.traffic }

// Stats returns this rank's counters.
func (s *Store) Stats() Stats {
	st := s.stats
	st.ResidentBytes = s.resident
	n := 0
	for v := s.lruHead; v != nil; v = v.next {
		n++
	}
	st.VariablesWithCopy = n
	return st
}

// ResetStats zeroes the access counters (not the memory figures).
func (s *Store) ResetStats() {
	peak, over := s.stats.PeakResidentBytes, s.stats.OverflowBytes
	s.stats = Stats{PeakResidentBytes: peak, OverflowBytes: over}
}

// Home returns the processor of v's access-tree root (access tree) or home
// (fixed home).
func (s *Store) Home(v globalvar.Var) (int, error) {
	if err := s.check(v); err != nil {
		return 0, err
	}
	return s.randomRank(v.ID), nil
}

// CongestionReport is a collective: a store barrier (so that no rank waits
// for service), then the sum of every rank's Traffic.
func (s *Store) CongestionReport() (Congestion, error) {
	if err := s.Barrier(); err != nil {
		return Congestion{}, err
	}
	return s.traffic.Reduce(s.comm)
}

// randomRank is the processor a variable's random choice (access-tree root,
// home) falls on: a hash of the seed and the variable, so every rank agrees
// without communication.
func (s *Store) randomRank(id int) int {
	return int(splitmix64(uint64(s.cfg.Seed)*0x9e3779b97f4a7c15+uint64(id)+1) % uint64(s.size))
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Create implements globalvar.Store. It is collective but needs no
// communication: IDs are dense in creation order and the random root/home
// is a hash of the seed and the ID. Only the root (home) makes state for
// the variable now, to hold its initial copy; other ranks do on first use.
func (s *Store) Create(name string, size int) (globalvar.Var, error) {
	if s.closed {
		return globalvar.Var{}, errClosed
	}
	if size < 0 || size > mpi.MaxCount-headerBytes {
		return globalvar.Var{}, fmt.Errorf("divalib: variable %q: size %d bytes outside 0..%d", name, size, mpi.MaxCount-headerBytes)
	}
	if s.cfg.MemoryBytes > 0 && size > s.cfg.MemoryBytes {
		return globalvar.Var{}, fmt.Errorf("%w: variable %q has %d bytes, the bound is %d bytes per rank", ErrMemory, name, size, s.cfg.MemoryBytes)
	}
	id := s.vars.n
	e, err := s.cat.create(id, name, size)
	if err != nil {
		return globalvar.Var{}, err
	}
	s.vars.add()
	if s.randomRank(id) == s.rank {
		s.state(id)
	}
	return globalvar.Var{ID: id, Name: e.name, Size: size}, nil
}

// state returns (making on first use) this rank's state of variable id,
// which the rank has created.
func (s *Store) state(id int) *variable {
	if x := s.vars.get(id); x != nil {
		return x
	}
	e := s.cat.entry(id)
	x := &variable{v: globalvar.Var{ID: id, Name: e.name, Size: e.size}, root: s.randomRank(id)}
	s.vars.set(id, x)
	if s.cfg.Strategy == AccessTree {
		if x.root == s.rank {
			// The root holds the initial (zero) copy and the write token.
			s.atNode(x, 0)
		}
	} else if x.root == s.rank {
		s.fhInitHome(x)
	}
	return x
}

var errClosed = errors.New("divalib: store is closed")

// check reports whether v is a handle this store gave out.
func (s *Store) check(v globalvar.Var) error {
	if v.ID < 0 || v.ID >= s.vars.n {
		return fmt.Errorf("%w: %q (ID %d)", globalvar.ErrUnknownVar, v.Name, v.ID)
	}
	if x := s.vars.get(v.ID); x != nil {
		if x.v != v {
			return fmt.Errorf("%w: %q (ID %d) does not match %q of this store", globalvar.ErrUnknownVar, v.Name, v.ID, x.v.Name)
		}
		return nil
	}
	if e := s.cat.entry(v.ID); e.name != v.Name || e.size != v.Size {
		return fmt.Errorf("%w: %q (ID %d) does not match %q of this store", globalvar.ErrUnknownVar, v.Name, v.ID, e.name)
	}
	return nil
}

func (s *Store) lookup(v globalvar.Var) (*variable, error) {
	if v.ID >= 0 && v.ID < s.vars.n {
		if x := s.vars.get(v.ID); x != nil && x.v == v {
			return x, nil // the common case, one comparison
		}
	}
	if err := s.check(v); err != nil {
		return nil, err
	}
	return s.state(v.ID), nil
}

// Read implements globalvar.Store.
func (s *Store) Read(v globalvar.Var, off int, buf []byte) error {
	x, err := s.lookup(v)
	if err != nil {
		return err
	}
	if err := globalvar.CheckRange(v, off, len(buf)); err != nil {
		return fmt.Errorf("%w: read of %d bytes at %d in %q (%d bytes)", err, len(buf), off, v.Name, v.Size)
	}
	if s.closed {
		return errClosed
	}
	s.stats.Reads++
	data, hit := s.readStart(x)
	if hit {
		err := s.deliver(x, data, off, buf)
		s.pollIfDue()
		return err
	}
	if data, err = s.await(x); err != nil {
		return err
	}
	return s.deliver(x, data, off, buf)
}

// readStart is a read's start: the value on a hit, else the request sent.
func (s *Store) readStart(x *variable) ([]byte, bool) {
	if s.cfg.Strategy == AccessTree {
		return s.atRead(x)
	}
	return s.fhRead(x)
}

// writeStart is a write's start: true when it was served locally, else
// the request is sent (data must stay unchanged until it completes).
func (s *Store) writeStart(x *variable, off int, data []byte) bool {
	if s.cfg.Strategy == AccessTree {
		return s.atWrite(x, off, data)
	}
	return s.fhWrite(x, off, data)
}

// deliver copies the part of a read's value the caller asked for.
func (s *Store) deliver(x *variable, data []byte, off int, buf []byte) error {
	if len(data) != x.v.Size {
		return fmt.Errorf("divalib: rank %d: internal error: read of %q returned %d bytes, want %d (strategy %s)", s.rank, x.v.Name, len(data), x.v.Size, s.cfg.Name())
	}
	copy(buf, data[off:])
	return nil
}

// Write implements globalvar.Store.
func (s *Store) Write(v globalvar.Var, off int, data []byte) error {
	x, err := s.lookup(v)
	if err != nil {
		return err
	}
	if err := globalvar.CheckRange(v, off, len(data)); err != nil {
		return fmt.Errorf("%w: write of %d bytes at %d in %q (%d bytes)", err, len(data), off, v.Name, v.Size)
	}
	if s.closed {
		return errClosed
	}
	s.stats.Writes++
	if s.writeStart(x, off, data) {
		s.pollIfDue()
		return nil
	}
	_, err = s.await(x)
	return err
}

// cacheHit does the bookkeeping of an access served from this rank's copy.
// A cached access polls once every pollEvery accesses (pollIfDue), so a
// rank that only hits its cache still serves others; the poll comes after
// the value is delivered, because a message handled in it may invalidate
// the copy and hand its buffer to the pool, which the engine may fill with
// the next message it receives (a fixed-home read returned such a value
// under mpirun: an unknown value in dsm check).
func (s *Store) cacheHit(x *variable) {
	s.touch(x)
	s.polls++
}

// pollIfDue serves what has arrived, once every pollEvery cached accesses.
func (s *Store) pollIfDue() {
	if s.polls >= pollEvery {
		s.polls = 0
		for s.pollOnce() {
		}
		s.reapSends()
		s.flush()
	}
}

// await runs the progress engine until this rank's access to x completes
// and returns the delivered value.
func (s *Store) await(x *variable) ([]byte, error) {
	err := s.progress(func() bool { return x.acc.done })
	return s.finish(x), err
}

func (s *Store) begin(x *variable) {
	if n := len(s.ops); n > 0 {
		x.acc = s.ops[n-1]
		s.ops = s.ops[:n-1]
	} else {
		x.acc = new(op)
	}
	s.inFlight++
	s.stats.PeakInFlight = max(s.stats.PeakInFlight, s.inFlight)
}

// finish ends this rank's access to x and returns its value.
func (s *Store) finish(x *variable) []byte {
	res := x.acc.result
	*x.acc = op{}
	s.ops = append(s.ops, x.acc)
	x.acc = nil
	s.inFlight--
	return res
}

// complete finishes this rank's access to x with value data.
func (s *Store) complete(x *variable, data []byte) {
	if x.acc == nil || x.acc.done {
		s.fail(fmt.Errorf("divalib: rank %d: unexpected completion for %q", s.rank, x.v.Name))
		return
	}
	if x.acc.read && len(data) != x.v.Size {
		s.fail(fmt.Errorf("divalib: rank %d: read of %q completed with %d bytes, want %d (strategy %s)", s.rank, x.v.Name, len(data), x.v.Size, s.cfg.Name()))
		return
	}
	x.acc.done, x.acc.result = true, data
}

func (s *Store) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// send delivers m to the processor simulating its destination node: on this
// rank through the local queue (no startup, no link), otherwise with Isend.
// On a backend with mpi.RefSender the payload goes by reference: payloads
// are immutable, so the receiving rank may keep the sender's memory as its
// copy (mpi/local: one buffer per value however many ranks hold a copy).
func (s *Store) send(rank int, m *msg) {
	if rank == s.rank {
		s.localq = append(s.localq, *m)
		return
	}
	s.charge(rank, headerBytes+len(m.data))
	if !m.barrierKind() {
		s.sent++
	}
	switch {
	case s.eng != nil:
		m.putHeader(s.sendHdr[:])
		if err := s.eng.Send(s.sendHdr[:], m.data, rank); err != nil {
			s.fail(err)
		}
		return
	case s.ref != nil:
		m.putHeader(s.sendHdr[:])
		if _, err := s.ref.IsendRef(s.sendHdr[:], m.data, rank, protoTag); err != nil {
			s.fail(err)
		}
		return
	}
	buf := m.encode()
	req, err := s.comm.Isend(buf, rank, protoTag)
	if err != nil {
		s.fail(err)
		return
	}
	s.sends = append(s.sends, req)
}

// charge accounts a message of n bytes from this rank to rank.
func (s *Store) charge(rank, n int) {
	s.traffic.Charge(s.rank, rank, n)
	s.stats.Messages++
	s.stats.Bytes += int64(n)
}

// pollOnce handles one pending message, local ones first; it reports whether
// there was one.
func (s *Store) pollOnce() bool {
	if s.localHd < len(s.localq) {
		// Copied out first: the slot may be reused by a send in handle.
		s.rmsg = s.localq[s.localHd]
		s.localq[s.localHd] = msg{}
		s.localHd++
		if s.localHd == len(s.localq) {
			s.localq, s.localHd = s.localq[:0], 0
		}
		s.handle(&s.rmsg)
		return true
	}
	if s.eng != nil {
		em, ok, err := s.eng.Next(false)
		if err != nil {
			s.fail(err)
			return true
		}
		if ok {
			s.handleEngine(em)
		}
		return ok
	}
	found, st, err := s.comm.Iprobe(mpi.AnySource, s.probeTag)
	if err != nil {
		s.fail(err)
		return true
	}
	if !found {
		return false
	}
	s.receive(st)
	return true
}

// handleEngine handles a message the engine received, decoded into rmsg
// as receive does (a handler that keeps it copies it: keep).
func (s *Store) handleEngine(em mpi.EngineMessage) {
	m := &s.rmsg
	m.decodeHeader(em.Head)
	if len(em.Body) > 0 {
		m.data = em.Body
	}
	s.recvd++
	s.handle(m)
}

// receive takes the probed message st and handles it.
func (s *Store) receive(st mpi.Status) {
	var m *msg
	if s.ref != nil {
		// The earliest message, which is the one probed: nobody else
		// receives on this rank's side of the store's communicator.
		body, rst, err := s.ref.RecvRef(s.recvHdr[:], mpi.AnySource, s.probeTag)
		if err != nil {
			s.fail(err)
			return
		}
		if rst.Count < headerBytes {
			s.fail(fmt.Errorf("divalib: short protocol message (%d bytes) from rank %d", rst.Count, rst.Source))
			return
		}
		m = &s.rmsg
		m.decodeHeader(s.recvHdr[:])
		if len(body) > 0 {
			m.data = body
		}
	} else {
		buf := make([]byte, st.Count)
		if _, err := s.comm.Recv(buf, st.Source, protoTag); err != nil {
			s.fail(err)
			return
		}
		var err error
		if m, err = decode(buf); err != nil {
			s.fail(err)
			return
		}
	}
	if !m.barrierKind() {
		s.recvd++
	}
	s.handle(m)
}

// reapSends completes finished Isends so their buffers can be collected.
func (s *Store) reapSends() {
	j := 0
	for _, r := range s.sends {
		done, _, err := r.Test()
		if err != nil {
			s.fail(err)
		}
		if !done {
			s.sends[j] = r
			j++
		}
	}
	clear(s.sends[j:])
	s.sends = s.sends[:j]
}

// progress is the rank's progress engine: it serves every message that
// arrives (its own protocol and other ranks' requests alike) until done
// reports true. done may change only when a message is handled, so with
// nothing left to handle the rank blocks in Probe until the next message
// arrives: a rank that waits costs nothing (mpi/local parks its goroutine
// instead of spinning thousands of ranks on two cores; under mpirun the
// library polls in C instead of a Go loop of Iprobe calls that yields the
// locked OS thread). Probe does not receive, so a rank still never blocks
// where a peer would need it to receive first; its own Isends progress
// inside the library meanwhile.
func (s *Store) progress(done func() bool) error {
	return s.progressPoll(done, true)
}

// progressPoll is progress; block false is for conditions that change
// without a message (a request to Test): it polls, yielding in between.
func (s *Store) progressPoll(done func() bool, block bool) error {
	for s.err == nil && !done() {
		if s.eng != nil && block && s.localHd == len(s.localq) {
			// One crossing: the engine sends what this rank queued and
			// returns with the next message, or when a barrier
			// completed.
			em, ok, err := s.eng.Next(true)
			if err != nil {
				s.fail(err)
				break
			}
			if ok {
				s.handleEngine(em)
			}
			continue
		}
		if s.pollOnce() {
			continue
		}
		s.reapSends()
		if done() {
			// The engine's barrier may complete inside a poll that
			// delivered no message.
			break
		}
		if !block {
			// Nothing to do: let other goroutine ranks (mpi/local) run.
			// Under a launcher the ranks are processes and the empty
			// Iprobe yields the processor when they share cores (Open
			// MPI's mpi_yield_when_idle, mpi/native's YieldEnv under
			// MPICH); there a Gosched would only hurt: the polling
			// goroutine is usually the one native.Start locked to its
			// thread, and each Gosched of a locked goroutine hands the
			// thread's P to another thread and back (two futex
			// wake-ups).
			if s.comm.Backend() != "native" {
				runtime.Gosched()
			}
			continue
		}
		st, err := s.comm.Probe(mpi.AnySource, s.probeTag)
		if err != nil {
			s.fail(err)
			break
		}
		s.receive(st)
	}
	// Finish local work so forwarded requests of others do not wait for this
	// rank's next access.
	for s.err == nil && s.localHd < len(s.localq) {
		s.pollOnce()
	}
	s.reapSends()
	s.flush()
	return s.err
}

// flush sends the messages the engine queued (answers to others' requests
// must not wait for this rank's next library call).
func (s *Store) flush() {
	if s.eng != nil && s.err == nil {
		if err := s.eng.Flush(); err != nil {
			s.fail(err)
		}
	}
}

// debugCheck, when set (by tests), checks the store's invariants after
// every message.
var debugCheck func(s *Store, m *msg)

// handle dispatches one message.
func (s *Store) handle(m *msg) {
	if debugCheck != nil {
		defer debugCheck(s, m)
	}
	switch m.kind {
	case kBarArrive, kBarRelease:
		s.bar.handle(m)
		return
	case kDis:
		s.bar.disHandle(m)
		return
	case kLockReq, kLockTok:
		x, ok := s.msgVar(m)
		if ok {
			s.lockHandle(x, m)
		}
		return
	}
	x, ok := s.msgVar(m)
	if !ok {
		return
	}
	if s.cfg.Strategy == AccessTree {
		s.atHandle(x, m)
	} else {
		s.fhHandle(x, m)
	}
}

func (s *Store) msgVar(m *msg) (*variable, bool) {
	if m.vr < 0 || int(m.vr) >= s.vars.n {
		// Another rank used a variable this rank has not created: the
		// collective Create contract was broken.
		s.fail(fmt.Errorf("divalib: rank %d: message for variable %d, which this rank has not created (Create must be called by every rank in the same order)", s.rank, m.vr))
		return nil, false
	}
	return s.state(int(m.vr)), true
}

// Barrier implements globalvar.Store. Writes are synchronous (they return
// after their invalidations are acknowledged), so every write issued before
// the barrier has completed when the barrier returns.
func (s *Store) Barrier() error {
	if s.closed {
		return errClosed
	}
	s.stats.Barriers++
	if s.ibarr != nil {
		req, err := s.ibarr.Ibarrier()
		if err != nil {
			return err
		}
		var werr error
		err = s.progressPoll(func() bool {
			done, _, e := req.Test()
			if e != nil {
				werr = e
				return true
			}
			return done
		}, false)
		if werr != nil {
			return werr
		}
		return err
	}
	if s.cfg.Barrier == BarrierDissemination {
		return s.bar.dissemination()
	}
	_, err := s.bar.reduce([2]int64{}, false)
	return err
}

// Close implements globalvar.Store: a barrier, then termination detection
// (sums of protocol messages sent and received over the barrier tree, until
// they agree: no message is still in flight), then the communicator is
// freed. Until then the rank keeps serving others.
func (s *Store) Close() error {
	if s.closed {
		return errClosed
	}
	if _, err := s.bar.reduce([2]int64{}, false); err != nil {
		return err
	}
	for {
		sum, err := s.bar.reduce([2]int64{s.sent, s.recvd}, true)
		if err != nil {
			return err
		}
		if sum[0] == sum[1] {
			break
		}
	}
	for len(s.sends) > 0 {
		s.reapSends()
		if s.err != nil {
			return s.err
		}
		runtime.Gosched()
	}
	if s.eng != nil {
		if err := s.eng.Close(); err != nil {
			return err
		}
	}
	s.closed = true
	return s.comm.Free()
}
