package replay

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/commcost/commcost/trace"
)

// FuzzReplay: a two-rank trace the reader accepts never makes the replay
// panic; it replays or is refused with an error. The input is rank 0's
// events, 48 bytes each (op, flags, comm, peer, tag, peer2, tag2, bytes,
// bytes2, req, and a duration), written with valid blocks so the mutations
// reach the replay instead of the checksum; rank 1 only finalises.
func FuzzReplay(f *testing.F) {
	ev := func(op trace.Op, flags uint8, peer, tag int8, bytes uint32, req byte) []byte {
		d := make([]byte, 48)
		d[0], d[1], d[3], d[4], d[6], d[16] = byte(op), flags, byte(peer), byte(tag), 0xff, req
		binary.LittleEndian.PutUint32(d[8:], bytes)
		binary.LittleEndian.PutUint16(d[46:], 100)
		return d
	}
	f.Add(ev(trace.OpSend, 0, 1, 3, 64, 0))
	f.Add(bytes.Join([][]byte{ev(trace.OpIsend, 0, 0, 1, 10, 7), ev(trace.OpIrecv, trace.FlagAnySource, -2, 1, 10, 8),
		ev(trace.OpWaitall, 0, -1, 2, 0, 2), ev(trace.OpComplete, trace.FlagLocalPeer, 0, 1, 0, 8),
		ev(trace.OpComplete, trace.FlagLocalPeer, -2, -1, 0, 7), ev(trace.OpAllreduce, 0, -1, 0, 8, 0), ev(trace.OpBcast, 0, 0, 0, 8, 0)}, nil))
	p := hockney(1e-6, 1e-9)
	f.Fuzz(func(t *testing.T, data []byte) {
		le := binary.LittleEndian
		var ranks []*trace.Rank
		for r := 0; r < 2; r++ {
			var b bytes.Buffer
			w := trace.NewWriter(&b, trace.Header{Rank: r, Size: 2, Host: "h", EagerShmBytes: 4096, EagerNetBytes: -1})
			now := int64(0)
			for i := 0; r == 0 && i+48 <= len(data) && i < 48*200; i += 48 {
				d := data[i:]
				dur := int64(le.Uint16(d[46:]))
				e := trace.Event{Op: trace.Op(d[0] % 70), Flags: d[1], Comm: int32(int8(d[2])), Peer: int32(int8(d[3])), Tag: int32(le.Uint16(d[4:])),
					Peer2: int32(int8(d[6])), Tag2: int32(int8(d[7])), Bytes: int64(le.Uint32(d[8:])), Bytes2: int64(int32(le.Uint32(d[12:]))),
					Req: uint64(d[16]), T0: now, T1: now + dur}
				now += dur
				w.Write(e)
			}
			w.Write(trace.Event{Op: trace.OpFinalize, Peer: trace.PeerNone, Peer2: trace.PeerNone, T0: now, T1: now})
			w.Close(now)
			rk, err := trace.Decode(bytes.NewReader(b.Bytes()), "fuzz")
			if err != nil {
				return
			}
			ranks = append(ranks, rk)
		}
		prog, err := Lower(&trace.Trace{Dir: "fuzz", Ranks: ranks}, nil)
		if err != nil {
			return
		}
		_, _ = simulate(prog, engineConfig{pricer: p, eager: 64, compute: 1})
	})
}
