package replay

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/trace"
)

// Result is one replay's prediction, per rank.
type Result struct {
	// WallSec is each rank's predicted time from the origin to
	// MPI_Finalize, MPISec its time in MPI calls.
	WallSec, MPISec []float64
	// ByCall is the predicted seconds in each MPI call, summed over ranks.
	ByCall map[trace.Op]float64
	// Ops counts the engine operations run.
	Ops int
}

// Engine settings.
type engineConfig struct {
	pricer *Pricer
	// eager is the largest message sent eagerly; larger ones, and every
	// synchronous send, use the rendezvous protocol (the send waits for
	// its receive to be posted). Negative: every message is eager.
	eager   int64
	compute float64 // factor on the compute gaps
}

const (
	fSendPosted uint8 = 1 << iota
	fRecvPosted
	fArrival // the arrival time is known
)

type msgState struct {
	sendT, recvT float64 // post times
	arrive       float64 // the last byte at the receiver
	sendDone     float64 // when the sender's wait may return
	flags        uint8
	rdv          bool
	waitS, waitR int32 // ranks blocked on the message, -1 none
}

type rankState struct {
	pc         int
	t          float64
	opStart    float64
	started    bool // the op at pc has begun: its gap is spent
	nicS, nicR float64
	mpi        float64
	blocked    bool
	done       bool
}

type collState struct {
	released bool
	arrived  int32
	maxT     float64
	endT     float64
	waiters  []int32
}

type engine struct {
	cfg   engineConfig
	prog  *Program
	msgs  []msgState
	ranks []rankState
	colls []collState
	ready []int32
	res   Result
}

// Simulate replays the program: each rank runs its operations in order;
// the compute gaps come from the trace (times cfg.compute); messages are
// priced by the pricer with LogGOPSim's overlap rules (Hoefler, Schneider,
// Lumsdaine, HPDC 2010, section 2.1): a send occupies the sender's CPU for
// o_s and its NIC for g + (m-1)G from the later of the post and the NIC's
// last send; the last byte arrives L + (m-1)G after o_s; the receiving
// NIC takes messages g + (m-1)G apart; a receive completes o_r after the
// later of the arrival and its post. An eager message leaves at its post;
// a rendezvous one when both sides have posted, and its sender's wait
// returns when the data has left (the wire time after o_s for models
// without a G: at the arrival).
func simulate(prog *Program, cfg engineConfig) (*Result, error) {
	e := &engine{cfg: cfg, prog: prog, msgs: make([]msgState, len(prog.Msgs)), ranks: make([]rankState, len(prog.Ranks)),
		colls: make([]collState, len(prog.Colls))}
	e.res = Result{WallSec: make([]float64, len(prog.Ranks)), MPISec: make([]float64, len(prog.Ranks)), ByCall: map[trace.Op]float64{}}
	for i := range e.msgs {
		m := &e.msgs[i]
		m.waitS, m.waitR = -1, -1
		mm := prog.Msgs[i]
		m.rdv = mm.sync || (cfg.eager >= 0 && mm.bytes > cfg.eager)
	}
	byCall := make([][]float64, len(prog.Ranks)) // per rank per call
	for r := range prog.Ranks {
		byCall[r] = make([]float64, len(prog.Calls[r]))
		e.ready = append(e.ready, int32(r))
	}
	for len(e.ready) > 0 {
		r := e.ready[len(e.ready)-1]
		e.ready = e.ready[:len(e.ready)-1]
		e.run(r, byCall[r])
	}
	for r := range e.ranks {
		if !e.ranks[r].done {
			return nil, e.deadlock()
		}
	}
	for r, calls := range prog.Calls {
		for c, sec := range byCall[r] {
			e.res.ByCall[calls[c].op] += sec
		}
	}
	return &e.res, nil
}

// run advances rank r until it blocks or ends.
func (e *engine) run(r int32, byCall []float64) {
	rs := &e.ranks[r]
	rs.blocked = false
	ops := e.prog.Ranks[r]
	for rs.pc < len(ops) {
		o := &ops[rs.pc]
		if !rs.started {
			rs.t += o.gap * e.cfg.compute
			rs.opStart = rs.t
			rs.started = true
		}
		if !e.step(r, rs, o) {
			rs.blocked = true
			return
		}
		d := rs.t - rs.opStart
		rs.mpi += d
		if o.call >= 0 {
			byCall[o.call] += d
		}
		e.res.Ops++
		rs.pc++
		rs.started = false
		if o.kind == kEnd {
			break
		}
	}
	rs.done = true
	e.res.WallSec[r] = rs.t
	e.res.MPISec[r] = rs.mpi
}

