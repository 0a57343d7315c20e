package mpitest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strconv"
	"time"
	"unsafe"
	"weak"

	"github.com/commcost/commcost/mpi"
)

// pollLimit bounds the polling loops (Test, Iprobe), which have no blocking
// fallback that a deadlock detector or timeout could see.
const pollLimit = 30 * time.Second

// peerDelay is how long a rank waits before checking that its peer is still
// blocked (Ssend, Barrier). Longer catches more scheduling-dependent bugs;
// a correct backend passes with any value.
const peerDelay = 20 * time.Millisecond

// fill writes a byte sequence determined by the seeds, so that any two
// (sender, size, tag, ...) combinations send different data.
func fill(b []byte, seeds ...int) {
	s := uint64(0x9e3779b97f4a7c15)
	for _, v := range seeds {
		s = mix(s ^ uint64(v))
	}
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		s = mix(s)
		binary.LittleEndian.PutUint64(w[:], s)
		copy(b[i:], w[:])
	}
}

// mix is the splitmix64 finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func pattern(n int, seeds ...int) []byte {
	b := make([]byte, n)
	fill(b, seeds...)
	return b
}

// pairPeer pairs ranks (0,1), (2,3), ...; the last rank of an odd size has
// no peer. first is true for the even rank of a pair.
func pairPeer(c mpi.Comm) (peer int, first, ok bool) {
	r := c.Rank()
	if r%2 == 1 {
		return r - 1, false, true
	}
	if r+1 < c.Size() {
		return r + 1, true, true
	}
	return 0, false, false
}

func sendRecvSizes(c mpi.Comm) error {
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	ck := newChecker(c)
	sizes := []int{0, 1, 7, 64, 4096, 65536 + 3, 1 << 20}
	for i, n := range sizes {
		// The even rank sends first and the odd rank answers with other data.
		for turn := range 2 {
			sender := c.Rank()
			if first != (turn == 0) {
				sender = peer
			}
			if sender == c.Rank() {
				if err := c.Send(pattern(n, sender, n, turn), peer, i); err != nil {
					return failf("Send %d bytes to %d: %w", n, peer, err)
				}
				continue
			}
			buf := make([]byte, n)
			st, err := c.Recv(buf, peer, i)
			if err != nil {
				return failf("Recv %d bytes from %d: %w", n, peer, err)
			}
			ck.status("Recv", st, peer, i, n)
			ck.equal("Recv data", buf, pattern(n, peer, n, turn))
		}
	}
	return ck.err()
}

// sendRecv64MiB sends one 64 MiB message from rank 0 to rank 1. The data is
// built and checked in 64 KiB chunks that carry their index, so that no
// whole-size reference copy is needed and a displaced chunk is caught.
func sendRecv64MiB(c mpi.Comm) error {
	const size, chunk = 64 << 20, 64 << 10
	if c.Rank() > 1 {
		return nil
	}
	base := pattern(chunk, 64)
	if c.Rank() == 0 {
		buf := make([]byte, size)
		for off := 0; off < size; off += chunk {
			copy(buf[off:], base)
			binary.LittleEndian.PutUint64(buf[off:], uint64(off/chunk))
		}
		if err := c.Send(buf, 1, 0); err != nil {
			return failf("Send 64 MiB: %w", err)
		}
		return nil
	}
	ck := newChecker(c)
	buf := make([]byte, size)
	st, err := c.Recv(buf, 0, 0)
	if err != nil {
		return failf("Recv 64 MiB: %w", err)
	}
	ck.status("Recv", st, 0, 0, size)
	for off := 0; off < size; off += chunk {
		if got := binary.LittleEndian.Uint64(buf[off:]); got != uint64(off/chunk) {
			ck.errorf("chunk at byte %d has index %d, want %d", off, got, off/chunk)
			break
		}
		if !bytes.Equal(buf[off+8:off+chunk], base[8:]) {
			ck.errorf("chunk at byte %d has wrong data", off)
			break
		}
	}
	return ck.err()
}

