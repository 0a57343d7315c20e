package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/results"
)

// TestCHeaderAgrees checks that cctrace.h, which the library is compiled
// from, defines every constant of the format with Go's value.
func TestCHeaderAgrees(t *testing.T) {
	src, err := os.ReadFile("pmpi/cctrace.h")
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^#define (CCT_\w+) \(?(-?(?:0x)?[0-9a-fA-F]+)u?\)?`).FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.ParseInt(m[2], 0, 64)
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		c[m[1]] = v
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+(CCT_\w+) = (\d+),?`).FindAllStringSubmatch(string(src), -1) {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		c[m[1]] = v
	}
	want := map[string]int64{
		"CCT_VERSION": Version, "CCT_HEADER_BYTES": HeaderBytes, "CCT_HEADER_SUM_OFFSET": HeaderSumOffset, "CCT_EVENT_BYTES": EventBytes,
		"CCT_BLOCK_MAGIC": BlockMagic, "CCT_BLOCK_HEADER_BYTES": BlockHeaderBytes, "CCT_BLOCK_EVENTS": BlockEvents,
		"CCT_HOST_BYTES": HostBytes, "CCT_CLOCK_NS": ClockNS, "CCT_CLOCK_TSC": ClockTSC,
		"CCT_PEER_NONE": PeerNone, "CCT_PEER_ANY": PeerAny, "CCT_PEER_NULL": PeerNull,
		"CCT_F_ANY_SOURCE": FlagAnySource, "CCT_F_ANY_TAG": FlagAnyTag, "CCT_F_IN_PLACE": FlagInPlace,
		"CCT_F_LOCAL_PEER": FlagLocalPeer, "CCT_F_TRUE": FlagTrue, "CCT_OP_LIMIT": int64(opLimit),
	}
	for o := Op(1); o < opLimit; o++ {
		want["CCT_"+cName(o)] = int64(o)
	}
	for name, v := range want {
		got, ok := c[name]
		if !ok {
			t.Errorf("cctrace.h does not define %s (Go: %d)", name, v)
		} else if got != v {
			t.Errorf("%s = %d in cctrace.h, %d in Go", name, got, v)
		}
	}
	if !strings.Contains(string(src), `#define CCT_MAGIC "`+Magic+`"`) {
		t.Errorf("cctrace.h's CCT_MAGIC is not %q", Magic)
	}
}

// cName is the C enumerator's name of an op: Isend -> ISEND,
// Reduce_scatter_block -> REDUCE_SCATTER_BLOCK, (comm def) -> COMM_DEF.
func cName(o Op) string {
	s := strings.Trim(o.String(), "()")
	switch o {
	case OpFlush:
		s = "flush"
	case OpComplete:
		s = "complete"
	case OpPollRun:
		s = "poll run"
	}
	return strings.ToUpper(strings.ReplaceAll(s, " ", "_"))
}

