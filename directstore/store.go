package directstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// Tags on the store's private duplicate of the communicator. The request
// and reply tags are the k-k-access pattern's (patterns/access.go).
const (
	reqTag     = 300
	replyTag   = 301
	lockTag    = 310 // lock, unlock and close messages to a home
	grantTag   = 311 // a home's grant of a lock or acknowledgement of an unlock
	barrierTag = 320 // + round of the dissemination barrier
)

// Lock protocol operations (word 1 of a lock message; word 0 is the
// variable ID).
const (
	opLock      = 1
	opUnlock    = 2
	opLockClose = 3 // a rank's message to itself that ends its lock service
	opNotLocked = 4 // a home's answer to an unlock of a lock not held
	lockMsgLen  = 16
)

// DefaultMaxPacket is the largest packet by default: every rank keeps one
// request receive of this many bytes (plus the header) posted.
const DefaultMaxPacket = 4 << 20

// Config configures a Store. The zero value is valid.
type Config struct {
	// MaxPacket is the most bytes one packet carries (default
	// DefaultMaxPacket). A batch's packets must not exceed it; a plain Read
	// or Write longer than it is cut into packets of MaxPacket bytes, all in
	// flight at once, and is then atomic per packet only.
	MaxPacket int
}

func (c Config) withDefaults() Config {
	if c.MaxPacket <= 0 {
		c.MaxPacket = DefaultMaxPacket
	}
	return c
}

type variable struct {
	v    globalvar.Var
	home int
	base int // byte offset in the home's memory
}

// lockState is a home's record of one lock: the holder (-1 for none) and
// the ranks waiting, in arrival order.
type lockState struct {
	holder int
	queue  []int
}

// Stats are one rank's counters.
type Stats struct {
	Batches, Packets int64 // batched and plain accesses issued, and their packets
	PacketBytes      int64 // data bytes of those packets
	ServedReads      int64 // read requests this rank served as a home
	ServedWrites     int64 // write requests served
	Locks, Barriers  int64
	HomeBytes        int // bytes of variables homed on this rank
	Kernel           bool
}

// Store is the direct store on one rank. It implements globalvar.Store,
// globalvar.Batcher and globalvar.Placer. Methods are called by the rank's
// one goroutine.
type Store struct {
	c          mpi.Comm // private duplicate
	rank, size int
	cfg        Config
	srv        mpi.StoreServer
	kernel     bool

	vars   []variable
	byName map[string]int
	used   []int // bytes placed on every home (identical on every rank)

	lockBuf  []byte
	lockRecv mpi.Request
	locks    map[int]*lockState // locks this rank keeps as a home
	held     map[int]bool       // locks this rank holds
	sends    []mpi.Request      // lock-protocol sends of this rank as a home
	sendBufs [][]byte
	tokens   [][2][]byte // barrier send and receive tokens per round

	stats  Stats
	err    error // sticky: a failure leaves the store unusable
	closed bool
}

// New creates the store on every rank of c (collective). It duplicates c,
// so the store's messages never match the caller's.
func New(c mpi.Comm, cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if cfg.MaxPacket > mpi.MaxCount-mpi.AccessHeaderBytes {
		return nil, fmt.Errorf("directstore: MaxPacket %d bytes above the most one message carries (%d)", cfg.MaxPacket, mpi.MaxCount-mpi.AccessHeaderBytes)
	}
	d, err := c.Dup()
	if err != nil {
		return nil, fmt.Errorf("directstore: dup: %w", err)
	}
	s := &Store{c: d, rank: d.Rank(), size: d.Size(), cfg: cfg, byName: map[string]int{},
		used: make([]int, d.Size()), locks: map[int]*lockState{}, held: map[int]bool{},
		lockBuf: make([]byte, lockMsgLen)}
	spec := mpi.StoreSpec{ReqTag: reqTag, ReplyTag: replyTag, MaxPacket: cfg.MaxPacket}
	if k, ok := d.(mpi.StoreKernel); ok {
		s.srv, err = k.NewStoreServer(spec)
		s.kernel = true
	} else {
		s.srv, err = newGoServer(d, spec)
	}
	if err != nil {
		_ = d.Free()
		return nil, fmt.Errorf("directstore: %w", err)
	}
	if s.lockRecv, err = d.Irecv(s.lockBuf, mpi.AnySource, lockTag); err != nil {
		return nil, fmt.Errorf("directstore: %w", err)
	}
	// No rank may send a request before every rank has posted its
	// receives; not required by MPI, but it makes the first access's time
	// the protocol's and not a late rank's setup.
	if err := s.Barrier(); err != nil {
		return nil, err
	}
	s.stats.Barriers = 0
	return s, nil
}

