package emulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// ErrModuleFull is returned by Create when a variable does not fit in the
// memory left on its module.
var ErrModuleFull = errors.New("emulate: variable does not fit in its module's memory")

// ErrStalled is returned when an application rank waited StallTimeout for a
// reply: the network is stalled or a rank failed.
var ErrStalled = errors.New("emulate: no reply within the stall timeout")

type varInfo struct {
	v      globalvar.Var
	module int
}

// pending is an unanswered request: its kind, and for a read where the
// data goes.
type pending struct {
	kind kind
	dst  []byte
}

// Store is the application side of the emulated service network: it
// implements globalvar.Store on an application rank by sending request
// packets into the service network through the rank's entry node. Methods
// must be called by the rank's one goroutine.
type Store struct {
	cfg      Config
	t        *Topology
	c        mpi.Comm // network communicator (all ranks)
	app      mpi.Comm // application ranks only
	me       int
	entry    int // rank of the entry node in c
	prefix   int
	vars     []varInfo
	used     []int // bytes allocated per module
	nextID   uint32
	pend     map[uint32]pending
	inflight int
	epoch    uint32
	released uint32 // last barrier epoch released
	locked   map[int]bool
	firstErr error
	closed   bool
	pool     bufPool
	idle     idler
	hashA    uint64
	hashB    uint64
	stats    []NodeStats

	issuedReads, issuedWrites int64 // request packets sent, for SelfTest

	bench     []globalvar.Var // the drivers' variables, one per module
	benchSize int
}

func newStore(c, app mpi.Comm, cfg Config) *Store {
	t := cfg.Topology
	classes, _ := planFor(cfg)
	s := &Store{
		cfg: cfg, t: t, c: c, app: app, me: c.Rank(),
		entry:  t.Apps() + t.Entry(c.Rank()),
		prefix: prefixLen(classes), used: make([]int, t.Apps()),
		pend: map[uint32]pending{}, locked: map[int]bool{},
		idle: idler{p: cfg.Idle},
	}
	s.hashA, s.hashB = hashParams(cfg.Seed)
	return s
}

// Topology is the service network the store runs on.
func (s *Store) Topology() *Topology { return s.t }

// Rank is this application rank's index (0..Apps-1).
func (s *Store) Rank() int { return s.me }

// Apps is the number of application ranks.
func (s *Store) Apps() int { return s.t.Apps() }

// AppComm is the communicator of the application ranks only (the Split of
// the world), for the application's own collectives and timing.
func (s *Store) AppComm() mpi.Comm { return s.app }

// Config is the store's configuration with defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// Create allocates a variable placed by Config.Placement. Collective over
// the application ranks: every rank checks that all gave the same name and
// size, so misuse is an error rather than two views of memory.
func (s *Store) Create(name string, size int) (globalvar.Var, error) {
	id := len(s.vars)
	m := id % s.t.Apps()
	if s.cfg.Placement == PlaceHash {
		m = hashModule(uint64(id), s.hashA, s.hashB, s.t.Apps())
	}
	return s.create(name, size, m)
}

// CreateAt allocates a variable on module m (direct placement by the
// caller). Collective like Create.
func (s *Store) CreateAt(name string, size, m int) (globalvar.Var, error) {
	if m < 0 || m >= s.t.Apps() {
		return globalvar.Var{}, fmt.Errorf("emulate: module %d out of range 0..%d", m, s.t.Apps()-1)
	}
	return s.create(name, size, m)
}