// selfMessages sends to the own rank, without relying on buffering.
func selfMessages(c mpi.Comm) error {
	ck := newChecker(c)
	me := c.Rank()
	want := pattern(100, me, 1)
	req, err := c.Isend(want, me, 1)
	if err != nil {
		return failf("Isend to self: %w", err)
	}
	got := make([]byte, 100)
	st, err := c.Recv(got, me, 1)
	if err != nil {
		return failf("Recv from self: %w", err)
	}
	if _, err := req.Wait(); err != nil {
		return failf("Wait for Isend to self: %w", err)
	}
	ck.status("Recv from self", st, me, 1, 100)
	ck.equal("Recv from self", got, want)

	want = pattern(3000, me, 2)
	got = make([]byte, 3000)
	st, err = c.Sendrecv(want, me, 2, got, me, 2)
	if err != nil {
		return failf("Sendrecv with self: %w", err)
	}
	ck.status("Sendrecv with self", st, me, 2, 3000)
	ck.equal("Sendrecv with self", got, want)
	return ck.err()
}

// ssend checks that Ssend does not complete before the receive has started:
// the receiver looks for the message the sender sends after its Ssend
// returns, while the Ssend's own message has not been received yet.
func ssend(c mpi.Comm) error {
	const tagData, tagAfter, tagReady = 1, 2, 3
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	ck := newChecker(c)
	sizes := []int{0, 10, 200000}
	if first {
		for _, n := range sizes {
			if err := c.Ssend(pattern(n, n), peer, tagData); err != nil {
				return failf("Ssend %d bytes: %w", n, err)
			}
			if err := c.Send(nil, peer, tagAfter); err != nil {
				return failf("Send: %w", err)
			}
		}
		// Ssend to a receive that is already posted.
		if _, err := c.Recv(nil, peer, tagReady); err != nil {
			return failf("Recv: %w", err)
		}
		if err := c.Ssend(pattern(50, 50), peer, tagData); err != nil {
			return failf("Ssend to a posted receive: %w", err)
		}
		return nil
	}
	for _, n := range sizes {
		time.Sleep(peerDelay)
		found, _, err := c.Iprobe(peer, tagAfter)
		if err != nil {
			return failf("Iprobe: %w", err)
		}
		if found {
			ck.errorf("Ssend of %d bytes returned before the receive was posted", n)
		}
		buf := make([]byte, n)
		st, err := c.Recv(buf, peer, tagData)
		if err != nil {
			return failf("Recv: %w", err)
		}
		ck.status("Recv of Ssend", st, peer, tagData, n)
		ck.equal("Recv of Ssend", buf, pattern(n, n))
		if _, err := c.Recv(nil, peer, tagAfter); err != nil {
			return failf("Recv: %w", err)
		}
	}
	buf := make([]byte, 50)
	req, err := c.Irecv(buf, peer, tagData)
	if err != nil {
		return failf("Irecv: %w", err)
	}
	if err := c.Send(nil, peer, tagReady); err != nil {
		return failf("Send: %w", err)
	}
	st, err := req.Wait()
	if err != nil {
		return failf("Wait: %w", err)
	}
	ck.status("Irecv of Ssend", st, peer, tagData, 50)
	ck.equal("Irecv of Ssend", buf, pattern(50, 50))
	return ck.err()
}

// sendrecvRing shifts data around a ring; with one rank it talks to itself,
// with two both neighbours are the same rank.
func sendrecvRing(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	right, left := (me+1)%n, (me+n-1)%n
	for i, size := range []int{0, 3, 1000, 100000} {
		source := left
		if i%2 == 1 {
			source = mpi.AnySource // only left sends with this tag
		}
		got := make([]byte, size)
		st, err := c.Sendrecv(pattern(size, me, i), right, i, got, source, i)
		if err != nil {
			return failf("Sendrecv %d bytes: %w", size, err)
		}
		ck.status("Sendrecv", st, left, i, size)
		ck.equal("Sendrecv", got, pattern(size, left, i))
	}
	return ck.err()
}

// isendIrecvWaitall exchanges a message between every ordered pair of
// ranks, the own rank included, with all requests outstanding at once.
func isendIrecvWaitall(c mpi.Comm) error {
	const tag = 7
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	size := func(from, to int) int { return 100 + 37*from + 11*to }
	bufs := make([][]byte, n)
	var reqs []mpi.Request
	for j := range n {
		bufs[j] = make([]byte, size(j, me))
		r, err := c.Irecv(bufs[j], j, tag)
		if err != nil {
			return failf("Irecv from %d: %w", j, err)
		}
		reqs = append(reqs, r)
	}
	var sends []mpi.Request
	for j := range n {
		r, err := c.Isend(pattern(size(me, j), me, j), j, tag)
		if err != nil {
			return failf("Isend to %d: %w", j, err)
		}
		sends = append(sends, r)
	}
	sts, err := mpi.Waitall(reqs)
	if err != nil {
		return failf("Waitall receives: %w", err)
	}
	if _, err := mpi.Waitall(sends); err != nil {
		return failf("Waitall sends: %w", err)
	}
	for j := range n {
		ck.status("Irecv", sts[j], j, tag, size(j, me))
		ck.equal("Irecv", bufs[j], pattern(size(j, me), j, me))
	}
	return ck.err()
}