// Kernel reports whether the accesses run in the backend's C kernel
// (mpi.StoreKernel) rather than in Go.
func (s *Store) Kernel() bool { return s.kernel }

// Stats returns this rank's counters.
func (s *Store) Stats() Stats {
	st := s.stats
	st.ServedReads, st.ServedWrites = s.srv.Served()
	st.HomeBytes = s.used[s.rank]
	st.Kernel = s.kernel
	return st
}

func (s *Store) usable() error {
	if s.closed {
		return errClosed
	}
	return s.err
}

var errClosed = errors.New("directstore: store is closed")

// fail makes err sticky: after a protocol or MPI failure the store's state
// (posted receives, a home's memory) cannot be trusted any more.
func (s *Store) fail(err error) error {
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("directstore: rank %d: %w", s.rank, err)
	}
	if err != nil {
		return s.err
	}
	return nil
}

// Create allocates a variable on home n mod p, n the number of variables
// created before it (round robin). Collective.
func (s *Store) Create(name string, size int) (globalvar.Var, error) {
	return s.create(name, size, len(s.vars)%s.size)
}

// CreateAt allocates a variable whole on rank home (globalvar.Placer).
// Collective: every rank passes the same name, size and home.
func (s *Store) CreateAt(name string, size, home int) (globalvar.Var, error) {
	if home < 0 || home >= s.size {
		return globalvar.Var{}, fmt.Errorf("directstore: CreateAt(%q): home %d outside 0..%d", name, home, s.size-1)
	}
	return s.create(name, size, home)
}

// varAlign keeps every variable 8-byte aligned in its home's memory.
const varAlign = 8

