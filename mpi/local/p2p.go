package local

import (
	"runtime"
	"sync"

	"github.com/commcost/commcost/mpi"
)

// key packs a (source, tag) pattern, either possibly a wildcard (-1), into
// one word: ranks and tags fit in 32 bits (tags are C ints in MPI), and a
// one-word key takes the maps' fast path.
type key uint64

func pack(src, tag int) key { return key(uint64(uint32(src))<<32 | uint64(uint32(tag))) }

// Indexes of a message's links in the mailbox's unexpected-message lists
// (the by-source and by-tag links are unused until their index exists).
const (
	byArrival = iota // every unexpected message, for (AnySource, AnyTag)
	bySource         // per source, for (source, AnyTag)
	byTag            // per tag, for (AnySource, tag)
	byKey            // per (source, tag)
	nLists
)

// smallMsg is the longest copied message kept inside its msg (a protocol
// header): most messages of a count-based run are that short.
const smallMsg = 48

// msg is a sent message waiting in its destination's mailbox.
type msg struct {
	src, tag int
	data     []byte         // a copy, or for Ssend the sender's own buffer
	body     []byte         // IsendRef: the rest of the message, by reference
	small    [smallMsg]byte // data of a short message, saving an allocation
	ssend    *waitPoint     // Ssend only: fired when a receive takes the message
	next     [nLists]*msg
	prev     [nLists]*msg
}

// msgList is an intrusive doubly linked list through one of msg's link
// slots, so that a message taken through one index leaves the others in O(1).
type msgList struct{ head, tail *msg }

func (l *msgList) push(m *msg, i int) {
	m.prev[i], m.next[i] = l.tail, nil
	if l.tail != nil {
		l.tail.next[i] = m
	} else {
		l.head = m
	}
	l.tail = m
}

func (l *msgList) remove(m *msg, i int) {
	if m.prev[i] != nil {
		m.prev[i].next[i] = m.next[i]
	} else {
		l.head = m.next[i]
	}
	if m.next[i] != nil {
		m.next[i].prev[i] = m.prev[i]
	} else {
		l.tail = m.prev[i]
	}
	m.prev[i], m.next[i] = nil, nil
}

// fifo is a queue that reuses its slice.
type fifo[T any] struct {
	items []T
	head  int
}

func (q *fifo[T]) len() int { return len(q.items) - q.head }
func (q *fifo[T]) peek() T  { return q.items[q.head] }
func (q *fifo[T]) push(x T) { q.items = append(q.items, x) }

func (q *fifo[T]) pop() T {
	x := q.items[q.head]
	var zero T
	q.items[q.head] = zero
	q.head++
	// Compact once half is dead, so a queue that never drains stays
	// proportional to its length (amortised O(1)).
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head >= 32 && q.head*2 >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return x
}

// removeFunc drops the first element for which f is true (abort path only).
func (q *fifo[T]) removeFunc(f func(T) bool) bool {
	for i := q.head; i < len(q.items); i++ {
		if f(q.items[i]) {
			copy(q.items[i:], q.items[i+1:])
			var zero T
			q.items[len(q.items)-1] = zero
			q.items = q.items[:len(q.items)-1]
			return true
		}
	}
	return false
}