// poll calls test until it reports done.
func poll(what string, test func() (bool, mpi.Status, error)) (mpi.Status, error) {
	deadline := time.Now().Add(pollLimit)
	for {
		done, st, err := test()
		if err != nil {
			return st, failf("%s: %w", what, err)
		}
		if done {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, failf("%s: not complete after %v of polling", what, pollLimit)
		}
	}
}

// testPolling checks that Test reports a receive pending until the peer,
// which waits for a go-ahead, has sent.
func testPolling(c mpi.Comm) error {
	const tagData, tagGo = 1, 2
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	ck := newChecker(c)
	for _, size := range []int{0, 5000} {
		if first {
			if _, err := c.Recv(nil, peer, tagGo); err != nil {
				return failf("Recv: %w", err)
			}
			req, err := c.Isend(pattern(size, size), peer, tagData)
			if err != nil {
				return failf("Isend: %w", err)
			}
			if _, err := poll("Test on Isend", req.Test); err != nil {
				return err
			}
			continue
		}
		buf := make([]byte, size)
		req, err := c.Irecv(buf, peer, tagData)
		if err != nil {
			return failf("Irecv: %w", err)
		}
		done, _, err := req.Test()
		if err != nil {
			return failf("Test: %w", err)
		}
		if done {
			ck.errorf("Test reports a receive complete before anything was sent")
		}
		if err := c.Send(nil, peer, tagGo); err != nil {
			return failf("Send: %w", err)
		}
		st, err := poll("Test on Irecv", req.Test)
		if err != nil {
			return err
		}
		ck.status("Test on Irecv", st, peer, tagData, size)
		ck.equal("Irecv", buf, pattern(size, size))
	}
	return ck.err()
}

// seqMsg is a message carrying a sequence number and padding of varying length.
func seqMsg(seq int) []byte {
	b := pattern(8+seq*37%300, seq)
	binary.LittleEndian.PutUint64(b, uint64(seq))
	return b
}

// nonOvertaking sends many messages with one source and tag through a mix
// of Send, Isend and Ssend; the receiver, through a mix of Recv and batches
// of Irecv, must get them in order.
func nonOvertaking(c mpi.Comm) error {
	const count, tag, batch = 500, 4, 10
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	if first {
		var reqs []mpi.Request
		for i := range count {
			var err error
			switch i % 3 {
			case 0:
				var r mpi.Request
				r, err = c.Isend(seqMsg(i), peer, tag)
				reqs = append(reqs, r)
			case 1:
				err = c.Send(seqMsg(i), peer, tag)
			case 2:
				err = c.Ssend(seqMsg(i), peer, tag)
			}
			if err != nil {
				return failf("send %d: %w", i, err)
			}
		}
		if _, err := mpi.Waitall(reqs); err != nil {
			return failf("Waitall: %w", err)
		}
		return nil
	}
	ck := newChecker(c)
	check := func(i int, buf []byte, st mpi.Status) {
		n := len(seqMsg(i))
		ck.status("message "+strconv.Itoa(i), st, peer, tag, n)
		if got := binary.LittleEndian.Uint64(buf); got != uint64(i) {
			ck.errorf("message %d arrived in position of message %d", got, i)
		}
	}
	for i := 0; i < count; {
		if i%(2*batch) == 0 {
			buf := make([]byte, 400)
			st, err := c.Recv(buf, peer, tag)
			if err != nil {
				return failf("Recv %d: %w", i, err)
			}
			check(i, buf, st)
			i++
			continue
		}
		var reqs []mpi.Request
		var bufs [][]byte
		for k := 0; k < batch && i+k < count; k++ {
			buf := make([]byte, 400)
			r, err := c.Irecv(buf, peer, tag)
			if err != nil {
				return failf("Irecv %d: %w", i+k, err)
			}
			reqs, bufs = append(reqs, r), append(bufs, buf)
		}
		sts, err := mpi.Waitall(reqs)
		if err != nil {
			return failf("Waitall: %w", err)
		}
		for k := range reqs {
			check(i+k, bufs[k], sts[k])
		}
		i += len(reqs)
	}
	return ck.err()
}