func (s *Store) create(name string, size, home int) (globalvar.Var, error) {
	if err := s.usable(); err != nil {
		return globalvar.Var{}, err
	}
	// Nothing may reach a home while its memory moves, and no rank may be
	// blocked in the agreement below while another waits for its answers.
	if err := s.Barrier(); err != nil {
		return globalvar.Var{}, err
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d", name, size, home)
	mine := int64(h.Sum64() >> 1)
	var lo, hi [1]int64
	if err := s.c.AllreduceInt64s([]int64{mine}, lo[:], mpi.OpMin); err != nil {
		return globalvar.Var{}, s.fail(err)
	}
	if err := s.c.AllreduceInt64s([]int64{mine}, hi[:], mpi.OpMax); err != nil {
		return globalvar.Var{}, s.fail(err)
	}
	if lo[0] != hi[0] {
		return globalvar.Var{}, fmt.Errorf("directstore: Create(%q, %d) differs between ranks (Create is collective: same names, sizes and homes in the same order)", name, size)
	}
	if size < 0 || size > mpi.MaxCount {
		return globalvar.Var{}, fmt.Errorf("directstore: Create(%q, %d): size outside 0..%d", name, size, mpi.MaxCount)
	}
	if _, dup := s.byName[name]; dup {
		return globalvar.Var{}, fmt.Errorf("directstore: variable %q created twice", name)
	}
	base := (s.used[home] + varAlign - 1) / varAlign * varAlign
	if home == s.rank {
		if err := s.srv.Grow(base + size); err != nil {
			return globalvar.Var{}, s.fail(err)
		}
	}
	s.used[home] = base + size
	v := globalvar.Var{ID: len(s.vars), Name: name, Size: size}
	s.vars = append(s.vars, variable{v: v, home: home, base: base})
	s.byName[name] = v.ID
	return v, nil
}

// Keeps reports whether this rank is v's home (globalvar.Keeper): an
// access to v is then a message of the rank to itself (MPI's self
// transport), which crosses no link.
func (s *Store) Keeps(v globalvar.Var) bool {
	home, err := s.Home(v)
	return err == nil && home == s.rank
}

// Home returns the rank that holds v.
func (s *Store) Home(v globalvar.Var) (int, error) {
	x, err := s.lookup(v)
	return x.home, err
}

func (s *Store) lookup(v globalvar.Var) (variable, error) {
	if v.ID < 0 || v.ID >= len(s.vars) || s.vars[v.ID].v != v {
		return variable{}, fmt.Errorf("%w: %q (ID %d)", globalvar.ErrUnknownVar, v.Name, v.ID)
	}
	return s.vars[v.ID], nil
}

// Read copies len(buf) bytes of v at off into buf: one packet (cut into
// packets of MaxPacket bytes, all in flight, when longer).
func (s *Store) Read(v globalvar.Var, off int, buf []byte) error {
	return s.plain(false, v, off, buf)
}

// Write stores data into v at off; it returns when the home has
// acknowledged it.
func (s *Store) Write(v globalvar.Var, off int, data []byte) error {
	return s.plain(true, v, off, data)
}

func (s *Store) plain(write bool, v globalvar.Var, off int, buf []byte) error {
	pk, err := globalvar.Split(v, off, buf, s.cfg.MaxPacket)
	if err != nil {
		return err
	}
	if len(pk) == 0 {
		if err := s.usable(); err != nil {
			return err
		}
		_, err := s.lookup(v)
		return err
	}
	return s.batch(write, pk, len(pk))
}

// ReadBatch implements globalvar.Batcher: the packets in groups of k, each
// group one k-access of the pattern's messages.
func (s *Store) ReadBatch(pk []globalvar.Packet, k int) error { return s.batch(false, pk, k) }

// WriteBatch implements globalvar.Batcher.
func (s *Store) WriteBatch(pk []globalvar.Packet, k int) error { return s.batch(true, pk, k) }

func (s *Store) batch(write bool, pk []globalvar.Packet, k int) error {
	if err := s.usable(); err != nil {
		return err
	}
	if k < 1 {
		return fmt.Errorf("%w: k = %d packets in flight; want k >= 1", globalvar.ErrBatch, k)
	}
	b := mpi.StoreBatch{Write: write, K: k, Targets: make([]int, len(pk)), Offs: make([]int, len(pk)), Bufs: make([][]byte, len(pk))}
	for j, p := range pk {
		x, err := s.lookup(p.Var)
		if err != nil {
			return err
		}
		if err := globalvar.CheckRange(p.Var, p.Off, len(p.Buf)); err != nil {
			return err
		}
		if len(p.Buf) > s.cfg.MaxPacket {
			return fmt.Errorf("%w: packet %d has %d bytes, above the store's MaxPacket %d", globalvar.ErrBatch, j+1, len(p.Buf), s.cfg.MaxPacket)
		}
		b.Targets[j], b.Offs[j], b.Bufs[j] = x.home, x.base+p.Off, p.Buf
		s.stats.PacketBytes += int64(len(p.Buf))
	}
	s.stats.Batches++
	s.stats.Packets += int64(len(pk))
	return s.fail(s.srv.Batch(b))
}

// Poll serves the access requests and lock messages that have arrived,
// without waiting (globalvar.Poller). A rank that computes for long calls
// it now and then so that the ranks reading from it are not held up until
// its next access.
func (s *Store) Poll() error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := s.srv.Poll(); err != nil {
		return s.fail(err)
	}
	for {
		done, st, err := s.lockRecv.Test()
		if err != nil {
			return s.fail(err)
		}
		if !done {
			return nil
		}
		if err := s.lockMessage(st); err != nil {
			return s.fail(err)
		}
	}
}