// mailbox is one member's receive side of one communicator. Its lock is held
// while a sender matches and copies into a posted receive, and while a
// receiver takes a message, so matching is atomic.
type mailbox struct {
	mu sync.Mutex

	// Unexpected messages, in arrival order and per (source, tag). Each
	// index costs a map update per message, so each is built only when the
	// first receive or probe that needs it (source and tag, source with
	// AnyTag, AnySource with a tag) comes, and kept from then on; a rank
	// that only receives with both wildcards (divalib on its private
	// communicator) keeps none. Map values are list headers by value,
	// deleted when empty, so a mailbox holds no state for patterns with
	// nothing pending.
	arrival msgList
	keys    map[key]msgList
	sources map[int]msgList // nil until needed
	tags    map[int]msgList // nil until needed

	// Posted receives by their pattern, wildcards included. The four
	// queues an arriving message can match are compared by posting order.
	posted  map[key]*fifo[*recvReq]
	nposted int
	seq     uint64

	probers []*prober

	// free holds taken messages for reuse (at most maxFree): a
	// count-based run sends millions of short protocol messages, and
	// with a fresh msg for each, those allocated while the collector
	// marks survive that cycle and raise the next heap goal (16x32
	// Barnes-Hut: 150 to 380 MB of msgs counted live after a forced
	// collection with fewer than 2,000 queued at any time).
	free []*msg

	// probe is the blocked Probe of the mailbox's rank, reused: a rank
	// blocks in Probe once per wait for a message, and one goroutine at a
	// time uses a communicator, so there is at most one.
	probe prober
}

// maxFree bounds a mailbox's free messages: a rank's queue is usually a
// few dozen long, so 64 serve nearly every send without allocating and
// cost at most 12 KiB a mailbox.
const maxFree = 64

// newMsg returns a cleared message from the free list, or a new one.
func (b *mailbox) newMsg() *msg {
	if n := len(b.free); n > 0 {
		m := b.free[n-1]
		b.free[n-1] = nil
		b.free = b.free[:n-1]
		return m
	}
	return new(msg)
}

// recycle returns a taken message that nobody refers to any more (not an
// Ssend's, whose sender still reads it) to the free list, dropping its
// references so that a pooled message keeps no payload alive.
func (b *mailbox) recycle(m *msg) {
	if m.ssend != nil || len(b.free) >= maxFree {
		return
	}
	*m = msg{}
	b.free = append(b.free, m)
}

// prober is a blocked Probe.
type prober struct {
	src, tag int
	wp       waitPoint
}

func matches(src, tag int, m *msg) bool {
	return (src == mpi.AnySource || src == m.src) && (tag == mpi.AnyTag || tag == m.tag)
}

// enqueue stores an unexpected message and wakes the probes it matches.
func (b *mailbox) enqueue(w *world, m *msg) {
	b.arrival.push(m, byArrival)
	if b.keys != nil {
		link(b.keys, pack(m.src, m.tag), m, byKey)
	}
	if b.sources != nil {
		link(b.sources, m.src, m, bySource)
	}
	if b.tags != nil {
		link(b.tags, m.tag, m, byTag)
	}

	for i := 0; i < len(b.probers); {
		if p := b.probers[i]; matches(p.src, p.tag, m) {
			w.fire(&p.wp)
			b.probers = append(b.probers[:i], b.probers[i+1:]...)
			continue
		}
		i++
	}
}

// find returns the earliest-arrived unexpected message matching (src, tag).
func (b *mailbox) find(src, tag int) *msg {
	if b.arrival.head == nil {
		return nil
	}
	switch {
	case src == mpi.AnySource && tag == mpi.AnyTag:
		return b.arrival.head
	case src == mpi.AnySource:
		if b.tags == nil {
			b.tags = map[int]msgList{}
			for m := b.arrival.head; m != nil; m = m.next[byArrival] {
				link(b.tags, m.tag, m, byTag)
			}
		}
		return b.tags[tag].head
	case tag == mpi.AnyTag:
		if b.sources == nil {
			b.sources = map[int]msgList{}
			for m := b.arrival.head; m != nil; m = m.next[byArrival] {
				link(b.sources, m.src, m, bySource)
			}
		}
		return b.sources[src].head
	}
	if b.keys == nil {
		b.keys = map[key]msgList{}
		for m := b.arrival.head; m != nil; m = m.next[byArrival] {
			link(b.keys, pack(m.src, m.tag), m, byKey)
		}
	}
	return b.keys[pack(src, tag)].head
}