// sample is a small valid rank file: rank 1 of 3, a send, a receive, a
// wait with its completion, an end.
func sample(t testing.TB, rank int) []byte {
	var b bytes.Buffer
	w := NewWriter(&b, Header{Rank: rank, Size: 3, Host: "h", EagerShmBytes: 4096, EagerNetBytes: -1})
	w.Write(Event{Op: OpSend, Peer: 2, Tag: 7, Peer2: PeerNone, Bytes: 800, T0: 100, T1: 200})
	w.Write(Event{Op: OpIrecv, Peer: PeerAny, Flags: FlagAnySource, Tag: 3, Peer2: PeerNone, Bytes: 40, Req: 0xabc, T0: 300, T1: 310})
	w.Write(Event{Op: OpWait, Peer: PeerNone, Peer2: PeerNone, Req: 1, T0: 320, T1: 900})
	w.Write(Event{Op: OpComplete, Flags: FlagLocalPeer, Peer: 0, Tag: 3, Bytes2: 40, Req: 0xabc, T0: 900, T1: 900})
	w.Write(Event{Op: OpFinalize, Peer: PeerNone, Peer2: PeerNone, T0: 1000, T1: 1000})
	if err := w.Close(1000); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	rk, err := Decode(bytes.NewReader(sample(t, 1)), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if rk.Header.Rank != 1 || rk.Header.Size != 3 || rk.Header.Host != "h" || rk.Header.EagerShmBytes != 4096 || rk.Header.NSPerTick != 1 {
		t.Errorf("header %+v", rk.Header)
	}
	if len(rk.Comms) != 2 || len(rk.Comms[0].Members) != 3 || rk.Comms[1].Members[0] != 1 {
		t.Errorf("comms %+v", rk.Comms)
	}
	var calls []string
	for _, e := range rk.Events {
		if e.Op.Call() {
			calls = append(calls, e.Op.String())
		}
	}
	if got := strings.Join(calls, " "); got != "Send Irecv Wait Finalize" {
		t.Errorf("calls %q", got)
	}
	send := rk.Events[len(rk.Events)-6]
	if send.Op != OpSend || send.Bytes != 800 || send.Peer != 2 || send.T0 != 100 || send.T1 != 200 {
		t.Errorf("send %+v", send)
	}
}

// TestRefusals: each damaged or foreign file is refused with its name, the
// offset and the kind of damage.
func TestRefusals(t *testing.T) {
	good := sample(t, 1)
	le := binary.LittleEndian
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	// offsets of the first block's events: the header, the block header
	firstEvent := HeaderBytes + BlockHeaderBytes
	resum := resumBlock
	events := (len(good) - HeaderBytes - BlockHeaderBytes) / EventBytes
	// flip alters one bit of the header, leaving its checksum as written
	flip := func(off int, bit uint) []byte {
		return mod(func(b []byte) []byte { b[off] ^= 1 << bit; return b })
	}
	const altered = "offset 0: the 128-byte header fails its checksum"
	for _, tc := range []struct {
		name, kind, want string
		data             []byte
	}{
		{"empty", "foreign", "not a commcost trace", nil},
		{"json", "foreign", "not a commcost trace", []byte(`{"schema":1,"bench":"pingpong"}`)},
		{"elf", "foreign", "not a commcost trace", []byte("\x7fELF\x02\x01\x01\x00rest of a program")},
		{"cut header", "torn", "inside its 128-byte header", good[:60]},
		{"header only", "torn", "without its end record", good[:HeaderBytes]},
		{"cut block header", "torn", "inside a block header", good[:HeaderBytes+7]},
		{"cut events", "torn", "the file ends after 3 of them", good[:firstEvent+3*EventBytes+10]},
		{"newer version", "newer", "version 4 is newer", mod(func(b []byte) []byte { le.PutUint16(b[8:], Version+1); return b })},
		{"version 0", "corrupt", "versions start at 1", mod(func(b []byte) []byte { le.PutUint16(b[8:], 0); return b })},
		// Each field of the header altered by one bit fails its checksum.
		{"altered header bytes", "corrupt", altered, flip(10, 0)},
		{"altered event bytes", "corrupt", altered, flip(12, 1)},
		{"altered clock", "corrupt", altered, flip(14, 0)},
		{"altered rank", "corrupt", altered, flip(16, 0)},
		{"altered world size", "corrupt", altered, flip(20, 2)},
		{"altered world size's sign", "corrupt", altered, flip(23, 7)},
		{"altered pid", "corrupt", altered, flip(24, 0)},
		{"altered checksum", "corrupt", altered, flip(HeaderSumOffset, 0)},
		{"altered origin", "corrupt", altered, flip(32, 0)},
		{"altered monotonic origin", "corrupt", altered, flip(40, 3)},
		{"altered wall-clock origin", "corrupt", altered, flip(48, 0)},
		{"altered MPI_Init", "corrupt", altered, flip(56, 4)},
		{"altered eager limit", "corrupt", altered, flip(65, 0)},
		{"altered eager limit between hosts", "corrupt", altered, flip(72, 0)},
		{"altered host", "corrupt", altered, flip(80, 0)},
		{"altered host padding", "corrupt", altered, flip(127, 0)},
		{"version altered to 1", "older", "offset 8: trace format version 1 has no header checksum", mod(func(b []byte) []byte { le.PutUint16(b[8:], 1); return b })},
		// With the checksum recomputed, the fields' bounds still hold.
		{"event size", "corrupt", "32-byte events", mod(func(b []byte) []byte { le.PutUint16(b[12:], 32); return resumHeader(b) })},
		{"rank beyond size", "corrupt", "rank 5 of 3", mod(func(b []byte) []byte { le.PutUint32(b[16:], 5); return resumHeader(b) })},
		{"pid 0", "corrupt", "offset 24: pid 0: a process id is positive", mod(func(b []byte) []byte { le.PutUint32(b[24:], 0); return resumHeader(b) })},
		{"negative pid", "corrupt", "offset 24: pid -3: a process id is positive", mod(func(b []byte) []byte { le.PutUint32(b[24:], uint32(0xfffffffd)); return resumHeader(b) })},
		{"negative origin", "corrupt", "origin at -5 clock units", mod(func(b []byte) []byte { le.PutUint64(b[32:], uint64(0xfffffffffffffffb)); return resumHeader(b) })},
		{"monotonic origin apart from the clock's", "corrupt", "the library reads both at once", mod(func(b []byte) []byte { le.PutUint64(b[40:], le.Uint64(b[32:])+5e9); return resumHeader(b) })},
		{"wall-clock origin before 1970", "corrupt", "a date after 1970", mod(func(b []byte) []byte { le.PutUint64(b[48:], uint64(0xffffffffffffff00)); return resumHeader(b) })},
		{"negative MPI_Init", "corrupt", "MPI_Init took -7 clock units", mod(func(b []byte) []byte { le.PutUint64(b[56:], uint64(0xfffffffffffffff9)); return resumHeader(b) })},
		{"MPI_Init beyond years", "corrupt", "offset 56: MPI_Init took 9.223e+18 ns", mod(func(b []byte) []byte { le.PutUint64(b[56:], 1<<63-1); return resumHeader(b) })},
		{"eager limit beyond any MPI's", "corrupt", "offset 64: eager limit within a host 4611686018427387904 bytes: want -1 (unknown) or 0 to 4294967296", mod(func(b []byte) []byte { le.PutUint64(b[64:], 1<<62); return resumHeader(b) })},
		{"eager limit below unknown", "corrupt", "offset 64: eager limit within a host -7 bytes", mod(func(b []byte) []byte { le.PutUint64(b[64:], uint64(0xfffffffffffffff9)); return resumHeader(b) })},
		{"empty host name", "corrupt", `offset 80: host name "": a host name is 1 to 47 bytes`, mod(func(b []byte) []byte { clear(b[80:128]); return resumHeader(b) })},
		{"host name without its NUL", "corrupt", "offset 80: host name", mod(func(b []byte) []byte { copy(b[80:128], strings.Repeat("h", 48)); return resumHeader(b) })},
		{"NUL inside the host name", "corrupt", `offset 80: host name "a\x00b"`, mod(func(b []byte) []byte { clear(b[80:128]); copy(b[80:], "a\x00b"); return resumHeader(b) })},
		{"eager limit between hosts beyond any MPI's", "corrupt", "offset 72: eager limit between hosts 4294967297 bytes", mod(func(b []byte) []byte { le.PutUint64(b[72:], 1<<32+1); return resumHeader(b) })},
		{"version altered to 2", "older", "offset 8: trace format version 2 has a block checksum that two equal bit flips 8 events apart cancel", mod(func(b []byte) []byte { le.PutUint16(b[8:], 2); return resumHeader(b) })},
		{"checksum", "corrupt", "offset 128: the block at offset 128 fails its checksum", mod(func(b []byte) []byte { b[firstEvent+24*EventBytes/8] ^= 1; return b })},
		{"checksum's high bits", "corrupt", "offset 140: the block at offset 128 has 0x00000100 in its checksum's high 32 bits", mod(func(b []byte) []byte { b[HeaderBytes+13] ^= 1; return b })},
		{"block checksum altered", "corrupt", "offset 128: the block at offset 128 fails its checksum", mod(func(b []byte) []byte { b[HeaderBytes+8] ^= 0x80; return b })},
		{"trailing data", "corrupt", "data follows the end record", append(append([]byte(nil), good...), 0)},
		{"unknown op", "corrupt", "unknown operation 200", mod(func(b []byte) []byte { b[firstEvent+6*EventBytes] = 200; return resum(b) })},
		{"peer beyond world", "corrupt", "peer 9 in a world of 3", mod(func(b []byte) []byte {
			le.PutUint32(b[firstEvent+6*EventBytes+8:], 9)
			return resum(b)
		})},
		{"communicator beyond the events", "corrupt", "communicator 0 of 2147483647 members, and", mod(func(b []byte) []byte {
			// A world of 2^31-1 whose definition would allocate them all.
			le.PutUint32(b[20:], 1<<31-1)
			le.PutUint32(b[firstEvent+8:], 1<<31-1)
			return resum(resumHeader(b))
		})},
		{"end count", "corrupt", "counts 99 events", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+(events-1)*EventBytes+24:], 99)
			return resum(b)
		})},
		{"negative send tag", "corrupt", "Send with tag -5: a send's tag is at least 0", mod(func(b []byte) []byte {
			le.PutUint32(b[firstEvent+6*EventBytes+12:], uint32(0xfffffffb))
			return resum(b)
		})},
		{"receive tag below MPI_ANY_TAG", "corrupt", "Irecv with tag -2: a receive's tag is at least 0, or MPI_ANY_TAG (-1)", mod(func(b []byte) []byte {
			le.PutUint32(b[firstEvent+7*EventBytes+12:], uint32(0xfffffffe))
			return resum(b)
		})},
		{"send beyond one buffer", "corrupt", "offset 528 (event 6): Send of 137438953409 bytes sent (the field at offset 24 of the event): one buffer of an MPI call holds at most 137438953408 bytes (2147483647 elements of at most 64 bytes)", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+6*EventBytes+24:], MaxCallBytes+1)
			return resum(b)
		})},
		{"send of 2^40 bytes", "corrupt", "offset 528 (event 6): Send of 1099511627776 bytes sent (the field at offset 24 of the event): one buffer of an MPI call holds at most 137438953408 bytes", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+6*EventBytes+24:], 1<<40)
			return resum(b)
		})},
		{"allreduce of 2^40 bytes", "corrupt", "offset 528 (event 6): Allreduce of 1099511627776 bytes sent (the field at offset 24 of the event): one buffer of an MPI call holds at most 137438953408 bytes", mod(func(b []byte) []byte {
			b[firstEvent+6*EventBytes] = byte(OpAllreduce)
			le.PutUint64(b[firstEvent+6*EventBytes+24:], 1<<40)
			le.PutUint64(b[firstEvent+6*EventBytes+32:], 1<<40)
			return resum(b)
		})},
		{"gather of 2^40 bytes received", "corrupt", "offset 528 (event 6): Gather of 1099511627776 bytes received (the field at offset 32 of the event): one buffer of an MPI call holds at most 137438953408 bytes", mod(func(b []byte) []byte {
			b[firstEvent+6*EventBytes] = byte(OpGather)
			le.PutUint64(b[firstEvent+6*EventBytes+32:], 1<<40)
			return resum(b)
		})},
		{"send of 1e18 bytes received", "corrupt", "offset 720 (event 9): (complete) of 1000000000000000000 bytes received (the field at offset 32 of the event): a receive's status reports at most 2147483647 bytes", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+9*EventBytes+32:], 1e18)
			return resum(b)
		})},
		// Flags and reserved bytes the library never sets.
		{"undefined flags", "corrupt", "offset 528 (event 6): Send with flags 0xff (offset 1 of the event): bits 0xe0 are undefined; the library sets only 0x1f", mod(func(b []byte) []byte {
			b[firstEvent+6*EventBytes+1] = 0xff
			return resum(b)
		})},
		{"one undefined flag on a completion", "corrupt", "offset 720 (event 9): (complete) with flags 0x48 (offset 1 of the event): bits 0x40 are undefined", mod(func(b []byte) []byte {
			b[firstEvent+9*EventBytes+1] |= 0x40
			return resum(b)
		})},
		{"reserved bytes", "corrupt", "offset 528 (event 6): Send with 0x0100 in its reserved bytes (offset 2 of the event), which the library writes 0", mod(func(b []byte) []byte {
			b[firstEvent+6*EventBytes+3] = 1
			return resum(b)
		})},
		{"reserved bytes of a definition", "corrupt", "offset 144 (event 0): (comm def) with 0x0001 in its reserved bytes", mod(func(b []byte) []byte {
			b[firstEvent+2] = 1
			return resum(b)
		})},
		{"flags of the end record", "corrupt", "(event 11): (end) with flags 0x80", mod(func(b []byte) []byte {
			b[firstEvent+(events-1)*EventBytes+1] = 0x80
			return resum(b)
		})},
		// Byte counts the op contradicts (fieldFault), each as the
		// library never writes it.
		{"send that receives", "corrupt", "offset 528 (event 6): Send with 16 bytes received: a send receives nothing", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+6*EventBytes+32:], 16)
			return resum(b)
		})},
		{"posted receive that received", "corrupt", "offset 592 (event 7): Irecv with 1048576 bytes received: a posted receive's size is its completion's", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+7*EventBytes+32:], 1<<20)
			return resum(b)
		})},
		{"wait that sends", "corrupt", "(event 8): Wait with 1048576 bytes sent, 0 received: it moves no data", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+8*EventBytes+24:], 1<<20)
			return resum(b)
		})},
		{"completion that sends", "corrupt", "(event 9): (complete) with 1048576 bytes sent: it sends nothing", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+9*EventBytes+24:], 1<<20)
			return resum(b)
		})},
		{"finalize that receives", "corrupt", "(event 10): Finalize with 0 bytes sent, 8 received: it moves no data", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+10*EventBytes+32:], 8)
			return resum(b)
		})},
		{"end that receives", "corrupt", "(event 11): (end) with 4 bytes received", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+11*EventBytes+32:], 4)
			return resum(b)
		})},
		{"definition that sends", "corrupt", "(event 0): (comm def) with 2 bytes sent, 0 received: it moves no data", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+24:], 2)
			return resum(b)
		})},
		{"call beyond years", "corrupt", "ns after the start: a trace spans at most 1e+17 ns (about 3 years)", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+6*EventBytes+56:], 1e18)
			return resum(b)
		})},
		{"time backwards", "corrupt", "ends (5 ns) before it starts", mod(func(b []byte) []byte {
			le.PutUint64(b[firstEvent+6*EventBytes+56:], 5)
			return resum(b)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(tc.data), "dir/rank-1.cct")
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FormatError", err)
			}
			if fe.Kind != tc.kind || !strings.Contains(err.Error(), tc.want) ||
				!strings.HasPrefix(err.Error(), "dir/rank-1.cct: offset ") || !errors.Is(err, ErrFormat) {
				t.Errorf("got %q (kind %s), want kind %s and %q after the name and offset", err, fe.Kind, tc.kind, tc.want)
			}
		})
	}
}