// nonOvertakingAnyTag: messages from one source that all match an AnyTag
// receive arrive in send order, whatever their tags.
func nonOvertakingAnyTag(c mpi.Comm) error {
	const count = 300
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	tagOf := func(i int) int { return 10 + i%5 }
	if first {
		for i := range count {
			if err := c.Send(seqMsg(i), peer, tagOf(i)); err != nil {
				return failf("Send %d: %w", i, err)
			}
		}
		return nil
	}
	ck := newChecker(c)
	buf := make([]byte, 400)
	for i := range count {
		st, err := c.Recv(buf, peer, mpi.AnyTag)
		if err != nil {
			return failf("Recv %d: %w", i, err)
		}
		ck.status("message "+strconv.Itoa(i), st, peer, tagOf(i), len(seqMsg(i)))
		if got := binary.LittleEndian.Uint64(buf); got != uint64(i) {
			ck.errorf("message %d arrived in position of message %d", got, i)
		}
	}
	return ck.err()
}

// nonOvertakingAnySource: every rank sends a numbered stream to rank 0,
// which receives with AnySource; each source's stream must stay in order.
func nonOvertakingAnySource(c mpi.Comm) error {
	const count, tag = 100, 3
	n, me := c.Size(), c.Rank()
	if me != 0 {
		for i := range count {
			msg := seqMsg(i)
			binary.LittleEndian.PutUint32(msg[4:], uint32(me))
			if err := c.Send(msg, 0, tag); err != nil {
				return failf("Send %d: %w", i, err)
			}
		}
		return nil
	}
	ck := newChecker(c)
	next := make([]int, n)
	buf := make([]byte, 400)
	for range (n - 1) * count {
		st, err := c.Recv(buf, mpi.AnySource, tag)
		if err != nil {
			return failf("Recv: %w", err)
		}
		if st.Source <= 0 || st.Source >= n {
			ck.errorf("status source %d", st.Source)
			continue
		}
		seq := int(binary.LittleEndian.Uint32(buf))
		if from := int(binary.LittleEndian.Uint32(buf[4:])); from != st.Source {
			ck.errorf("message from rank %d has status source %d", from, st.Source)
		}
		if seq != next[st.Source] {
			ck.errorf("from rank %d: message %d arrived when %d was due", st.Source, seq, next[st.Source])
		}
		ck.status("Recv", st, st.Source, tag, len(seqMsg(next[st.Source])))
		next[st.Source] = seq + 1
	}
	return ck.err()
}

// anySourceAnyTag: one message from every other rank, with a tag and
// length that identify the sender, received with both wildcards.
func anySourceAnyTag(c mpi.Comm) error {
	n, me := c.Size(), c.Rank()
	if me != 0 {
		if err := c.Send(pattern(me+1, me), 0, 100+me); err != nil {
			return failf("Send: %w", err)
		}
		return nil
	}
	ck := newChecker(c)
	seen := make([]bool, n)
	for range n - 1 {
		buf := make([]byte, n+1)
		st, err := c.Recv(buf, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return failf("Recv: %w", err)
		}
		if st.Source <= 0 || st.Source >= n || seen[st.Source] {
			ck.errorf("unexpected status source %d", st.Source)
			continue
		}
		seen[st.Source] = true
		ck.status("Recv", st, st.Source, 100+st.Source, st.Source+1)
		ck.equal("Recv", buf[:st.Source+1], pattern(st.Source+1, st.Source))
	}
	return ck.err()
}