// take removes m from the unexpected messages.
func (b *mailbox) take(m *msg) {
	b.arrival.remove(m, byArrival)
	if b.keys != nil {
		unlink(b.keys, pack(m.src, m.tag), m, byKey)
	}
	if b.sources != nil {
		unlink(b.sources, m.src, m, bySource)
	}
	if b.tags != nil {
		unlink(b.tags, m.tag, m, byTag)
	}
}

func link[K comparable](lists map[K]msgList, k K, m *msg, i int) {
	l := lists[k]
	l.push(m, i)
	lists[k] = l
}

func unlink[K comparable](lists map[K]msgList, k K, m *msg, i int) {
	l := lists[k]
	l.remove(m, i)
	if l.head == nil {
		delete(lists, k)
	} else {
		lists[k] = l
	}
}

// post queues a receive that found no message.
func (b *mailbox) post(r *recvReq) {
	if b.posted == nil {
		b.posted = map[key]*fifo[*recvReq]{}
	}
	k := pack(r.src, r.tag)
	q := b.posted[k]
	if q == nil {
		q = &fifo[*recvReq]{}
		b.posted[k] = q
	}
	b.seq++
	r.seq = b.seq
	q.push(r)
	b.nposted++
}

// match removes and returns the earliest-posted receive that matches a
// message from src with tag.
func (b *mailbox) match(src, tag int) *recvReq {
	if b.nposted == 0 {
		return nil
	}
	var best *fifo[*recvReq]
	var bestKey key
	for _, k := range [...]key{pack(src, tag), pack(mpi.AnySource, tag), pack(src, mpi.AnyTag), pack(mpi.AnySource, mpi.AnyTag)} {
		if q := b.posted[k]; q != nil && (best == nil || q.peek().seq < best.peek().seq) {
			best, bestKey = q, k
		}
	}
	if best == nil {
		return nil
	}
	r := best.pop()
	if best.len() == 0 {
		delete(b.posted, bestKey)
	}
	b.nposted--
	return r
}

// withdraw removes an unmatched posted receive (abort path).
func (b *mailbox) withdraw(r *recvReq) {
	k := pack(r.src, r.tag)
	if q := b.posted[k]; q != nil && q.removeFunc(func(x *recvReq) bool { return x == r }) {
		b.nposted--
		if q.len() == 0 {
			delete(b.posted, k)
		}
	}
}

// recvReq is a receive: posted in a mailbox until a message completes it.
type recvReq struct {
	c        *comm
	buf      []byte
	src, tag int
	seq      uint64
	wp       waitPoint // fired when complete
	st       mpi.Status
	err      *mpi.Error // without Op: it is reported by the call that returns it
}

// deliver copies a message (data followed by body) into buf. The result's
// error has no Op yet.
func deliver(src, tag int, data, body, buf []byte) (mpi.Status, *mpi.Error) {
	n := copy(buf, data)
	n += copy(buf[n:], body)
	st := mpi.Status{Source: src, Tag: tag, Count: n}
	if size := len(data) + len(body); size > len(buf) {
		e := errorf("", mpi.ErrTruncate, "message truncated: %d bytes from rank %d with tag %d, receive buffer %d bytes", size, src, tag, len(buf))
		return st, e
	}
	return st, nil
}

func withOp(e *mpi.Error, op string) error {
	if e == nil {
		return nil
	}
	c := *e
	c.Op = op
	return &c
}

func (c *comm) box() *mailbox { return &c.s.boxes[c.rank] }

