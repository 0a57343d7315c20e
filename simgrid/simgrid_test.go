package simgrid

import (
	"bufio"
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/trace"
)

// TestWriteTIT: one rank's calls in SMPI's time-independent actions, the
// compute gaps as flops, the waits keyed by source, destination and tag,
// a collective on a sub-communicator as messages.
func TestWriteTIT(t *testing.T) {
	rk := &trace.Rank{Header: trace.Header{Rank: 1, Size: 3},
		Comms: []trace.Comm{{ID: 0, Members: []int32{0, 1, 2}}, {ID: 2 << 32, Members: []int32{1}}, {ID: 9, Members: []int32{2, 1}}}}
	ev := func(e trace.Event) { rk.Events = append(rk.Events, e) }
	ev(trace.Event{Op: trace.OpSend, Peer: 2, Tag: 7, Bytes: 800, T0: 1000, T1: 1200})
	ev(trace.Event{Op: trace.OpIrecv, Peer: trace.PeerAny, Tag: 3, Bytes: 40, Req: 5, T0: 1200, T1: 1300})
	ev(trace.Event{Op: trace.OpWait, Req: 1, T0: 3300, T1: 4000})
	ev(trace.Event{Op: trace.OpComplete, Flags: trace.FlagLocalPeer, Peer: 0, Tag: 3, Bytes2: 40, Req: 5, T0: 4000, T1: 4000})
	ev(trace.Event{Op: trace.OpAllreduce, Comm: 0, Bytes: 16, T0: 4000, T1: 5000})
	ev(trace.Event{Op: trace.OpBcast, Comm: 2, Peer: 2, Bytes: 64, T0: 5000, T1: 6000})
	ev(trace.Event{Op: trace.OpFinalize, T0: 6000, T1: 6000})
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := WriteTIT(w, rk); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	want := strings.Join([]string{
		"1 init", "1 compute 1000", "1 send 2 7 800", "1 irecv 0 3 40", "1 compute 2000", "1 wait 0 1 3",
		"1 allreduce 16 0", "1 irecv 2 1048576 64", "1 wait 2 1 1048576", "1 finalize", ""}, "\n")
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestCalibrate: a piecewise fit's segments become SMPI's factors
// relative to links of the first segment's latency and the last's
// bandwidth; LogGP's overheads become smpi/os and smpi/or.
func TestCalibrate(t *testing.T) {
	pw := &model.Piecewise{Segments: []model.Segment{
		{FromBytes: 1, Ts: model.Param{Value: 1e-6}, Tw: model.Param{Value: 2e-9}},
		{FromBytes: 65536, Ts: model.Param{Value: 5e-6}, Tw: model.Param{Value: 1e-9}},
	}}
	c, err := Calibrate(pw)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.LinkLatSec-0.5e-6) > 1e-18 || math.Abs(c.LinkBW-1e9) > 1e-3 {
		t.Errorf("links %g s, %g B/s", c.LinkLatSec, c.LinkBW)
	}
	if got := factors(c.LatFactor); got != "65536:5;0:1" {
		t.Errorf("lat-factor %q", got)
	}
	if got := factors(c.BWFactor); got != "65536:1;0:0.5" {
		t.Errorf("bw-factor %q", got)
	}
	lg := &model.LogGP{L: model.Param{Value: 2e-6}, Os: model.Param{Value: 3e-7}, Or: model.Param{Value: 4e-7}, BG: model.Param{Value: 1e-10}}
	if c, err := Calibrate(lg); err != nil || c.OsSec != 3e-7 || c.OrSec != 4e-7 || c.LinkLatSec != 1e-6 {
		t.Errorf("loggp: %+v, %v", c, err)
	}
	if _, err := Calibrate(&model.Hockney{Ts: model.Param{Value: -1}, Tw: model.Param{Value: 1e-9}}); err == nil {
		t.Errorf("a negative t_s was exported")
	}
}