func (s *Store) create(name string, size, m int) (globalvar.Var, error) {
	if s.closed {
		return globalvar.Var{}, errClosed
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d", name, size, m)
	mine := int64(h.Sum64() >> 1)
	var lo, hi [1]int64
	if err := s.app.AllreduceInt64s([]int64{mine}, lo[:], mpi.OpMin); err != nil {
		return globalvar.Var{}, err
	}
	if err := s.app.AllreduceInt64s([]int64{mine}, hi[:], mpi.OpMax); err != nil {
		return globalvar.Var{}, err
	}
	if lo[0] != hi[0] {
		return globalvar.Var{}, fmt.Errorf("emulate: Create(%q, %d) differs between application ranks (Create is collective: same names and sizes in the same order)", name, size)
	}
	if size < 0 || size > maxVarBytes {
		return globalvar.Var{}, fmt.Errorf("emulate: Create(%q, %d): size outside 0..%d", name, size, maxVarBytes)
	}
	if s.used[m]+size > s.cfg.ModuleBytes {
		return globalvar.Var{}, fmt.Errorf("%w: %q needs %d bytes, module %d has %d of %d left",
			ErrModuleFull, name, size, m, s.cfg.ModuleBytes-s.used[m], s.cfg.ModuleBytes)
	}
	s.used[m] += size
	v := globalvar.Var{ID: len(s.vars), Name: name, Size: size}
	s.vars = append(s.vars, varInfo{v: v, module: m})
	return v, nil
}

// Module is the memory module holding v.
func (s *Store) Module(v globalvar.Var) (int, error) {
	vi, err := s.lookup(v)
	return vi.module, err
}

func (s *Store) lookup(v globalvar.Var) (varInfo, error) {
	if v.ID < 0 || v.ID >= len(s.vars) || s.vars[v.ID].v != v {
		return varInfo{}, globalvar.ErrUnknownVar
	}
	return s.vars[v.ID], nil
}

var errClosed = errors.New("emulate: store is closed")

// Op is one access of Access: read len(Buf) bytes of Var at Off into Buf,
// or write Buf there.
type Op struct {
	Write bool
	Var   globalvar.Var
	Off   int
	Buf   []byte
}

// Read copies len(buf) bytes of v at off into buf.
func (s *Store) Read(v globalvar.Var, off int, buf []byte) error {
	return s.Access([]Op{{Var: v, Off: off, Buf: buf}})
}

// Write stores data into v at off; it returns when the module has
// acknowledged every packet.
func (s *Store) Write(v globalvar.Var, off int, data []byte) error {
	return s.Access([]Op{{Write: true, Var: v, Off: off, Buf: data}})
}

// Access performs the ops as one send hot spot: every op is cut into
// packets by Config.Split, all packets are sent one after another (at most
// Config.Window unanswered), then Access waits for every reply. A k-access
// of paper 000 (Definition 1) is Access with k ops of l bytes.
func (s *Store) Access(ops []Op) error {
	return s.AccessSplit(ops, s.cfg.Split)
}

// AccessSplit is Access with an explicit packet-splitting version.
func (s *Store) AccessSplit(ops []Op, version SplitVersion) error {
	if s.closed {
		return errClosed
	}
	for _, op := range ops {
		if _, err := s.lookup(op.Var); err != nil {
			return err
		}
		if err := globalvar.CheckRange(op.Var, op.Off, len(op.Buf)); err != nil {
			return err
		}
	}
	s.firstErr = nil
	for _, op := range ops {
		vi := s.vars[op.Var.ID]
		k, l := splitAccess(len(op.Buf), version, s.cfg)
		for j := range k {
			lo := min(j*l, len(op.Buf))
			hi := min(lo+l, len(op.Buf))
			h := header{
				dst: int32(s.t.ModuleNode(vi.module)), v: int32(vi.v.ID), vsize: uint32(vi.v.Size),
				off: uint32(op.Off + lo), n: uint32(hi - lo),
			}
			var payload []byte
			p := pending{}
			if op.Write {
				h.kind, p.kind = kWrite, kWrite
				payload = op.Buf[lo:hi]
				s.issuedWrites++
			} else {
				h.kind, p.kind = kRead, kRead
				p.dst = op.Buf[lo:hi]
				s.issuedReads++
			}
			if err := s.request(h, payload, p); err != nil {
				return err
			}
		}
	}
	if err := s.drain(); err != nil {
		return err
	}
	return s.firstErr
}

// request sends one request packet to the entry node, first waiting while
// Window requests are unanswered.
func (s *Store) request(h header, payload []byte, p pending) error {
	for s.inflight >= s.cfg.Window {
		if err := s.waitOne(true); err != nil {
			return err
		}
	}
	s.nextID++
	h.id = s.nextID
	if err := s.send(h, payload); err != nil {
		return err
	}
	s.pend[h.id] = p
	s.inflight++
	return nil
}

// send injects a packet at the entry node (buffer class 0). The entry node
// always receives from its application link (the window bounds what it
// holds), so a blocking send cannot deadlock.
func (s *Store) send(h header, payload []byte) error {
	h.src = int32(s.me)
	h.class = 0
	buf := s.pool.get(s.prefix + len(payload))
	h.encode(buf)
	clear(buf[headerBytes:s.prefix])
	copy(buf[s.prefix:], payload)
	err := s.c.Send(buf, s.entry, packetTag)
	s.pool.put(buf)
	if err != nil {
		return fmt.Errorf("emulate: application %d: send to entry node: %w", s.me, err)
	}
	return nil
}

func (s *Store) drain() error {
	for s.inflight > 0 {
		if err := s.waitOne(true); err != nil {
			return err
		}
	}
	return nil
}

// waitOne takes in the next message for this rank. With timed set, waiting
// longer than StallTimeout is reported as ErrStalled (replies to reads and
// writes do not depend on other ranks' progress; barriers and locks do, so
// those waits are not timed).
func (s *Store) waitOne(timed bool) error {
	s.idle.reset()
	var start time.Time
	for {
		found, st, err := s.c.Iprobe(mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return fmt.Errorf("emulate: application %d: %w", s.me, err)
		}
		if found {
			return s.receive(st)
		}
		if timed && s.idle.n%64 == 0 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > s.cfg.StallTimeout {
				abortAll(s.c, make([]byte, headerBytes), abortStall)
				return fmt.Errorf("%w: application %d waited %v for %d replies", ErrStalled, s.me, s.cfg.StallTimeout, s.inflight)
			}
		}
		s.idle.wait()
	}
}

