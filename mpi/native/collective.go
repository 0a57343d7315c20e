package native

// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// Collectives on bytes. Every rank of the communicator must make the same
// call; the size rules are those of mpi.Comm (block of rank i at offset
// i*block). Argument errors found here are returned before any
// communication (see the package comment).

// Bcast is MPI_Bcast of len(buf) bytes from root.
func (c *Comm) Bcast(buf []byte, root int) error {
	const op = "MPI_Bcast"
	if err := c.collective(op, true, root, "buffer", len(buf)); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_bcast(c.h, ptr(buf), C.int(len(buf)), C.int(root))
	leave()
	return c.result(op, rc)
}

// collective runs the checks every collective shares; rooted says whether
// root means anything.
func (c *Comm) collective(op string, rooted bool, root int, what string, n int) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if rooted {
		if err := c.checkRoot(op, root); err != nil {
			return err
		}
	}
	return checkCount(op, what, n)
}

// needBytes reports a buffer shorter than a collective needs.
func needBytes(op, what string, have, need int, rule string) error {
	if have >= need {
		return nil
	}
	return classError(op, mpi.ErrCount, fmt.Sprintf("%s holds %d bytes, needs %s = %d", what, have, rule, need))
}

// Gather is MPI_Gather: rank i's len(send) bytes land at offset
// i*len(send) of recv at root, which must hold Size()*len(send) bytes.
func (c *Comm) Gather(send, recv []byte, root int) error {
	const op = "MPI_Gather"
	if err := c.collective(op, true, root, "send buffer", len(send)); err != nil {
		return err
	}
	if c.rank == root {
		if err := needBytes(op, "recv", len(recv), c.size*len(send), "Size()*len(send)"); err != nil {
			return err
		}
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_gather(c.h, ptr(send), C.int(len(send)), rptr(recv), C.int(root))
	leave()
	return c.result(op, rc)
}

// Allgather is MPI_Allgather: recv on every rank holds Size()*len(send)
// bytes, rank i's block at offset i*len(send).
func (c *Comm) Allgather(send, recv []byte) error {
	const op = "MPI_Allgather"
	if err := c.collective(op, false, 0, "send buffer", len(send)); err != nil {
		return err
	}
	if err := needBytes(op, "recv", len(recv), c.size*len(send), "Size()*len(send)"); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_allgather(c.h, ptr(send), C.int(len(send)), rptr(recv))
	leave()
	return c.result(op, rc)
}

// Scatter is MPI_Scatter: every rank receives len(recv) bytes, rank i the
// block at offset i*len(recv) of send at root.
func (c *Comm) Scatter(send, recv []byte, root int) error {
	const op = "MPI_Scatter"
	if err := c.collective(op, true, root, "recv buffer", len(recv)); err != nil {
		return err
	}
	if c.rank == root {
		if err := needBytes(op, "send", len(send), c.size*len(recv), "Size()*len(recv)"); err != nil {
			return err
		}
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_scatter(c.h, ptr(send), C.int(len(recv)), rptr(recv), C.int(root))
	leave()
	return c.result(op, rc)
}

// Alltoall is MPI_Alltoall: send holds Size() blocks of len(send)/Size()
// bytes, block j for rank j; recv gets block i from rank i at the same
// offsets.
func (c *Comm) Alltoall(send, recv []byte) error {
	const op = "MPI_Alltoall"
	if err := c.collective(op, false, 0, "send buffer", len(send)); err != nil {
		return err
	}
	if len(send)%c.size != 0 {
		return classError(op, mpi.ErrCount, fmt.Sprintf("send holds %d bytes, not a multiple of Size() = %d", len(send), c.size))
	}
	if err := needBytes(op, "recv", len(recv), len(send), "len(send)"); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_alltoall(c.h, ptr(send), C.int(len(send)/c.size), rptr(recv))
	leave()
	return c.result(op, rc)
}

// vArgs checks one counts/displacements pair of a v-collective and converts
// it for C. The slices must both have Size() entries; with bufLen >= 0 each
// block [displs[i], displs[i]+counts[i]) must lie inside a buffer of bufLen
// bytes. Wrong lengths and negative displacements are mpi.ErrArg, bad counts
// and blocks past the end of the buffer mpi.ErrCount.
func (c *Comm) vArgs(op, name string, counts, displs []int, bufLen int) (cc, cd []C.int, err error) {
	if len(counts) != c.size || len(displs) != c.size {
		return nil, nil, classError(op, mpi.ErrArg, fmt.Sprintf("%s counts and displs have %d and %d entries, want Size() = %d",
			name, len(counts), len(displs), c.size))
	}
	cc = make([]C.int, c.size)
	cd = make([]C.int, c.size)
	for i := range counts {
		n, d := counts[i], displs[i]
		if n < 0 || n > mpi.MaxCount {
			return nil, nil, classError(op, mpi.ErrCount, fmt.Sprintf("%s counts[%d] = %d outside [0, mpi.MaxCount]", name, i, n))
		}
		if d < 0 || d > mpi.MaxCount {
			return nil, nil, classError(op, mpi.ErrArg, fmt.Sprintf("%s displs[%d] = %d outside [0, mpi.MaxCount]", name, i, d))
		}
		if bufLen >= 0 && d+n > bufLen {
			return nil, nil, classError(op, mpi.ErrCount, fmt.Sprintf("%s block %d = [%d, %d) exceeds the %d-byte buffer", name, i, d, d+n, bufLen))
		}
		cc[i], cd[i] = C.int(n), C.int(d)
	}
	return cc, cd, nil
}

// ints returns &v[0] for C, or nil for an empty slice (MPI ignores the
// argument where it is insignificant).
func ints(v []C.int) *C.int {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// ownCount checks that this rank's own block matches its buffer.
func ownCount(op, name string, counts []int, rank, n int) error {
	if counts[rank] != n {
		return classError(op, mpi.ErrCount, fmt.Sprintf("%s counts[%d] = %d but this rank's buffer holds %d bytes", name, rank, counts[rank], n))
	}
	return nil
}

// Gatherv is MPI_Gatherv: rank i's len(send) bytes land at recv[displs[i]:]
// at root; counts and displs (Size() entries) are significant at root only
// and may be nil elsewhere, but are checked wherever they are given.
func (c *Comm) Gatherv(send, recv []byte, counts, displs []int, root int) error {
	const op = "MPI_Gatherv"
	if err := c.collective(op, true, root, "send buffer", len(send)); err != nil {
		return err
	}
	var cc, cd []C.int
	if c.rank == root || counts != nil || displs != nil {
		bufLen := -1
		if c.rank == root {
			bufLen = len(recv)
		}
		var err error
		if cc, cd, err = c.vArgs(op, "recv", counts, displs, bufLen); err != nil {
			return err
		}
		if c.rank == root {
			if err := ownCount(op, "recv", counts, c.rank, len(send)); err != nil {
				return err
			}
		}
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_gatherv(c.h, ptr(send), C.int(len(send)), rptr(recv), ints(cc), ints(cd), C.int(root))
	leave()
	return c.result(op, rc)
}

// Allgatherv is MPI_Allgatherv: rank i's len(send) bytes (= counts[i]) land
// at recv[displs[i]:] on every rank.
func (c *Comm) Allgatherv(send, recv []byte, counts, displs []int) error {
	const op = "MPI_Allgatherv"
	if err := c.collective(op, false, 0, "send buffer", len(send)); err != nil {
		return err
	}
	cc, cd, err := c.vArgs(op, "recv", counts, displs, len(recv))
	if err != nil {
		return err
	}
	if err := ownCount(op, "recv", counts, c.rank, len(send)); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_allgatherv(c.h, ptr(send), C.int(len(send)), rptr(recv), ints(cc), ints(cd))
	leave()
	return c.result(op, rc)
}

// Scatterv is MPI_Scatterv: rank i receives send[displs[i]:displs[i]+counts[i]]
// from root into recv, whose length must be counts[i]. counts and displs are
// significant at root only (nil elsewhere is fine).
func (c *Comm) Scatterv(send []byte, counts, displs []int, recv []byte, root int) error {
	const op = "MPI_Scatterv"
	if err := c.collective(op, true, root, "recv buffer", len(recv)); err != nil {
		return err
	}
	var cc, cd []C.int
	if c.rank == root || counts != nil || displs != nil {
		bufLen := -1
		if c.rank == root {
			bufLen = len(send)
		}
		var err error
		if cc, cd, err = c.vArgs(op, "send", counts, displs, bufLen); err != nil {
			return err
		}
		if c.rank == root {
			if err := ownCount(op, "send", counts, c.rank, len(recv)); err != nil {
				return err
			}
		}
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_scatterv(c.h, ptr(send), ints(cc), ints(cd), rptr(recv), C.int(len(recv)), C.int(root))
	leave()
	return c.result(op, rc)
}

// Alltoallv is MPI_Alltoallv: rank i sends send[sendDispls[j]:][:sendCounts[j]]
// to rank j and receives rank j's block at recv[recvDispls[j]:][:recvCounts[j]].
func (c *Comm) Alltoallv(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) error {
	const op = "MPI_Alltoallv"
	if err := c.usable(op); err != nil {
		return err
	}
	sc, sd, err := c.vArgs(op, "send", sendCounts, sendDispls, len(send))
	if err != nil {
		return err
	}
	rcs, rd, err := c.vArgs(op, "recv", recvCounts, recvDispls, len(recv))
	if err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_alltoallv(c.h, ptr(send), ints(sc), ints(sd), rptr(recv), ints(rcs), ints(rd))
	leave()
	return c.result(op, rc)
}

// Typed reductions. Counts are elements. Passing the same slice as send
// and recv (where recv is significant) reduces in place (MPI_IN_PLACE);
// other overlaps are mpi.ErrBuffer.

// ReduceFloat64s is MPI_Reduce on MPI_DOUBLE; recv (len >= len(send)) is
// written at root only.
func (c *Comm) ReduceFloat64s(send, recv []float64, op mpi.Op, root int) error {
	return c.reduce("MPI_Reduce", mpi.Float64Bytes(send), mpi.Float64Bytes(recv), len(send), len(recv), C.CC_FLOAT64, op, false, root)
}

// AllreduceFloat64s is MPI_Allreduce on MPI_DOUBLE.
func (c *Comm) AllreduceFloat64s(send, recv []float64, op mpi.Op) error {
	return c.reduce("MPI_Allreduce", mpi.Float64Bytes(send), mpi.Float64Bytes(recv), len(send), len(recv), C.CC_FLOAT64, op, true, 0)
}

// ReduceInt64s is MPI_Reduce on MPI_INT64_T; recv is written at root only.
func (c *Comm) ReduceInt64s(send, recv []int64, op mpi.Op, root int) error {
	return c.reduce("MPI_Reduce", mpi.Int64Bytes(send), mpi.Int64Bytes(recv), len(send), len(recv), C.CC_INT64, op, false, root)
}

// AllreduceInt64s is MPI_Allreduce on MPI_INT64_T.
func (c *Comm) AllreduceInt64s(send, recv []int64, op mpi.Op) error {
	return c.reduce("MPI_Allreduce", mpi.Int64Bytes(send), mpi.Int64Bytes(recv), len(send), len(recv), C.CC_INT64, op, true, 0)
}

func (c *Comm) reduce(op string, send, recv []byte, n, nrecv int, dtype C.int, rop mpi.Op, all bool, root int) error {
	if err := c.collective(op, !all, root, "send", n); err != nil {
		return err
	}
	var cop C.int
	switch rop {
	case mpi.OpSum:
		cop = C.CC_SUM
	case mpi.OpMin:
		cop = C.CC_MIN
	case mpi.OpMax:
		cop = C.CC_MAX
	default:
		return classError(op, mpi.ErrOp, fmt.Sprintf("unsupported reduction %v", rop))
	}
	recvUsed := all || c.rank == root
	inPlace := C.int(0)
	if recvUsed {
		if nrecv < n {
			return classError(op, mpi.ErrCount, fmt.Sprintf("recv holds %d elements, fewer than the %d of send", nrecv, n))
		}
		if n > 0 && len(recv) > 0 {
			s, r := uintptr(unsafe.Pointer(&send[0])), uintptr(unsafe.Pointer(&recv[0]))
			switch {
			case s == r:
				inPlace = 1
			case s < r+uintptr(len(recv)) && r < s+uintptr(len(send)):
				return classError(op, mpi.ErrBuffer, "send and recv overlap (pass the same slice to reduce in place)")
			}
		}
	} else {
		recv = nil // insignificant away from root; do not hand C a stale view
	}
	if err := enter(op); err != nil {
		return err
	}
	var rc C.int
	if all {
		rc = C.cc_allreduce(c.h, ptr(send), rptr(recv), C.int(n), dtype, cop, inPlace)
	} else {
		rc = C.cc_reduce(c.h, ptr(send), rptr(recv), C.int(n), dtype, cop, C.int(root), inPlace)
	}
	leave()
	return c.result(op, rc)
}