// tagSelection: a receive for one tag skips earlier messages with other
// tags, which stay queued for later receives.
func tagSelection(c mpi.Comm) error {
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	if first {
		// Isend: the receiver takes them out of order, which blocking
		// sends could only survive by buffering.
		var reqs []mpi.Request
		for _, tag := range []int{10, 11, 12} {
			r, err := c.Isend(pattern(tag, tag), peer, tag)
			if err != nil {
				return failf("Isend: %w", err)
			}
			reqs = append(reqs, r)
		}
		if _, err := mpi.Waitall(reqs); err != nil {
			return failf("Waitall: %w", err)
		}
		return nil
	}
	ck := newChecker(c)
	for _, rc := range []struct{ source, tag, want int }{
		{peer, 12, 12},
		{mpi.AnySource, 11, 11},
		{peer, mpi.AnyTag, 10},
	} {
		buf := make([]byte, 20)
		st, err := c.Recv(buf, rc.source, rc.tag)
		if err != nil {
			return failf("Recv(%d, %d): %w", rc.source, rc.tag, err)
		}
		ck.status("Recv", st, peer, rc.want, rc.want)
		ck.equal("Recv", buf[:rc.want], pattern(rc.want, rc.want))
	}
	if found, st, err := c.Iprobe(mpi.AnySource, mpi.AnyTag); err != nil {
		return failf("Iprobe: %w", err)
	} else if found {
		ck.errorf("Iprobe finds a message %+v after all were received", st)
	}
	return ck.err()
}

// postedReceiveOrder: a message that matches several posted receives goes
// to the earliest posted, wildcard or not.
func postedReceiveOrder(c mpi.Comm) error {
	const tag, tagGo = 5, 6
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	if first {
		if _, err := c.Recv(nil, peer, tagGo); err != nil {
			return failf("Recv: %w", err)
		}
		for i := range 3 {
			if err := c.Send(pattern(8, i), peer, tag); err != nil {
				return failf("Send: %w", err)
			}
		}
		return nil
	}
	ck := newChecker(c)
	patterns := []struct{ source, tag int }{{peer, mpi.AnyTag}, {mpi.AnySource, tag}, {peer, tag}}
	reqs := make([]mpi.Request, len(patterns))
	bufs := make([][]byte, len(patterns))
	for i, p := range patterns {
		bufs[i] = make([]byte, 8)
		r, err := c.Irecv(bufs[i], p.source, p.tag)
		if err != nil {
			return failf("Irecv: %w", err)
		}
		reqs[i] = r
	}
	if err := c.Send(nil, peer, tagGo); err != nil {
		return failf("Send: %w", err)
	}
	sts, err := mpi.Waitall(reqs)
	if err != nil {
		return failf("Waitall: %w", err)
	}
	for i, p := range patterns {
		what := fmt.Sprintf("receive %d posted as (%d, %d)", i, p.source, p.tag)
		ck.status(what, sts[i], peer, tag, 8)
		ck.equal(what, bufs[i], pattern(8, i))
	}
	return ck.err()
}

// probeIprobe: probes describe pending messages without consuming them,
// and a receive of the probed source and tag gets the probed message.
func probeIprobe(c mpi.Comm) error {
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	msgs := []struct{ tag, size int }{{20, 0}, {21, 513}, {22, 70000}}
	if first {
		// Isend: the receiver probes the last one first.
		var reqs []mpi.Request
		for _, m := range msgs {
			r, err := c.Isend(pattern(m.size, m.tag), peer, m.tag)
			if err != nil {
				return failf("Isend: %w", err)
			}
			reqs = append(reqs, r)
		}
		if _, err := mpi.Waitall(reqs); err != nil {
			return failf("Waitall: %w", err)
		}
		return nil
	}
	ck := newChecker(c)
	if found, _, err := c.Iprobe(peer, 99); err != nil {
		return failf("Iprobe: %w", err)
	} else if found {
		ck.errorf("Iprobe finds a message with a tag nobody sent")
	}
	recvProbed := func(st mpi.Status, m int) error {
		ck.status("probe", st, peer, msgs[m].tag, msgs[m].size)
		buf := make([]byte, st.Count)
		got, err := c.Recv(buf, st.Source, st.Tag)
		if err != nil {
			return failf("Recv of a probed message: %w", err)
		}
		ck.status("Recv of a probed message", got, peer, msgs[m].tag, msgs[m].size)
		ck.equal("Recv of a probed message", buf, pattern(msgs[m].size, msgs[m].tag))
		return nil
	}

	st, err := c.Probe(peer, 22)
	if err != nil {
		return failf("Probe: %w", err)
	}
	again, err := c.Probe(mpi.AnySource, 22)
	if err != nil {
		return failf("Probe: %w", err)
	}
	if again != st {
		ck.errorf("second Probe gives %+v, first %+v: a probe must not consume", again, st)
	}
	if err := recvProbed(st, 2); err != nil {
		return err
	}
	st, err = poll("Iprobe", func() (bool, mpi.Status, error) { return c.Iprobe(mpi.AnySource, mpi.AnyTag) })
	if err != nil {
		return err
	}
	if err := recvProbed(st, 0); err != nil {
		return err
	}
	st, err = c.Probe(peer, mpi.AnyTag)
	if err != nil {
		return failf("Probe: %w", err)
	}
	if err := recvProbed(st, 1); err != nil {
		return err
	}
	return ck.err()
}

