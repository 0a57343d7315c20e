package divalib

// Bounded memory with least-recently-used replacement (paper 004, section
// 2: "If the local memory module is full then data objects will be replaced
// in least recently used fashion"). One rank's copies of a variable are one
// buffer, however many tree nodes on the rank hold a copy, so memory is
// counted per (rank, variable). Copies that are the last ones of their
// variable are "mandatory": they are kept even when they do not fit (and
// the excess is recorded in Stats.OverflowBytes); optional copies that do
// not fit are simply not kept.

// install makes data this rank's copy of x. It reports false when an
// optional copy does not fit.
func (s *Store) install(x *variable, data []byte, mandatory bool) bool {
	x.recycle = false
	if x.data != nil {
		x.data = data
		s.touch(x)
		return true
	}
	need := len(data)
	if b := s.cfg.MemoryBytes; b > 0 {
		for s.resident+need > b && s.evictOne(x) {
		}
		if over := s.resident + need - b; over > 0 {
			if !mandatory {
				s.stats.Uncached++
				return false
			}
			s.stats.OverflowBytes = max(s.stats.OverflowBytes, over)
		}
	}
	if data == nil {
		data = []byte{}
	}
	x.data = data
	s.resident += need
	s.stats.PeakResidentBytes = max(s.stats.PeakResidentBytes, s.resident)
	s.lruPushFront(x)
	return true
}

// release drops this rank's copy of x.
func (s *Store) release(x *variable) {
	if x.data == nil {
		return
	}
	s.resident -= len(x.data)
	// Not while an access of this rank is in progress on x: its value may
	// be this buffer, still to be delivered (a batch serves others'
	// messages, invalidations among them, until all its accesses are in).
	if x.recycle && x.acc == nil {
		s.pool.put(x.data)
		x.recycle = false
	}
	x.data = nil
	s.lruRemove(x)
}

// bufPool keeps the buffers of dropped copies that nothing else refers to
// (Store.release), by size, for received payloads to reuse: fresh memory
// costs a page fault per 4 KiB on its first write (16 for a 64 KiB copy,
// several times the whole read in C), memory the
// process already touched costs none. At most poolMaxBytes are kept.
type bufPool struct {
	// free holds the lists by size behind pointers, so that taking and
	// giving a buffer only reads the map (get is on the path of every
	// received payload; a map assignment there is a visible part of an
	// 8-byte remote read).
	free  map[int]*[][]byte
	bytes int
}

const poolMaxBytes = 64 << 20

func (p *bufPool) get(n int) []byte {
	l := p.free[n]
	if l == nil || len(*l) == 0 {
		return nil
	}
	k := len(*l) - 1
	b := (*l)[k]
	(*l)[k] = nil
	*l = (*l)[:k]
	p.bytes -= n
	return b
}

func (p *bufPool) put(b []byte) {
	if len(b) == 0 || p.bytes+len(b) > poolMaxBytes {
		return
	}
	l := p.free[len(b)]
	if l == nil {
		if p.free == nil {
			p.free = map[int]*[][]byte{}
		}
		l = new([][]byte)
		p.free[len(b)] = l
	}
	*l = append(*l, b)
	p.bytes += len(b)
}

// evictOne drops the least recently used copy that may be dropped (never
// except, never a variable with an access of this rank in progress, never
// a last copy). It reports whether one was dropped.
func (s *Store) evictOne(except *variable) bool {
	for v := s.lruTail; v != nil; v = v.prev {
		if v == except || v.acc != nil {
			continue
		}
		var ok bool
		if s.cfg.Strategy == AccessTree {
			ok = s.atEvict(v)
		} else {
			ok = s.fhEvict(v)
		}
		if ok {
			s.stats.Evictions++
			return true
		}
	}
	return false
}

// touch marks x most recently used.
func (s *Store) touch(x *variable) {
	if !x.inLRU || s.lruHead == x {
		return
	}
	s.lruRemove(x)
	s.lruPushFront(x)
}

func (s *Store) lruPushFront(x *variable) {
	x.prev, x.next = nil, s.lruHead
	if s.lruHead != nil {
		s.lruHead.prev = x
	}
	s.lruHead = x
	if s.lruTail == nil {
		s.lruTail = x
	}
	x.inLRU = true
}

func (s *Store) lruRemove(x *variable) {
	if !x.inLRU {
		return
	}
	if x.prev != nil {
		x.prev.next = x.next
	} else {
		s.lruHead = x.next
	}
	if x.next != nil {
		x.next.prev = x.prev
	} else {
		s.lruTail = x.prev
	}
	x.prev, x.next, x.inLRU = nil, nil, false
}

// applyWrite returns a new buffer: old with data written at off. Buffers
// are immutable once shared, so a write never changes a copy that a message
// in flight or another node still refers to.
func applyWrite(old []byte, off int, data []byte) []byte {
	nb := make([]byte, len(old))
	copy(nb, old)
	copy(nb[off:], data)
	return nb
}