// wait serves accesses and lock messages until r completes.
func (s *Store) wait(r mpi.Request) (mpi.Status, error) {
	reqs := []mpi.Request{r, s.lockRecv}
	for {
		i, st, err := s.srv.WaitAny(reqs)
		if err != nil {
			return st, s.fail(err)
		}
		switch i {
		case 0:
			return st, nil
		case 1:
			if err := s.lockMessage(st); err != nil {
				return st, s.fail(err)
			}
			reqs[1] = s.lockRecv
		default:
			return st, s.fail(errors.New("nothing left to wait for"))
		}
	}
}

// lockMessage handles one lock-protocol message to this rank as a home and
// posts the next receive.
func (s *Store) lockMessage(st mpi.Status) error {
	if st.Count != lockMsgLen {
		return fmt.Errorf("lock message of %d bytes from rank %d, want %d", st.Count, st.Source, lockMsgLen)
	}
	id := int(binary.LittleEndian.Uint64(s.lockBuf[0:8]))
	op := binary.LittleEndian.Uint64(s.lockBuf[8:16])
	if op == opLockClose {
		if st.Source != s.rank {
			return fmt.Errorf("close of the lock service from rank %d", st.Source)
		}
		s.lockRecv = nil
		return nil
	}
	if id < 0 || id >= len(s.vars) || s.vars[id].home != s.rank {
		return fmt.Errorf("lock message for variable %d from rank %d, which this rank does not keep", id, st.Source)
	}
	ls := s.locks[id]
	if ls == nil {
		ls = &lockState{holder: -1}
		s.locks[id] = ls
	}
	switch op {
	case opLock:
		if ls.holder < 0 {
			ls.holder = st.Source
			if err := s.grant(id, opLock, st.Source); err != nil {
				return err
			}
		} else {
			ls.queue = append(ls.queue, st.Source)
		}
	case opUnlock:
		if ls.holder != st.Source {
			if err := s.grant(id, opNotLocked, st.Source); err != nil {
				return err
			}
			break
		}
		ls.holder = -1
		if len(ls.queue) > 0 {
			ls.holder = ls.queue[0]
			ls.queue = ls.queue[1:]
			if err := s.grant(id, opLock, ls.holder); err != nil {
				return err
			}
		}
		if err := s.grant(id, opUnlock, st.Source); err != nil {
			return err
		}
	default:
		return fmt.Errorf("lock message with operation %d from rank %d", op, st.Source)
	}
	var err error
	s.lockRecv, err = s.c.Irecv(s.lockBuf, mpi.AnySource, lockTag)
	return err
}

// grant sends a home's answer (grant, unlock acknowledgement or refusal).
func (s *Store) grant(id int, op uint64, to int) error {
	s.pruneSends()
	b := make([]byte, lockMsgLen)
	binary.LittleEndian.PutUint64(b[0:8], uint64(id))
	binary.LittleEndian.PutUint64(b[8:16], op)
	r, err := s.c.Isend(b, to, grantTag)
	if err != nil {
		return err
	}
	s.sends = append(s.sends, r)
	s.sendBufs = append(s.sendBufs, b)
	return nil
}

// pruneSends drops the completed lock-protocol sends.
func (s *Store) pruneSends() {
	keep := 0
	for i, r := range s.sends {
		if done, _, _ := r.Test(); !done {
			s.sends[keep], s.sendBufs[keep] = r, s.sendBufs[i]
			keep++
		}
	}
	clear(s.sends[keep:])
	clear(s.sendBufs[keep:])
	s.sends, s.sendBufs = s.sends[:keep], s.sendBufs[:keep]
}

// lockOp sends op for v to its home and waits for the answer.
func (s *Store) lockOp(x variable, op uint64) (uint64, error) {
	msg := make([]byte, lockMsgLen)
	binary.LittleEndian.PutUint64(msg[0:8], uint64(x.v.ID))
	binary.LittleEndian.PutUint64(msg[8:16], op)
	ans := make([]byte, lockMsgLen)
	recv, err := s.c.Irecv(ans, x.home, grantTag)
	if err != nil {
		return 0, s.fail(err)
	}
	send, err := s.c.Isend(msg, x.home, lockTag)
	if err != nil {
		return 0, s.fail(err)
	}
	if _, err := s.wait(recv); err != nil {
		return 0, err
	}
	if _, err := s.wait(send); err != nil {
		return 0, err
	}
	if id := binary.LittleEndian.Uint64(ans[0:8]); id != uint64(x.v.ID) {
		return 0, s.fail(fmt.Errorf("lock answer for variable %d, asked for %d", id, x.v.ID))
	}
	return binary.LittleEndian.Uint64(ans[8:16]), nil
}