// recvLargerBuffer: a receive buffer longer than the message is legal and
// its tail is left alone.
func recvLargerBuffer(c mpi.Comm) error {
	const fillByte = 0xAB
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	sizes := []int{100, 0, 4000}
	if first {
		for i, n := range sizes {
			if err := c.Send(pattern(n, n), peer, i); err != nil {
				return failf("Send: %w", err)
			}
		}
		return nil
	}
	ck := newChecker(c)
	for i, n := range sizes {
		buf := bytes.Repeat([]byte{fillByte}, n+1000)
		var st mpi.Status
		var err error
		if i == 2 {
			var req mpi.Request
			if req, err = c.Irecv(buf, peer, i); err == nil {
				st, err = req.Wait()
			}
		} else {
			st, err = c.Recv(buf, peer, i)
		}
		if err != nil {
			return failf("receive %d bytes into %d: %w", n, len(buf), err)
		}
		ck.status("receive into a larger buffer", st, peer, i, n)
		ck.equal("receive into a larger buffer", buf[:n], pattern(n, n))
		ck.equal("bytes past the message", buf[n:], bytes.Repeat([]byte{fillByte}, 1000))
	}
	return ck.err()
}

// truncate: a receive buffer shorter than the message fails with
// ErrTruncate, consumes the message, and leaves the communicator usable.
func truncate(c mpi.Comm) error {
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	if first {
		for i, n := range []int{100, 5000, 5} {
			if err := c.Send(pattern(n, n), peer, i+1); err != nil {
				return failf("Send: %w", err)
			}
		}
		return nil
	}
	ck := newChecker(c)
	_, err := c.Recv(make([]byte, 10), peer, 1)
	ck.class("Recv of 100 bytes into 10", err, mpi.ErrTruncate)
	req, err := c.Irecv(make([]byte, 4999), peer, 2)
	if err != nil {
		return failf("Irecv: %w", err)
	}
	_, err = req.Wait()
	ck.class("Irecv of 5000 bytes into 4999, Wait", err, mpi.ErrTruncate)
	buf := make([]byte, 5)
	st, err := c.Recv(buf, peer, mpi.AnyTag)
	if err != nil {
		return failf("Recv after a truncation: %w", err)
	}
	ck.status("Recv after a truncation", st, peer, 3, 5)
	ck.equal("Recv after a truncation", buf, pattern(5, 5))
	return ck.err()
}

// pointToPointErrors: invalid ranks and tags fail with their MPI classes,
// and the communicator works afterwards. Negative ranks other than -1000
// are avoided: MPI libraries give -1..-4 meanings (MPI_PROC_NULL, ...).
func pointToPointErrors(c mpi.Comm) error {
	ck := newChecker(c)
	n, me := c.Size(), c.Rank()
	buf := make([]byte, 8)
	ck.class("Send to rank Size()", c.Send(buf, n, 0), mpi.ErrRank)
	ck.class("Send to rank -1000", c.Send(buf, -1000, 0), mpi.ErrRank)
	ck.class("Ssend to rank Size()+5", c.Ssend(buf, n+5, 0), mpi.ErrRank)
	ck.class("Send with tag -5", c.Send(buf, me, -5), mpi.ErrTag)
	ck.class("Ssend with tag -7", c.Ssend(buf, me, -7), mpi.ErrTag)
	_, err := c.Isend(buf, n, 0)
	ck.class("Isend to rank Size()", err, mpi.ErrRank)
	_, err = c.Recv(buf, n, 0)
	ck.class("Recv from rank Size()", err, mpi.ErrRank)
	_, err = c.Recv(buf, me, -5)
	ck.class("Recv with tag -5", err, mpi.ErrTag)
	_, err = c.Irecv(buf, n+1, 0)
	ck.class("Irecv from rank Size()+1", err, mpi.ErrRank)
	_, _, err = c.Iprobe(n, 0)
	ck.class("Iprobe of rank Size()", err, mpi.ErrRank)
	_, err = c.Sendrecv(buf, n, 0, buf, me, 0)
	ck.class("Sendrecv to rank Size()", err, mpi.ErrRank)

	// Still usable.
	got := make([]byte, 8)
	st, err := c.Sendrecv(pattern(8, me), me, 1, got, me, 1)
	if err != nil {
		return failf("Sendrecv after errors: %w", err)
	}
	ck.status("Sendrecv after errors", st, me, 1, 8)
	ck.equal("Sendrecv after errors", got, pattern(8, me))
	if err := c.Barrier(); err != nil {
		return failf("Barrier after errors: %w", err)
	}
	return ck.err()
}

