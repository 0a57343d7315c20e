package native

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
)

// PingPong runs iters blocking round trips of len(buf) bytes with peer, the
// whole loop in C (one cgo call), and returns the seconds MPI_Wtime measured
// around the loop on this rank. The initiator sends then receives, the peer
// receives then sends (OSU osu_latency). Both send from send and receive
// into recv, OSU's separate s_buf and r_buf: receiving into the buffer just
// sent from would cost a third more at 1 MiB on shared memory.
// Half round-trip latency = seconds / (2*iters). There is no barrier inside:
// synchronise before the batch and discard warm-up batches.
func (c *Comm) PingPong(send, recv []byte, peer, tag, iters int, initiator bool) (float64, error) {
	const op = "PingPong"
	if err := c.kernelArgs(op, send, peer, iters); err != nil {
		return 0, err
	}
	if len(recv) < len(send) {
		return 0, classError(op, mpi.ErrTruncate, fmt.Sprintf("receive buffer of %d bytes is shorter than the %d-byte message", len(recv), len(send)))
	}
	if err := enterPeer(op, peer); err != nil {
		return 0, err
	}
	r := C.cc_pingpong(c.h, ptr(send), ptr(recv), C.int(len(send)), C.int(peer), C.int(tag), C.int(iters), cbool(initiator))
	leave()
	if r.rc != 0 {
		return float64(r.seconds), newError(op, r.rc)
	}
	return float64(r.seconds), nil
}

// Bandwidth runs iters windows in C: the sender posts window MPI_Isend of
// len(buf) bytes, MPI_Waitall, and receives a 4-byte ack; the receiver posts
// window MPI_Irecv into buf, MPI_Waitall, and sends the ack (OSU osu_bw).
// It returns the seconds around the loop on this rank; bandwidth =
// len(buf)*window*iters / seconds on the sender.
func (c *Comm) Bandwidth(buf []byte, peer, tag, window, iters int, sender bool) (float64, error) {
	const op = "Bandwidth"
	if err := c.kernelArgs(op, buf, peer, iters); err != nil {
		return 0, err
	}
	if window < 1 || window > 1<<20 {
		return 0, classError(op, mpi.ErrArg, fmt.Sprintf("window %d outside [1, %d]", window, 1<<20))
	}
	if err := enterPeer(op, peer); err != nil {
		return 0, err
	}
	r := C.cc_bandwidth(c.h, ptr(buf), C.int(len(buf)), C.int(peer), C.int(tag), C.int(window), C.int(iters), cbool(sender))
	leave()
	if r.rc != 0 {
		return float64(r.seconds), newError(op, r.rc)
	}
	return float64(r.seconds), nil
}

// PRTT runs iters of netgauge's PRTT(n, d, s) exchanges with peer in C (one
// cgo call): the client sends n messages of len(buf) bytes, spinning delay
// seconds on MPI_Wtime between consecutive sends, and receives one answer;
// the server receives n, spinning delay before each after the first when
// serverDelay, and answers. It returns the seconds around the loop on this
// rank and, on the server, the sum of the first-to-last arrival times.
func (c *Comm) PRTT(buf []byte, peer, tag, n int, delay float64, iters int, client, serverDelay bool) (float64, float64, error) {
	const op = "PRTT"
	if err := c.kernelArgs(op, buf, peer, iters); err != nil {
		return 0, 0, err
	}
	if n < 1 || n > mpi.MaxCount || !(delay >= 0) || math.IsInf(delay, 0) {
		return 0, 0, classError(op, mpi.ErrArg, fmt.Sprintf("n %d, delay %g: need n in [1, %d] and a finite delay >= 0", n, delay, mpi.MaxCount))
	}
	if err := enterPeer(op, peer); err != nil {
		return 0, 0, err
	}
	r := C.cc_prtt(c.h, ptr(buf), C.int(len(buf)), C.int(peer), C.int(tag), C.int(n), C.double(delay), C.int(iters), cbool(client), cbool(serverDelay), cbool(!client))
	leave()
	if r.rc != 0 {
		return float64(r.seconds), float64(r.arrivals), newError(op, r.rc)
	}
	return float64(r.seconds), float64(r.arrivals), nil
}

// AllToAllPt2Pt runs iters personalised all-to-all exchanges among ranks
// 0..n-1 in C (one cgo call): receives of block bytes from every other rank
// into recv[src*block:], sends from send[dst*block:], posted in the order
// me-1, me-2, ... and me+1, me+2, ..., then one MPI_Waitall. Only ranks
// below n call it. It returns the seconds around the loop on this rank.
func (c *Comm) AllToAllPt2Pt(send, recv []byte, block, n, tag, iters int) (float64, error) {
	const op = "AllToAllPt2Pt"
	if err := c.usable(op); err != nil {
		return 0, err
	}
	switch {
	case n < 1 || n > c.size || c.rank >= n:
		return 0, classError(op, mpi.ErrRank, fmt.Sprintf("rank %d of %d among n = %d: need 1 <= n <= size and rank < n", c.rank, c.size, n))
	case block < 0 || block > mpi.MaxCount || len(send) < n*block || len(recv) < n*block:
		return 0, classError(op, mpi.ErrCount, fmt.Sprintf("block %d bytes for %d ranks with buffers of %d and %d bytes", block, n, len(send), len(recv)))
	case iters < 0 || iters > mpi.MaxCount:
		return 0, classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	if err := enter(op); err != nil {
		return 0, err
	}
	r := C.cc_alltoall_pt2pt(c.h, (*C.char)(ptr(send)), (*C.char)(rptr(recv)), C.int(block), C.int(n), C.int(c.rank), C.int(tag), C.int(iters))
	leave()
	if r.rc != 0 {
		return float64(r.seconds), newError(op, r.rc)
	}
	return float64(r.seconds), nil
}

// kernelArgs validates what the C loops cannot report cleanly: the peer is
// another rank of this communicator (a blocking ping-pong with oneself
// deadlocks once messages stop being buffered) and iters fits a C int.
func (c *Comm) kernelArgs(op string, buf []byte, peer, iters int) error {
	if err := c.usable(op); err != nil {
		return err
	}
	if err := checkCount(op, "buffer", len(buf)); err != nil {
		return err
	}
	if peer < 0 || peer >= c.size || peer == c.rank {
		return classError(op, mpi.ErrRank, fmt.Sprintf("peer %d must be another rank in [0, %d), not %d", peer, c.size, c.rank))
	}
	if iters < 0 || iters > mpi.MaxCount {
		return classError(op, mpi.ErrArg, fmt.Sprintf("iters %d outside [0, %d]", iters, mpi.MaxCount))
	}
	return nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
