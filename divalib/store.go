package divalib

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

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
	}
	return "tree"
}

// ParseBarrier parses "tree", "central" or "mpi".
func ParseBarrier(s string) (BarrierKind, error) {
	switch s {
	case "tree", "":
		return BarrierTree, nil
	case "central":
		return BarrierCentral, nil
	case "mpi":
		return BarrierMPI, nil
	}
	return 0, fmt.Errorf("barrier %q: accepted are tree, central and mpi", s)
}

// Ibarrierer is the optional non-blocking barrier a Comm may offer
// (MPI_Ibarrier). mpi.Comm does not have it; BarrierMPI needs it.
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
		return "fixed-home"
	}
	v := c.Variant
	if v == (Variant{}) {
		v = Tree4
	}
	return "tree-" + v.String()
}

// ParseStrategy parses a strategy name: "fixed-home" or "tree-V" with V a
// Variant ("tree-2", "tree-4", "tree-16", "tree-2-4", "tree-4-16").
func ParseStrategy(s string) (Strategy, Variant, error) {
	switch {
	case s == "fixed-home":
		return FixedHome, Variant{}, nil
	case strings.HasPrefix(s, "tree-"):
		v, err := ParseVariant(strings.TrimPrefix(s, "tree-"))
		if err != nil {
			return 0, v, err
		}
		return AccessTree, v, nil
	}
	return 0, Variant{}, fmt.Errorf("strategy %q: accepted are fixed-home and tree-V with V one of 2, 4, 16, 2-4, 4-16 (or L-K)", s)
}

// ErrMemory reports a memory bound that cannot hold one variable.
var ErrMemory = errors.New("divalib: memory bound smaller than one variable")

// protoTag is the tag of every protocol message, on the store's own
// duplicate of the communicator (so it never matches application traffic).
const protoTag = 0x5d1a

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

	vars   []*variable
	byName map[string]int

	localq  []*msg // messages between tree nodes on this rank, FIFO
	localHd int
	sends   []mpi.Request
	err     error // sticky failure of the progress engine

	op op // this rank's access in progress

	bar   barrier
	ibarr Ibarrierer

	// LRU list of variables with a copy on this rank, most recent first.
	lruHead, lruTail *variable
	resident         int

	sent, recvd int64 // protocol messages, for termination detection at Close
	polls       int
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
}

// variable is this rank's view of one global variable.
type variable struct {
	v    globalvar.Var
	root int     // access tree: processor of the root; fixed home: the home
	emb  []int32 // access tree: node -> rank

	// data is this rank's copy (nil: none). It is immutable: a write builds
	// a new slice, so messages and copies can share it without copying.
	data []byte

	// Access tree: states of the tree nodes of this variable on this rank.
	nodes  map[int32]*atNode
	copies int   // nodes here that hold a copy (all share data)
	ver    int64 // version of data (writes are numbered by the token holder)
	maxInv int64 // newest version an invalidation seen here announced

	// Fixed home.
	fh   fhLocal
	home *fhHome // only on the home rank

	locks map[int32]*lockNode

	prev, next *variable // LRU links
	inLRU      bool
}