// gcWithPendingRequests: buffers of outstanding requests stay valid while
// the program holds no other reference to them and the collector runs.
// Receive buffers are watched through weak pointers: if the backend let one
// be collected, the weak pointer reads nil after Wait. Memory the collector
// reuses meanwhile (the churn) must not be written by the backend.
func gcWithPendingRequests(c mpi.Comm) error {
	const tagGo, tagData = 1, 10
	sizes := []int{100, 4096, 65536 + 7, 1<<20 + 3}
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	ck := newChecker(c)
	receiver := func(phase int) error {
		reqs, weaks, err := postUnreferenced(c, peer, tagData, sizes)
		if err != nil {
			return err
		}
		churn := gcChurn(sizes)
		if err := c.Send(nil, peer, tagGo); err != nil {
			return failf("Send: %w", err)
		}
		sts, err := mpi.Waitall(reqs)
		if err != nil {
			return failf("Waitall: %w", err)
		}
		for i, n := range sizes {
			ck.status("Irecv", sts[i], peer, tagData+i, n)
			p := weaks[i].Value()
			if p == nil {
				ck.errorf("phase %d: the buffer of a pending Irecv was garbage collected", phase)
				continue
			}
			ck.equal("Irecv after GC", unsafe.Slice(p, n), pattern(n, phase, i))
		}
		runtime.KeepAlive(reqs)
		checkChurn(ck, churn)
		return nil
	}
	sender := func(phase int, isend bool) error {
		if isend {
			reqs, err := isendUnreferenced(c, peer, tagData, sizes, phase)
			if err != nil {
				return err
			}
			churn := gcChurn(sizes)
			if err := c.Send(nil, peer, tagGo); err != nil {
				return failf("Send: %w", err)
			}
			if _, err := mpi.Waitall(reqs); err != nil {
				return failf("Waitall: %w", err)
			}
			checkChurn(ck, churn)
			return nil
		}
		if _, err := c.Recv(nil, peer, tagGo); err != nil {
			return failf("Recv: %w", err)
		}
		for i, n := range sizes {
			if err := c.Send(pattern(n, phase, i), peer, tagData+i); err != nil {
				return failf("Send: %w", err)
			}
		}
		return nil
	}
	// Phase 0: the odd rank's Irecvs wait through the collections.
	// Phase 1: the even rank's Isends do, and the odd rank receives late.
	var err error
	if first {
		err = sender(0, false)
	} else {
		err = receiver(0)
	}
	if err != nil {
		return err
	}
	if first {
		err = sender(1, true)
	} else {
		if _, err := c.Recv(nil, peer, tagGo); err != nil {
			return failf("Recv: %w", err)
		}
		for i, n := range sizes {
			buf := make([]byte, n)
			st, err := c.Recv(buf, peer, tagData+i)
			if err != nil {
				return failf("Recv: %w", err)
			}
			ck.status("Recv from a collected-around Isend", st, peer, tagData+i, n)
			ck.equal("Recv from a collected-around Isend", buf, pattern(n, 1, i))
		}
	}
	if err != nil {
		return err
	}
	return ck.err()
}

// postUnreferenced posts Irecvs into buffers that only the requests reference.
func postUnreferenced(c mpi.Comm, peer, tag int, sizes []int) ([]mpi.Request, []weak.Pointer[byte], error) {
	reqs := make([]mpi.Request, len(sizes))
	weaks := make([]weak.Pointer[byte], len(sizes))
	for i, n := range sizes {
		buf := make([]byte, n)
		weaks[i] = weak.Make(&buf[0])
		r, err := c.Irecv(buf, peer, tag+i)
		if err != nil {
			return nil, nil, failf("Irecv: %w", err)
		}
		reqs[i] = r
	}
	return reqs, weaks, nil
}