// Lock acquires v's lock, kept by v's home; waiters are granted in arrival
// order. Locks are not reentrant.
func (s *Store) Lock(v globalvar.Var) error {
	if err := s.usable(); err != nil {
		return err
	}
	x, err := s.lookup(v)
	if err != nil {
		return err
	}
	if s.held[v.ID] {
		return fmt.Errorf("directstore: Lock(%q): already held by this rank (locks are not reentrant)", v.Name)
	}
	ans, err := s.lockOp(x, opLock)
	if err != nil {
		return err
	}
	if ans != opLock {
		return s.fail(fmt.Errorf("lock of %q answered with operation %d", v.Name, ans))
	}
	s.held[v.ID] = true
	s.stats.Locks++
	return nil
}

// Unlock releases v's lock and returns when the home has acknowledged it.
func (s *Store) Unlock(v globalvar.Var) error {
	if err := s.usable(); err != nil {
		return err
	}
	x, err := s.lookup(v)
	if err != nil {
		return err
	}
	if !s.held[v.ID] {
		return globalvar.ErrNotLocked
	}
	ans, err := s.lockOp(x, opUnlock)
	if err != nil {
		return err
	}
	delete(s.held, v.ID)
	if ans == opNotLocked {
		return globalvar.ErrNotLocked
	}
	if ans != opUnlock {
		return s.fail(fmt.Errorf("unlock of %q answered with operation %d", v.Name, ans))
	}
	return nil
}

// Barrier is a dissemination barrier: in round i rank r sends to
// r + 2^i and waits for r - 2^i (mod p), serving while it waits.
func (s *Store) Barrier() error {
	if err := s.usable(); err != nil {
		return err
	}
	round := 0
	for d := 1; d < s.size; d, round = d*2, round+1 {
		if round == len(s.tokens) {
			s.tokens = append(s.tokens, [2][]byte{make([]byte, 1), make([]byte, 1)})
		}
		to, from := (s.rank+d)%s.size, (s.rank-d+s.size)%s.size
		recv, err := s.c.Irecv(s.tokens[round][1], from, barrierTag+round)
		if err != nil {
			return s.fail(err)
		}
		send, err := s.c.Isend(s.tokens[round][0], to, barrierTag+round)
		if err != nil {
			return s.fail(err)
		}
		if _, err := s.wait(recv); err != nil {
			return err
		}
		if _, err := s.wait(send); err != nil {
			return err
		}
	}
	s.stats.Barriers++
	return nil
}

// Close ends the store (collective): a barrier, after which no request of
// any rank is in flight, then every rank ends its own services and frees
// the communicator.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	if err := s.Barrier(); err != nil {
		return err
	}
	s.closed = true
	var errs []error
	msg := make([]byte, lockMsgLen)
	binary.LittleEndian.PutUint64(msg[8:16], opLockClose)
	if send, err := s.c.Isend(msg, s.rank, lockTag); err != nil {
		errs = append(errs, err)
	} else {
		for s.lockRecv != nil {
			st, err := s.lockRecv.Wait()
			if err == nil {
				err = s.lockMessage(st)
			}
			if err != nil {
				errs = append(errs, err)
				break
			}
		}
		if _, err := send.Wait(); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := mpi.Waitall(s.sends); err != nil {
		errs = append(errs, err)
	}
	if err := s.srv.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := s.c.Free(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("directstore: close: %w", err)
	}
	return nil
}

var (
	_ globalvar.Store   = (*Store)(nil)
	_ globalvar.Batcher = (*Store)(nil)
	_ globalvar.Placer  = (*Store)(nil)
	_ globalvar.Poller  = (*Store)(nil)
)
