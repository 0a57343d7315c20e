package patterns

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// PRTTDelay is one delay of a PRTT sweep: DelaySec seconds, or with Auto
// the median of the plain round trip PRTT(1,0,s) measured for the same
// size just before (netgauge's choice of d; paper 003, LogGP section:
// PRTT(n,d,s) with d at least one round trip separates the sends).
type PRTTDelay struct {
	Sec  float64
	Auto bool
}

// String is the delay as --delay lists it: seconds, or auto.
func (d PRTTDelay) String() string {
	if d.Auto {
		return "auto"
	}
	return strconv.FormatFloat(d.Sec, 'g', -1, 64)
}

// PRTTSweep is netgauge's LogGP measurement over sizes, message counts
// and delays: for each size s, PRTT(1,0,s) first (the base of every
// derivation and the auto delay), then PRTT(n,d,s) for every n > 1 and
// delay d, and with Server the server's side of each one with d > 0 (the
// records model.FitLogGP reads for o_r). Base is the configuration every
// point shares (Peer, Iters, Warmup, Validate, Reps); its Bytes, N,
// DelaySec and Server are set per point.
type PRTTSweep struct {
	Sizes  []int
	N      []int
	Delays []PRTTDelay
	Server bool
	Base   PRTT
}

func (sw PRTTSweep) point(s, n int, d float64, server bool) PRTT {
	p := sw.Base
	p.Bytes, p.N, p.DelaySec, p.Server = s, n, d, server
	return p
}

// Plan is the sweep's points for checks before the run (memory, rank
// count, progress): an auto delay is not measured yet and counts as none,
// and the server sides are left out (they cost what their client points
// cost).
func (sw PRTTSweep) Plan() []Pattern {
	var out []Pattern
	for _, s := range sw.Sizes {
		out = append(out, sw.point(s, 1, 0, false))
		for _, n := range sw.N {
			if n == 1 {
				continue
			}
			for _, d := range sw.Delays {
				out = append(out, sw.point(s, n, d.Sec, false))
			}
		}
	}
	return out
}

// Records is how many records Run hands to emit: PRTT(1,0,s) only when
// N lists 1, one per client point, and a server record after every client
// point with a delay that is or may be (auto) above zero.
func (sw PRTTSweep) Records() int {
	count := 0
	for range sw.Sizes {
		for _, n := range sw.N {
			if n == 1 {
				count++
				continue
			}
			for _, d := range sw.Delays {
				count++
				if sw.Server && (d.Auto || d.Sec > 0) {
					count++
				}
			}
		}
	}
	return count
}

