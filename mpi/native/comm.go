package native

// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/commcost/commcost/mpi"
)

// Comm is an MPI communicator. It implements mpi.Comm, mpi.Describer and
// mpi.Kernels. Rank and size are cached at creation (they never change).
type Comm struct {
	h     C.MPI_Comm
	rank  int
	size  int
	world bool // MPI_COMM_WORLD may not be freed
	freed bool
}

var (
	_ mpi.Comm      = (*Comm)(nil)
	_ mpi.Describer = (*Comm)(nil)
	_ mpi.Kernels   = (*Comm)(nil)
)

func newComm(op string, r C.cc_comm_result) (*Comm, error) {
	if r.rc != 0 {
		return nil, newError(op, r.rc)
	}
	return &Comm{h: r.comm, rank: int(r.rank), size: int(r.size)}, nil
}

// Rank is this process's rank in the communicator.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of processes in the communicator.
func (c *Comm) Size() int { return c.size }

// Backend is "native".
func (c *Comm) Backend() string { return "native" }

// Wtime is MPI_Wtime in seconds. It needs no serialisation (it reads a clock).
func (c *Comm) Wtime() float64 { return float64(C.cc_wtime()) }

// Wtick is MPI_Wtick, the resolution of Wtime in seconds.
func (c *Comm) Wtick() float64 { return float64(C.cc_wtick()) }

// Info describes the MPI library (the same for every communicator).
func (c *Comm) Info() mpi.Info {
	state.Lock()
	defer state.Unlock()
	return state.info
}

func (c *Comm) String() string {
	return fmt.Sprintf("native.Comm(rank %d of %d)", c.rank, c.size)
}

// ptr returns the address to hand to C for b: &b[0], or a static C byte for
// an empty buffer, so MPI always sees a valid address.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return unsafe.Pointer(&C.cc_zero_buf[0])
	}
	return unsafe.Pointer(&b[0])
}

// rptr is ptr for receive buffers: an empty one gets a different static
// address than an empty send buffer, so a library's aliasing check
// (send == recv) cannot fire on two empty buffers.
func rptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return unsafe.Pointer(&C.cc_zero_buf[4])
	}
	return unsafe.Pointer(&b[0])
}

// checkCount rejects byte (or element) counts that do not fit MPI's C int
// count argument, instead of letting them truncate.
func checkCount(op, what string, n int) error {
	if n < 0 {
		return classError(op, mpi.ErrCount, fmt.Sprintf("%s count %d is negative", what, n))
	}
	if n > mpi.MaxCount {
		return classError(op, mpi.ErrCount, fmt.Sprintf("%s holds %d bytes, more than mpi.MaxCount = %d (the C int count of one MPI call); split the message", what, n, mpi.MaxCount))
	}
	return nil
}

// usable rejects calls on a freed communicator (its handle is gone).
func (c *Comm) usable(op string) error {
	if c == nil {
		return classError(op, mpi.ErrComm, "nil communicator")
	}
	if c.freed {
		return classError(op, mpi.ErrComm, "the communicator was freed")
	}
	return nil
}

// checkPeer rejects negative ranks before they reach MPI, where they would
// mean MPI_PROC_NULL, MPI_ANY_SOURCE or MPI_ROOT depending on the library;
// ranks >= Size() are left to MPI's own check. anyOK admits mpi.AnySource.
func (c *Comm) checkPeer(op string, r int, anyOK bool) error {
	if r >= 0 || (anyOK && r == mpi.AnySource) {
		return nil
	}
	return classError(op, mpi.ErrRank, fmt.Sprintf("rank %d outside [0, %d)", r, c.size))
}

// checkRoot rejects negative roots (MPI_ROOT and MPI_PROC_NULL in MPI);
// roots >= Size() are left to MPI's own check.
func (c *Comm) checkRoot(op string, root int) error {
	if root >= 0 {
		return nil
	}
	return classError(op, mpi.ErrRoot, fmt.Sprintf("root %d outside [0, %d)", root, c.size))
}

// Barrier is MPI_Barrier.
func (c *Comm) Barrier() error {
	const op = "MPI_Barrier"
	if err := c.usable(op); err != nil {
		return err
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_barrier(c.h)
	leave()
	return c.result(op, rc)
}

func (c *Comm) result(op string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return newError(op, rc)
}

func (c *Comm) status(op string, s C.cc_status) (mpi.Status, error) {
	st := mpi.Status{Source: int(s.source), Tag: int(s.tag), Count: int(s.count)}
	if s.rc != 0 {
		return st, newError(op, s.rc)
	}
	return st, nil
}

func (c *Comm) send(op string, buf []byte, dest, tag int, sync bool) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if err := checkCount(op, "buffer", len(buf)); err != nil {
		return err
	}
	if err := c.checkPeer(op, dest, false); err != nil {
		return err
	}
	if err := enterPeer(op, dest); err != nil {
		return err
	}
	var rc C.int
	if sync {
		rc = C.cc_ssend(c.h, ptr(buf), C.int(len(buf)), C.int(dest), C.int(tag))
	} else {
		rc = C.cc_send(c.h, ptr(buf), C.int(len(buf)), C.int(dest), C.int(tag))
	}
	leave()
	return c.result(op, rc)
}

