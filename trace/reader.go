package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/results"
)

// Header is a rank file's header, with the clock anchors resolved.
type Header struct {
	// Version is the file's format version: 1 has no header checksum.
	Version    int
	Clock      int
	Rank, Size int
	PID        int
	Host       string
	// OriginRealNS is CLOCK_REALTIME at the origin (after MPI_Init's
	// barrier), the wall-clock date of time 0.
	OriginRealNS int64
	// OriginMonoNS is CLOCK_MONOTONIC at the origin: the ranks of one
	// host read it within their exit from one barrier.
	OriginMonoNS int64
	// InitSec is MPI_Init's duration in seconds.
	InitSec float64
	// EagerShmBytes and EagerNetBytes are the MPI's eager limits within and
	// between hosts from its control variables; -1 when unknown.
	EagerShmBytes, EagerNetBytes int64
	// NSPerTick is the clock's rate (1 for ClockNS).
	NSPerTick float64
}

// Event is one recorded event; T0 and T1 are nanoseconds since the origin
// (the reader converts the clock units the file holds).
type Event struct {
	Op          Op
	Flags       uint8
	Comm        int32
	Peer, Tag   int32
	Peer2, Tag2 int32
	Bytes       int64
	Bytes2      int64
	Req         uint64
	T0, T1      int64
}

// Comm is a communicator as the rank knew it: its identity (the same on
// every member) and its members' world ranks.
type Comm struct {
	ID      uint64
	Members []int32
}

// Rank is one rank's trace.
type Rank struct {
	Path   string
	Header Header
	Events []Event
	// Comms are the rank's communicators by local index.
	Comms []Comm
}

// Trace is a trace directory: every rank of one run.
type Trace struct {
	Dir   string
	Ranks []*Rank
}

// FormatError is a file that is not a readable trace: foreign, torn,
// corrupt or of a newer version. Offset is the byte where reading failed.
type FormatError struct {
	Path   string
	Offset int64
	Event  int // index of the event, -1 when not at an event
	Reason string
	// Kind classifies the refusal: "foreign", "torn", "newer", "older",
	// "corrupt".
	Kind string
}

func (e *FormatError) Error() string {
	at := fmt.Sprintf("offset %d", e.Offset)
	if e.Event >= 0 {
		at += fmt.Sprintf(" (event %d)", e.Event)
	}
	return fmt.Sprintf("%s: %s: %s", e.Path, at, e.Reason)
}

// ErrFormat is wrapped by every *FormatError (errors.Is).
var ErrFormat = errors.New("not a readable commcost trace")

func (e *FormatError) Unwrap() error { return ErrFormat }

// ReadFile reads one rank file. A FIFO, a device or a directory in its
// place is refused (results.OpenRegular): reading one would block or fail
// midway instead of naming the file.
func ReadFile(path string) (*Rank, error) {
	f, err := results.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &decoder{r: bufio.NewReaderSize(f, 1<<16), name: path}
	if st, err := f.Stat(); err == nil {
		d.events = eventsIn(st.Size())
	}
	return d.decode()
}

// eventsIn is the number of events a rank file of size bytes holds at
// most (its blocks full): the capacity read into at once, so that the
// events are not copied as a slice grows (twice their size at a peak).
func eventsIn(size int64) int {
	n := (size - HeaderBytes) / EventBytes
	return int(min(max(n, 0), 1<<31))
}

// Decode reads one rank file from r; name is what errors call it.
func Decode(r io.Reader, name string) (*Rank, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 1<<16), name: name}
	return d.decode()
}

type decoder struct {
	r      *bufio.Reader
	name   string
	events int // capacity of the events slice, 0 unknown
	off    int64
}

