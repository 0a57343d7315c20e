package patterns

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/opts"
)

// What an instance asks of the machine, computed from
// its parameters alone before anything is allocated, so that a run that
// cannot fit or cannot finish is refused up front with a message naming
// the parameter, not killed by the out-of-memory killer (taking others'
// jobs with it) or left running for days. Every pattern owns its Demand
// (a method of Pattern), so a new pattern gets the checks by construction.

// Lower bounds of the cost of communication on any machine commcost runs
// on, for the time floor of a repetition: no MPI message takes less than
// minMessageSec (shared-memory MPI takes about 0.1 us),
// and no link or memory copy moves more than maxBytesPerSec. A repetition
// whose floor exceeds the time budget cannot finish within it.
const (
	minMessageSec  = 20e-9
	maxBytesPerSec = 100e9
)

// Demand is what one instance asks of one rank.
type Demand struct {
	// BufferBytes is the memory the instance's buffers take on the rank
	// that allocates most (send, receive, validation and access-engine
	// buffers); MemParam names the parameter it grows with ("bytes",
	// "l", "k").
	BufferBytes int64
	MemParam    string
	// InFlightBytes is the most payload one rank has in flight at once;
	// a backend that copies messages into queues (mpi/local) holds that
	// much more.
	InFlightBytes int64
	// The fewest messages and bytes one rank moves in one timed
	// repetition and in the untimed warm-up the pattern runs before its
	// repetitions, and the time it waits on purpose (PRTT's delays);
	// Floor turns them into a time no machine beats. RepParam and
	// WarmupParam name the counts they grow with ("iters", "window",
	// "k", "a", "warmup").
	RepMessages, RepBytes, RepWaitSec float64
	RepParam                          string
	// RepWait says what RepWaitSec is, for the message ("1048576 probes
	// of >= 20 ns"); "" leaves it unsaid.
	RepWait                     string
	WarmupMessages, WarmupBytes float64
	WarmupParam                 string
}

// RepFloorSec is a lower bound of one timed repetition's time.
func (d Demand) RepFloorSec() float64 {
	return floorSec(d.RepMessages, d.RepBytes) + d.RepWaitSec
}

// WarmupFloorSec is a lower bound of the pattern's own warm-up.
func (d Demand) WarmupFloorSec() float64 { return floorSec(d.WarmupMessages, d.WarmupBytes) }

func floorSec(msgs, bytes float64) float64 { return msgs*minMessageSec + bytes/maxBytesPerSec }

// CheckTime refuses an instance whose single repetition, or whose own
// warm-up, cannot end within maxTime seconds on any machine: --max-time
// stops repetitions between them, not inside one.
func (d Demand) CheckTime(maxTime float64) error {
	if f := d.RepFloorSec(); f > maxTime {
		wait := ""
		if d.RepWait != "" {
			wait = ", and " + d.RepWait
		}
		return fmt.Errorf("one repetition needs at least %s (%s and %s per rank at >= %g ns a message and <= %g GB/s%s), more than the time budget of %g s per point; lower %s%s",
			secText(f), countText(d.RepMessages, "message"), bytesText(d.RepBytes), minMessageSec*1e9, maxBytesPerSec/1e9, wait, maxTime, d.RepParam, raiseMaxTime(f))
	}
	if f := d.WarmupFloorSec(); f > maxTime {
		return fmt.Errorf("the warm-up needs at least %s (%s per rank), more than the time budget of %g s per point; lower %s%s",
			secText(f), countText(d.WarmupMessages, "message"), maxTime, d.WarmupParam, raiseMaxTime(f))
	}
	return nil
}

// raiseMaxTime is the remedy of a need of f seconds that --max-time can
// hold (at most opts.MaxSeconds), "" when no --max-time can.
func raiseMaxTime(f float64) string {
	if f <= opts.MaxSeconds {
		return " or raise --max-time"
	}
	return ""
}

// maxDigits is the largest count the demand messages print in digits;
// beyond it three significant digits say as much (9.22e+18 messages).
const maxDigits = 1e15

// countText is n things in words: "1 message", "2000 messages", "9.22e+18
// messages".
func countText(n float64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if n == math.Trunc(n) && math.Abs(n) < maxDigits {
		return fmt.Sprintf("%.0f %ss", n, noun)
	}
	return fmt.Sprintf("%.3g %ss", n, noun)
}