// send is Send, Isend, Ssend and IsendRef: buffered unless sync; body (only
// without sync) follows buf and is passed by reference.
func (c *comm) send(op string, buf, body []byte, dest, tag int, sync bool) error {
	if err := c.check(op); err != nil {
		return err
	}
	if err := c.checkRank(op, "dest", dest, false); err != nil {
		return err
	}
	if err := checkTag(op, tag, false); err != nil {
		return err
	}
	if err := checkCount(op, len(buf)+len(body)); err != nil {
		return err
	}
	w := c.s.w
	b := &c.s.boxes[dest]
	b.mu.Lock()
	if r := b.match(c.rank, tag); r != nil {
		r.st, r.err = deliver(c.rank, tag, buf, body, r.buf)
		w.fire(&r.wp)
		b.mu.Unlock()
		return nil
	}
	m := b.newMsg()
	m.src, m.tag = c.rank, tag
	if !sync {
		switch {
		case len(buf) > smallMsg:
			m.data = append([]byte(nil), buf...)
		case len(buf) > 0:
			m.data = m.small[:copy(m.small[:], buf)]
		}
		m.body = body
		b.enqueue(w, m)
		b.mu.Unlock()
		return nil
	}
	m.data = buf
	m.ssend = &waitPoint{}
	b.enqueue(w, m)
	w.arm(m.ssend, c.wrank, blockInfo{op: op, comm: c.s.id, peer: dest, tag: tag})
	b.mu.Unlock()
	if w.wait(m.ssend, c.wrank) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.ssend.fired {
		return nil
	}
	// Nobody may read our buffer once we return.
	b.take(m)
	return c.abortError(op)
}

// Send is MPI_Send, buffered: it copies buf and returns.
func (c *comm) Send(buf []byte, dest, tag int) error {
	return c.send("MPI_Send", buf, nil, dest, tag, false)
}

// Ssend is MPI_Ssend: it returns once a receive has taken the message.
func (c *comm) Ssend(buf []byte, dest, tag int) error {
	return c.send("MPI_Ssend", buf, nil, dest, tag, true)
}

// sentReq is a completed buffered send.
type sentReq struct{}

func (sentReq) Wait() (mpi.Status, error)       { return mpi.Status{}, nil }
func (sentReq) Test() (bool, mpi.Status, error) { return true, mpi.Status{}, nil }

// Isend is MPI_Isend, buffered: the data is copied and the request is
// already complete.
func (c *comm) Isend(buf []byte, dest, tag int) (mpi.Request, error) {
	if err := c.send("MPI_Isend", buf, nil, dest, tag, false); err != nil {
		return nil, err
	}
	return sentReq{}, nil
}

// IsendRef implements mpi.RefSender: head is copied, body is queued by
// reference (every receiver of the message may get the same memory).
func (c *comm) IsendRef(head, body []byte, dest, tag int) (mpi.Request, error) {
	if err := c.send("MPI_Isend", head, body, dest, tag, false); err != nil {
		return nil, err
	}
	return sentReq{}, nil
}

// RecvRef implements mpi.RefSender. It probes for the message (so it
// blocks like Recv) and then takes it: nobody else receives from this
// rank's mailbox, and a message that found no posted receive stays there
// until this rank takes it.
func (c *comm) RecvRef(head []byte, source, tag int) ([]byte, mpi.Status, error) {
	const op = "MPI_Recv"
	if err := c.checkProbe(op, source, tag); err != nil {
		return nil, mpi.Status{}, err
	}
	b := c.box()
	b.mu.Lock()
	m := b.find(source, tag)
	if m == nil {
		b.mu.Unlock()
		if _, err := c.Probe(source, tag); err != nil {
			return nil, mpi.Status{}, withOpErr(err, op)
		}
		b.mu.Lock()
		m = b.find(source, tag)
	}
	defer b.mu.Unlock()
	if m == nil {
		return nil, mpi.Status{}, errorf(op, mpi.ErrIntern, "local: probed message from %d tag %d vanished", source, tag)
	}
	b.take(m)
	if m.ssend != nil {
		c.s.w.fire(m.ssend)
	}
	st := mpi.Status{Source: m.src, Tag: m.tag, Count: len(m.data) + len(m.body)}
	var rest []byte
	switch {
	case len(m.data) < len(head):
		// head takes all of data and the start of body; the rest of body
		// is passed on by reference.
		n := copy(head, m.data)
		k := copy(head[n:], m.body)
		rest = m.body[k:]
	case len(m.data) == len(head):
		copy(head, m.data)
		rest = m.body
	default:
		// The sender's part that is copied anyway ends after head: the
		// rest of it and body are joined in a new buffer.
		copy(head, m.data)
		rest = make([]byte, 0, st.Count-len(head))
		rest = append(rest, m.data[len(head):]...)
		rest = append(rest, m.body...)
	}
	b.recycle(m)
	return rest, st, nil
}