// resumBlock recomputes the first block's checksum after a test altered
// an event, so that the reader's checks of the event itself are reached.
func resumBlock(b []byte) []byte {
	le := binary.LittleEndian
	n := int(le.Uint32(b[HeaderBytes+4:]))
	first := HeaderBytes + BlockHeaderBytes
	le.PutUint64(b[HeaderBytes+8:], uint64(BlockSum(b[first:first+n*EventBytes])))
	return b
}

// TestFieldRules: for every op, an event as the library writes it is
// read, and each byte count the op contradicts is refused with the file,
// the event's offset and the rule (fieldFault).
func TestFieldRules(t *testing.T) {
	const (
		t0 = 100
		t1 = 200
	)
	for _, tc := range []struct {
		name string
		ev   Event
		want string  // "" when the event is read
		more []Event // written after ev
		at   int     // the refused event, after the 5 definitions: 0 for ev
	}{
		{"Send as written", Event{Op: OpSend, Peer: 1, Bytes: 800}, "", nil, 0},
		{"Send that receives", Event{Op: OpSend, Peer: 1, Bytes: 800, Bytes2: 8}, "Send with 8 bytes received: a send receives nothing", nil, 0},
		{"Isend that receives", Event{Op: OpIsend, Peer: 1, Bytes: 800, Bytes2: 1 << 20, Req: 5}, "Isend with 1048576 bytes received", nil, 0},
		{"Ssend that receives", Event{Op: OpSsend, Peer: 1, Bytes2: 1}, "Ssend with 1 bytes received", nil, 0},
		{"Bsend that receives", Event{Op: OpBsend, Peer: 1, Bytes2: 1}, "Bsend with 1 bytes received", nil, 0},
		{"Rsend that receives", Event{Op: OpRsend, Peer: 1, Bytes2: 1}, "Rsend with 1 bytes received", nil, 0},
		{"Issend that receives", Event{Op: OpIssend, Peer: 1, Bytes2: 1}, "Issend with 1 bytes received", nil, 0},
		{"Ibsend that receives", Event{Op: OpIbsend, Peer: 1, Bytes2: 1}, "Ibsend with 1 bytes received", nil, 0},
		{"Irsend that receives", Event{Op: OpIrsend, Peer: 1, Bytes2: 1}, "Irsend with 1 bytes received", nil, 0},
		{"Send_init that receives", Event{Op: OpSendInit, Peer: 1, Bytes2: 1}, "Send_init with 1 bytes received", nil, 0},
		{"Ssend_init that receives", Event{Op: OpSsendInit, Peer: 1, Bytes2: 1}, "Ssend_init with 1 bytes received", nil, 0},
		{"Recv as written", Event{Op: OpRecv, Peer: 1, Bytes: 1024, Bytes2: 800}, "", nil, 0},
		{"Recv of an undefined count", Event{Op: OpRecv, Peer: 1, Bytes: 1024, Bytes2: -1}, "", nil, 0},
		{"Recv beyond its buffer", Event{Op: OpRecv, Peer: 1, Bytes: 800, Bytes2: 800 + 1<<20}, "Recv received 1049376 bytes into a buffer of 800", nil, 0},
		{"Sendrecv_replace beyond its buffer", Event{Op: OpSendrecvReplace, Peer: 1, Peer2: 1, Bytes: 8, Bytes2: 16}, "Sendrecv_replace received 16 bytes into a buffer of 8", nil, 0},
		{"Sendrecv as written", Event{Op: OpSendrecv, Peer: 1, Peer2: 1, Bytes: 8, Bytes2: 16}, "", nil, 0},
		{"Irecv as written", Event{Op: OpIrecv, Peer: 1, Bytes: 1024, Req: 7}, "", nil, 0},
		{"Irecv that received", Event{Op: OpIrecv, Peer: 1, Bytes: 1024, Bytes2: 4, Req: 7}, "Irecv with 4 bytes received: a posted receive's size is its completion's", nil, 0},
		{"Recv_init that received", Event{Op: OpRecvInit, Peer: 1, Bytes: 1024, Bytes2: 4, Req: 7}, "Recv_init with 4 bytes received", nil, 0},
		{"Probe as written", Event{Op: OpProbe, Peer: 1, Flags: FlagTrue, Bytes2: 64}, "", nil, 0},
		{"Probe that sends", Event{Op: OpProbe, Peer: 1, Flags: FlagTrue, Bytes: 1 << 20, Bytes2: 64}, "Probe with 1048576 bytes sent: it sends nothing", nil, 0},
		{"Iprobe that found", Event{Op: OpIprobe, Peer: 1, Flags: FlagTrue, Bytes2: 64}, "", nil, 0},
		{"Iprobe that found nothing", Event{Op: OpIprobe, Peer: 1, Bytes: 1}, "", nil, 0},
		{"Iprobe that found and sends", Event{Op: OpIprobe, Peer: 1, Flags: FlagTrue, Bytes: 1, Bytes2: 64}, "Iprobe with 1 bytes sent: the library records 0 there", nil, 0},
		{"Iprobe that found nothing but a size", Event{Op: OpIprobe, Peer: 1, Bytes: 1, Bytes2: 64}, "Iprobe with 64 bytes received: only a probe that found a message", nil, 0},
		{"Test that found", Event{Op: OpTest, Comm: -1, Tag: 1, Flags: FlagTrue, Req: 1}, "", nil, 0},
		{"Test that found nothing", Event{Op: OpTest, Comm: -1, Tag: 1, Bytes: 1}, "", nil, 0},
		{"Test that found nothing, 0 polls", Event{Op: OpTest, Comm: -1, Tag: 1}, "Test with 0 bytes sent: the library records 1 there", nil, 0},
		{"Testall that receives", Event{Op: OpTestall, Comm: -1, Tag: 2, Flags: FlagTrue, Bytes2: 8}, "Testall with 8 bytes received", nil, 0},
		{"Testany that sends", Event{Op: OpTestany, Comm: -1, Tag: 2, Flags: FlagTrue, Bytes: 8}, "Testany with 8 bytes sent", nil, 0},
		{"Testsome that sends", Event{Op: OpTestsome, Comm: -1, Tag: 2, Flags: FlagTrue, Bytes: 8}, "Testsome with 8 bytes sent", nil, 0},
		{"Wait that receives", Event{Op: OpWait, Bytes2: 8}, "Wait with 0 bytes sent, 8 received: it moves no data", nil, 0},
		{"Waitall that sends", Event{Op: OpWaitall, Comm: -1, Bytes: 8}, "Waitall with 8 bytes sent, 0 received", nil, 0},
		{"Start that sends", Event{Op: OpStart, Bytes: 8, Req: 3}, "Start with 8 bytes sent, 0 received", nil, 0},
		{"Barrier that sends", Event{Op: OpBarrier, Bytes: 8}, "Barrier with 8 bytes sent, 0 received", nil, 0},
		{"Comm_dup that receives", Event{Op: OpCommDup, Peer2: PeerNone, Bytes2: 8}, "Comm_dup with 0 bytes sent, 8 received", nil, 0},
		{"Bcast as written", Event{Op: OpBcast, Peer: 0, Bytes: 12, Bytes2: 12}, "", nil, 0},
		{"Bcast of two sizes", Event{Op: OpBcast, Peer: 0, Bytes: 12, Bytes2: 12 + 1<<20}, "Bcast of 12 bytes sent, 1048588 received: its one buffer's size is both", nil, 0},
		{"Allreduce of two sizes", Event{Op: OpAllreduce, Bytes: 1<<20 + 8, Bytes2: 8}, "Allreduce of 1048584 bytes sent, 8 received", nil, 0},
		{"Gather as written", Event{Op: OpGather, Peer: 0, Bytes: 8, Bytes2: 16}, "", nil, 0},
		{"poll run as written", Event{Op: OpPollRun, Comm: -1, Bytes: 3, Peer: 3}, "", nil, 0},
		{"poll run of no calls", Event{Op: OpPollRun, Comm: -1, Peer: 3}, "(polls that found nothing) with 0 calls and 0 bytes received", nil, 0},
		{"poll run of 2^40 calls", Event{Op: OpPollRun, Comm: -1, Bytes: 1 << 40, Peer: 3}, "(polls that found nothing) with 1099511627776 calls, by kind 3, 0, 0 and 0: the library counts each call once by its kind", nil, 0},
		{"poll run of a negative kind", Event{Op: OpPollRun, Comm: -1, Bytes: 1, Peer: 2, Tag2: -1}, "with 1 calls, by kind 2, 0, 0 and -1", nil, 0},
		{"poll run by every kind", Event{Op: OpPollRun, Comm: -1, Bytes: 10, Peer: 1, Tag: 2, Peer2: 3, Tag2: 4}, "", nil, 0},
		{"flush that receives", Event{Op: OpFlush, Bytes2: 1}, "(trace flush) with 0 bytes sent, 1 received", nil, 0},
		// completed receives name their source
		{"Recv from MPI_ANY_SOURCE", Event{Op: OpRecv, Peer: PeerAny, Flags: FlagAnySource, Bytes: 8, Bytes2: 8}, "Recv completed from MPI_ANY_SOURCE (-2, peer, the field at offset 8): a completed receive records its status's actual source", nil, 0},
		{"Recv from MPI_PROC_NULL", Event{Op: OpRecv, Peer: PeerNull, Bytes: 8}, "", nil, 0},
		{"Sendrecv from MPI_ANY_SOURCE", Event{Op: OpSendrecv, Peer: 1, Peer2: PeerAny, Flags: FlagAnySource, Bytes: 8, Bytes2: 8}, "Sendrecv completed from MPI_ANY_SOURCE (-2, peer2, the field at offset 16)", nil, 0},
		{"Probe from MPI_ANY_SOURCE", Event{Op: OpProbe, Peer: PeerAny, Flags: FlagTrue | FlagAnySource, Bytes2: 8}, "Probe completed from MPI_ANY_SOURCE", nil, 0},
		{"Iprobe that found, from MPI_ANY_SOURCE", Event{Op: OpIprobe, Peer: PeerAny, Flags: FlagTrue | FlagAnySource, Bytes2: 8}, "Iprobe completed from MPI_ANY_SOURCE", nil, 0},
		{"Iprobe of MPI_ANY_SOURCE that found nothing", Event{Op: OpIprobe, Peer: PeerAny, Flags: FlagAnySource, Bytes: 1}, "", nil, 0},
		{"Irecv from MPI_ANY_SOURCE", Event{Op: OpIrecv, Peer: PeerAny, Flags: FlagAnySource, Bytes: 8, Req: 0xabc}, "", nil, 0},
		// requests and their completions, as cctrace.c writes them
		{"Wait of MPI_REQUEST_NULL", Event{Op: OpWait}, "", nil, 0},
		{"Wait with its completion", Event{Op: OpWait, Req: 1}, "", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}}, 0},
		{"Wait with a handle for its count", Event{Op: OpWait, Req: 0xdead}, "Wait with req 57005 and tag 0 (the fields at offsets 40 and 12): req counts the requests it completed; the library records 1, or 0 on MPI_REQUEST_NULL", []Event{{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xdead}}, 0},
		{"Wait without its completion", Event{Op: OpWait, Req: 1}, "Wait with req 1 (the field at offset 40) is followed by 1 fewer completions", nil, 0},
		{"Wait with two completions", Event{Op: OpWait, Req: 1}, "a completion of request 0xabc where no Wait or Test call completed one more", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}, Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}}, 2},
		{"completion after a Send", Event{Op: OpSend, Peer: 1, Bytes: 8}, "a completion of request 0xabc where no Wait or Test call", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}}, 1},
		{"Waitall with null entries", Event{Op: OpWaitall, Comm: -1, Tag: 3, Req: 3, Flags: FlagTrue}, "", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}, {Op: OpFlush}, Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}}, 0},
		{"Waitall beyond its requests", Event{Op: OpWaitall, Comm: -1, Tag: 1, Req: 1, Flags: FlagTrue}, "where no Wait or Test call completed one more", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}, Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}}, 2},
		{"Waitall counting other than its requests", Event{Op: OpWaitall, Comm: -1, Tag: 2, Req: 5, Flags: FlagTrue}, "Waitall with req 5 and tag 2", nil, 0},
		{"Test that found MPI_REQUEST_NULL", Event{Op: OpTest, Comm: -1, Tag: 1, Flags: FlagTrue, Req: 1}, "", nil, 0},
		{"Test that found two", Event{Op: OpTest, Comm: -1, Tag: 1, Flags: FlagTrue, Req: 2}, "Test with req 2 and tag 1", nil, 0},
		{"Testall that found nothing but counts", Event{Op: OpTestall, Comm: -1, Tag: 2, Bytes: 1, Req: 2}, "Testall with req 2 and tag 2", nil, 0},
		{"Waitany as written", Event{Op: OpWaitany, Comm: -1, Tag: 4, Flags: FlagTrue, Req: 1}, "", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}}, 0},
		{"Waitany of only null requests", Event{Op: OpWaitany, Comm: -1, Tag: 4}, "", nil, 0},
		{"Waitsome as written", Event{Op: OpWaitsome, Comm: -1, Tag: 4, Flags: FlagTrue, Req: 2}, "", []Event{Event{Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabc}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 0xabd}}, 0},
		{"Waitsome beyond its requests", Event{Op: OpWaitsome, Comm: -1, Tag: 2, Flags: FlagTrue, Req: 3}, "Waitsome with req 3 and tag 2", nil, 0},
		{"Testsome that found nothing", Event{Op: OpTestsome, Comm: -1, Tag: 2, Bytes: 1}, "", nil, 0},
		{"completion of a request no traced call made", Event{Op: OpWait, Req: 1}, "", []Event{{Op: OpComplete, Flags: FlagLocalPeer, Req: 0x5eed}}, 0},
		{"Isends sharing a completed request", Event{Op: OpIsend, Peer: 1, Bytes: 8, Req: 7}, "", []Event{{Op: OpIsend, Peer: 1, Bytes: 8, Req: 7}}, 0},
		{"Irecvs from MPI_PROC_NULL sharing a request", Event{Op: OpIrecv, Peer: PeerNull, Bytes: 8, Req: 7}, "", []Event{{Op: OpIrecv, Peer: PeerNull, Bytes: 8, Req: 7}}, 0},
		{"Irecv on a pending receive's handle", Event{Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}, "Irecv on request 0x7 (req, the field at offset 40) while a receive on that handle is pending: a pending receive's request is its own", []Event{{Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}}, 1},
		{"Irecv on a pending send's handle", Event{Op: OpIsend, Peer: 1, Bytes: 8, Req: 7}, "Irecv on request 0x7 (req, the field at offset 40) while a send on that handle is pending", []Event{{Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}}, 1},
		{"Irecv on a completed receive's handle", Event{Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}, "", []Event{{Op: OpWait, Req: 1}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 7}, {Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}}, 0},
		{"Irecv on a freed receive's handle", Event{Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}, "", []Event{{Op: OpRequestFree, Req: 7}, {Op: OpIrecv, Peer: 1, Bytes: 8, Req: 7}}, 0},
		{"Start of a persistent receive on a pending handle", Event{Op: OpRecvInit, Peer: 1, Bytes: 8, Req: 7}, "Start on request 0x7 (req, the field at offset 40) while a receive on that handle is pending", []Event{{Op: OpStart, Req: 7}, {Op: OpStart, Req: 7}}, 2},
		{"persistent_send_started_while_active", Event{Op: OpSendInit, Peer: 1, Bytes: 8, Req: 5}, "Start on request 0x5 (req, the field at offset 40) while the persistent send's previous Start is still active: MPI_Start takes an inactive request", []Event{{Op: OpStart, Req: 5}, {Op: OpStart, Req: 5}}, 2},
		{"persistent_ssend_started_while_active", Event{Op: OpSsendInit, Peer: 1, Bytes: 8, Req: 5}, "while the persistent send's previous Start is still active", []Event{{Op: OpStart, Req: 5}, {Op: OpWait, Req: 1}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 5}, {Op: OpStart, Req: 5}, {Op: OpStart, Req: 5}}, 5},
		{"persistent send started twice in turn", Event{Op: OpSendInit, Peer: 1, Bytes: 8, Req: 5}, "", []Event{{Op: OpStart, Req: 5}, {Op: OpWait, Req: 1}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 5}, {Op: OpStart, Req: 5}, {Op: OpWait, Req: 1}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 5}}, 0},
		{"persistent receive started twice in turn", Event{Op: OpRecvInit, Peer: 1, Bytes: 8, Req: 7}, "", []Event{{Op: OpStart, Req: 7}, {Op: OpWait, Req: 1}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 7}, {Op: OpStart, Req: 7}, {Op: OpWait, Req: 1}, {Op: OpComplete, Flags: FlagLocalPeer, Req: 7}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b, Header{Rank: 0, Size: 2, Host: "h", EagerShmBytes: -1, EagerNetBytes: -1})
			e := tc.ev
			if e.Peer == 0 && e.Op != OpBcast && e.Op != OpGather {
				e.Peer = PeerNone
			}
			if e.Peer2 == 0 && e.Op != OpPollRun { // a poll run's counts are 0 or more
				e.Peer2 = PeerNone
			}
			e.T0, e.T1 = t0, t1
			w.Write(e)
			for k, m := range tc.more {
				if m.Op != OpComplete && m.Op != OpFlush {
					if m.Peer == 0 {
						m.Peer = PeerNone
					}
					m.Peer2 = PeerNone
				}
				m.T0, m.T1 = t1+int64(k), t1+int64(k)
				w.Write(m)
			}
			w.Write(Event{Op: OpFinalize, Peer: PeerNone, Peer2: PeerNone, T0: 1000, T1: 1000})
			if err := w.Close(1000); err != nil {
				t.Fatal(err)
			}
			_, err := Decode(bytes.NewReader(b.Bytes()), "dir/rank-0.cct")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			// the event follows the 5 definitions of a world of 2 and self
			at := fmt.Sprintf("dir/rank-0.cct: offset %d (event %d): ", EventOffset(5+tc.at), 5+tc.at)
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Kind != "corrupt" || !strings.HasPrefix(err.Error(), at) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q after %q", err, tc.want, at)
			}
		})
	}
}

