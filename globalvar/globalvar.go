// Package globalvar is the global-variable interface of docs/ARCHITECTURE.md, contract 2:
// the shared-memory abstraction that applications are written against and
// that both the emulated service network (package emulate, paper 000) and
// the DIVA library (package divalib, paper 004) implement, so that the same
// application text runs over every strategy and the papers' comparisons can
// be repeated.
//
// The caller never says where data lives. Variables are created collectively
// by name; reads and writes address a byte range of one variable. Offsets and
// lengths are bytes.
//
// Consistency: a Store is sequentially consistent per variable: a Read that
// starts after a Write has returned (on any rank, ordered by a Barrier or a
// lock) sees that write or a later one, and a Read never returns a mix of two
// writes to the same range (no torn reads).
package globalvar

import "errors"

// Var is a handle to a created global variable, valid on every rank of the
// Store that created it.
type Var struct {
	ID   int    // dense index, equal on every rank
	Name string // the name given at creation
	Size int    // bytes
}

// Store is one strategy for keeping global variables in distributed memory.
// All methods are called by one goroutine per rank.
type Store interface {
	// Create allocates a variable of size bytes, initialised to zero. It is
	// collective: every rank calls it with the same name and size, in the
	// same order.
	Create(name string, size int) (Var, error)
	// Read copies len(buf) bytes of v starting at off into buf.
	Read(v Var, off int, buf []byte) error
	// Write stores data into v starting at off.
	Write(v Var, off int, data []byte) error
	// Barrier returns on every rank after every rank has entered it and all
	// writes issued before it have completed.
	Barrier() error
	// Lock acquires the mutual-exclusion lock that belongs to v; Unlock
	// releases it. Locks are not reentrant.
	Lock(v Var) error
	Unlock(v Var) error
	// Close ends the store (collective); it keeps serving remote requests
	// until every rank has called it.
	Close() error
}

// Errors shared by every implementation, for errors.Is.
var (
	ErrUnknownVar = errors.New("globalvar: variable was never created")
	ErrRange      = errors.New("globalvar: range past the end of the variable")
	ErrNotLocked  = errors.New("globalvar: unlock of a lock not held")
)

// CheckRange validates an access of n bytes at off in v.
func CheckRange(v Var, off, n int) error {
	if off < 0 || n < 0 || off+n > v.Size {
		return ErrRange
	}
	return nil
}