// isendUnreferenced starts Isends from buffers that only the requests reference.
func isendUnreferenced(c mpi.Comm, peer, tag int, sizes []int, phase int) ([]mpi.Request, error) {
	reqs := make([]mpi.Request, len(sizes))
	for i, n := range sizes {
		r, err := c.Isend(pattern(n, phase, i), peer, tag+i)
		if err != nil {
			return nil, failf("Isend: %w", err)
		}
		reqs[i] = r
	}
	return reqs, nil
}

const churnByte = 0xEE

// gcChurn collects several times while allocating buffers of the same
// sizes, which the allocator may place where a lost request buffer was.
func gcChurn(sizes []int) [][]byte {
	var keep [][]byte
	for round := range 2 {
		runtime.GC()
		for _, n := range sizes {
			for k := range 4 {
				b := bytes.Repeat([]byte{churnByte}, n)
				if k%2 == round%2 {
					keep = append(keep, b)
				}
			}
		}
	}
	runtime.GC()
	return keep
}

func checkChurn(ck *checker, churn [][]byte) {
	for _, b := range churn {
		if bytes.Count(b, []byte{churnByte}) != len(b) {
			ck.errorf("memory allocated after a request was started was overwritten (a request buffer was not kept alive)")
			return
		}
	}
}

// waitany checks mpi.Waitany: it returns the one receive whose message was
// sent (the others wait for a go-ahead), returns a completed request again
// at once, skips nil entries, then returns the two others in some order,
// and reports -1 when nothing is left.
func waitany(c mpi.Comm) error {
	const tagGo = 9
	tags := []int{10, 11, 12}
	sizes := []int{0, 100, 5000}
	peer, first, ok := pairPeer(c)
	if !ok {
		return nil
	}
	ck := newChecker(c)
	if first {
		if err := c.Send(pattern(sizes[1], tags[1]), peer, tags[1]); err != nil {
			return failf("Send: %w", err)
		}
		if _, err := c.Recv(nil, peer, tagGo); err != nil {
			return failf("Recv: %w", err)
		}
		for _, i := range []int{2, 0} {
			if err := c.Send(pattern(sizes[i], tags[i]), peer, tags[i]); err != nil {
				return failf("Send: %w", err)
			}
		}
		return ck.err()
	}
	// Entry 0 stays nil throughout; receive i sits at entry i+1.
	reqs := make([]mpi.Request, len(tags)+1)
	bufs := make([][]byte, len(tags))
	for i, tag := range tags {
		bufs[i] = make([]byte, sizes[i])
		r, err := c.Irecv(bufs[i], peer, tag)
		if err != nil {
			return failf("Irecv: %w", err)
		}
		reqs[i+1] = r
	}
	got := func(idx int, st mpi.Status) {
		i := idx - 1
		if i < 0 || i >= len(tags) {
			ck.errorf("Waitany returned index %d, want 1..%d", idx, len(tags))
			return
		}
		ck.status(fmt.Sprintf("Waitany (tag %d)", tags[i]), st, peer, tags[i], sizes[i])
		ck.equal(fmt.Sprintf("Waitany (tag %d)", tags[i]), bufs[i], pattern(sizes[i], tags[i]))
	}
	idx, st, err := mpi.Waitany(reqs)
	if err != nil {
		return failf("Waitany: %w", err)
	}
	if idx != 2 {
		ck.errorf("Waitany returned index %d before the go-ahead, want 2 (tag %d, the only message sent)", idx, tags[1])
	}
	got(idx, st)
	if again, _, err := mpi.Waitany(reqs); err != nil || again != idx {
		ck.errorf("Waitany with the completed request still in place: index %d, %v; want %d at once", again, err, idx)
	}
	if idx >= 0 && idx < len(reqs) {
		reqs[idx] = nil
	}
	if err := c.Send(nil, peer, tagGo); err != nil {
		return failf("Send: %w", err)
	}
	seen := map[int]bool{}
	for range 2 {
		idx, st, err := mpi.Waitany(reqs)
		if err != nil {
			return failf("Waitany: %w", err)
		}
		if seen[idx] || idx == 2 {
			ck.errorf("Waitany returned index %d twice", idx)
		}
		seen[idx] = true
		got(idx, st)
		if idx >= 0 && idx < len(reqs) {
			reqs[idx] = nil
		}
	}
	if idx, _, err := mpi.Waitany(reqs); idx != -1 || err != nil {
		ck.errorf("Waitany over nil entries: %d, %v; want -1, nil", idx, err)
	}
	return ck.err()
}