// TestByteBounds: for every op, bytes sent and bytes received beyond
// what one buffer (or a status) holds are refused at the event, naming
// the field, whatever else the op's rules say about the count.
func TestByteBounds(t *testing.T) {
	for o := Op(1); o < opLimit; o++ {
		if o == OpEnd { // its count is the file's events (TestRefusals)
			continue
		}
		for _, f := range []struct {
			field string
			ev    Event
			want  string
		}{
			{"bytes sent", Event{Op: o, Bytes: MaxCallBytes + 1}, "bytes sent"},
			{"bytes sent 2^40", Event{Op: o, Bytes: 1 << 40}, "bytes sent"},
			{"bytes received", Event{Op: o, Bytes2: MaxCallBytes + 1}, "received"},
		} {
			e := f.ev
			e.Peer, e.Peer2, e.T0, e.T1 = PeerNone, PeerNone, 100, 200
			want := f.want
			if o == OpPollRun && f.field != "bytes received" {
				want = "calls, by kind"
			}
			var b bytes.Buffer
			w := NewWriter(&b, Header{Rank: 0, Size: 2, Host: "h", EagerShmBytes: -1, EagerNetBytes: -1})
			w.Write(e)
			w.Write(Event{Op: OpFinalize, Peer: PeerNone, Peer2: PeerNone, T0: 1000, T1: 1000})
			if err := w.Close(1000); err != nil {
				t.Fatal(err)
			}
			_, err := Decode(bytes.NewReader(b.Bytes()), "dir/rank-0.cct")
			at := fmt.Sprintf("dir/rank-0.cct: offset %d (event 5): %s ", EventOffset(5), o)
			if err == nil || !strings.HasPrefix(err.Error(), at) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s of %s: err = %v, want %q after %q", f.field, o, err, want, at)
			}
		}
	}
}