func (d *decoder) fail(kind string, event int, format string, args ...any) error {
	return &FormatError{Path: d.name, Offset: d.off, Event: event, Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// read fills p; n is how many bytes were there before the end.
func (d *decoder) read(p []byte) (int, error) {
	n, err := io.ReadFull(d.r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, fmt.Errorf("%s: %w", d.name, err)
	}
	return n, err
}

func (d *decoder) decode() (*Rank, error) {
	le := binary.LittleEndian
	var h [HeaderBytes]byte
	n, err := d.read(h[:])
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	magic := append([]byte(Magic), 0)
	if n < len(magic) || !bytes.Equal(h[:len(magic)], magic) {
		shown := h[:min(n, len(magic))]
		return nil, d.fail("foreign", -1, "not a commcost trace (it starts with %q, a trace with %q)", shown, Magic)
	}
	if n < HeaderBytes {
		d.off = int64(n)
		return nil, d.fail("torn", -1, "torn: the file ends inside its %d-byte header", HeaderBytes)
	}
	hd := Header{
		Version: int(le.Uint16(h[8:])), Clock: int(le.Uint16(h[14:])),
		Rank: int(int32(le.Uint32(h[16:]))), Size: int(int32(le.Uint32(h[20:]))), PID: int(int32(le.Uint32(h[24:]))),
		OriginRealNS: int64(le.Uint64(h[48:])), EagerShmBytes: int64(le.Uint64(h[64:])), EagerNetBytes: int64(le.Uint64(h[72:])),
		Host: string(bytes.TrimRight(h[80:80+HostBytes], "\x00")),
	}
	originTicks, originMono, initTicks := int64(le.Uint64(h[32:])), int64(le.Uint64(h[40:])), int64(le.Uint64(h[56:]))
	switch {
	case hd.Version > Version:
		d.off = 8
		return nil, d.fail("newer", -1, "trace format version %d is newer than this commcost reads (version %d): read it with a newer commcost", hd.Version, Version)
	case hd.Version < 1:
		d.off = 8
		return nil, d.fail("corrupt", -1, "trace format version %d: versions start at 1", hd.Version)
	case hd.Version == 1:
		// Version 1 carries no checksum: a later header relabelled 1
		// could have any field altered unseen, so neither is read.
		d.off = 8
		return nil, d.fail("older", -1, "trace format version 1 has no header checksum, so an altered field cannot be told; this commcost reads version %d: trace the program again", Version)
	case hd.Version == 2:
		// Version 2's block checksum (rotate-xor of 64-bit words) cancels
		// on two equal bit flips 64 words apart, so its events cannot be
		// trusted.
		d.off = 8
		return nil, d.fail("older", -1, "trace format version 2 has a block checksum that two equal bit flips 8 events apart cancel, so an altered event cannot be told; this commcost reads version %d: trace the program again", Version)
	case le.Uint32(h[HeaderSumOffset:]) != HeaderSum(h[:]):
		return nil, d.fail("corrupt", -1, "the %d-byte header fails its checksum (CRC-32C %#08x, recorded %#08x at offset %d): a field of it was altered",
			HeaderBytes, HeaderSum(h[:]), le.Uint32(h[HeaderSumOffset:]), HeaderSumOffset)
	case le.Uint16(h[10:]) != HeaderBytes || le.Uint16(h[12:]) != EventBytes:
		d.off = 10
		return nil, d.fail("corrupt", -1, "header says %d-byte header and %d-byte events; version %d has %d and %d",
			le.Uint16(h[10:]), le.Uint16(h[12:]), Version, HeaderBytes, EventBytes)
	case hd.Clock != ClockNS && hd.Clock != ClockTSC:
		d.off = 14
		return nil, d.fail("corrupt", -1, "clock kind %d (want %d or %d)", hd.Clock, ClockNS, ClockTSC)
	case hd.Size < 1 || hd.Rank < 0 || hd.Rank >= hd.Size:
		d.off = 16
		return nil, d.fail("corrupt", -1, "rank %d of %d ranks", hd.Rank, hd.Size)
	case hd.PID <= 0:
		d.off = 24
		return nil, d.fail("corrupt", -1, "pid %d: a process id is positive", hd.PID)
	case originTicks < 0:
		d.off = 32
		return nil, d.fail("corrupt", -1, "origin at %d clock units: a clock reads 0 or more", originTicks)
	case originMono < 0 || hd.Clock == ClockNS && (originMono-originTicks > maxOriginGapNS || originTicks-originMono > maxOriginGapNS):
		d.off = 40
		return nil, d.fail("corrupt", -1, "origin at CLOCK_MONOTONIC %d ns, %d ns on the trace's own clock: the library reads both at once", originMono, originTicks)
	case hd.OriginRealNS < 0:
		d.off = 48
		return nil, d.fail("corrupt", -1, "origin at CLOCK_REALTIME %d ns: a date after 1970 (or 0, unknown)", hd.OriginRealNS)
	case initTicks < 0:
		d.off = 56
		return nil, d.fail("corrupt", -1, "MPI_Init took %d clock units: a duration is 0 or more", initTicks)
	case !eagerLimitOK(hd.EagerShmBytes):
		d.off = 64
		return nil, d.fail("corrupt", -1, "eager limit within a host %d bytes: want -1 (unknown) or 0 to %d", hd.EagerShmBytes, int64(MaxEagerBytes))
	case !eagerLimitOK(hd.EagerNetBytes):
		d.off = 72
		return nil, d.fail("corrupt", -1, "eager limit between hosts %d bytes: want -1 (unknown) or 0 to %d", hd.EagerNetBytes, int64(MaxEagerBytes))
	case hd.Host == "" || len(hd.Host) >= HostBytes || strings.IndexByte(hd.Host, 0) >= 0:
		// Ranks are placed on hosts by this name (the eager limit within
		// a host against between hosts): the library writes gethostname's.
		d.off = 80
		return nil, d.fail("corrupt", -1, "host name %q: a host name is 1 to %d bytes, NUL-padded, without a NUL inside", hd.Host, HostBytes-1)
	}
	hd.OriginMonoNS = originMono
	d.off = HeaderBytes
	rk := &Rank{Path: d.name, Header: hd, Events: make([]Event, 0, d.events)}
	var bh [BlockHeaderBytes]byte
	payload := make([]byte, BlockEvents*EventBytes)
	ended := false
	for !ended {
		start := d.off
		n, err := d.read(bh[:])
		if n == 0 && errors.Is(err, io.EOF) {
			return nil, d.fail("torn", -1, "torn: the file ends after %d events without its end record (the rank did not reach MPI_Finalize, or the file was cut)", len(rk.Events))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if n < BlockHeaderBytes {
			return nil, d.fail("torn", -1, "torn: the file ends inside a block header (%d of %d bytes)", n, BlockHeaderBytes)
		}
		if le.Uint32(bh[0:]) != BlockMagic {
			return nil, d.fail("corrupt", -1, "no block header here (magic %#08x, want %#08x)", le.Uint32(bh[0:]), BlockMagic)
		}
		count := int(le.Uint32(bh[4:]))
		if count < 1 || count > BlockEvents {
			return nil, d.fail("corrupt", -1, "block of %d events (want 1 to %d)", count, BlockEvents)
		}
		d.off += BlockHeaderBytes
		p := payload[:count*EventBytes]
		n, err = d.read(p)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if n < len(p) {
			d.off += int64(n)
			return nil, d.fail("torn", len(rk.Events)+n/EventBytes, "torn: the block at offset %d holds %d events but the file ends after %d of them", start, count, n/EventBytes)
		}
		if hi := le.Uint32(bh[12:]); hi != 0 {
			d.off = start + 12
			return nil, d.fail("corrupt", -1, "the block at offset %d has %#08x in its checksum's high 32 bits, which are 0 (the checksum is a CRC-32C)", start, hi)
		}
		if sum, rec := BlockSum(p), le.Uint32(bh[8:]); sum != rec {
			d.off = start
			return nil, d.fail("corrupt", -1, "the block at offset %d fails its checksum (CRC-32C %#08x, recorded %#08x): an event of it was altered", start, sum, rec)
		}
		for i := 0; i < count; i++ {
			b := p[i*EventBytes:]
			e := Event{
				Op: Op(b[0]), Flags: b[1], Comm: int32(le.Uint32(b[4:])),
				Peer: int32(le.Uint32(b[8:])), Tag: int32(le.Uint32(b[12:])),
				Peer2: int32(le.Uint32(b[16:])), Tag2: int32(le.Uint32(b[20:])),
				Bytes: int64(le.Uint64(b[24:])), Bytes2: int64(le.Uint64(b[32:])),
				Req: le.Uint64(b[40:]), T0: int64(le.Uint64(b[48:])), T1: int64(le.Uint64(b[56:])), // clock units until check
			}
			if ended {
				d.off += int64(i * EventBytes)
				return nil, d.fail("corrupt", len(rk.Events), "an event follows the end record")
			}
			// The library sets only the defined flags and writes the
			// reserved bytes 0: other bits are a damaged or foreign event.
			if bad := e.Flags &^ FlagsDefined; bad != 0 {
				d.off += int64(i * EventBytes)
				return nil, d.fail("corrupt", len(rk.Events), "%s with flags %#02x (offset 1 of the event): bits %#02x are undefined; the library sets only %#02x (any source, any tag, in place, local peer, true)", e.Op, e.Flags, bad, FlagsDefined)
			}
			if r := le.Uint16(b[2:]); r != 0 {
				d.off += int64(i * EventBytes)
				return nil, d.fail("corrupt", len(rk.Events), "%s with %#04x in its reserved bytes (offset 2 of the event), which the library writes 0", e.Op, r)
			}
			if e.Op == OpEnd {
				ended = true
			}
			rk.Events = append(rk.Events, e)
		}
		d.off += int64(len(p))
	}
	var extra [1]byte
	if n, _ := d.r.Read(extra[:]); n > 0 {
		return nil, d.fail("corrupt", -1, "data follows the end record")
	}
	end := rk.Events[len(rk.Events)-1]
	if end.Bytes != int64(len(rk.Events)) {
		d.off -= EventBytes
		return nil, d.fail("corrupt", len(rk.Events)-1, "the end record counts %d events, the file holds %d", end.Bytes, len(rk.Events))
	}
	rk.Header.NSPerTick = 1
	if hd.Clock == ClockTSC {
		dt := end.T1 - originTicks
		dm := int64(end.Req) - originMono
		if dt <= 0 || dm < 0 {
			d.off -= EventBytes
			return nil, d.fail("corrupt", len(rk.Events)-1, "the end record's clock anchors (%d ticks, %d ns after the origin) give no clock rate", dt, dm)
		}
		rk.Header.NSPerTick = float64(dm) / float64(dt)
	}
	if ns := float64(initTicks) * rk.Header.NSPerTick; ns > MaxTraceNs {
		d.off = 56
		return nil, d.fail("corrupt", -1, "MPI_Init took %.4g ns: a trace spans at most %g ns (about 3 years)", ns, float64(MaxTraceNs))
	}
	rk.Header.InitSec = float64(initTicks) * rk.Header.NSPerTick * 1e-9
	if err := rk.check(d); err != nil {
		return nil, err
	}
	return rk, nil
}

// EventOffset is the byte offset of event i in a file whose blocks are all
// full but the last (as the library writes them).
func EventOffset(i int) int64 {
	return HeaderBytes + int64(i/BlockEvents+1)*BlockHeaderBytes + int64(i)*EventBytes
}

// check converts the times and verifies what readers rely on: known ops,
// communicators defined before use with consistent members, peers within
// the world, times in order.
func (rk *Rank) check(d *decoder) error {
	bad := func(i int, format string, args ...any) error {
		d.off = EventOffset(i)
		return d.fail("corrupt", i, format, args...)
	}
	size := int32(rk.Header.Size)
	scale := rk.Header.NSPerTick
	var last int64
	// declared[c] is communicator c's member count as defined; its members
	// are the events that follow, so a count beyond them is corrupt (and
	// is never allocated: a 272-byte file may claim 2^31 members).
	var declared []int32
	for i := range rk.Events {
		e := &rk.Events[i]
		if !e.Op.Known() {
			return bad(i, "unknown operation %d (this commcost reads format version %d)", e.Op, Version)
		}
		if !e.Op.Call() || e.Op == OpPollRun {
			// the records skip the call checks below
			if why := e.fieldFault(); why != "" {
				return bad(i, "%s", why)
			}
		}
		// A time beyond MaxTraceNs after the origin is no run (and would
		// overflow int64 when scaled, or a replay's seconds).
		if t0, t1 := float64(e.T0)*scale, float64(e.T1)*scale; !(math.Abs(t0) <= MaxTraceNs && math.Abs(t1) <= MaxTraceNs) {
			return bad(i, "%s at %.4g to %.4g ns after the start: a trace spans at most %g ns (about 3 years)", e.Op, t0, t1, float64(MaxTraceNs))
		}
		if e.Op == OpEnd {
			e.T0 = int64(math.Round(float64(e.T0) * scale))
			e.T1 = e.T0
			continue
		}
		e.T0 = int64(math.Round(float64(e.T0) * scale))
		e.T1 = int64(math.Round(float64(e.T1) * scale))
		switch e.Op {
		case OpCommDef:
			if e.Comm != int32(len(rk.Comms)) {
				return bad(i, "communicator %d defined where %d is next", e.Comm, len(rk.Comms))
			}
			if e.Peer < 1 || e.Peer > size {
				return bad(i, "communicator %d of %d members in a world of %d", e.Comm, e.Peer, size)
			}
			if rest := len(rk.Events) - i - 1; int(e.Peer) > rest {
				return bad(i, "communicator %d of %d members, and %d events left to list them", e.Comm, e.Peer, rest)
			}
			rk.Comms = append(rk.Comms, Comm{ID: e.Req, Members: make([]int32, 0, e.Peer)})
			declared = append(declared, e.Peer)
			continue
		case OpCommMember:
			if e.Comm < 0 || int(e.Comm) >= len(rk.Comms) {
				return bad(i, "member of undefined communicator %d", e.Comm)
			}
			c := &rk.Comms[e.Comm]
			if int(e.Peer) != len(c.Members) || len(c.Members) == int(declared[e.Comm]) || e.Peer2 < 0 || e.Peer2 >= size {
				return bad(i, "member %d (world rank %d) of communicator %d out of order", e.Peer, e.Peer2, e.Comm)
			}
			c.Members = append(c.Members, e.Peer2)
			continue
		}
		if e.T1 < e.T0 {
			return bad(i, "%s ends (%d ns) before it starts (%d ns)", e.Op, e.T1, e.T0)
		}
		if e.Op == OpComplete {
			if e.Bytes2 < -1 {
				return bad(i, "%s of %d bytes received", e.Op, e.Bytes2)
			}
			if why := e.payloadFault(); why != "" {
				return bad(i, "%s", why)
			}
		}
		if e.Op == OpComplete || e.Op == OpFlush {
			// a completion is at its call's exit; a flush may fall inside
			// the call whose records filled the buffer (a communicator's
			// definition is written during its creating call)
			continue
		}
		if e.T0 < last-1000 { // 1 us: cross-core counter skew
			return bad(i, "%s starts at %d ns, before the previous call ended (%d ns)", e.Op, e.T0, last)
		}
		last = max(last, e.T1)
		if e.Op == OpPollRun {
			continue
		}
		if e.Comm < -1 || int(e.Comm) >= len(rk.Comms) {
			return bad(i, "%s on communicator %d, which the trace does not define", e.Op, e.Comm)
		}
		peers := [2]int32{e.Peer, e.Peer2}
		if e.Op.CreatesComm() {
			if e.Peer2 < -1 || int(e.Peer2) >= len(rk.Comms) {
				return bad(i, "%s creates communicator %d, which the trace does not define", e.Op, e.Peer2)
			}
			peers[1] = PeerNone
		}
		if e.Flags&FlagLocalPeer == 0 {
			for _, p := range peers {
				if p < PeerNull || p >= size {
					return bad(i, "%s with peer %d in a world of %d ranks", e.Op, p, size)
				}
			}
		}
		if e.Bytes < 0 || e.Bytes2 < -1 {
			return bad(i, "%s of %d bytes sent, %d received", e.Op, e.Bytes, e.Bytes2)
		}
		if why := e.payloadFault(); why != "" {
			return bad(i, "%s", why)
		}
		if why := e.fieldFault(); why != "" {
			return bad(i, "%s", why)
		}
		if why := e.peerFault(); why != "" {
			return bad(i, "%s", why)
		}
	}
	if err := rk.checkRequests(bad); err != nil {
		return err
	}
	for ci, c := range rk.Comms {
		if len(c.Members) != int(declared[ci]) {
			return bad(len(rk.Events)-1, "communicator %d lists %d of its %d members", ci, len(c.Members), declared[ci])
		}
	}
	if len(rk.Comms) < 2 || rk.Comms[0].ID != 0 || len(rk.Comms[0].Members) != int(size) {
		return bad(0, "the trace does not start with MPI_COMM_WORLD's definition")
	}
	return nil
}

// rankFileRE matches a rank file's name.
var rankFileRE = regexp.MustCompile(`^rank-(\d+)\.cct$`)

// RankFile is the name of world rank r's file in a trace directory.
func RankFile(r int) string { return "rank-" + strconv.Itoa(r) + ".cct" }

// ReadDir reads a trace directory: every rank of the world must be there,
// each file's header must agree on the world size and name its own rank.
// A path that is not a directory says what a trace directory is, not the
// bare "open: not a directory".
func ReadDir(dir string) (*Trace, error) { return ReadDirDemand(dir, ReadFactor) }

// Peak memory per byte of a trace's rank files, measured (maximum resident
// size over the files' total, on a trace of 126 MB of ping-pong events),
// with room for the Go runtime's reservations under ulimit -v: reading
// (2.1: the events, as many bytes as on disk, and their communicators),
// replay (6.3: its lowered program and event queue besides the trace),
// the time-independent export (7.6: every rank's text too).
const (
	ReadFactor   = 3
	ReplayFactor = 9
	TITFactor    = 10
)

// availableMemory is what this process may still allocate (a variable for
// tests).
var availableMemory = sysmem.Available

// ReadDirDemand is ReadDir for a command whose peak memory is factor times
// the rank files' total (at least ReadFactor): a trace beyond what this
// process may take is refused before it is read, with what it needs and
// what the limit allows, not ended by the runtime's out-of-memory crash.
func ReadDirDemand(dir string, factor float64) (*Trace, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (want a trace directory written by commcost trace)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byRank := map[int]string{}
	for _, e := range ents {
		if m := rankFileRE.FindStringSubmatch(e.Name()); m != nil {
			r, err := strconv.Atoi(m[1])
			if err != nil || RankFile(r) != e.Name() {
				return nil, fmt.Errorf("%s: not a rank file name (want rank-N.cct)", filepath.Join(dir, e.Name()))
			}
			byRank[r] = filepath.Join(dir, e.Name())
		}
	}
	if len(byRank) == 0 {
		return nil, fmt.Errorf("%s: no rank files (rank-N.cct): not a trace directory of commcost trace", dir)
	}
	var total int64
	for _, path := range byRank {
		if st, err := os.Stat(path); err == nil {
			total += st.Size()
		}
	}
	factor = max(factor, ReadFactor)
	if avail, src, ok := availableMemory(); ok && float64(total)*factor > float64(avail) {
		need := float64(total) * factor
		return nil, fmt.Errorf("%s: %w: its %d rank files of %s need about %s to read and use (%g times the files), more than this process may take (%s)",
			dir, results.ErrTooLarge, len(byRank), sysmem.Format(float64(total)), sysmem.Format(need), factor, sysmem.Allows(need, avail, src))
	}
	ranks := make([]int, 0, len(byRank))
	for r := range byRank {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	t := &Trace{Dir: dir}
	size := -1
	for _, r := range ranks {
		rk, err := ReadFile(byRank[r])
		if err != nil {
			return nil, err
		}
		if rk.Header.Rank != r {
			return nil, fmt.Errorf("%s: the header says rank %d", rk.Path, rk.Header.Rank)
		}
		if size >= 0 && rk.Header.Size != size {
			return nil, fmt.Errorf("%s: a world of %d ranks, but %s says %d: files of different runs", rk.Path, rk.Header.Size, t.Ranks[0].Path, size)
		}
		size = rk.Header.Size
		for _, o := range t.Ranks {
			if err := sameOrigin(o, rk); err != nil {
				return nil, err
			}
		}
		t.Ranks = append(t.Ranks, rk)
	}
	if len(t.Ranks) != size {
		for r := 0; r < size; r++ {
			if _, ok := byRank[r]; !ok {
				why := "missing"
				if _, err := os.Stat(filepath.Join(dir, "."+RankFile(r)+".part")); err == nil {
					why = "missing (its .part file is there: the rank did not reach MPI_Finalize)"
				}
				return nil, fmt.Errorf("%s: rank %d of %d is %s", filepath.Join(dir, RankFile(r)), r, size, why)
			}
		}
		return nil, fmt.Errorf("%s: rank files beyond the world of %d ranks", dir, size)
	}
	return t, nil
}

// Bounds on the origins of one run's ranks, taken as each leaves MPI_Init's
// barrier: the two clocks one rank reads at once, the monotonic clocks of
// one host's ranks, and the wall clocks of all hosts (which may be set
// apart by their time service).
const (
	maxOriginGapNS     = int64(time.Second)
	maxHostOriginGapNS = int64(10 * time.Second)
	maxRealOriginGapNS = int64(time.Hour)
)

// sameOrigin refuses two ranks whose origins no one run has: the same
// host's monotonic clocks, or any two wall clocks, far apart.
func sameOrigin(a, b *Rank) error {
	gap := func(x, y int64) int64 { return max(x-y, y-x) }
	if a.Header.Host == b.Header.Host && gap(a.Header.OriginMonoNS, b.Header.OriginMonoNS) > maxHostOriginGapNS {
		return fmt.Errorf("%s: origin at CLOCK_MONOTONIC %d ns, %s's on the same host %s at %d ns: ranks of one run leave MPI_Init's barrier together (files of different runs, or a corrupt header)",
			b.Path, b.Header.OriginMonoNS, a.Path, b.Header.Host, a.Header.OriginMonoNS)
	}
	if a.Header.OriginRealNS > 0 && b.Header.OriginRealNS > 0 && gap(a.Header.OriginRealNS, b.Header.OriginRealNS) > maxRealOriginGapNS {
		return fmt.Errorf("%s: origin at %s, %s's at %s: ranks of one run leave MPI_Init's barrier together (files of different runs, or a corrupt header)",
			b.Path, time.Unix(0, b.Header.OriginRealNS).UTC().Format(time.RFC3339), a.Path, time.Unix(0, a.Header.OriginRealNS).UTC().Format(time.RFC3339))
	}
	return nil
}

// payloadFault says what of a call's tags and sizes no MPI call can carry
// (as the library records them), or "" when all can: a send's tag is at
// least 0, a receive's too or MPI_ANY_TAG; every op's bytes sent (offset
// 24 of the event) and bytes received (offset 32) are at most
// MaxCallBytes, and a status's bytes received at most MaxStatusBytes.
// The counts that are no sizes (a poll run's calls, the end's events) are
// checked by fieldFault and the end's count of the file.
func (e *Event) payloadFault() string {
	const sendTags = "a send's tag is at least 0"
	const recvTags = "a receive's tag is at least 0, or MPI_ANY_TAG (-1)"
	o := e.Op
	sends := o.Sends() || o == OpSendInit || o == OpSsendInit
	recvs := o == OpRecv || o == OpIrecv || o == OpRecvInit || o == OpProbe || o == OpIprobe
	switch {
	case sends && e.Tag < 0:
		return fmt.Sprintf("%s with tag %d: %s", o, e.Tag, sendTags)
	case recvs && e.Tag < 0 && e.Tag != TagAny:
		return fmt.Sprintf("%s with tag %d: %s", o, e.Tag, recvTags)
	case (o == OpSendrecv || o == OpSendrecvReplace) && e.Tag2 < 0 && e.Tag2 != TagAny:
		return fmt.Sprintf("%s with receive tag %d: %s", o, e.Tag2, recvTags)
	}
	if o == OpPollRun || o == OpEnd {
		return ""
	}
	bufBytes := fmt.Sprintf("one buffer of an MPI call holds at most %d bytes (%d elements of at most %d bytes)", int64(MaxCallBytes), MaxCount, MaxTypeBytes)
	if e.Bytes > MaxCallBytes {
		return fmt.Sprintf("%s of %d bytes sent (the field at offset 24 of the event): %s", o, e.Bytes, bufBytes)
	}
	switch o {
	case OpRecv, OpProbe, OpIprobe, OpSendrecv, OpSendrecvReplace, OpComplete:
		if e.Bytes2 > MaxStatusBytes {
			return fmt.Sprintf("%s of %d bytes received (the field at offset 32 of the event): a receive's status reports at most %d bytes (MPI_Get_count's int), or -1 for a larger message", o, e.Bytes2, MaxStatusBytes)
		}
	default:
		if e.Bytes2 > MaxCallBytes {
			return fmt.Sprintf("%s of %d bytes received (the field at offset 32 of the event): %s", o, e.Bytes2, bufBytes)
		}
	}
	return ""
}

// peerFault says why a completed receive's source is none the library
// writes, or "": a Recv, Probe, Sendrecv's receive and an Iprobe that
// found a message record the source of their status, a rank or
// MPI_PROC_NULL, never MPI_ANY_SOURCE (which only a posted receive,
// Irecv or Recv_init, carries until its completion names the source).
func (e *Event) peerFault() string {
	src, field := e.Peer, "peer, the field at offset 8"
	switch e.Op {
	case OpRecv, OpProbe:
	case OpIprobe:
		if e.Flags&FlagTrue == 0 {
			return ""
		}
	case OpSendrecv, OpSendrecvReplace:
		src, field = e.Peer2, "peer2, the field at offset 16"
	default:
		return ""
	}
	if src == PeerAny {
		return fmt.Sprintf("%s completed from MPI_ANY_SOURCE (%d, %s): a completed receive records its status's actual source", e.Op, src, field)
	}
	return ""
}

// checkRequests verifies the requests' events as the library writes them
// (cctrace.c):
//
//   - a Wait* or Test* call's req (offset 40) counts the requests it
//     completed: Wait 1, or 0 on MPI_REQUEST_NULL; Test and Testany 1 when
//     they found one (FlagTrue), else 0; Waitall and Testall all of the call's
//     requests (its tag, offset 12) when they completed, Waitsome and
//     Testsome at most those;
//   - completions follow only such a call (flushes may fall between),
//     one per completed request that is not MPI_REQUEST_NULL: exactly req
//     after a Wait, at most req after the others;
//   - a receive posted to a rank (Irecv, or Start of a Recv_init) holds a
//     request of its own until it completes or is freed: no other call
//     posts on its handle meanwhile, and it takes no handle a pending
//     call holds. Sends may share one (Open MPI hands its one completed
//     request to every send that completed at once), but a persistent
//     send's Start needs its request inactive: not Started again before
//     a completion of the last Start.
//
// A completion of a handle no traced call created is read: the calls the
// library does not wrap (MPI_Igatherv, MPI_Imrecv, MPI-IO, persistent
// collectives) make such requests.
func (rk *Rank) checkRequests(bad func(int, string, ...any) error) error {
	type state struct {
		pending int  // postings not yet completed
		recv    bool // the one pending posting is a receive to a rank
	}
	reqs := map[uint64]state{}
	recvInit := map[uint64]bool{} // persistent requests: a receive's?
	owed, exact, caller := int64(0), false, -1
	settle := func(i int) error {
		if exact && owed > 0 {
			return bad(caller, "%s with req %d (the field at offset 40) is followed by %d fewer completions: the library writes one completion per request a Wait completed", rk.Events[caller].Op, rk.Events[caller].Req, owed)
		}
		owed, exact, caller = 0, false, -1
		return nil
	}
	post := func(i int, h uint64, recv bool) error {
		st := reqs[h]
		if st.recv || recv && st.pending > 0 {
			held := "send"
			if st.recv {
				held = "receive"
			}
			return bad(i, "%s on request %#x (req, the field at offset 40) while a %s on that handle is pending: a pending receive's request is its own", rk.Events[i].Op, h, held)
		}
		reqs[h] = state{pending: st.pending + 1, recv: recv}
		return nil
	}
	for i := range rk.Events {
		e := &rk.Events[i]
		switch o := e.Op; {
		case o == OpFlush:
			continue
		case o == OpComplete:
			if caller < 0 || owed == 0 {
				return bad(i, "a completion of request %#x where no Wait or Test call completed one more (the library writes completions after the call, as many as its req counts)", e.Req)
			}
			owed--
			if st := reqs[e.Req]; st.pending > 1 {
				reqs[e.Req] = state{pending: st.pending - 1}
			} else {
				delete(reqs, e.Req)
			}
			continue
		}
		if err := settle(i); err != nil {
			return err
		}
		switch o := e.Op; o {
		case OpIsend, OpIssend, OpIbsend, OpIrsend, OpIrecv:
			if e.Peer != PeerNull {
				if err := post(i, e.Req, o == OpIrecv); err != nil {
					return err
				}
			}
		case OpSendInit, OpSsendInit, OpRecvInit:
			if e.Peer != PeerNull {
				recvInit[e.Req] = o == OpRecvInit
			}
		case OpStart:
			if recv, ok := recvInit[e.Req]; ok {
				// A persistent request is its own handle until freed, so
				// a send's posting still pending there is this request's
				// last Start, which MPI_Start may not restart.
				if !recv && reqs[e.Req].pending > 0 {
					return bad(i, "%s on request %#x (req, the field at offset 40) while the persistent send's previous Start is still active: MPI_Start takes an inactive request (a Wait or Test completes it first)", o, e.Req)
				}
				if err := post(i, e.Req, recv); err != nil {
					return err
				}
			}
		case OpRequestFree:
			delete(reqs, e.Req)
			delete(recvInit, e.Req)
		case OpWait, OpTest, OpTestany, OpWaitany, OpWaitall, OpTestall, OpWaitsome, OpTestsome:
			if why := e.countFault(); why != "" {
				return bad(i, "%s", why)
			}
			owed, exact, caller = int64(e.Req), o == OpWait, i
		}
	}
	return settle(len(rk.Events))
}

// countFault says why a Wait* or Test* call's counts (req at offset 40,
// the requests completed; tag at offset 12, the call's requests) are none
// the library writes, or "".
func (e *Event) countFault() string {
	found := e.Flags&FlagTrue != 0
	n, req := int64(e.Tag), e.Req
	var ok bool
	want := ""
	switch e.Op {
	case OpWait:
		ok, want = req <= 1, "1, or 0 on MPI_REQUEST_NULL"
	case OpTest, OpTestany, OpWaitany:
		ok, want = found && req == 1 || !found && req == 0, "1 when it completed a request (FlagTrue), else 0"
	case OpWaitall, OpTestall:
		ok, want = n >= 0 && (found && req == uint64(n) || !found && req == 0), "the call's requests (its tag) when it completed them (FlagTrue), else 0"
	case OpWaitsome, OpTestsome:
		ok, want = n >= 0 && (found && req >= 1 && req <= uint64(n) || !found && req == 0), "1 to the call's requests (its tag) when it completed some (FlagTrue), else 0"
	default:
		return ""
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("%s with req %d and tag %d (the fields at offsets 40 and 12): req counts the requests it completed; the library records %s", e.Op, req, e.Tag, want)
}

// eagerLimitOK reports whether a header's eager limit is -1 (unknown) or
// a size in [0, MaxEagerBytes].
func eagerLimitOK(b int64) bool { return b == -1 || b >= 0 && b <= MaxEagerBytes }

// fieldFault says which byte count of an event contradicts its op, as the
// library writes each op (cctrace.c), or "" when none does. Bytes is
// offset 24 (bytes sent; a receive's posted buffer), Bytes2 offset 32
// (bytes received):
//
//	sends, their persistent inits          Bytes2 = 0
//	Recv, Sendrecv_replace                  Bytes2 <= Bytes (a status counts at most the buffer), or -1
//	Irecv, Recv_init                        Bytes2 = 0 (the size is the completion's)
//	Probe, (complete)                       Bytes = 0
//	Iprobe, Test*                           Bytes = 1 without FlagTrue (one poll), else 0; Test* Bytes2 = 0,
//	                                        Iprobe's 0 without FlagTrue
//	Bcast, Reduce, Allreduce, Scan, Exscan  Bytes = Bytes2 (one buffer's size), the I-forms too
//	Wait*, Start, Cancel, Request_free,     Bytes = Bytes2 = 0
//	Barrier, Ibarrier, communicator calls,
//	Finalize, definitions, flushes
//	(polls that found nothing)              Bytes >= 1 (the calls, Peer+Tag+Peer2+Tag2), Bytes2 = 0
//	(end)                                   Bytes2 = 0
//
// A bit flipped in a count that the op leaves 0 is refused here even
// where no bound on the count's size would catch it.
func (e *Event) fieldFault() string {
	o := e.Op
	polled := e.Flags&FlagTrue == 0
	switch o {
	case OpSend, OpSsend, OpBsend, OpRsend, OpIsend, OpIssend, OpIbsend, OpIrsend, OpSendInit, OpSsendInit:
		if e.Bytes2 != 0 {
			return fmt.Sprintf("%s with %d bytes received: a send receives nothing (the library records 0)", o, e.Bytes2)
		}
	case OpRecv, OpSendrecvReplace:
		if e.Bytes2 > e.Bytes {
			return fmt.Sprintf("%s received %d bytes into a buffer of %d: a receive's status counts at most its buffer", o, e.Bytes2, e.Bytes)
		}
	case OpIrecv, OpRecvInit:
		if e.Bytes2 != 0 {
			return fmt.Sprintf("%s with %d bytes received: a posted receive's size is its completion's (the library records 0 here)", o, e.Bytes2)
		}
	case OpProbe, OpComplete:
		if e.Bytes != 0 {
			return fmt.Sprintf("%s with %d bytes sent: it sends nothing (the library records 0)", o, e.Bytes)
		}
	case OpIprobe, OpTest, OpTestall, OpTestany, OpTestsome:
		want := int64(0)
		if polled {
			want = 1
		}
		if e.Bytes != want {
			return fmt.Sprintf("%s with %d bytes sent: the library records %d there (1 for a poll that found nothing, 0 when it found something)", o, e.Bytes, want)
		}
		if e.Bytes2 != 0 && (o != OpIprobe || polled) {
			return fmt.Sprintf("%s with %d bytes received: only a probe that found a message reports its size", o, e.Bytes2)
		}
	case OpBcast, OpReduce, OpAllreduce, OpScan, OpExscan, OpIbcast, OpIreduce, OpIallreduce:
		if e.Bytes != e.Bytes2 {
			return fmt.Sprintf("%s of %d bytes sent, %d received: its one buffer's size is both (the library records it twice)", o, e.Bytes, e.Bytes2)
		}
	case OpPollRun:
		if e.Bytes < 1 || e.Bytes2 != 0 {
			return fmt.Sprintf("%s with %d calls and %d bytes received: a run counts at least 1 call and receives nothing", o, e.Bytes, e.Bytes2)
		}
		// its calls by kind: Test, Testany, Testsome or Testall, Iprobe
		if n := int64(e.Peer) + int64(e.Tag) + int64(e.Peer2) + int64(e.Tag2); e.Peer < 0 || e.Tag < 0 || e.Peer2 < 0 || e.Tag2 < 0 || n != e.Bytes {
			return fmt.Sprintf("%s with %d calls, by kind %d, %d, %d and %d: the library counts each call once by its kind (peer, tag, peer2, tag2)", o, e.Bytes, e.Peer, e.Tag, e.Peer2, e.Tag2)
		}
	case OpEnd:
		if e.Bytes2 != 0 {
			return fmt.Sprintf("%s with %d bytes received: the library records 0", o, e.Bytes2)
		}
	case OpSendrecv, OpGather, OpGatherv, OpScatter, OpScatterv, OpAllgather, OpAllgatherv,
		OpAlltoall, OpAlltoallv, OpReduceScatter, OpReduceScatterBlock, OpIallgather, OpIalltoall:
		// both counts are the call's own
	default:
		if e.Bytes != 0 || e.Bytes2 != 0 {
			return fmt.Sprintf("%s with %d bytes sent, %d received: it moves no data (the library records 0 and 0)", o, e.Bytes, e.Bytes2)
		}
	}
	return ""
}