// bytesText is a byte count in digits, with its binary size from 1 KiB
// on: "1073741824 bytes (1.0 GiB)".
func bytesText(n float64) string {
	s := countText(n, "byte")
	if n < 1024 || n >= maxDigits || n != math.Trunc(n) {
		return s
	}
	size, exp := n/1024, 0
	for ; size >= 1024 && exp < 4; size /= 1024 {
		exp++
	}
	return fmt.Sprintf("%s (%.1f %ciB)", s, size, "KMGTP"[exp])
}

func secText(s float64) string {
	switch {
	case s >= 86400:
		return fmt.Sprintf("%.3g s (%.1f days)", s, s/86400)
	case s >= 3600:
		return fmt.Sprintf("%.3g s (%.1f hours)", s, s/3600)
	}
	return fmt.Sprintf("%.3g s", s)
}

// ProcessBytes is what instances of demand d on ranks ranks take in one
// process: the buffers and, on a backend that copies messages, the
// payload in flight.
func (d Demand) ProcessBytes(ranks int, copies bool) float64 {
	per := float64(d.BufferBytes)
	if copies {
		per += float64(d.InFlightBytes)
	}
	return per * float64(ranks)
}

// twoSided is the demand of the ping-pong family: bufs buffers of n bytes
// (doubled with validation), iters round trips per repetition and warmup
// before them.
func twoSided(n, iters, warmup, bufs int, validate bool) Demand {
	if validate {
		bufs += 2
	}
	b := float64(n)
	return Demand{
		BufferBytes: int64(bufs) * int64(n), MemParam: "bytes", InFlightBytes: int64(n),
		RepMessages: 2 * float64(iters), RepBytes: 2 * float64(iters) * b, RepParam: "--iters",
		WarmupMessages: 2 * float64(warmup), WarmupBytes: 2 * float64(warmup) * b, WarmupParam: "--warmup",
	}
}

// Demand of a ping-pong: two buffers, 2 iters messages per repetition.
func (p PingPong) Demand(int) Demand {
	iters, warmup := Iterations(p.Bytes, p.Iters, p.Warmup)
	return twoSided(p.Bytes, iters, warmup, 2, p.Validate)
}

// Demand of the bandwidth test: one buffer, window messages of it in
// flight, iters windows per repetition.
func (b Bandwidth) Demand(int) Demand {
	iters, warmup := BandwidthIterations(b.Bytes, b.Iters, b.Warmup)
	w := float64(b.window())
	n := float64(b.Bytes)
	d := Demand{
		BufferBytes: int64(b.Bytes), MemParam: "bytes", InFlightBytes: int64(b.window()) * int64(b.Bytes),
		RepMessages: float64(iters) * (w + 1), RepBytes: float64(iters) * w * n, RepParam: "--iters or --window",
		WarmupMessages: float64(warmup) * (w + 1), WarmupBytes: float64(warmup) * w * n, WarmupParam: "--warmup or --window",
	}
	if b.Validate {
		d.BufferBytes *= 2
	}
	return d
}

// Demand of the round trip: as the ping-pong.
func (rt RoundTrip) Demand(int) Demand {
	iters, warmup := Iterations(rt.Bytes, rt.Iters, rt.Warmup)
	return twoSided(rt.Bytes, iters, warmup, 2, rt.Validate)
}

// Demand of the concurrent ping-pongs: each pair as a ping-pong.
func (pw Pairwise) Demand(int) Demand {
	iters, warmup := Iterations(pw.Bytes, pw.Iters, pw.Warmup)
	return twoSided(pw.Bytes, iters, warmup, 2, pw.Validate)
}

// Demand of the nested pairs: as Pairwise.
func (rc RowContention) Demand(int) Demand {
	iters, warmup := Iterations(rc.Bytes, rc.Iters, rc.Warmup)
	return twoSided(rc.Bytes, iters, warmup, 2, rc.Validate)
}

// Demand of the all-to-all: a send and a receive block per rank, n-1
// messages each way per exchange.
func (a AllToAll) Demand(p int) Demand {
	n := a.ranks(p)
	iters := float64(max(a.Iters, 1))
	x := float64(a.Bytes)
	return Demand{
		BufferBytes: 2 * int64(n) * int64(a.Bytes), MemParam: "bytes", InFlightBytes: int64(n-1) * int64(a.Bytes),
		RepMessages: 2 * iters * float64(n-1), RepBytes: 2 * iters * float64(n-1) * x, RepParam: "--iters",
	}
}

