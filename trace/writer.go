package trace

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
)

// Writer writes a rank file in the library's format with the ns clock
// (ClockNS): synthetic traces for tests and benchmarks, and conversions.
// Event times are taken from T0 and T1 (ns since the origin).
type Writer struct {
	w     *bufio.Writer
	buf   []byte
	n     int // events in buf
	total int64
	err   error
}

// NewWriter writes h (rank, size, host, eager limits; the clock is
// ClockNS; h.Version 0 is Version, another the version field of a file
// that is refused (1 without the header checksum; the blocks always carry
// version 3's CRC-32C);
// h.PID 0 is this process's) and the definitions of MPI_COMM_WORLD (local 0) and
// MPI_COMM_SELF (local 1), as the library does at MPI_Init.
func NewWriter(w io.Writer, h Header) *Writer {
	tw := &Writer{w: bufio.NewWriterSize(w, 1<<16), buf: make([]byte, 0, BlockEvents*EventBytes)}
	var b [HeaderBytes]byte
	le := binary.LittleEndian
	copy(b[:], Magic)
	version := h.Version
	if version == 0 {
		version = Version
	}
	le.PutUint16(b[8:], uint16(version))
	le.PutUint16(b[10:], HeaderBytes)
	le.PutUint16(b[12:], EventBytes)
	le.PutUint16(b[14:], ClockNS)
	le.PutUint32(b[16:], uint32(h.Rank))
	le.PutUint32(b[20:], uint32(h.Size))
	pid := h.PID
	if pid == 0 {
		pid = os.Getpid() // as the library writes getpid()
	}
	le.PutUint32(b[24:], uint32(pid))
	le.PutUint64(b[48:], uint64(h.OriginRealNS))
	le.PutUint64(b[56:], uint64(h.InitSec*1e9))
	le.PutUint64(b[64:], uint64(h.EagerShmBytes))
	le.PutUint64(b[72:], uint64(h.EagerNetBytes))
	copy(b[80:80+HostBytes-1], h.Host)
	if version >= 2 {
		le.PutUint32(b[HeaderSumOffset:], HeaderSum(b[:]))
	}
	_, tw.err = tw.w.Write(b[:])
	world := make([]int32, h.Size)
	for i := range world {
		world[i] = int32(i)
	}
	tw.DefineComm(0, 0, world)
	tw.DefineComm(1, uint64(h.Rank+1)<<32, []int32{int32(h.Rank)})
	return tw
}

// DefineComm writes a communicator's definition: local index, identity,
// members' world ranks.
func (w *Writer) DefineComm(local int32, id uint64, members []int32) {
	w.Write(Event{Op: OpCommDef, Comm: local, Peer: int32(len(members)), Peer2: PeerNone, Req: id})
	for i, m := range members {
		w.Write(Event{Op: OpCommMember, Comm: local, Peer: int32(i), Peer2: m})
	}
}

// Write buffers one event, writing a block when BlockEvents are buffered.
// The first error is kept and returned by every later call and Close.
func (w *Writer) Write(e Event) error {
	if w.err != nil {
		return w.err
	}
	if w.n == BlockEvents {
		w.flush()
	}
	var b [EventBytes]byte
	le := binary.LittleEndian
	b[0], b[1] = byte(e.Op), e.Flags
	le.PutUint32(b[4:], uint32(e.Comm))
	le.PutUint32(b[8:], uint32(e.Peer))
	le.PutUint32(b[12:], uint32(e.Tag))
	le.PutUint32(b[16:], uint32(e.Peer2))
	le.PutUint32(b[20:], uint32(e.Tag2))
	le.PutUint64(b[24:], uint64(e.Bytes))
	le.PutUint64(b[32:], uint64(e.Bytes2))
	le.PutUint64(b[40:], e.Req)
	le.PutUint64(b[48:], uint64(e.T0))
	le.PutUint64(b[56:], uint64(e.T1))
	w.buf = append(w.buf, b[:]...)
	w.n++
	w.total++
	return w.err
}

func (w *Writer) flush() {
	if w.n == 0 || w.err != nil {
		return
	}
	le := binary.LittleEndian
	var h [BlockHeaderBytes]byte
	le.PutUint32(h[0:], BlockMagic)
	le.PutUint32(h[4:], uint32(w.n))
	le.PutUint64(h[8:], uint64(BlockSum(w.buf)))
	if _, err := w.w.Write(h[:]); err != nil {
		w.err = err
		return
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = err
	}
	w.buf, w.n = w.buf[:0], 0
}

// Close writes the end record at time endNS and flushes.
func (w *Writer) Close(endNS int64) error {
	w.Write(Event{Op: OpEnd, Peer: PeerNone, Peer2: PeerNone, Bytes: w.total + 1, T0: endNS, T1: endNS})
	w.flush()
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}