// withOpErr renames the operation of a backend error (a probe inside a
// receive is reported as the receive).
func withOpErr(err error, op string) error {
	if e, ok := err.(*mpi.Error); ok {
		c := *e
		c.Op = op
		return &c
	}
	return err
}

// irecv starts a receive: it completes at once from an unexpected message,
// or is posted.
func (c *comm) irecv(op string, buf []byte, src, tag int) (*recvReq, error) {
	if err := c.check(op); err != nil {
		return nil, err
	}
	if err := c.checkRank(op, "source", src, true); err != nil {
		return nil, err
	}
	if err := checkTag(op, tag, true); err != nil {
		return nil, err
	}
	if err := checkCount(op, len(buf)); err != nil {
		return nil, err
	}
	r := &recvReq{c: c, buf: buf, src: src, tag: tag}
	b := c.box()
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, e, ok := c.takeLocked(buf, src, tag); ok {
		r.st, r.err, r.wp.fired = st, e, true
		return r, nil
	}
	b.post(r)
	return r, nil
}

// takeLocked receives a pending message into buf if one matches, with the
// mailbox locked.
func (c *comm) takeLocked(buf []byte, src, tag int) (mpi.Status, *mpi.Error, bool) {
	b := c.box()
	m := b.find(src, tag)
	if m == nil {
		return mpi.Status{}, nil, false
	}
	b.take(m)
	st, e := deliver(m.src, m.tag, m.data, m.body, buf)
	if m.ssend != nil {
		c.s.w.fire(m.ssend)
	}
	b.recycle(m)
	return st, e, true
}

// wait blocks until r completes; op names the call for errors.
func (r *recvReq) wait(op string) (mpi.Status, error) {
	c := r.c
	w := c.s.w
	b := c.box()
	b.mu.Lock()
	if !r.wp.fired {
		if w.aborted.Load() {
			b.withdraw(r)
			b.mu.Unlock()
			return mpi.Status{}, c.abortError(op)
		}
		w.arm(&r.wp, c.wrank, blockInfo{op: op, comm: c.s.id, peer: r.src, tag: r.tag})
		b.mu.Unlock()
		if !w.wait(&r.wp, c.wrank) {
			b.mu.Lock()
			if !r.wp.fired {
				// Nobody may write into buf once we return.
				b.withdraw(r)
				b.mu.Unlock()
				return mpi.Status{}, c.abortError(op)
			}
		} else {
			b.mu.Lock()
		}
	}
	st, err := r.st, withOp(r.err, op)
	b.mu.Unlock()
	return st, err
}

// Wait is MPI_Wait; waiting again on a completed request returns the same
// result.
func (r *recvReq) Wait() (mpi.Status, error) { return r.wait("MPI_Wait") }

// Test is MPI_Test. It yields the processor when the receive is pending,
// so that polling loops let the sender run.
func (r *recvReq) Test() (bool, mpi.Status, error) {
	const op = "MPI_Test"
	c := r.c
	b := c.box()
	b.mu.Lock()
	if r.wp.fired {
		st, err := r.st, withOp(r.err, op)
		b.mu.Unlock()
		return true, st, err
	}
	if c.s.w.aborted.Load() {
		b.withdraw(r)
		b.mu.Unlock()
		return false, mpi.Status{}, c.abortError(op)
	}
	b.mu.Unlock()
	runtime.Gosched()
	return false, mpi.Status{}, nil
}