func (e *engine) wake(r int32) {
	if r >= 0 && e.ranks[r].blocked {
		e.ranks[r].blocked = false
		e.ready = append(e.ready, r)
	}
}

// transfer starts message i's data at start on its sender's NIC.
func (e *engine) transfer(i int32, start float64) {
	m := &e.msgs[i]
	mm := &e.prog.Msgs[i]
	p := e.cfg.pricer
	b := float64(mm.bytes)
	snd := &e.ranks[mm.src]
	start = math.Max(start, snd.nicS)
	os := p.SendCPU(b)
	snd.nicS = start + math.Max(p.Gap(b), os)
	m.arrive = start + os + p.Wire(b)
	if p.loggp != nil {
		m.sendDone = start + os + math.Max(b-1, 0)*p.loggp.G
	} else {
		m.sendDone = m.arrive
	}
	m.flags |= fArrival
	e.wake(m.waitR)
	e.wake(m.waitS)
	m.waitR, m.waitS = -1, -1
}

// step runs one op; false when the rank must wait.
func (e *engine) step(r int32, rs *rankState, o *op) bool {
	switch o.kind {
	case kPostSend:
		m := &e.msgs[o.arg()]
		m.sendT = rs.t
		m.flags |= fSendPosted
		if !m.rdv {
			e.transfer(o.arg(), rs.t)
			rs.t += e.cfg.pricer.SendCPU(float64(e.prog.Msgs[o.arg()].bytes))
		} else if m.flags&fRecvPosted != 0 {
			e.transfer(o.arg(), math.Max(m.sendT, m.recvT))
		}
	case kPostRecv:
		m := &e.msgs[o.arg()]
		m.recvT = rs.t
		m.flags |= fRecvPosted
		if m.rdv && m.flags&fSendPosted != 0 {
			e.transfer(o.arg(), math.Max(m.sendT, m.recvT))
		}
	case kWaitSend:
		m := &e.msgs[o.arg()]
		if !m.rdv {
			return true // an eager send is complete once its overhead is spent
		}
		if m.flags&fArrival == 0 {
			m.waitS = r
			return false
		}
		rs.t = math.Max(rs.t, m.sendDone)
	case kWaitRecv:
		m := &e.msgs[o.arg()]
		if m.flags&fArrival == 0 {
			m.waitR = r
			return false
		}
		b := float64(e.prog.Msgs[o.arg()].bytes)
		start := math.Max(m.arrive, rs.nicR)
		rs.nicR = start + e.cfg.pricer.Gap(b)
		rs.t = math.Max(rs.t, start) + e.cfg.pricer.RecvCPU(b)
	case kDelay:
		rs.t += o.dur()
	case kColl:
		c := &e.colls[o.arg()]
		if !c.released {
			if contains(c.waiters, r) {
				return false // woken before the last member came
			}
			c.arrived++
			c.maxT = math.Max(c.maxT, rs.t)
			if c.arrived < e.prog.Colls[o.arg()].members {
				c.waiters = append(c.waiters, r)
				return false
			}
			c.released = true
			c.endT = c.maxT + e.prog.Colls[o.arg()].sec
			for _, w := range c.waiters {
				e.wake(w)
			}
		}
		rs.t = math.Max(rs.t, c.endT)
	case kEnd:
	}
	return true
}

func contains(xs []int32, x int32) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// deadlock describes the first blocked rank: its op, the call and message.
func (e *engine) deadlock() error {
	for r := range e.ranks {
		rs := &e.ranks[r]
		if rs.done {
			continue
		}
		o := e.prog.Ranks[r][rs.pc]
		c := e.prog.Calls[r][o.call]
		what := "a collective's other members"
		if o.kind == kWaitSend || o.kind == kWaitRecv {
			mm := e.prog.Msgs[o.arg()]
			what = fmt.Sprintf("the %d-byte message from rank %d to rank %d", mm.bytes, mm.src, mm.dst)
			if o.kind == kWaitSend {
				what += " to be received (a rendezvous send; the run may have sent it eagerly: see --eager)"
			}
		}
		return fmt.Errorf("replay deadlock: rank %d, event %d (%s) waits for %s", r, c.event, c.op, what)
	}
	return fmt.Errorf("replay deadlock")
}
