package directstore

import (
	"encoding/binary"
	"fmt"

	"github.com/commcost/commcost/mpi"
)

// goServer is the store protocol in Go over any mpi.Comm: the same messages
// and the same order as the C server of mpi/native (access.c, cc_store_*),
// for backends without mpi.StoreKernel (mpi/local).
type goServer struct {
	c        mpi.Comm
	me       int
	spec     mpi.StoreSpec
	mem      []byte
	reqBuf   []byte
	req      mpi.Request // the posted request receive
	sends    []mpi.Request
	acks     [][]byte // acknowledgement buffers of sends in flight
	reqMsgs  []byte
	ackIn    [][]byte
	waits    []mpi.Request
	reqSends []mpi.Request
	reads    int64
	writes   int64
	closed   bool
	broken   bool
}

// sendsCap bounds the answers in flight before a server completes them, as
// the C server's first allocation does.
const sendsCap = 64

func newGoServer(c mpi.Comm, spec mpi.StoreSpec) (*goServer, error) {
	g := &goServer{c: c, me: c.Rank(), spec: spec, reqBuf: make([]byte, mpi.AccessHeaderBytes+spec.MaxPacket)}
	if err := g.post(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *goServer) post() error {
	var err error
	g.req, err = g.c.Irecv(g.reqBuf, mpi.AnySource, g.spec.ReqTag)
	return err
}

func (g *goServer) Mem() []byte { return g.mem }

func (g *goServer) Grow(n int) error {
	if n > len(g.mem) {
		g.mem = append(g.mem, make([]byte, n-len(g.mem))...)
	}
	return nil
}

func (g *goServer) Served() (reads, writes int64) { return g.reads, g.writes }

// flush completes the answers in flight (their receives were posted before
// the requests left).
func (g *goServer) flush() error {
	if len(g.sends) == 0 {
		return nil
	}
	_, err := mpi.Waitall(g.sends)
	g.sends, g.acks = g.sends[:0], g.acks[:0]
	return err
}

// serve answers the request that completed with st.
func (g *goServer) serve(st mpi.Status) error {
	fault := func(f *mpi.AccessFault) error { g.broken = true; return f }
	if st.Count < mpi.AccessHeaderBytes {
		return fault(&mpi.AccessFault{Kind: mpi.FaultRequestLength, Rank: st.Source, Count: st.Count, Want: mpi.AccessHeaderBytes})
	}
	off := binary.LittleEndian.Uint64(g.reqBuf[0:8])
	w1 := binary.LittleEndian.Uint64(g.reqBuf[8:16])
	if w1&mpi.StoreClose != 0 {
		if st.Source != g.me || st.Count != mpi.AccessHeaderBytes {
			return fault(&mpi.AccessFault{Kind: mpi.FaultRequestLength, Rank: st.Source, Count: st.Count, Want: mpi.AccessHeaderBytes})
		}
		g.closed = true
		return nil
	}
	n := w1 & mpi.StoreLenMask
	write := w1&mpi.StoreWrite != 0
	want := mpi.AccessHeaderBytes
	if write {
		want += int(n)
	}
	if n > uint64(g.spec.MaxPacket) || st.Count != want {
		return fault(&mpi.AccessFault{Kind: mpi.FaultRequestLength, Rank: st.Source, Count: st.Count, Want: want})
	}
	if off > uint64(len(g.mem)) || n > uint64(len(g.mem))-off {
		return fault(&mpi.AccessFault{Kind: mpi.FaultSlotRange, Rank: st.Source, Slot: off, Want: len(g.mem)})
	}
	// As in C: a write must not change memory a read's answer is still
	// being sent from, and the answers in flight are bounded.
	if (write && len(g.sends) > 0) || len(g.sends) == sendsCap {
		if err := g.flush(); err != nil {
			return err
		}
	}
	region := g.mem[off : off+n]
	answer := region
	if write {
		copy(region, g.reqBuf[mpi.AccessHeaderBytes:])
		answer = append([]byte(nil), g.reqBuf[:mpi.AccessHeaderBytes]...)
		g.writes++
	} else {
		g.reads++
	}
	r, err := g.c.Isend(answer, st.Source, g.spec.ReplyTag)
	if err != nil {
		return err
	}
	g.sends = append(g.sends, r)
	g.acks = append(g.acks, answer)
	return nil
}

// arrived serves the request that completed the posted receive and posts
// the next receive.
func (g *goServer) arrived(st mpi.Status) error {
	if err := g.serve(st); err != nil {
		return err
	}
	if g.closed {
		g.req = nil
		return nil
	}
	return g.post()
}

func (g *goServer) Batch(b mpi.StoreBatch) error {
	if g.broken || g.closed {
		return fmt.Errorf("directstore: the server is closed or broken")
	}
	n := len(b.Targets)
	for lo := 0; lo < n; lo += b.K {
		m := min(b.K, n-lo)
		if cap(g.waits) < m+1 {
			g.waits = make([]mpi.Request, m+1)
		}
		for len(g.reqSends) < m {
			g.reqSends = append(g.reqSends, nil)
			g.ackIn = append(g.ackIn, make([]byte, mpi.AccessHeaderBytes))
		}
		waits := g.waits[:m+1]
		waits[0] = g.req
		var err error
		for j := range m {
			into := b.Bufs[lo+j]
			if b.Write {
				into = g.ackIn[j]
			}
			if waits[1+j], err = g.c.Irecv(into, b.Targets[lo+j], g.spec.ReplyTag); err != nil {
				g.broken = true
				return err
			}
		}
		size := 0
		for j := range m {
			size += mpi.AccessHeaderBytes
			if b.Write {
				size += len(b.Bufs[lo+j])
			}
		}
		if cap(g.reqMsgs) < size {
			g.reqMsgs = make([]byte, size)
		}
		msg := g.reqMsgs[:size]
		for j := range m {
			buf := b.Bufs[lo+j]
			w1 := uint64(len(buf))
			mlen := mpi.AccessHeaderBytes
			if b.Write {
				w1 |= mpi.StoreWrite
				mlen += len(buf)
			}
			binary.LittleEndian.PutUint64(msg[0:8], uint64(b.Offs[lo+j]))
			binary.LittleEndian.PutUint64(msg[8:16], w1)
			if b.Write {
				copy(msg[mpi.AccessHeaderBytes:], buf)
			}
			if g.reqSends[j], err = g.c.Isend(msg[:mlen:mlen], b.Targets[lo+j], g.spec.ReqTag); err != nil {
				g.broken = true
				return err
			}
			msg = msg[mlen:]
		}
		for pending := m; pending > 0; {
			i, st, err := mpi.Waitany(waits)
			if err != nil {
				g.broken = true
				return err
			}
			switch {
			case i == 0:
				if err := g.arrived(st); err != nil {
					return err
				}
				waits[0] = g.req
			case i > 0:
				want := mpi.AccessHeaderBytes
				if !b.Write {
					want = len(b.Bufs[lo+i-1])
				}
				if st.Count != want {
					g.broken = true
					return &mpi.AccessFault{Kind: mpi.FaultAnswerLength, Rank: b.Targets[lo+i-1], Count: st.Count, Want: want}
				}
				waits[i] = nil
				pending--
			default:
				g.broken = true
				return fmt.Errorf("directstore: %d answers pending but nothing to wait for", pending)
			}
		}
		// Every request was answered, so its send is complete.
		if _, err := mpi.Waitall(g.reqSends[:m]); err != nil {
			g.broken = true
			return err
		}
	}
	return g.flush()
}

func (g *goServer) WaitAny(reqs []mpi.Request) (int, mpi.Status, error) {
	any := false
	for _, q := range reqs {
		any = any || q != nil
	}
	if !any {
		return -1, mpi.Status{}, nil
	}
	if g.broken || g.closed {
		return -1, mpi.Status{}, fmt.Errorf("directstore: the server is closed or broken")
	}
	waits := append(append(g.waits[:0], g.req), reqs...)
	g.waits = waits[:0]
	for {
		i, st, err := mpi.Waitany(waits)
		if i == 0 {
			if err != nil {
				g.broken = true
				return -1, st, err
			}
			if err := g.arrived(st); err != nil {
				return -1, st, err
			}
			waits[0] = g.req
			continue
		}
		if ferr := g.flush(); err == nil {
			err = ferr
		}
		return i - 1, st, err
	}
}

func (g *goServer) Poll() error {
	if g.broken || g.closed {
		return fmt.Errorf("directstore: the server is closed or broken")
	}
	for {
		done, st, err := g.req.Test()
		if err != nil {
			g.broken = true
			return err
		}
		if !done {
			return g.flush()
		}
		if err := g.arrived(st); err != nil {
			return err
		}
	}
}

func (g *goServer) Close() error {
	if g.closed {
		return nil
	}
	hdr := make([]byte, mpi.AccessHeaderBytes)
	binary.LittleEndian.PutUint64(hdr[8:16], mpi.StoreClose)
	send, err := g.c.Isend(hdr, g.me, g.spec.ReqTag)
	if err != nil {
		return err
	}
	for !g.closed {
		st, err := g.req.Wait()
		if err != nil {
			return err
		}
		if err := g.arrived(st); err != nil {
			return err
		}
	}
	if _, err := send.Wait(); err != nil {
		return err
	}
	return g.flush()
}

var _ mpi.StoreServer = (*goServer)(nil)