// TestBlockFlips: the block checksum (CRC-32C) refuses the reviewer's
// case that version 2's rotate-xor let through (the same bit flipped in
// the bytes sent of events 100 and 108 of a block, 64 words apart: a
// Recv then read as sending 1 MiB), random bursts of 1 to 32 adjacent
// flipped bits, and random pairs of flips anywhere in the block.
func TestBlockFlips(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, Header{Rank: 0, Size: 2, Host: "h", EagerShmBytes: -1, EagerNetBytes: -1})
	tm := int64(0)
	for i := 0; i < 1100; i++ { // the first block full
		tm += 10
		e := Event{Op: OpSend, Peer: 1, Peer2: PeerNone, Tag: 3, Bytes: 800, T0: tm, T1: tm + 5}
		if i%2 == 1 {
			e = Event{Op: OpRecv, Peer: 1, Peer2: PeerNone, Tag: 3, Bytes: 800, Bytes2: 800, T0: tm, T1: tm + 5}
		}
		w.Write(e)
	}
	w.Write(Event{Op: OpFinalize, Peer: PeerNone, Peer2: PeerNone, T0: tm + 10, T1: tm + 10})
	if err := w.Close(tm + 10); err != nil {
		t.Fatal(err)
	}
	good := b.Bytes()
	if _, err := Decode(bytes.NewReader(good), "r0"); err != nil {
		t.Fatal(err)
	}
	first := HeaderBytes + BlockHeaderBytes
	nbits := BlockEvents * EventBytes * 8 // the first block's
	refused := func(name string, b []byte) {
		t.Helper()
		_, err := Decode(bytes.NewReader(b), "dir/rank-0.cct")
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Kind != "corrupt" || !strings.HasPrefix(err.Error(), "dir/rank-0.cct: offset 128: the block at offset 128 fails its checksum") {
			t.Errorf("%s: err = %v, want the block at offset 128 refused", name, err)
		}
	}
	// the reviewer's case: 0x10 into byte 26 (bytes sent) of events 100 and 108
	c := append([]byte(nil), good...)
	for _, ev := range []int{100, 108} {
		c[first+ev*EventBytes+26] ^= 0x10
	}
	refused("equal flips in events 100 and 108", c)
	// version 2's sum let exactly this through
	var rx uint64
	le := binary.LittleEndian
	for i := first; i < first+1024*EventBytes; i += 8 {
		rx = rx<<1 | rx>>63
		rx ^= le.Uint64(good[i:]) ^ le.Uint64(c[i:])
	}
	if rx != 0 {
		t.Errorf("the reviewer's flips change the rotate-xor (%#x): the case is not the one it cancels on", rx)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	flipBit := func(b []byte, bit int) { b[first+bit/8] ^= 1 << (bit % 8) }
	for k := 0; k < 2000; k++ {
		c := append([]byte(nil), good...)
		n := 1 + rng.IntN(32)
		at := rng.IntN(nbits - n)
		for j := 0; j < n; j++ {
			flipBit(c, at+j)
		}
		refused(fmt.Sprintf("burst of %d bits at bit %d", n, at), c)
	}
	for k := 0; k < 2000; k++ {
		c := append([]byte(nil), good...)
		x := rng.IntN(nbits)
		y := rng.IntN(nbits - 1)
		if y >= x {
			y++
		}
		if k%2 == 0 { // the same bit of two events
			bit := rng.IntN(EventBytes * 8)
			e1, e2 := rng.IntN(1024), rng.IntN(1023)
			if e2 >= e1 {
				e2++
			}
			x, y = e1*EventBytes*8+bit, e2*EventBytes*8+bit
		}
		flipBit(c, x)
		flipBit(c, y)
		refused(fmt.Sprintf("bits %d and %d", x, y), c)
	}
}

