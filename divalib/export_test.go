package divalib

import "fmt"

// SetDenseBudget sets the byte budget of the dense variable tables
// (varTable) and returns a function restoring the previous one; 0 makes
// every table of goroutine ranks sparse from its first variable.
func SetDenseBudget(b int) (restore func()) {
	old := denseBudget
	denseBudget = b
	return func() { denseBudget = old }
}

// TableForm reports whether s's variable table is sparse and how many
// variable states it holds.
func TableForm(s *Store) (sparse bool, states int) {
	if s.vars.sparse != nil {
		return true, len(s.vars.sparse)
	}
	for _, x := range s.vars.dense {
		if x != nil {
			states++
		}
	}
	return false, states
}

// BarrierSums enters the store's barrier contributing a and b and returns
// the sums over all ranks (the reduction Close's termination detection
// runs on).
func BarrierSums(s *Store, a, b int64) ([2]int64, error) {
	return s.bar.reduce([2]int64{a, b}, true)
}

// CheckLRU walks s's list of copies both ways and reports a cycle, a
// broken back link, or a member without a copy.
func CheckLRU(s *Store) error {
	n := 0
	var prev *variable
	for v := s.lruHead; v != nil; v = v.next {
		if n++; n > 1<<20 {
			return fmt.Errorf("LRU list: a cycle (over %d members)", 1<<20)
		}
		if v.prev != prev || !v.inLRU || v.data == nil {
			return fmt.Errorf("LRU list: member %q: back link ok %t, inLRU %t, copy %t", v.v.Name, v.prev == prev, v.inLRU, v.data != nil)
		}
		prev = v
	}
	if prev != s.lruTail {
		return fmt.Errorf("LRU list: the last member is not the tail")
	}
	return nil
}

// Verify and SerialResult are verify and serialResult, for the external
// tests.
var (
	Verify       = verify
	SerialResult = serialResult
	SerialStep   = serialStep
	BandStep     = bandStep
)
