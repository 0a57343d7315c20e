// Package simgrid connects commcost to SimGrid's SMPI (Casanova et al.,
// "Versatile, Scalable, and Accurate Simulation of Distributed
// Applications and Platforms", JPDC 2014; SimGrid 3.32): it writes a
// commcost trace in SMPI's time-independent trace format, which
// smpireplaymain replays, and a platform and SMPI configuration from a
// fitted model, so the same trace can be predicted by SimGrid with
// commcost's calibration and with SimGrid's defaults.
package simgrid

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/replay"
	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/trace"
)

// HostFlops is the speed of the platform's hosts: compute gaps are written
// as gap x HostFlops flops, so a host of this speed computes for the
// measured time.
const HostFlops = 1e9

// TITFile is the time-independent trace of world rank r; ListFile lists
// them for smpirun -replay.
func TITFile(r int) string { return "rank-" + strconv.Itoa(r) + ".tit" }

// ListFile is the file smpirun -replay reads: one rank's trace per line.
const ListFile = "simgrid.txt"

// WriteRankTIT converts one rank file into DIR/rank-N.tit beside it. Each
// rank runs it by itself, after its own MPI_Finalize; DIR/simgrid.txt,
// naming every rank's file, is written by whichever rank finds every
// rank's file converted (each newer than its rank file) once its own is:
// the last to finish. A rank that fails removes simgrid.txt, so that no
// list names a file that is not there or is an earlier run's (smpirun
// -replay would take it for a whole trace).
func WriteRankTIT(path string) error {
	rk, err := trace.ReadFile(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := writeFile(filepath.Join(dir, TITFile(rk.Header.Rank)), func(w *bufio.Writer) error { return WriteTIT(w, rk) }); err != nil {
		os.Remove(filepath.Join(dir, ListFile))
		return err
	}
	for r := 0; r < rk.Header.Size; r++ {
		cct, err1 := os.Stat(filepath.Join(dir, trace.RankFile(r)))
		tit, err2 := os.Stat(filepath.Join(dir, TITFile(r)))
		if err1 != nil || err2 != nil || tit.ModTime().Before(cct.ModTime()) {
			return nil // a rank still converting writes the list
		}
	}
	return writeFile(filepath.Join(dir, ListFile), func(w *bufio.Writer) error {
		for r := 0; r < rk.Header.Size; r++ {
			fmt.Fprintln(w, TITFile(r))
		}
		return nil
	})
}

// WriteDirTIT converts every rank of a trace directory. A directory that
// cannot be read as a trace, or whose messages do not match, is bad input
// (opts.Badf); a failed write is not.
func WriteDirTIT(dir string) error {
	t, err := trace.ReadDirDemand(dir, trace.TITFactor)
	if err != nil {
		return opts.Badf("DIR %s: %v", dir, err)
	}
	// The ranks' messages must match as in a run (replay's matching): SMPI
	// would replay a receive smaller than its send, which no MPI run has.
	if _, err := replay.LowerDir(dir, t, nil); err != nil {
		return err
	}
	targets := []string{filepath.Join(dir, ListFile)}
	for _, rk := range t.Ranks {
		targets = append(targets, filepath.Join(filepath.Dir(rk.Path), TITFile(rk.Header.Rank)))
	}
	if err := checkTargets(targets...); err != nil {
		return err
	}
	for _, rk := range t.Ranks {
		if err := WriteRankTIT(rk.Path); err != nil {
			return err
		}
	}
	return nil
}

// checkTargets refuses, as bad input, output paths taken by something
// other than commcost's own earlier output of that name (a directory, a
// link, a FIFO, a user's file: results.CheckOwn), before any output is
// written. Each kind is known by how commcost starts it.
func checkTargets(paths ...string) error {
	for _, p := range paths {
		what, ours := ownKind(filepath.Base(p))
		if err := results.CheckOwn(p, what, 256, ours); err != nil {
			return err
		}
	}
	return nil
}

// titHead is the first line of every time-independent trace WriteTIT
// writes: the rank and "init".
var titHead = regexp.MustCompile(`^[0-9]+ init\n`)

// ownKind is what a file of commcost's SimGrid output named base is and
// how its first bytes tell it.
func ownKind(base string) (string, func(head []byte) bool) {
	prefix := func(p string) func([]byte) bool {
		return func(h []byte) bool { return strings.HasPrefix(string(h), p) }
	}
	switch base {
	case ListFile:
		return "SimGrid trace list", prefix(TITFile(0) + "\n")
	case "platform.xml":
		return "SimGrid platform", func(h []byte) bool { return strings.Contains(string(h), platformMark) }
	case "hostfile":
		return "SimGrid host file", prefix(HostName(0) + "\n")
	case "smpi.cfg":
		return "SMPI configuration", prefix("--cfg=smpi/")
	}
	return "SimGrid time-independent trace", titHead.Match
}

// CheckTITTargets refuses, before a traced run, the time-independent
// trace files of dir (rank-N.tit, simgrid.txt) that commcost did not
// write: `commcost trace --simgrid` writes them when the run ends.
func CheckTITTargets(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // a new directory: nothing to replace
	}
	var paths []string
	for _, e := range ents {
		if n := e.Name(); n == ListFile || titName.MatchString(n) {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	return checkTargets(paths...)
}

// titName matches TITFile's names.
var titName = regexp.MustCompile(`^rank-[0-9]+\.tit$`)

// writeFile writes path whole or not at all.
func writeFile(path string, body func(w *bufio.Writer) error) error {
	// a temporary name of its own: never a user's file beside path
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	w := bufio.NewWriter(f)
	err = body(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644) // CreateTemp's 0600: the files are for reading
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteTIT writes one rank's actions in SMPI's time-independent format
// (SimGrid's smpi_replay.cpp: "R init", "R send DST TAG BYTES", "R irecv
// SRC TAG BYTES", "R wait SRC DST TAG", "R compute FLOPS", "R bcast BYTES
// ROOT", "R allreduce BYTES 0", ..., "R finalize"; sizes in bytes, the
// default datatype of "init" without argument being MPI_BYTE). SMPI's
// replay knows only MPI_COMM_WORLD, so collectives on other communicators
// are written as the point-to-point messages of replay.Decompose;
// non-blocking collectives as blocking ones at their call. Completions
// are written as waits keyed by (source, destination, tag), as SMPI
// matches them.
func WriteTIT(w *bufio.Writer, rk *trace.Rank) error {
	me := rk.Header.Rank
	p := rk.Header.Size
	act := func(format string, args ...any) {
		fmt.Fprintf(w, "%d ", me)
		fmt.Fprintf(w, format, args...)
		w.WriteByte('\n')
	}
	type req struct{ src, dst, tag int32 }
	pending := map[uint64][]req{}
	persistent := map[uint64]trace.Event{}
	var last int64
	act("init")
	for i := 0; i < len(rk.Events); i++ {
		e := rk.Events[i]
		if e.Op == trace.OpFlush {
			if e.T0 >= last {
				last = e.T1
			}
			continue
		}
		if !e.Op.Call() {
			continue
		}
		if gap := e.T0 - last; gap > 0 {
			act("compute %.6g", float64(gap)*1e-9*HostFlops)
		}
		last = e.T1
		world := e.Comm == 0
		switch o := e.Op; {
		case o == trace.OpFinalize:
			act("finalize")
		case o == trace.OpSend || o == trace.OpSsend || o == trace.OpBsend || o == trace.OpRsend:
			if e.Peer >= 0 {
				act("send %d %d %d", e.Peer, e.Tag, e.Bytes)
			}
		case o == trace.OpRecv:
			if e.Peer >= 0 {
				act("recv %d %d %d", e.Peer, e.Tag, max(e.Bytes2, 0))
			}
		case o == trace.OpIsend || o == trace.OpIssend || o == trace.OpIbsend || o == trace.OpIrsend:
			if e.Peer >= 0 {
				act("isend %d %d %d", e.Peer, e.Tag, e.Bytes)
				pending[e.Req] = append(pending[e.Req], req{int32(me), e.Peer, e.Tag})
			}
		case o == trace.OpIrecv:
			if e.Peer == trace.PeerNull {
				break
			}
			src, tag, bytes := e.Peer, e.Tag, e.Bytes
			if c, ok := completionOf(rk, i, e.Req); ok {
				src, tag, bytes = c.src, c.tag, c.bytes
			}
			if src < 0 {
				break // never completed: SMPI cannot post a receive it cannot match
			}
			act("irecv %d %d %d", src, tag, bytes)
			pending[e.Req] = append(pending[e.Req], req{src, int32(me), tag})
		case o == trace.OpSendInit || o == trace.OpSsendInit || o == trace.OpRecvInit:
			persistent[e.Req] = e
		case o == trace.OpStart:
			in, ok := persistent[e.Req]
			if !ok || in.Peer < 0 {
				break
			}
			if in.Op == trace.OpRecvInit {
				act("irecv %d %d %d", in.Peer, in.Tag, in.Bytes)
				pending[e.Req] = append(pending[e.Req], req{in.Peer, int32(me), in.Tag})
			} else {
				act("isend %d %d %d", in.Peer, in.Tag, in.Bytes)
				pending[e.Req] = append(pending[e.Req], req{int32(me), in.Peer, in.Tag})
			}
		case o == trace.OpWait || o == trace.OpWaitall || o == trace.OpWaitany || o == trace.OpWaitsome ||
			o == trace.OpTest || o == trace.OpTestall || o == trace.OpTestany || o == trace.OpTestsome:
			for i+1 < len(rk.Events) && (rk.Events[i+1].Op == trace.OpComplete || rk.Events[i+1].Op == trace.OpFlush) {
				i++
				if rk.Events[i].Op == trace.OpFlush {
					last = max(last, rk.Events[i].T1)
					continue
				}
				h := rk.Events[i].Req
				if q := pending[h]; len(q) > 0 {
					act("wait %d %d %d", q[0].src, q[0].dst, q[0].tag)
					pending[h] = q[1:]
				}
			}
		case o == trace.OpSendrecv || o == trace.OpSendrecvReplace:
			if e.Peer2 >= 0 {
				act("irecv %d %d %d", e.Peer2, e.Tag2, max(e.Bytes2, 0))
			}
			if e.Peer >= 0 {
				act("send %d %d %d", e.Peer, e.Tag, e.Bytes)
			}
			if e.Peer2 >= 0 {
				act("wait %d %d %d", e.Peer2, me, e.Tag2)
			}
		case o.Collective() && world:
			switch o {
			case trace.OpBarrier, trace.OpIbarrier:
				act("barrier")
			case trace.OpBcast, trace.OpIbcast:
				act("bcast %d %d", e.Bytes, e.Peer)
			case trace.OpReduce, trace.OpIreduce:
				act("reduce %d 0 %d", e.Bytes, e.Peer)
			case trace.OpAllreduce, trace.OpIallreduce:
				act("allreduce %d 0", e.Bytes)
			case trace.OpAlltoall, trace.OpIalltoall, trace.OpAlltoallv:
				act("alltoall %d %d", e.Bytes/int64(p), max(e.Bytes2, 0)/int64(p))
			case trace.OpGather, trace.OpGatherv:
				act("gather %d %d %d", e.Bytes, max(e.Bytes2, 0)/int64(p), e.Peer)
			case trace.OpScatter, trace.OpScatterv:
				act("scatter %d %d %d", e.Bytes/int64(p), max(e.Bytes2, 0), e.Peer)
			case trace.OpAllgather, trace.OpAllgatherv, trace.OpIallgather:
				act("allgather %d %d", e.Bytes, max(e.Bytes2, 0)/int64(p))
			default:
				decomposed(act, rk, e)
			}
		case o.Collective():
			decomposed(act, rk, e)
		}
	}
	return nil
}

type completion struct {
	src, tag int32
	bytes    int64
}

// completionOf finds the completion of request h posted at event i: its
// actual source (a world rank) and tag.
func completionOf(rk *trace.Rank, i int, h uint64) (completion, bool) {
	e := rk.Events[i]
	for j := i + 1; j < len(rk.Events); j++ {
		c := rk.Events[j]
		if c.Op == trace.OpComplete && c.Req == h {
			src := c.Peer
			if c.Flags&trace.FlagLocalPeer != 0 {
				if e.Comm < 0 || int(e.Comm) >= len(rk.Comms) || src < 0 || int(src) >= len(rk.Comms[e.Comm].Members) {
					return completion{}, false
				}
				src = rk.Comms[e.Comm].Members[src]
			}
			return completion{src: src, tag: c.Tag, bytes: max(c.Bytes2, 0)}, true
		}
		if (c.Op == trace.OpIsend || c.Op == trace.OpIrecv) && c.Req == h {
			return completion{}, false // the handle was reused before any completion
		}
	}
	return completion{}, false
}

// decomposed writes a collective as replay.Decompose's rounds, with one tag
// above the program's (SMPI keys requests by source, destination, tag; a
// round has at most one message each way between two members).
func decomposed(act func(string, ...any), rk *trace.Rank, e trace.Event) {
	if e.Comm < 0 || int(e.Comm) >= len(rk.Comms) {
		return
	}
	members := rk.Comms[e.Comm].Members
	me, root := -1, 0
	for k, m := range members {
		if m == int32(rk.Header.Rank) {
			me = k
		}
		if m == e.Peer {
			root = k
		}
	}
	if me < 0 {
		return
	}
	for _, rd := range replay.Decompose(e.Op, me, len(members), root, e.Bytes, max(e.Bytes2, 0)) {
		tag := collTag
		var waits []string
		for _, x := range rd {
			peer := members[x.Peer]
			if x.Send {
				act("isend %d %d %d", peer, tag, x.Bytes)
				waits = append(waits, fmt.Sprintf("wait %d %d %d", rk.Header.Rank, peer, tag))
			} else {
				act("irecv %d %d %d", peer, tag, x.Bytes)
				waits = append(waits, fmt.Sprintf("wait %d %d %d", peer, rk.Header.Rank, tag))
			}
		}
		for _, wl := range waits {
			act("%s", wl)
		}
	}
}

// collTag is the first tag of decomposed collectives' messages.
const collTag = 1 << 20