// TestAcceptsWildcardTag: a receive that asked for MPI_ANY_TAG records
// it as the MPI gives it (TagAny), which the tag check lets through.
func TestAcceptsWildcardTag(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, Header{Rank: 0, Size: 2, Host: "h", EagerShmBytes: -1, EagerNetBytes: -1})
	w.Write(Event{Op: OpIrecv, Peer: 1, Flags: FlagAnyTag, Tag: TagAny, Peer2: PeerNone, Bytes: 8, Req: 1, T0: 100, T1: 110})
	w.Write(Event{Op: OpRecv, Peer: PeerNull, Flags: FlagAnyTag, Tag: TagAny, Peer2: PeerNone, Bytes: 8, T0: 120, T1: 130})
	w.Write(Event{Op: OpFinalize, Peer: PeerNone, Peer2: PeerNone, T0: 1000, T1: 1000})
	if err := w.Close(1000); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(bytes.NewReader(b.Bytes()), "r0"); err != nil {
		t.Fatal(err)
	}
}

func TestReadDir(t *testing.T) {
	write := func(dir, name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("complete", func(t *testing.T) {
		dir := t.TempDir()
		for r := range 3 {
			write(dir, RankFile(r), sample(t, r))
		}
		tr, err := ReadDir(dir)
		if err != nil || len(tr.Ranks) != 3 {
			t.Fatalf("%v, %v", tr, err)
		}
	})
	for _, tc := range []struct {
		name, want string
		files      map[string][]byte
	}{
		{"rank missing", "rank-2.cct: rank 2 of 3 is missing", map[string][]byte{"rank-0.cct": sample(t, 0), "rank-1.cct": sample(t, 1)}},
		{"rank unfinished", "did not reach MPI_Finalize", map[string][]byte{"rank-0.cct": sample(t, 0), "rank-2.cct": sample(t, 2), ".rank-1.cct.part": sample(t, 1)[:200]}},
		{"wrong rank", "rank-2.cct: the header says rank 1", map[string][]byte{"rank-0.cct": sample(t, 0), "rank-1.cct": sample(t, 1), "rank-2.cct": sample(t, 1)}},
		{"no files", "no rank files", map[string][]byte{"notes.txt": []byte("x")}},
		{"origins of one host far apart", "rank-1.cct: origin at CLOCK_MONOTONIC", map[string][]byte{"rank-0.cct": sample(t, 0), "rank-1.cct": shiftOrigin(sample(t, 1), 60e9, 0), "rank-2.cct": sample(t, 2)}},
		{"wall clocks far apart", "rank-2.cct: origin at", map[string][]byte{"rank-0.cct": shiftOrigin(sample(t, 0), 0, 1.7e18), "rank-1.cct": shiftOrigin(sample(t, 1), 0, 1.7e18), "rank-2.cct": shiftOrigin(sample(t, 2), 0, 1.7e18+2*3600e9)}},
		{"torn rank", "rank-1.cct: offset", map[string][]byte{"rank-0.cct": sample(t, 0), "rank-1.cct": sample(t, 1)[:300], "rank-2.cct": sample(t, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, d := range tc.files {
				write(dir, n, d)
			}
			_, err := ReadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// shiftOrigin moves a rank file's origin: its monotonic and trace clock
// by mono ns, its wall clock to real ns (when not 0).
func shiftOrigin(b []byte, mono, real int64) []byte {
	le := binary.LittleEndian
	le.PutUint64(b[32:], uint64(int64(le.Uint64(b[32:]))+mono))
	le.PutUint64(b[40:], uint64(int64(le.Uint64(b[40:]))+mono))
	if real != 0 {
		le.PutUint64(b[48:], uint64(real))
	}
	return resumHeader(b)
}

// resumHeader recomputes a rank file's header checksum after a test
// altered its header, as the library would have written it.
func resumHeader(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[HeaderSumOffset:], HeaderSum(b))
	return b
}

// TestHeaderBitFlips: a header with any one of its 1024 bits flipped is
// refused with the file's name and an offset.
func TestHeaderBitFlips(t *testing.T) {
	good := sample(t, 1)
	for bit := range HeaderBytes * 8 {
		b := append([]byte(nil), good...)
		b[bit/8] ^= 1 << (bit % 8)
		_, err := Decode(bytes.NewReader(b), "dir/rank-1.cct")
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "dir/rank-1.cct: offset ") {
			t.Errorf("byte %d, bit %d flipped: err = %v, want a refusal", bit/8, bit%8, err)
		}
	}
}

// TestRefusesVersion1: a version 1 file, which has no header checksum, is
// refused as older, whatever its reserved field holds (a later header
// relabelled 1 would otherwise be read with any field altered).
func TestRefusesVersion1(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, Header{Version: 1, Rank: 0, Size: 2, Host: "h", EagerShmBytes: 4096, EagerNetBytes: -1})
	w.Write(Event{Op: OpFinalize, Peer: PeerNone, Peer2: PeerNone, T0: 1000, T1: 1000})
	if err := w.Close(1000); err != nil {
		t.Fatal(err)
	}
	_, err := Decode(bytes.NewReader(b.Bytes()), "r0")
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Kind != "older" || !strings.Contains(err.Error(), "r0: offset 8: trace format version 1 has no header checksum") {
		t.Errorf("err = %v, want version 1 refused as older at offset 8", err)
	}
}

// TestCHeaderSumAgrees compiles cctrace.h's cct_header_sum and checks that
// it gives HeaderSum's value for headers the Go writer made and for
// arbitrary bytes.
func TestCHeaderSumAgrees(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "sum.c")
	prog := `#include <stdio.h>
#include "cctrace.h"
int main(void)
{
	cct_header h;
	while (fread(&h, sizeof h, 1, stdin) == 1)
		printf("%08x\n", cct_header_sum(&h));
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	pmpi, err := filepath.Abs("pmpi")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sum")
	if out, err := exec.Command(cc, "-std=c11", "-Wall", "-I", pmpi, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	var in bytes.Buffer
	var want []string
	add := func(h []byte) {
		in.Write(h[:HeaderBytes])
		want = append(want, fmt.Sprintf("%08x", HeaderSum(h)))
	}
	for r := range 3 {
		add(sample(t, r))
	}
	var h [HeaderBytes]byte
	add(h[:])
	for i := range h {
		h[i] = byte(i*37 + 11)
	}
	add(h[:])
	for i := range h {
		h[i] = 0xff
	}
	add(h[:])
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("cct_header_sum gives %v, HeaderSum %v", got, want)
	}
	// CRC-32C's check value: "123456789" gives 0xe3069283.
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xe3069283 {
		t.Errorf("CRC-32C check value %#08x, want 0xe3069283", got)
	}
}

// TestCBlockSumAgrees compiles testdata/crc.c with the library's CRC-32C
// (pmpi/cccrc.h) and checks that its table and hardware paths give
// BlockSum's value on the blocks the Go writer made and on arbitrary
// bytes of lengths around the hardware path's three lanes.
func TestCBlockSumAgrees(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "crc")
	if out, err := exec.Command(cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", "pmpi", "-o", bin, "testdata/crc.c").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	var in bytes.Buffer
	var want []string
	add := func(b []byte) {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(b)))
		in.Write(n[:])
		in.Write(b)
		s := fmt.Sprintf("%08x", BlockSum(b))
		want = append(want, s+" "+s)
	}
	for r := range 3 {
		f := sample(t, r)
		add(f[HeaderBytes+BlockHeaderBytes:])
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 255, 767, 768, 769, 775, 1000, 4096, BlockEvents * EventBytes, BlockEvents*EventBytes - 8, 3*EventBytes + 5} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		add(b)
		for i := range b {
			b[i] = 0xff
		}
		add(b)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("%s (1: the CPU's CRC instruction is compared too)", lines[0])
	if got := lines[1:]; strings.Join(got, "|") != strings.Join(want, "|") {
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("input %d: C table and hardware %q, Go %q", i, got[min(i, len(got)-1)], want[i])
			}
		}
	}
}

// TestReadDirRefusesNonRegular: a rank file that is a FIFO or a
// directory, and a trace path that is not a directory, are refused at once
// by name (reading a FIFO without a writer blocks forever).
func TestReadDirRefusesNonRegular(t *testing.T) {
	base := t.TempDir()
	fifoDir := filepath.Join(base, "fifo")
	os.Mkdir(fifoDir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(fifoDir, RankFile(0)), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dirDir := filepath.Join(base, "dir")
	os.MkdirAll(filepath.Join(dirDir, RankFile(0)), 0o755)
	plain := filepath.Join(base, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	for _, tc := range []struct{ name, dir, want string }{
		{"rank file is a FIFO", fifoDir, filepath.Join(fifoDir, RankFile(0)) + " is a named pipe (FIFO), not a regular file"},
		{"rank file is a directory", dirDir, filepath.Join(dirDir, RankFile(0)) + " is a directory, not a regular file"},
		{"trace path is a FIFO", filepath.Join(fifoDir, RankFile(0)), "is not a directory (want a trace directory written by commcost trace)"},
		{"trace path is a file", plain, plain + " is not a directory (want a trace directory written by commcost trace)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadDir(tc.dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadDir blocked on %s", tc.dir)
			}
		})
	}
}

// FuzzDecode: no input makes the reader panic or accept a file that it
// then reports inconsistently; refusals are FormatErrors.
func FuzzDecode(f *testing.F) {
	f.Add(sample(f, 0))
	f.Add(sample(f, 2)[:300])
	f.Add([]byte("CCTRACE\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rk, err := Decode(bytes.NewReader(data), "fuzz")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("refusal is not a FormatError: %v", err)
			}
			return
		}
		if len(rk.Events) == 0 || rk.Events[len(rk.Events)-1].Op != OpEnd {
			t.Fatalf("accepted a file without its end record")
		}
	})
}

// TestReadDirDemand: a trace whose rank files, times the command's factor,
// are more than the process may take is refused before it is read, naming
// the need and the limit; one within it is read.
func TestReadDirDemand(t *testing.T) {
	dir := t.TempDir()
	var total int
	for r := range 3 {
		data := sample(t, r)
		total += len(data)
		if err := os.WriteFile(filepath.Join(dir, RankFile(r)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	limit := int64(total) * ReplayFactor / 2 // between the reading factor and replay's
	availableMemory = func() (int64, string, bool) { return limit, "a test's limit", true }
	if _, err := ReadDirDemand(dir, ReplayFactor); !errors.Is(err, results.ErrTooLarge) ||
		!strings.Contains(err.Error(), fmt.Sprintf("(%d times the files), more than this process may take (available:", ReplayFactor)) {
		t.Errorf("replay's demand: %v, want too large with the factor and the limit", err)
	}
	if _, err := ReadDir(dir); err != nil {
		t.Errorf("reading within the limit: %v", err)
	}
}
