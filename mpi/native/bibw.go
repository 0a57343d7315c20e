package native

// #include "harness.h"
// #cgo noescape cc_bibw_batch
// #cgo nocallback cc_bibw_batch
import "C"

import (
	"fmt"

	"github.com/commcost/commcost/mpi"
)

var _ mpi.BibwKernels = (*Comm)(nil)

// BibwBatch implements mpi.BibwKernels: osu_bibw's windows in C.
func (c *Comm) BibwBatch(b mpi.Batch, send, recv []byte, peer, tag, window, iters int, first bool) error {
	const op = "BibwBatch"
	a, err := c.exchangeBatchOf(op, b, send, recv, peer, iters)
	if err != nil {
		return err
	}
	if window < 1 || window > 1<<20 {
		return classError(op, mpi.ErrArg, fmt.Sprintf("window %d outside [1, %d]", window, 1<<20))
	}
	if err := enter(op); err != nil {
		return err
	}
	r := C.cc_bibw_batch(c.h, a.reps, a.sync, a.rank0, a.me, a.own, a.samples,
		ptr(send), rptr(recv), C.int(len(send)), C.int(peer), C.int(tag), C.int(window), C.int(iters), cbool(first))
	leave()
	return batchError(op, r)
}
