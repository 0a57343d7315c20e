package divalib

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/commcost/commcost/mpi"
)

// catalogue is the list of a store's variables, name and size by ID, and
// the names in use. Every rank creates the same variables in the same
// order, so every rank would hold the same list: on mpi/local, whose ranks
// share a process, the ranks of one store share one catalogue
// (mpi.ProcessShared) instead of holding P copies (matsquare at 64x64: 4096
// variables on each of 4096 ranks). The first rank to create ID k records
// it; every later Create of k, on any rank, must name the same variable,
// which also checks the collective Create contract across ranks.
//
// Entries live in fixed-size chunks that never move, and the chunk
// directory is replaced atomically when it grows, so entry can read
// without a lock. A rank reads only entries it created itself: an entry is
// written before n counts it (under mu), and a later creator that loads n
// past it sees the entry without taking mu (matsquare and bitonic at 64x64
// create 16.7 million variables on goroutine ranks: the mutex, bounced
// between the cores on every one, took a third of the store's set-up).
type catalogue struct {
	mu     sync.Mutex
	n      atomic.Int64   // entries recorded; written under mu
	byName map[string]int // ID of each name
	dir    atomic.Pointer[[]*catChunk]
}

const catChunkBits = 10

type catChunk [1 << catChunkBits]catEntry

type catEntry struct {
	name string
	size int
}

// catalogueKey names the shared catalogue of a communicator.
type catalogueKey struct{}

// catalogueFor returns the catalogue the ranks of c share, or a private one
// when c's ranks are separate processes.
func catalogueFor(c mpi.Comm) *catalogue {
	if sh, ok := c.(mpi.ProcessShared); ok {
		return sh.ProcessShared(catalogueKey{}, func() any { return newCatalogue() }).(*catalogue)
	}
	return newCatalogue()
}

func newCatalogue() *catalogue {
	c := &catalogue{byName: map[string]int{}}
	c.dir.Store(&[]*catChunk{})
	return c
}

// create records variable id as name of size bytes, or checks that the
// rank that recorded it used the same name and size. It returns the
// recorded entry (whose name string every rank's handle then shares).
func (c *catalogue) create(id int, name string, size int) (catEntry, error) {
	if id < int(c.n.Load()) {
		return c.recorded(id, name, size)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int(c.n.Load())
	if id < n {
		return c.recorded(id, name, size)
	}
	if id > n {
		return catEntry{}, fmt.Errorf("divalib: internal error: variable %d created before variable %d", id, n)
	}
	if _, dup := c.byName[name]; dup {
		return catEntry{}, fmt.Errorf("divalib: variable %q created twice", name)
	}
	dir := *c.dir.Load()
	if id>>catChunkBits == len(dir) {
		grown := append(dir[:len(dir):len(dir)], new(catChunk))
		c.dir.Store(&grown)
		dir = grown
	}
	e := catEntry{name: name, size: size}
	dir[id>>catChunkBits][id&(1<<catChunkBits-1)] = e
	c.byName[name] = id
	c.n.Store(int64(n + 1))
	return e, nil
}

// recorded checks a Create of id, already recorded, against its entry.
func (c *catalogue) recorded(id int, name string, size int) (catEntry, error) {
	e := c.entry(id)
	if e.name != name || e.size != size {
		return catEntry{}, fmt.Errorf("divalib: variable %d created as %q (%d bytes) on this rank but as %q (%d bytes) on another: Create must be called by every rank in the same order", id, name, size, e.name, e.size)
	}
	return e, nil
}

// entry returns variable id, which the calling rank has created.
func (c *catalogue) entry(id int) catEntry {
	return (*c.dir.Load())[id>>catChunkBits][id&(1<<catChunkBits-1)]
}
