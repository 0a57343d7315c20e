package sysmem

import (
	"math"
	"runtime/debug"
)

// LimitHeap gives the Go collector a soft memory limit
// (runtime/debug.SetMemoryLimit) of avail bytes, what this process may
// take (Available), unless a limit is set already (GOMEMLIMIT in the
// environment: the user's choice stands) or avail is unknown (ok false)
// or not positive. It returns the limit in effect (math.MaxInt64 for
// none) and the function that puts the previous one back (a test process
// starts many worlds).
//
// Why (commcost's local backend): every goroutine rank lives in one
// process, and a count-based run's live heap is mostly their protocol
// state (Barnes-Hut at P = 512: GiBs). With the default GOGC the heap grows
// to about twice the live heap before a collection, so a run whose live
// heap fits the machine but whose doubled heap does not would be killed
// by the out-of-memory killer, although collecting earlier would have
// completed it. Near the limit the runtime collects as often as needed (it
// caps the collector at about half the CPU, so a run that truly does not
// fit still fails rather than thrashing without end). Far from it nothing
// changes.
func LimitHeap(avail int64, ok bool) (int64, func()) {
	cur := debug.SetMemoryLimit(-1)
	if cur != math.MaxInt64 || !ok || avail <= 0 {
		return cur, func() {}
	}
	debug.SetMemoryLimit(avail)
	return avail, func() { debug.SetMemoryLimit(cur) }
}
