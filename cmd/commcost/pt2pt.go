package main

import (
	"io"
	"strconv"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Default sweeps of the OSU-style benchmarks.
const (
	defaultLatencySizes   = "0:4M"
	defaultBandwidthSizes = "1:4M"
)

func init() {
	register(command{Name: "pingpong", Summary: "OSU-style latency: half round trip of a blocking ping-pong (2 ranks)", Run: runPingPong})
	register(command{Name: "bandwidth", Summary: "OSU-style bandwidth: window of 64 Isends + 4-byte ack (2 ranks)", Run: runBandwidth})
}

type pt2ptFlags struct {
	measureFlags
	sizes  []int
	window int
	osu    bool
}

// osuExclusive are the flags --osu fixes itself: OSU's loop and skip
// counts, one repetition, OSU's window.
var osuExclusive = []string{"iters", "warmup", "min-reps", "max-reps", "max-time", "rel-ci", "window"}

func parsePt2pt(name string, args []string, stderr io.Writer, defSizes string) (*pt2ptFlags, error) {
	fs := newFlagSet(name, stderr)
	var f pt2ptFlags
	f.register(fs)
	sizes := fs.String("sizes", defSizes, "message sizes: LO:HI powers of two (1:4M) or a list (8,1K,1M); K = 1024")
	if name == "bandwidth" {
		fs.IntVar(&f.window, "window", patterns.OSUWindow, "messages in flight per window")
	}
	osuLoop := "10000 round trips up to 8K, 1000 above, after 100 (10) untimed; the mean half round trip"
	if name == "bandwidth" {
		osuLoop = "100 windows of 64 up to 8K, 20 above, after 10 (2) untimed; the bandwidth of the loop"
	}
	fs.BoolVar(&f.osu, "osu", false, "OSU 5.3's methodology, for a figure to put next to osu_"+map[string]string{"pingpong": "latency", "bandwidth": "bw"}[name]+
		"'s: one pass of its loop ("+osuLoop+") per size instead of repetitions and their median")
	if err := parseFlags(fs, args, false); err != nil {
		return nil, err
	}
	if err := f.check(fs); err != nil {
		return nil, err
	}
	if f.osu {
		for _, name := range osuExclusive {
			if f.set[name] {
				return nil, usagef("--%s with --osu: --osu fixes the iterations, repetitions and window as OSU 5.3 does; drop one of them", name)
			}
		}
	}
	bench := patterns.BenchPingPong
	if name == "bandwidth" {
		bench = patterns.BenchBandwidth
		if err := checkParamValues("window", strconv.Itoa(f.window), bench, "window", []int{f.window}); err != nil {
			return nil, err
		}
	}
	var err error
	if f.sizes, err = paramSizes("sizes", *sizes, bench); err != nil {
		return nil, err
	}
	return &f, nil
}

func twoRanks(what string) func(c mpi.Comm) error {
	return func(c mpi.Comm) error {
		return needRanks(c, what, func(n int) bool { return n == 2 }, "exactly 2 ranks")
	}
}

func runPingPong(args []string, stdout, stderr io.Writer) error {
	f, err := parsePt2pt("pingpong", args, stderr, defaultLatencySizes)
	if err != nil {
		return err
	}
	f.plan = f.pingPongPoints
	return runMeasured(&f.measureFlags, stdout, twoRanks("pingpong"), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return pingPongSweep(c, f, meta, emit)
	})
}

// pingPongPoints are the ping-pongs of the sweep, one per size.
func (f *pt2ptFlags) pingPongPoints(int) []patterns.Pattern {
	var out []patterns.Pattern
	for _, n := range f.sizes {
		p := patterns.PingPong{Bytes: n, Iters: f.iters, Warmup: f.warmupIters(), Validate: f.validate, Reps: f.reps()}
		if f.osu {
			p = p.OSU()
		}
		out = append(out, p)
	}
	return out
}

func pingPongSweep(c mpi.Comm, f *pt2ptFlags, meta results.Meta, emit func(results.Record) error) error {
	return measurePoints(c, emit, f.pingPongPoints(c.Size()), meta)
}

func runBandwidth(args []string, stdout, stderr io.Writer) error {
	f, err := parsePt2pt("bandwidth", args, stderr, defaultBandwidthSizes)
	if err != nil {
		return err
	}
	f.plan = f.bandwidthPoints
	return runMeasured(&f.measureFlags, stdout, twoRanks("bandwidth"), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return bandwidthSweep(c, f, meta, emit)
	})
}

// bandwidthPoints are the bandwidth tests of the sweep, one per size.
func (f *pt2ptFlags) bandwidthPoints(int) []patterns.Pattern {
	var out []patterns.Pattern
	for _, n := range f.sizes {
		b := patterns.Bandwidth{Bytes: n, Window: f.window, Iters: f.iters, Warmup: f.warmupIters(), Validate: f.validate, Reps: f.reps()}
		if f.osu {
			b = b.OSU()
		}
		out = append(out, b)
	}
	return out
}

func bandwidthSweep(c mpi.Comm, f *pt2ptFlags, meta results.Meta, emit func(results.Record) error) error {
	return measurePoints(c, emit, f.bandwidthPoints(c.Size()), meta)
}