func (s *Store) receive(st mpi.Status) error {
	switch st.Tag {
	case tagAbort:
		var b [headerBytes]byte
		_, _ = s.c.Recv(b[:], st.Source, st.Tag)
		return abortedBy(fmt.Sprintf("application %d", s.me), st.Source, b[0])
	case tagStats:
		b := make([]byte, st.Count)
		if _, err := s.c.Recv(b, st.Source, st.Tag); err != nil {
			return err
		}
		var ns NodeStats
		if err := json.Unmarshal(b, &ns); err != nil {
			return fmt.Errorf("emulate: counters from rank %d: %w", st.Source, err)
		}
		s.stats = append(s.stats, ns)
		return nil
	case packetTag:
	default:
		return fmt.Errorf("emulate: application %d: unexpected tag %d from rank %d", s.me, st.Tag, st.Source)
	}
	if st.Source != s.entry || st.Count < s.prefix {
		return fmt.Errorf("emulate: application %d: unexpected packet from rank %d (%d bytes)", s.me, st.Source, st.Count)
	}
	buf := s.pool.get(st.Count)
	defer s.pool.put(buf)
	if _, err := s.c.Recv(buf, st.Source, st.Tag); err != nil {
		return fmt.Errorf("emulate: application %d: %w", s.me, err)
	}
	var h header
	h.decode(buf)
	if h.kind == kRelease {
		if h.aux != s.epoch || s.released == s.epoch {
			return fmt.Errorf("emulate: application %d: release of barrier %d while in barrier %d", s.me, h.aux, s.epoch)
		}
		s.released = h.aux
		s.inflight--
		return nil
	}
	p, ok := s.pend[h.id]
	if !ok || !h.kind.isReply() {
		return fmt.Errorf("emulate: application %d: unexpected %v packet (request %d)", s.me, h.kind, h.id)
	}
	delete(s.pend, h.id)
	s.inflight--
	if err := statusError(h.status); err != nil {
		if s.firstErr == nil {
			s.firstErr = err
		}
		return nil
	}
	if h.kind == kReadData {
		if int(h.n) != len(p.dst) || len(buf) != s.prefix+len(p.dst) {
			return fmt.Errorf("emulate: application %d: read reply of %d bytes for %d", s.me, h.n, len(p.dst))
		}
		copy(p.dst, buf[s.prefix:])
	}
	return nil
}