// accessDemand is the demand of the access engine (access.go): the
// variable's slots, k request and k reply buffers (steps of them kept when
// validating), and 2 k messages per access.
func accessDemand(p, k, l, steps int, op AccessOp, validate bool) Demand {
	slots := p
	if l > 0 && p*l > maxVariableBytes {
		slots = max(1, maxVariableBytes/l)
	}
	req, reply := accessHeaderBytes, l
	if op == AccessWrite {
		req, reply = accessHeaderBytes+l, accessHeaderBytes
	}
	keep := 1
	if validate {
		keep = steps
	}
	buf := int64(slots)*int64(l) + int64(k)*int64(req) + int64(k)*int64(keep)*int64(reply)
	if validate {
		buf += int64(l)
	}
	perAccess := float64(k)
	return Demand{
		BufferBytes: buf, MemParam: "l", InFlightBytes: int64(k) * int64(req+reply),
		RepMessages: 2 * perAccess * float64(steps), RepBytes: perAccess * float64(steps) * float64(l),
	}
}

// Demand of a k-k-access: the access engine for one access of k packets.
func (kk KKAccess) Demand(p int) Demand {
	d := accessDemand(p, kk.K, kk.L, max(kk.A, 1), kk.Op, kk.Validate)
	d.RepParam = "--k"
	if kk.A > 1 {
		d.RepParam = "--k or --a"
	}
	return d
}

// Demand of a k-access: the access engine for a accesses of k packets.
func (ka KAccess) Demand(p int) Demand {
	d := accessDemand(p, ka.K, ka.L, ka.A, ka.Op, ka.Validate)
	d.RepParam = "--k or --a"
	return d
}

// Demand of PRTT: one buffer, iters exchanges of n messages, n-1 delays
// each.
func (pr PRTT) Demand(int) Demand {
	iters, warmup := pr.Iterations()
	n := float64(max(pr.N, 1))
	b := float64(pr.Bytes)
	wait := float64(iters) * (n - 1) * pr.DelaySec
	if math.IsNaN(wait) {
		wait = 0
	}
	return Demand{
		BufferBytes: int64(pr.Bytes), MemParam: "bytes", InFlightBytes: int64(max(pr.N, 1)) * int64(pr.Bytes),
		RepMessages: float64(iters) * (n + 1), RepBytes: float64(iters) * (n + 1) * b, RepWaitSec: wait, RepParam: "--iters, --n or --delay",
		WarmupMessages: float64(warmup) * (n + 1), WarmupBytes: float64(warmup) * (n + 1) * b, WarmupParam: "--warmup or --n",
	}
}

// Demand of the random permutations: a send and a receive buffer, iters
// exchanges per repetition.
func (pm Permutations) Demand(int) Demand {
	iters := float64(max(pm.Iters, 1))
	return Demand{
		BufferBytes: 2 * int64(pm.Bytes), MemParam: "bytes", InFlightBytes: int64(pm.Bytes),
		RepMessages: 2 * iters, RepBytes: 2 * iters * float64(pm.Bytes), RepParam: "--iters",
	}
}

// Demand of an aggregate operation: the buffers of aggRun.setup, and at
// least one message of the rank's share per operation.
func (a AggregateOp) Demand(p int) Demand {
	m := int64(a.Bytes)
	var buf, flight int64
	switch a.Op {
	case AggBcast:
		buf, flight = m, m
	case AggAllgather:
		buf, flight = m+int64(p)*m, int64(p-1)*m
	case AggScatter:
		buf, flight = 2*int64(p)*m+m, int64(p-1)*m
	case AggAlltoall:
		buf, flight = 2*int64(p)*m, int64(p-1)*m
	case AggQShift:
		buf, flight = 2*m, m
	case AggNEWS:
		buf, flight = 12*m, 4*m
	}
	if a.Impl.mesh() && a.Op != AggNEWS {
		buf += int64(a.meshWork(p))
	}
	iters := float64(max(a.Iters, 1))
	return Demand{
		BufferBytes: buf, MemParam: "bytes", InFlightBytes: flight,
		RepMessages: iters, RepBytes: iters * float64(a.Bytes), RepParam: "--iters",
	}
}

// Demand of a grid exchange step: a send and a receive buffer per rank,
// a message each way per line the step moves along.
func (g GridShift) Demand(int) Demand {
	steps := 1
	if g.Along == GridAlongBoth {
		steps = 2
	}
	bufs := int64(2)
	if g.Validate {
		bufs *= 2
	}
	iters := float64(max(g.Iters, 1))
	x := float64(g.Bytes)
	return Demand{
		BufferBytes: bufs * int64(g.Bytes), MemParam: "bytes", InFlightBytes: int64(steps) * int64(g.Bytes),
		RepMessages: 2 * iters * float64(steps), RepBytes: 2 * iters * float64(steps) * x, RepParam: "iters",
	}
}