// Run measures the sweep in order. measure runs one point on every rank
// (the caller adds its watchdog and agreement) and returns its
// measurement; with emit false the point only feeds the auto delay and
// its record is not written. It stops at the first error.
func (sw PRTTSweep) Run(measure func(p PRTT, emit bool) (Measurement, error)) error {
	wantOne := false
	for _, n := range sw.N {
		wantOne = wantOne || n == 1
	}
	for _, s := range sw.Sizes {
		one, err := measure(sw.point(s, 1, 0, false), wantOne)
		if err != nil {
			return err
		}
		for _, n := range sw.N {
			if n == 1 {
				continue // the delay only separates messages
			}
			for _, dl := range sw.Delays {
				d := dl.Sec
				if dl.Auto {
					d = one.Summary.Median
				}
				if _, err := measure(sw.point(s, n, d, false), true); err != nil {
					return err
				}
				if sw.Server && d > 0 {
					if _, err := measure(sw.point(s, n, d, true), true); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// UnmarshalText parses a delay in seconds (>= 0) or auto.
func (d *PRTTDelay) UnmarshalText(b []byte) error {
	s := string(b)
	if strings.EqualFold(s, "auto") {
		*d = PRTTDelay{Auto: true}
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%q is not a number of seconds; accepted form: a list of seconds >= 0 and auto (0,auto or 0,5e-6)", s)
	}
	spec, _ := Spec(BenchPRTT, "delay_s")
	if why := spec.Reason(x); why != "" {
		return fmt.Errorf("delay_s = %s: %s", s, why)
	}
	*d = PRTTDelay{Sec: x}
	return nil
}

// PRTTConfig is the sweep of 'commcost prtt': netgauge's LogGP
// measurement (PRTTSweep) with the command line's settings.
type PRTTConfig struct {
	RepFlags
	Loop
	Sizes  opts.Sizes  `flag:"sizes" default:"1,4,16,64,256,1K,4K,16K,64K" param:"bytes" usage:"message sizes s: LO:HI doubling or a list; K = 1024"`
	N      opts.Ints   `flag:"n" default:"1,10" param:"n" usage:"messages per exchange n: a list; n = 1 is the plain round trip PRTT(1,0,s)"`
	Delay  []PRTTDelay `flag:"delay" default:"0,auto" usage:"delays d between the client's sends, in seconds, for n > 1: a list; auto = the PRTT(1,0,s) just measured (netgauge's choice)"`
	Peer   int         `flag:"peer" usage:"server rank (default: the last rank)"`
	Server bool        `flag:"server" default:"true" usage:"for n > 1 and d > 0 also time the server's receives (records with side=server, for o_r)"`
	Set    opts.Given
}

func init() {
	Register(Def{Name: "prtt", Summary: "LogGP (netgauge): PRTT(n,d,s), n messages with delay d, one answer; client and server sides",
		New: func() Sweep { return new(PRTTConfig) }, Defaults: map[string]string{"max-time": "0.5"},
		Usage: map[string]string{"iters": "exchanges per timed repetition (default: OSU round-trip counts / 10 / n, at least 10)"}})
}

// Validate checks the sweep's settings.
func (s *PRTTConfig) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check,
		func() error { return CheckValues("Sizes", BenchPRTT, "bytes", s.Sizes) },
		func() error { return CheckValues("N", BenchPRTT, "n", s.N) },
		func() error {
			if s.Set.Has("Peer") && s.Peer < 1 {
				return opts.Field("Peer", s.Peer, "the server must be a rank >= 1 (rank 0 is the client)")
			}
			return nil
		},
		func() error {
			// Delays other than 0 and the server's side are of exchanges
			// of n > 1 messages: given with none, no point reads them
			// (--delay 0 says what n = 1 is).
			if slices.ContainsFunc(s.N, func(n int) bool { return n > 1 }) {
				return nil
			}
			delayed := slices.ContainsFunc(s.Delay, func(d PRTTDelay) bool { return d.Auto || d.Sec != 0 })
			for _, f := range []string{"Delay", "Server"} {
				if s.Set.Has(f) && (f != "Delay" || delayed) {
					return opts.Badf("{%s} with {N}: it is read only by exchanges of n > 1 messages, and {N} gives only n = 1", f)
				}
			}
			return nil
		})
}

// Sweep is the PRTTSweep the settings describe.
func (s *PRTTConfig) Sweep() PRTTSweep {
	return PRTTSweep{Sizes: s.Sizes, N: s.N, Delays: s.Delay, Server: s.Server,
		Base: PRTT{Peer: s.Peer, Iters: s.IterCount(), Warmup: s.WarmupIters(), Validate: s.Verify, Reps: s.Reps()}}
}

// Plan is the sweep's points for the checks before the run.
func (s *PRTTConfig) Plan(p int) ([]Pattern, error) {
	if p < 2 {
		return nil, opts.Badf("prtt needs at least 2 ranks, got %d", p)
	}
	if s.Peer >= p {
		return nil, opts.Field("Peer", s.Peer, "more ranks asked for than exist (ranks are 0..%d)", p-1)
	}
	return s.Sweep().Plan(), nil
}

// Points is the number of records the sweep writes.
func (s *PRTTConfig) Points(int) int { return s.Sweep().Records() }

// Run measures the sweep in order, each point through measure.
func (s *PRTTConfig) Run(_ mpi.Comm, _ results.Meta, measure func(p Pattern, write bool) (Measurement, error)) error {
	return s.Sweep().Run(func(p PRTT, write bool) (Measurement, error) { return measure(p, write) })
}