// op is the access this rank is waiting for.
type op struct {
	active bool
	read   bool
	done   bool
	vr     *variable
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
		traffic: NewTraffic(m), byName: map[string]int{}}
	switch cfg.Barrier {
	case BarrierTree, BarrierCentral:
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
	if cfg.Barrier == BarrierMPI {
		ib, ok := dup.(Ibarrierer)
		if !ok {
			dup.Free()
			return nil, fmt.Errorf("divalib: barrier mpi: the duplicated %s communicator has no Ibarrier", c.Backend())
		}
		s.ibarr = ib
	}
	s.bar.init(s)
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
	x, err := s.lookup(v)
	if err != nil {
		return 0, err
	}
	return x.root, nil
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
// is a hash of the seed and the ID.
func (s *Store) Create(name string, size int) (globalvar.Var, error) {
	if s.closed {
		return globalvar.Var{}, errClosed
	}
	if size < 0 || size > mpi.MaxCount-headerBytes {
		return globalvar.Var{}, fmt.Errorf("divalib: variable %q: size %d bytes outside 0..%d", name, size, mpi.MaxCount-headerBytes)
	}
	if _, dup := s.byName[name]; dup {
		return globalvar.Var{}, fmt.Errorf("divalib: variable %q created twice", name)
	}
	if s.cfg.MemoryBytes > 0 && size > s.cfg.MemoryBytes {
		return globalvar.Var{}, fmt.Errorf("%w: variable %q has %d bytes, the bound is %d bytes per rank", ErrMemory, name, size, s.cfg.MemoryBytes)
	}
	id := len(s.vars)
	x := &variable{v: globalvar.Var{ID: id, Name: name, Size: size}, root: s.randomRank(id)}
	s.vars = append(s.vars, x)
	s.byName[name] = id
	if s.cfg.Strategy == AccessTree {
		x.emb = s.tree.Embedding(x.root)
		x.nodes = map[int32]*atNode{}
		if x.root == s.rank {
			// The root holds the initial (zero) copy and the write token.
			s.atNode(x, 0)
		}
	} else if x.root == s.rank {
		s.fhInitHome(x)
	}
	return x.v, nil
}

var errClosed = errors.New("divalib: store is closed")

func (s *Store) lookup(v globalvar.Var) (*variable, error) {
	if v.ID < 0 || v.ID >= len(s.vars) {
		return nil, fmt.Errorf("%w: %q (ID %d)", globalvar.ErrUnknownVar, v.Name, v.ID)
	}
	x := s.vars[v.ID]
	if x.v != v {
		return nil, fmt.Errorf("%w: %q (ID %d) does not match %q of this store", globalvar.ErrUnknownVar, v.Name, v.ID, x.v.Name)
	}
	return x, nil
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
	var data []byte
	if s.cfg.Strategy == AccessTree {
		data, err = s.atRead(x)
	} else {
		data, err = s.fhRead(x)
	}
	if err != nil {
		return err
	}
	if len(data) != v.Size {
		return fmt.Errorf("divalib: rank %d: internal error: read of %q returned %d bytes, want %d (strategy %s)", s.rank, v.Name, len(data), v.Size, s.cfg.Name())
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
	if s.cfg.Strategy == AccessTree {
		return s.atWrite(x, off, data)
	}
	return s.fhWrite(x, off, data)
}

// cacheHit does the bookkeeping of an access served from this rank's copy,
// including the occasional poll that keeps serving others.
func (s *Store) cacheHit(x *variable) {
	s.touch(x)
	s.polls++
	if s.polls >= pollEvery {
		s.polls = 0
		for s.pollOnce() {
		}
		s.reapSends()
	}
}

// await runs the progress engine until this rank's access completes and
// returns the delivered value.
func (s *Store) await(x *variable) ([]byte, error) {
	err := s.progress(func() bool { return s.op.done })
	res := s.op.result
	s.op = op{}
	return res, err
}

func (s *Store) begin(x *variable) {
	s.op = op{active: true, vr: x}
}

// complete finishes this rank's access with value data.
func (s *Store) complete(x *variable, data []byte) {
	if !s.op.active || s.op.vr != x {
		s.fail(fmt.Errorf("divalib: rank %d: unexpected completion for %q", s.rank, x.v.Name))
		return
	}
	if s.op.read && len(data) != x.v.Size {
		s.fail(fmt.Errorf("divalib: rank %d: read of %q completed with %d bytes, want %d (strategy %s)", s.rank, x.v.Name, len(data), x.v.Size, s.cfg.Name()))
		return
	}
	s.op.done, s.op.result = true, data
}

func (s *Store) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// send delivers m to the processor simulating its destination node: on this
// rank through the local queue (no startup, no link), otherwise with Isend.
func (s *Store) send(rank int, m *msg) {
	if rank == s.rank {
		s.localq = append(s.localq, m)
		return
	}
	buf := m.encode()
	s.traffic.Charge(s.rank, rank, len(buf))
	s.stats.Messages++
	s.stats.Bytes += int64(len(buf))
	if m.kind != kBarArrive && m.kind != kBarRelease {
		s.sent++
	}
	req, err := s.comm.Isend(buf, rank, protoTag)
	if err != nil {
		s.fail(err)
		return
	}
	s.sends = append(s.sends, req)
}

// pollOnce handles one pending message, local ones first; it reports whether
// there was one.
func (s *Store) pollOnce() bool {
	if s.localHd < len(s.localq) {
		m := s.localq[s.localHd]
		s.localq[s.localHd] = nil
		s.localHd++
		if s.localHd == len(s.localq) {
			s.localq, s.localHd = s.localq[:0], 0
		}
		s.handle(m)
		return true
	}
	found, st, err := s.comm.Iprobe(mpi.AnySource, protoTag)
	if err != nil {
		s.fail(err)
		return true
	}
	if !found {
		return false
	}
	buf := make([]byte, st.Count)
	if _, err := s.comm.Recv(buf, st.Source, protoTag); err != nil {
		s.fail(err)
		return true
	}
	m, err := decode(buf)
	if err != nil {
		s.fail(err)
		return true
	}
	if m.kind != kBarArrive && m.kind != kBarRelease {
		s.recvd++
	}
	s.handle(m)
	return true
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
// reports true. It never blocks in MPI: Iprobe and Test only, so a rank
// waiting for its own access keeps serving the accesses of others.
func (s *Store) progress(done func() bool) error {
	spins := 0
	var t0 time.Time
	if debugStall != nil {
		t0 = time.Now()
	}
	for s.err == nil && !done() {
		if spins++; debugStall != nil && spins%1024 == 0 && time.Since(t0) > 5*time.Second {
			debugStall(s)
			t0 = time.Now().Add(time.Hour)
		}
		if s.pollOnce() {
			continue
		}
		s.reapSends()
		// Nothing to do: let other goroutine ranks (mpi/local) run. Under
		// a launcher the ranks are processes and the empty Iprobe yields
		// the processor when they share cores (Open MPI's
		// mpi_yield_when_idle, mpi/native's YieldEnv under MPICH); there a
		// Gosched would only hurt: the polling goroutine is usually the one
		// native.Start locked to its thread, and each Gosched of a locked
		// goroutine hands the thread's P to another thread and back (two
		// futex wake-ups). Dropping it made dsm check on 4 ranks on 2 cores
		// 2x faster under Open MPI and 9x under MPICH.
		if s.comm.Backend() != "native" {
			runtime.Gosched()
		}
	}
	// Finish local work so forwarded requests of others do not wait for this
	// rank's next access.
	for s.err == nil && s.localHd < len(s.localq) {
		s.pollOnce()
	}
	s.reapSends()
	return s.err
}

// debugCheck, when set (by tests), checks the store's invariants after
// every message.
var debugCheck func(s *Store, m *msg)

// debugStall, when set (by tests), is called once when a rank has polled
// in vain for a long time.
var debugStall func(s *Store)

// handle dispatches one message.
func (s *Store) handle(m *msg) {
	if debugCheck != nil {
		defer debugCheck(s, m)
	}
	switch m.kind {
	case kBarArrive, kBarRelease:
		s.bar.handle(m)
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
	if m.vr < 0 || int(m.vr) >= len(s.vars) {
		// Another rank used a variable this rank has not created: the
		// collective Create contract was broken.
		s.fail(fmt.Errorf("divalib: rank %d: message for variable %d, which this rank has not created (Create must be called by every rank in the same order)", s.rank, m.vr))
		return nil, false
	}
	return s.vars[m.vr], true
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
		err = s.progress(func() bool {
			done, _, e := req.Test()
			if e != nil {
				werr = e
				return true
			}
			return done
		})
		if werr != nil {
			return werr
		}
		return err
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
	s.closed = true
	return s.comm.Free()
}
