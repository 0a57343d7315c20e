package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// netgauge's LogGP measurement: parametrised round trips PRTT(n, d, s)
// (patterns.PRTT), the records model.FitLogGP reads.

const (
	defaultPRTTSizes   = "1,4,16,64,256,1K,4K,16K,64K" // G is a slope over s: spread the sizes
	defaultPRTTN       = "1,10"                        // netgauge uses n = 10
	defaultPRTTDelay   = "0,auto"
	defaultPRTTMaxTime = 0.5 // seconds per point
)

func init() {
	register(command{name: "prtt", summary: "LogGP (netgauge): PRTT(n,d,s), n messages with delay d, one answer; client and server sides", run: runPRTT})
}

// delaySpec is one --delay value: seconds, or auto (PRTT(1,0,s) of the size).
type delaySpec struct {
	sec  float64
	auto bool
}

// String is the value as the lists print it.
func (d delaySpec) String() string {
	if d.auto {
		return "auto"
	}
	return strconv.FormatFloat(d.sec, 'g', -1, 64)
}

type prttFlags struct {
	patternFlags
	sizes  []int
	n      []int
	delays []delaySpec
	peer   int
	server bool
}

func parseDelays(s string) ([]delaySpec, error) {
	return parseListOf("delay", s, "a list of seconds >= 0 and auto (0,auto or 0,5e-6)", func(v string) (delaySpec, error) {
		if strings.EqualFold(v, "auto") {
			return delaySpec{auto: true}, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return delaySpec{}, fmt.Errorf("%q is not a number of seconds", v)
		}
		if err := checkParamValues("delay", s, patterns.BenchPRTT, "delay_s", []float64{x}); err != nil {
			return delaySpec{}, errors.New(strings.TrimPrefix(err.Error(), "--delay "+echo(s)+": "))
		}
		return delaySpec{sec: x}, nil
	})
}

func parsePRTT(args []string, stderr io.Writer) (*prttFlags, error) {
	fs := newFlagSet("prtt", stderr)
	var f prttFlags
	f.registerPattern(fs, patternSpec{name: "prtt", itersAre: "exchanges", itersDef: "OSU round-trip counts / 10 / n, at least 10", maxTime: defaultPRTTMaxTime})
	sizes := fs.String("sizes", defaultPRTTSizes, "message sizes s: LO:HI powers of two or a list; K = 1024")
	n := fs.String("n", defaultPRTTN, "messages per exchange n: a list; n = 1 is the plain round trip PRTT(1,0,s)")
	delay := fs.String("delay", defaultPRTTDelay, "delays d between the client's sends, in seconds, for n > 1: a list; auto = the PRTT(1,0,s) just measured (netgauge's choice)")
	fs.IntVar(&f.peer, "peer", 0, "server rank (default: the last rank)")
	fs.BoolVar(&f.server, "server", true, "for n > 1 and d > 0 also time the server's receives (records with side=server, for o_r)")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.checkPattern(fs); err != nil {
		return nil, err
	}
	var err error
	if f.sizes, err = paramSizes("sizes", *sizes, patterns.BenchPRTT); err != nil {
		return nil, err
	}
	if f.n, err = paramGrid("n", *n, patterns.BenchPRTT, "n"); err != nil {
		return nil, err
	}
	if f.delays, err = parseDelays(*delay); err != nil {
		return nil, err
	}
	if f.set["peer"] && f.peer < 1 {
		return nil, usagef("--peer %d: the server must be a rank >= 1 (rank 0 is the client)", f.peer)
	}
	return &f, nil
}

func runPRTT(args []string, stdout, stderr io.Writer) error {
	f, err := parsePRTT(args, stderr)
	if err != nil {
		return err
	}
	rule := func(p int) error {
		if p < 2 {
			return usagef("prtt needs at least 2 ranks, got %d", p)
		}
		if f.peer >= p {
			return usagef("--peer %d: more ranks asked for than exist (ranks are 0..%d)", f.peer, p-1)
		}
		return nil
	}
	pattern := func(s, n int, d float64, server bool) patterns.PRTT {
		return patterns.PRTT{Bytes: s, N: n, DelaySec: d, Server: server, Peer: f.peer,
			Iters: f.itersOrZero(), Warmup: f.warmupIters(), Validate: f.validate, Reps: f.patternReps()}
	}
	// The points for the checks before the run; an auto delay is the
	// PRTT(1,0,s) measured first, not known yet, and counts as none.
	f.plan = func(int) []patterns.Pattern {
		var out []patterns.Pattern
		for _, s := range f.sizes {
			out = append(out, pattern(s, 1, 0, false))
			for _, n := range f.n {
				for _, ds := range f.delays {
					if n > 1 {
						out = append(out, pattern(s, n, ds.sec, false))
					}
				}
			}
		}
		return out
	}
	// The records it writes, for the progress line: the plan runs
	// PRTT(1,0,s) whether or not its record is asked for, and a server
	// record follows every client one with a delay (auto is one).
	for range f.sizes {
		for _, n := range f.n {
			if n == 1 {
				f.points++
				continue
			}
			for _, ds := range f.delays {
				f.points++
				if f.server && (ds.auto || ds.sec > 0) {
					f.points++
				}
			}
		}
	}
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		wantOne := false
		for _, n := range f.n {
			wantOne = wantOne || n == 1
		}
		for _, s := range f.sizes {
			// PRTT(1,0,s) first: it is the auto delay, and the base of
			// every derivation.
			first := pattern(s, 1, 0, false)
			end := patterns.Installed().Begin(pointName(first, c.Size()), 0)
			one, err := first.Run(c)
			end()
			if err != nil {
				return patternErr(err)
			}
			if wantOne {
				if err := emitRecord(c, emit, first.Record(one, meta)); err != nil {
					return err
				}
			}
			for _, n := range f.n {
				if n == 1 {
					continue // the delay only separates messages
				}
				for _, ds := range f.delays {
					d := ds.sec
					if ds.auto {
						d = one.Summary.Median
					}
					if _, err := measurePoint(c, emit, pattern(s, n, d, false), meta); err != nil {
						return err
					}
					if f.server && d > 0 {
						if _, err := measurePoint(c, emit, pattern(s, n, d, true), meta); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
}