// Recv is MPI_Recv.
func (c *comm) Recv(buf []byte, source, tag int) (mpi.Status, error) {
	const op = "MPI_Recv"
	// A message already pending is taken without allocating a request.
	if c.check(op) == nil && c.checkRank(op, "source", source, true) == nil &&
		checkTag(op, tag, true) == nil && checkCount(op, len(buf)) == nil {
		b := c.box()
		b.mu.Lock()
		st, e, ok := c.takeLocked(buf, source, tag)
		b.mu.Unlock()
		if ok {
			return st, withOp(e, op)
		}
	}
	r, err := c.irecv(op, buf, source, tag)
	if err != nil {
		return mpi.Status{}, err
	}
	return r.wait(op)
}

// Irecv is MPI_Irecv. The request keeps buf reachable until it completes.
func (c *comm) Irecv(buf []byte, source, tag int) (mpi.Request, error) {
	r, err := c.irecv("MPI_Irecv", buf, source, tag)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Sendrecv is MPI_Sendrecv. The receive is posted before the send, so two
// ranks exchanging with each other (even by Ssend semantics) cannot deadlock.
func (c *comm) Sendrecv(sendBuf []byte, dest, sendTag int, recvBuf []byte, source, recvTag int) (mpi.Status, error) {
	const op = "MPI_Sendrecv"
	if err := c.checkRank(op, "dest", dest, false); err != nil {
		return mpi.Status{}, err
	}
	if err := checkTag(op, sendTag, false); err != nil {
		return mpi.Status{}, err
	}
	r, err := c.irecv(op, recvBuf, source, recvTag)
	if err != nil {
		return mpi.Status{}, err
	}
	if err := c.send(op, sendBuf, nil, dest, sendTag, false); err != nil {
		b := c.box()
		b.mu.Lock()
		if !r.wp.fired {
			b.withdraw(r)
		}
		b.mu.Unlock()
		return mpi.Status{}, err
	}
	return r.wait(op)
}

// Probe is MPI_Probe: it blocks until a matching message is pending and
// describes it without receiving it.
func (c *comm) Probe(source, tag int) (mpi.Status, error) {
	const op = "MPI_Probe"
	if err := c.checkProbe(op, source, tag); err != nil {
		return mpi.Status{}, err
	}
	w := c.s.w
	b := c.box()
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if m := b.find(source, tag); m != nil {
			return mpi.Status{Source: m.src, Tag: m.tag, Count: len(m.data) + len(m.body)}, nil
		}
		if w.aborted.Load() {
			return mpi.Status{}, c.abortError(op)
		}
		p := &b.probe
		*p = prober{src: source, tag: tag}
		b.probers = append(b.probers, p)
		w.arm(&p.wp, c.wrank, blockInfo{op: op, comm: c.s.id, peer: source, tag: tag})
		b.mu.Unlock()
		ok := w.wait(&p.wp, c.wrank)
		b.mu.Lock()
		if !ok && !p.wp.fired {
			for i, q := range b.probers {
				if q == p {
					b.probers = append(b.probers[:i], b.probers[i+1:]...)
					break
				}
			}
			return mpi.Status{}, c.abortError(op)
		}
	}
}

// Iprobe is MPI_Iprobe. Like Test it yields the processor when it finds
// nothing.
func (c *comm) Iprobe(source, tag int) (bool, mpi.Status, error) {
	const op = "MPI_Iprobe"
	if err := c.checkProbe(op, source, tag); err != nil {
		return false, mpi.Status{}, err
	}
	b := c.box()
	b.mu.Lock()
	m := b.find(source, tag)
	var st mpi.Status
	if m != nil {
		st = mpi.Status{Source: m.src, Tag: m.tag, Count: len(m.data) + len(m.body)}
	}
	b.mu.Unlock()
	if m == nil {
		runtime.Gosched()
		return false, st, nil
	}
	return true, st, nil
}

func (c *comm) checkProbe(op string, source, tag int) error {
	if err := c.check(op); err != nil {
		return err
	}
	if err := c.checkRank(op, "source", source, true); err != nil {
		return err
	}
	return checkTag(op, tag, true)
}
