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
	register(command{Name: "prtt", Summary: "LogGP (netgauge): PRTT(n,d,s), n messages with delay d, one answer; client and server sides", Run: runPRTT})
}

type prttFlags struct {
	patternFlags
	sizes  []int
	n      []int
	delays []patterns.PRTTDelay
	peer   int
	server bool
}

func parseDelays(s string) ([]patterns.PRTTDelay, error) {
	return parseListOf("delay", s, "a list of seconds >= 0 and auto (0,auto or 0,5e-6)", func(v string) (patterns.PRTTDelay, error) {
		if strings.EqualFold(v, "auto") {
			return patterns.PRTTDelay{Auto: true}, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return patterns.PRTTDelay{}, fmt.Errorf("%q is not a number of seconds", v)
		}
		if err := checkParamValues("delay", s, patterns.BenchPRTT, "delay_s", []float64{x}); err != nil {
			return patterns.PRTTDelay{}, errors.New(strings.TrimPrefix(err.Error(), "--delay "+echo(s)+": "))
		}
		return patterns.PRTTDelay{Sec: x}, nil
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
	sw := patterns.PRTTSweep{Sizes: f.sizes, N: f.n, Delays: f.delays, Server: f.server,
		Base: patterns.PRTT{Peer: f.peer, Iters: f.itersOrZero(), Warmup: f.warmupIters(), Validate: f.validate, Reps: f.patternReps()}}
	f.plan = func(int) []patterns.Pattern { return sw.Plan() }
	f.points = sw.Records()
	return runMeasured(&f.measureFlags, stdout, checkRanks(rule), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return sw.Run(func(p patterns.PRTT, write bool) (patterns.Measurement, error) {
			if !write {
				emit := func(results.Record) error { return nil }
				return measurePoint(c, emit, p, meta)
			}
			return measurePoint(c, emit, p, meta)
		})
	})
}