func statusError(st uint8) error {
	switch st {
	case stOK:
		return nil
	case stRange:
		return globalvar.ErrRange
	case stUnknownVar:
		return globalvar.ErrUnknownVar
	case stNotLocked:
		return globalvar.ErrNotLocked
	case stModuleFull:
		return ErrModuleFull
	}
	return fmt.Errorf("emulate: reply status %d", st)
}

// Barrier sends a synchronisation packet to the root node, where it is
// counted (combined with others of the same barrier on the way), and
// returns when the root's release has come back down the broadcast tree.
// Reads and writes are complete when they return, so every write issued
// before the barrier has completed when it returns.
func (s *Store) Barrier() error {
	if s.closed {
		return errClosed
	}
	return s.barrier()
}

func (s *Store) barrier() error {
	s.epoch++
	if err := s.send(header{kind: kBarrier, dst: int32(s.t.Root()), aux: s.epoch, aux2: 1}, nil); err != nil {
		return err
	}
	s.inflight++
	for s.released != s.epoch {
		if err := s.waitOne(false); err != nil {
			return err
		}
	}
	return nil
}

// Lock acquires v's lock, kept by v's module; waiters are granted in
// arrival order.
func (s *Store) Lock(v globalvar.Var) error {
	if s.closed {
		return errClosed
	}
	vi, err := s.lookup(v)
	if err != nil {
		return err
	}
	if s.locked[v.ID] {
		return fmt.Errorf("emulate: Lock(%q): already held by this rank (locks are not reentrant)", v.Name)
	}
	if err := s.lockOp(kLock, vi); err != nil {
		return err
	}
	s.locked[v.ID] = true
	return nil
}

// Unlock releases v's lock.
func (s *Store) Unlock(v globalvar.Var) error {
	if s.closed {
		return errClosed
	}
	vi, err := s.lookup(v)
	if err != nil {
		return err
	}
	if err := s.lockOp(kUnlock, vi); err != nil {
		return err
	}
	delete(s.locked, v.ID)
	return nil
}

func (s *Store) lockOp(k kind, vi varInfo) error {
	s.firstErr = nil
	h := header{kind: k, dst: int32(s.t.ModuleNode(vi.module)), v: int32(vi.v.ID), vsize: uint32(vi.v.Size)}
	if err := s.request(h, nil, pending{kind: k}); err != nil {
		return err
	}
	for s.inflight > 0 {
		if err := s.waitOne(false); err != nil {
			return err
		}
	}
	return s.firstErr
}

// Stats collects the counters of every service node, out of band, and
// zeroes them when reset is set. Call it on one application rank while no
// access is in flight (after a barrier of the application ranks), so that
// the counters describe whole accesses.
func (s *Store) Stats(reset bool) ([]NodeStats, error) {
	if s.closed {
		return nil, errClosed
	}
	aux := uint32(0)
	if reset {
		aux = 1
	}
	s.stats = s.stats[:0]
	if err := s.send(header{kind: kStats, dst: int32(s.t.Root()), aux: aux}, nil); err != nil {
		return nil, err
	}
	for len(s.stats) < s.t.Nodes() {
		if err := s.waitOne(true); err != nil {
			return nil, err
		}
	}
	out := append([]NodeStats(nil), s.stats...)
	return out, nil
}

// Close ends the store: a barrier, then application rank 0 sends the
// shutdown packet, which the root broadcasts to every service node.
// Collective over the application ranks.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	if err := s.barrier(); err != nil {
		return err
	}
	s.closed = true
	if s.me == 0 {
		return s.send(header{kind: kShutdown, dst: int32(s.t.Root())}, nil)
	}
	return nil
}

// abort tells every rank to stop after an application error.
func (s *Store) abort() {
	s.closed = true
	abortAll(s.c, make([]byte, headerBytes), abortError)
}

var _ globalvar.Store = (*Store)(nil)