// Send is MPI_Send of len(buf) bytes.
func (c *Comm) Send(buf []byte, dest, tag int) error {
	return c.send("MPI_Send", buf, dest, tag, false)
}

// Ssend is MPI_Ssend: it returns once the receive has started.
func (c *Comm) Ssend(buf []byte, dest, tag int) error {
	return c.send("MPI_Ssend", buf, dest, tag, true)
}

// Recv is MPI_Recv into buf; Status.Count is the received byte count.
func (c *Comm) Recv(buf []byte, source, tag int) (mpi.Status, error) {
	const op = "MPI_Recv"
	if err := c.usable(op); err != nil {
		return mpi.Status{}, err
	}
	if err := checkCount(op, "buffer", len(buf)); err != nil {
		return mpi.Status{}, err
	}
	if err := c.checkPeer(op, source, true); err != nil {
		return mpi.Status{}, err
	}
	if err := enterPeer(op, source); err != nil {
		return mpi.Status{}, err
	}
	s := C.cc_recv(c.h, rptr(buf), C.int(len(buf)), C.int(source), C.int(tag))
	leave()
	return c.status(op, s)
}

// Sendrecv is MPI_Sendrecv; the Status describes the received message.
func (c *Comm) Sendrecv(sendBuf []byte, dest, sendTag int, recvBuf []byte, source, recvTag int) (mpi.Status, error) {
	const op = "MPI_Sendrecv"
	if err := c.usable(op); err != nil {
		return mpi.Status{}, err
	}
	if err := checkCount(op, "send buffer", len(sendBuf)); err != nil {
		return mpi.Status{}, err
	}
	if err := checkCount(op, "receive buffer", len(recvBuf)); err != nil {
		return mpi.Status{}, err
	}
	if err := c.checkPeer(op, dest, false); err != nil {
		return mpi.Status{}, err
	}
	if err := c.checkPeer(op, source, true); err != nil {
		return mpi.Status{}, err
	}
	if err := enterPeer(op, source); err != nil {
		return mpi.Status{}, err
	}
	s := C.cc_sendrecv(c.h, ptr(sendBuf), C.int(len(sendBuf)), C.int(dest), C.int(sendTag),
		rptr(recvBuf), C.int(len(recvBuf)), C.int(source), C.int(recvTag))
	leave()
	return c.status(op, s)
}

// Probe is MPI_Probe: it blocks until a matching message is pending.
func (c *Comm) Probe(source, tag int) (mpi.Status, error) {
	const op = "MPI_Probe"
	if err := c.usable(op); err != nil {
		return mpi.Status{}, err
	}
	if err := c.checkPeer(op, source, true); err != nil {
		return mpi.Status{}, err
	}
	if err := enterPeer(op, source); err != nil {
		return mpi.Status{}, err
	}
	s := C.cc_probe(c.h, C.int(source), C.int(tag))
	leave()
	return c.status(op, s)
}

// Iprobe is MPI_Iprobe; st is valid when found.
func (c *Comm) Iprobe(source, tag int) (bool, mpi.Status, error) {
	const op = "MPI_Iprobe"
	if err := c.usable(op); err != nil {
		return false, mpi.Status{}, err
	}
	if err := c.checkPeer(op, source, true); err != nil {
		return false, mpi.Status{}, err
	}
	if err := enter(op); err != nil {
		return false, mpi.Status{}, err
	}
	r := C.cc_iprobe(c.h, C.int(source), C.int(tag))
	leave()
	if r.rc != 0 {
		return false, mpi.Status{}, newError(op, r.rc)
	}
	if r.flag == 0 {
		idle()
		return false, mpi.Status{}, nil
	}
	st, _ := c.status(op, r.st)
	return true, st, nil
}

// Split is MPI_Comm_split. A color < 0 (mpi.Undefined) passes MPI_UNDEFINED
// and yields a nil Comm for this rank.
func (c *Comm) Split(color, key int) (mpi.Comm, error) {
	const op = "MPI_Comm_split"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if err := enter(op); err != nil {
		return nil, err
	}
	r := C.cc_comm_split(c.h, C.int(color), C.int(key))
	leave()
	if r.rc == 0 && r.comm == C.cc_comm_null() {
		return nil, nil // an untyped nil, so the caller's c == nil holds
	}
	nc, err := newComm(op, r)
	if err != nil {
		return nil, err
	}
	return nc, nil
}

// Dup is MPI_Comm_dup: a new communicator with the same group and its own
// message space.
func (c *Comm) Dup() (mpi.Comm, error) {
	const op = "MPI_Comm_dup"
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if err := enter(op); err != nil {
		return nil, err
	}
	r := C.cc_comm_dup(c.h)
	leave()
	nc, err := newComm(op, r)
	if err != nil {
		return nil, err
	}
	return nc, nil
}

// Free is MPI_Comm_free (collective). Freeing World is an error, and so is
// any later use of a freed communicator.
func (c *Comm) Free() error {
	const op = "MPI_Comm_free"
	if err := c.usable(op); err != nil {
		return err
	}
	if c.world {
		return classError(op, mpi.ErrComm, "MPI_COMM_WORLD cannot be freed")
	}
	if err := enter(op); err != nil {
		return err
	}
	rc := C.cc_comm_free(c.h)
	leave()
	if rc != 0 {
		return newError(op, rc)
	}
	c.freed = true
	c.h = C.cc_comm_null()
	return nil
}
