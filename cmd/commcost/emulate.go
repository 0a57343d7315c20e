package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{name: "emulate", summary: "service network of paper 000 on MPI ranks: info, kk, kaccess, split", run: runEmulate})
}

const emulateUsage = `usage: commcost emulate <info|kk|kaccess|split> [flags]

  info     the network and the partition of the world into application and
           service ranks (no MPI needed)
  kk       k-k-access sweep (k, l, r) through the emulated network
  kaccess  k-access sweep (h, a, es): receive hot spots and asynchrony
  split    packet splitting, versions 1, 2, 3 (paper 000, Fig. 14)
  selftest functional check of the running network: reads return what was
           written, barriers hold, no hang under a hot spot, locks exclude,
           no message lost

Networks: SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC). A network of
p application ranks and n service nodes runs on p + n ranks, e.g.
  mpirun -np 16 --oversubscribe --mca mpi_yield_when_idle 1 commcost emulate kk --net 'BF(2)'

'commcost emulate <subcommand> -h' lists its flags.
`

func runEmulate(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, emulateUsage)
		return usagef("emulate needs a subcommand: info, kk, kaccess, split or selftest")
	}
	switch args[0] {
	case "info":
		return runEmulateInfo(args[1:], stdout, stderr)
	case "kk":
		return runEmulateKK(args[1:], stdout, stderr)
	case "kaccess":
		return runEmulateKAccess(args[1:], stdout, stderr)
	case "split":
		return runEmulateSplit(args[1:], stdout, stderr)
	case "selftest":
		return runEmulateSelfTest(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, emulateUsage)
		return nil
	}
	return usagef("emulate %q: unknown subcommand; accepted: info, kk, kaccess, split, selftest", args[0])
}

// parseNet reads --net into a topology, as a usage error naming the flag.
func parseNet(s string) (*emulate.Topology, error) {
	t, err := emulate.Parse(s)
	if err != nil {
		return nil, usagef("--net %s: %v", s, err)
	}
	return t, nil
}

func runEmulateInfo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate info", stderr)
	net := fs.String("net", "BF(2)", "service `network`: SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC)")
	np := fs.Int("np", 0, "check that a world of this many ranks fits the network (0: do not check)")
	routes := fs.Bool("routes", false, "also print every node's routing table")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	t, err := parseNet(*net)
	if err != nil {
		return err
	}
	if *np != 0 {
		if err := t.CheckRanks(*np); err != nil {
			return usagef("--np %d: %v", *np, err)
		}
	}
	return emulate.WriteInfo(stdout, t, *routes)
}

// emuFlags are the flags every measuring emulate subcommand shares.
type emuFlags struct {
	mf        measureFlags
	netSpec   string
	t         *emulate.Topology
	placement string
	seed      int64
	moduleMem string
	moduleB   int
	window    int
	linkSlots int
	stall     float64
	warmup    int
	packetB   int // version-2 packet length (split only)
	idleYield time.Duration
	idleSleep time.Duration
	syncName  string
	sync      patterns.Sync
}

func (e *emuFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.netSpec, "net", "BF(2)", "service `network`: SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC)")
	fs.StringVar(&e.placement, "placement", "direct", "placement of the Store's variables: direct or hash (the drivers place one variable per module)")
	fs.Int64Var(&e.seed, "seed", 1, "seed of the access patterns and of the hash placement")
	fs.StringVar(&e.moduleMem, "module-mem", "64M", "memory of one module in bytes (K, M, G = 2^10, 2^20, 2^30)")
	fs.IntVar(&e.window, "window", emulate.DefaultWindow, "requests an application rank keeps in flight")
	fs.IntVar(&e.linkSlots, "link-slots", emulate.DefaultLinkSlots, "packet buffers per link and buffer class (bounded buffering)")
	fs.Float64Var(&e.stall, "stall", emulate.DefaultStallTimeout.Seconds(), "seconds without progress before a stalled network is reported")
	fs.IntVar(&e.warmup, "warmup", patterns.DefaultWarmupReps, "untimed warm-up repetitions per point")
	fs.StringVar(&e.syncName, "sync", "barrier", "start of a repetition: barrier (of the application ranks) or window (agreed start on a synchronised clock)")
	fs.DurationVar(&e.idleYield, "idle-yield", 50*time.Millisecond, "an idle rank polls with sched_yield this long before it sleeps (longer: lower latency, more CPU; local backend default 1ms)")
	fs.DurationVar(&e.idleSleep, "idle-sleep", time.Millisecond, "longest sleep of an idle rank between polls (local backend default 50us)")
	m := &e.mf
	fs.Float64Var(&m.relCI, "rel-ci", patterns.DefaultRelCI, "repeat until the 95% CI of the median is within this fraction of the median")
	fs.IntVar(&m.minReps, "min-reps", patterns.DefaultMinReps, "minimum timed repetitions per point")
	fs.IntVar(&m.maxReps, "max-reps", 100, "maximum timed repetitions per point")
	fs.Float64Var(&m.maxTime, "max-time", 2, "seconds of timed repetitions per point before stopping")
	fs.BoolVar(&m.samples, "samples", false, "keep every repetition's time in the records")
	fs.Var(&m.format, "format", "output `format` on stdout: "+results.FormatNames)
	fs.StringVar(&m.out, "out", "", "append records to this JSON Lines `file`, flushed one record at a time")
	fs.StringVar(&m.backend, "backend", backendNative, "native (system MPI, under mpirun) or local (goroutine ranks; not a network measurement)")
	fs.IntVar(&m.np, "np", 0, "ranks for --backend local (default: what the network needs)")
}

// check validates the shared flags after parsing.
func (e *emuFlags) check(fs *flag.FlagSet) error {
	var err error
	if e.t, err = parseNet(e.netSpec); err != nil {
		return err
	}
	if e.mf.np == 0 {
		e.mf.np = e.t.Ranks()
	}
	if err := e.mf.check(fs); err != nil {
		return err
	}
	if e.mf.backend == backendLocal {
		if err := e.t.CheckRanks(e.mf.np); err != nil {
			return usagef("--np %d: %v", e.mf.np, err)
		}
	}
	if _, err := emulate.ParsePlacement(e.placement); err != nil {
		return usagef("--placement %s: accepted values are direct and hash", e.placement)
	}
	if e.moduleB, err = parseSize(e.moduleMem); err != nil || e.moduleB < 1 || e.moduleB > 1<<30 {
		return usagef("--module-mem %s: a module's memory must be a size from 1 byte to 1G, e.g. 64M", e.moduleMem)
	}
	if e.window < 1 {
		return usagef("--window %d: must be an integer >= 1", e.window)
	}
	if e.linkSlots < 1 || e.linkSlots > 255 {
		return usagef("--link-slots %d: must be an integer in 1..255", e.linkSlots)
	}
	if !(e.stall > 0) || math.IsInf(e.stall, 0) {
		return usagef("--stall %v: must be a positive number of seconds", e.stall)
	}
	if e.warmup < 0 {
		return usagef("--warmup %d: must be an integer >= 0", e.warmup)
	}
	if e.sync, err = patterns.ParseSync(e.syncName); err != nil {
		return usagef("--sync %s: accepted values are barrier and window", e.syncName)
	}
	if e.idleYield <= 0 {
		return usagef("--idle-yield %v: must be a positive duration, e.g. 5ms", e.idleYield)
	}
	if e.idleSleep <= 0 {
		return usagef("--idle-sleep %v: must be a positive duration, e.g. 1ms", e.idleSleep)
	}
	return nil
}

// fitsModule refuses a variable larger than a module's memory.
func (e *emuFlags) fitsModule(flagName, val string, bytes int) error {
	if bytes > e.moduleB {
		return usagef("--%s %s: a variable of %d bytes does not fit in a module's memory (--module-mem %s = %d bytes)", flagName, val, bytes, e.moduleMem, e.moduleB)
	}
	return nil
}

func (e *emuFlags) config() emulate.Config {
	pl, _ := emulate.ParsePlacement(e.placement)
	cfg := emulate.Config{
		Topology: e.t, Placement: pl, Seed: e.seed, ModuleBytes: e.moduleB,
		Window: e.window, LinkSlots: e.linkSlots, PacketBytes: e.packetB,
		StallTimeout: time.Duration(e.stall * float64(time.Second)),
	}
	// Unset idle flags leave the package's defaults, which differ between
	// the native and the local backend.
	if e.mf.set["idle-yield"] {
		cfg.Idle.YieldFor = e.idleYield
	}
	if e.mf.set["idle-sleep"] {
		cfg.Idle.MaxSleep = e.idleSleep
	}
	return cfg
}

func (e *emuFlags) bench(meta results.Meta) emulate.BenchConfig {
	w := e.warmup
	if w == 0 {
		w = -1 // patterns.Reps: negative means none
	}
	meta.Seed = e.seed
	return emulate.BenchConfig{
		Reps: patterns.Reps{Warmup: w, MinReps: e.mf.minReps, MaxReps: e.mf.maxReps, MaxTime: e.mf.maxTime, RelCI: e.mf.relCI, Sync: e.sync},
		Seed: e.seed, Meta: meta,
	}
}

// rankCheck refuses a world that does not fit the network (usage error,
// exit 2, before any output is opened).
func (e *emuFlags) rankCheck(what string) func(c mpi.Comm) error {
	return func(c mpi.Comm) error {
		if err := e.t.CheckRanks(c.Size()); err != nil {
			hint := ""
			if c.Backend() == backendNative {
				hint = " (run: " + runLine(e.t.Ranks(), "emulate", what, "--net", e.t.Name()) + ")"
			}
			return usagef("%v%s", err, hint)
		}
		return nil
	}
}

// run starts the emulation under the chosen backend and calls body on every
// application rank; emit writes a record on world rank 0 (application 0).
func (e *emuFlags) run(what string, stdout io.Writer, body func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error) error {
	return runMeasured(&e.mf, stdout, e.rankCheck(what), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		bc := e.bench(meta)
		return emulate.Run(c, e.config(), func(s *emulate.Store) error {
			return body(s, bc, emit)
		})
	})
}

// parseOps reads --op: read, write or both.
func parseOps(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f != "read" && f != "write" {
			return nil, usagef("--op %s: accepted values are read, write, or read,write", s)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// parseLengths reads a packet-length grid; 0 is refused (a packet carries
// at least one byte of data).
func parseLengths(flagName, s string) ([]int, error) {
	v, err := parseIntGrid(flagName, s, 0)
	if err != nil {
		return nil, err
	}
	if slices.Contains(v, 0) {
		return nil, usagef("--%s %s: packet length 0; a packet carries at least 1 byte (e.g. 64,256,1K)", flagName, s)
	}
	return v, nil
}

func portion(v float64) bool { return v > 0 && v <= 1 }

func runEmulateKK(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate kk", stderr)
	var e emuFlags
	e.register(fs)
	ks := fs.String("k", "1,2,4,8", "send hot spots k (packets per accessing rank): list or power-of-two range")
	ls := fs.String("l", "64,1K,8K,64K", "packet lengths l in bytes: list or power-of-two range (1:4K)")
	rs := fs.String("r", "0.25,0.5,1", "portions r of accessing application ranks, each in (0, 1]")
	opS := fs.String("op", "read", "read, write, or read,write")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := e.check(fs); err != nil {
		return err
	}
	kv, err := parseIntGrid("k", *ks, 1)
	if err != nil {
		return err
	}
	lv, err := parseLengths("l", *ls)
	if err != nil {
		return err
	}
	rv, err := parseFloatList("r", *rs, portion, "(0, 1]")
	if err != nil {
		return err
	}
	ops, err := parseOps(*opS)
	if err != nil {
		return err
	}
	maxL := slices.Max(lv)
	if err := e.fitsModule("l", *ls, maxL); err != nil {
		return err
	}
	return e.run("kk", stdout, func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error {
		if _, err := s.BenchVars(maxL); err != nil {
			return err
		}
		for _, op := range ops {
			for _, r := range rv {
				for _, k := range kv {
					for _, l := range lv {
						rec, err := emulate.KKAccess(s, emulate.KKPoint{K: k, L: l, R: r, Op: op}, bc)
						if err != nil {
							return err
						}
						if err := emit(rec); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
}

func runEmulateKAccess(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate kaccess", stderr)
	var e emuFlags
	e.register(fs)
	ks := fs.String("k", "5", "send hot spots k: list or power-of-two range")
	ls := fs.String("l", "256", "packet lengths l in bytes")
	hs := fs.String("h", "1/p,0.5,1", "receive hot spots h in [1/p, 1]: the portion of ranks hitting one module in a step; 1/p is none")
	as := fs.String("a", "1,4,16", "asynchrony a: k-accesses between synchronisations")
	ess := fs.String("es", "false,true", "es: same hot module in all a k-accesses (true) or moving (false); true is skipped for a = 1")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := e.check(fs); err != nil {
		return err
	}
	kv, err := parseIntGrid("k", *ks, 1)
	if err != nil {
		return err
	}
	lv, err := parseLengths("l", *ls)
	if err != nil {
		return err
	}
	hspec, err := parseHot(*hs)
	if err != nil {
		return err
	}
	p := e.t.Apps()
	var hv []float64
	for _, h := range hspec {
		v := h.value(p)
		if v < 1/float64(p)-1e-12 {
			return usagef("--h %s: %v is below 1/p; accepted: [1/p, 1] = [%.4g, 1] for %s (p = %d application ranks)", *hs, v, 1/float64(p), e.t.Name(), p)
		}
		hv = append(hv, v)
	}
	av, err := parseIntGrid("a", *as, 1)
	if err != nil {
		return err
	}
	esv, err := parseBoolGrid("es", *ess)
	if err != nil {
		return err
	}
	maxL := slices.Max(lv)
	if err := e.fitsModule("l", *ls, maxL); err != nil {
		return err
	}
	return e.run("kaccess", stdout, func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error {
		if _, err := s.BenchVars(maxL); err != nil {
			return err
		}
		for _, es := range esv {
			for _, h := range hv {
				for _, a := range av {
					if es && a == 1 {
						continue // one k-access: the same hot spot or a moving one is the same thing
					}
					for _, k := range kv {
						for _, l := range lv {
							rec, err := emulate.KAccess(s, emulate.KAPoint{K: k, L: l, H: h, A: a, ES: es}, bc)
							if err != nil {
								return err
							}
							if err := emit(rec); err != nil {
								return err
							}
						}
					}
				}
			}
		}
		return nil
	})
}

func runEmulateSplit(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate split", stderr)
	var e emuFlags
	e.register(fs)
	ints := fs.String("ints", "16,64,256,1K,4K,16K,64K", "variable sizes in integers of 4 bytes (Fig. 14: 16 ... 64K)")
	vs := fs.String("versions", "1,2,3", "splitting versions: 1 one packet, 2 fixed --packet bytes, 3 k0, l0 from the fitted model")
	packet := fs.String("packet", "4K", "packet length of version 2 in bytes")
	minPacket := fs.String("min-packet", "64", "smallest packet version 3 may choose, in bytes")
	fitFile := fs.String("fit", "", "JSON Lines `file` of kkaccess records of this network to fit the model of version 3 (default: measure a calibration sweep first)")
	ck := fs.String("calib-k", "1,2,4,8", "calibration sweep: send hot spots k")
	cl := fs.String("calib-l", "64,1K,8K,64K", "calibration sweep: packet lengths l in bytes")
	cr := fs.String("calib-r", "0.5,1", "calibration sweep: portions r")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := e.check(fs); err != nil {
		return err
	}
	iv, err := parseIntGrid("ints", *ints, 1)
	if err != nil {
		return err
	}
	var versions []emulate.SplitVersion
	for _, f := range strings.Split(*vs, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 3 {
			return usagef("--versions %s: accepted values are 1, 2, 3 as a list (e.g. 1,2,3)", *vs)
		}
		if !slices.Contains(versions, emulate.SplitVersion(v)) {
			versions = append(versions, emulate.SplitVersion(v))
		}
	}
	slices.Sort(versions)
	pk, err := parseSize(*packet)
	if err != nil || pk < 1 {
		return usagef("--packet %s: packet length must be a size >= 1 byte, e.g. 4K", *packet)
	}
	mp, err := parseSize(*minPacket)
	if err != nil || mp < 1 {
		return usagef("--min-packet %s: must be a size >= 1 byte, e.g. 64", *minPacket)
	}
	maxD := slices.Max(iv) * emulate.IntBytes
	e.packetB = pk
	if err := e.fitsModule("ints", *ints, maxD); err != nil {
		return err
	}
	needModel := slices.Contains(versions, emulate.SplitModel)
	var fitted *model.Trilinear
	var calK, calL []int
	var calR []float64
	if needModel && *fitFile != "" {
		if fitted, err = fitFromFile(*fitFile, e.t.Name()); err != nil {
			return err
		}
	} else if needModel {
		if calK, err = parseIntGrid("calib-k", *ck, 1); err != nil {
			return err
		}
		if calL, err = parseLengths("calib-l", *cl); err != nil {
			return err
		}
		if calR, err = parseFloatList("calib-r", *cr, portion, "(0, 1]"); err != nil {
			return err
		}
		if len(calK) < 2 || len(calL) < 2 || len(calR) < 2 || len(calK)*len(calL)*len(calR) <= 8 {
			return usagef("--calib-k/--calib-l/--calib-r: the trilinear fit needs at least 2 levels of each and more than 8 cells; have %d x %d x %d", len(calK), len(calL), len(calR))
		}
		if err := e.fitsModule("calib-l", *cl, slices.Max(calL)); err != nil {
			return err
		}
	}
	return e.run("split", stdout, func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error {
		size := maxD
		if len(calL) > 0 {
			size = max(size, slices.Max(calL))
		}
		if _, err := s.BenchVars(size); err != nil {
			return err
		}
		if needModel {
			tr := fitted
			if tr == nil {
				var recs []results.Record
				for _, r := range calR {
					for _, k := range calK {
						for _, l := range calL {
							rec, err := emulate.KKAccess(s, emulate.KKPoint{K: k, L: l, R: r, Op: "read"}, bc)
							if err != nil {
								return err
							}
							recs = append(recs, rec)
							if err := emit(rec); err != nil {
								return err
							}
						}
					}
				}
				if s.Rank() == 0 {
					tr, err = model.FitTrilinear(recs, model.Options{Op: "read"})
					if err != nil {
						// Every rank learns of the failure through the
						// broadcast below; rank 0 says why.
						fmt.Fprintf(stderr, "commcost: emulate split: trilinear fit of the calibration sweep: %v\n", err)
					}
				}
			}
			if _, err := emulate.BcastSplit(s, tr, mp); err != nil {
				return err
			}
			if s.Rank() == 0 {
				writeSplitModel(stderr, s.Topology().Name(), tr, iv, mp)
			}
		}
		for _, n := range iv {
			recs := make(map[emulate.SplitVersion]*results.Record)
			for _, v := range versions {
				rec, err := emulate.SplitAccess(s, emulate.SplitPoint{Ints: n, Version: v, Op: "read"}, bc)
				if err != nil {
					return err
				}
				recs[v] = &rec
			}
			addSpeedups(recs)
			for _, v := range versions {
				if err := emit(*recs[v]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// addSpeedups puts the speedups of Fig. 14 into the records of one variable
// size: version 2 over version 1, version 3 over version 2, and total
// (version 3 over version 1), each a ratio of median times.
func addSpeedups(recs map[emulate.SplitVersion]*results.Record) {
	ratio := func(a, b emulate.SplitVersion) (float64, bool) {
		ra, rb := recs[a], recs[b]
		if ra == nil || rb == nil || rb.Median <= 0 {
			return 0, false
		}
		return ra.Median / rb.Median, true
	}
	if v, ok := ratio(emulate.SplitOne, emulate.SplitFixed); ok {
		recs[emulate.SplitFixed].Derived["speedup_v2_over_v1"] = v
	}
	if v, ok := ratio(emulate.SplitFixed, emulate.SplitModel); ok {
		recs[emulate.SplitModel].Derived["speedup_v3_over_v2"] = v
	}
	if v, ok := ratio(emulate.SplitOne, emulate.SplitModel); ok {
		recs[emulate.SplitModel].Derived["speedup_total"] = v
	}
}

// fitFromFile fits the trilinear model to the kkaccess read records of one
// network in a JSON Lines file; a missing file or an unusable fit is bad
// input.
func fitFromFile(path, network string) (*model.Trilinear, error) {
	all, err := results.ReadJSONLFile(path)
	if err != nil {
		return nil, usagef("--fit %s: %v", path, err)
	}
	var recs []results.Record
	for _, r := range all {
		if r.Bench == emulate.BenchKKAccess && r.Params["network"] == network {
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		return nil, usagef("--fit %s: no kkaccess records with network %q (measure them with: commcost emulate kk --net '%s' --out %s)", path, network, network, path)
	}
	tr, err := model.FitTrilinear(recs, model.Options{Op: "read"})
	if err != nil {
		return nil, usagef("--fit %s: trilinear fit for %s: %v", path, network, err)
	}
	return tr, nil
}

// writeSplitModel prints the fitted coefficients and the k0, l0 that
// version 3 uses for each size.
func writeSplitModel(w io.Writer, network string, tr *model.Trilinear, ints []int, minPacket int) {
	if tr == nil {
		return
	}
	fmt.Fprintf(w, "trilinear model of %s (s, s/B):", network)
	for i := 7; i >= 0; i-- {
		fmt.Fprintf(w, " c%d=%.4g", i, tr.Coef(i))
	}
	fmt.Fprintf(w, "; fit RSE %.1f%%\n", 100*tr.Fit.RSE)
	if _, err := model.OptimalSplit(tr, 1); err != nil {
		fmt.Fprintf(w, "  %v: version 3 sends one packet\n", err)
	}
	f := emulate.ModelSplit(tr, minPacket)
	for _, n := range ints {
		d := n * emulate.IntBytes
		k, l := f(d)
		fmt.Fprintf(w, "  version 3: %d integers (%d B) as k0=%d packets of l0=%d B\n", n, d, k, l)
	}
}

func runEmulateSelfTest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate selftest", stderr)
	var e emuFlags
	e.register(fs)
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := e.check(fs); err != nil {
		return err
	}
	return withWorld(e.mf.backend, e.mf.np, func(c mpi.Comm) error {
		if err := agree(c, e.rankCheck("selftest")(c)); err != nil {
			return err
		}
		return emulate.Run(c, e.config(), func(s *emulate.Store) error {
			if s.Rank() == 0 {
				fmt.Fprintf(stdout, "selftest of %s on %d ranks (%s backend)\n", e.t.Name(), c.Size(), c.Backend())
			}
			if err := emulate.SelfTest(s, stdout); err != nil {
				return err
			}
			if s.Rank() == 0 {
				fmt.Fprintln(stdout, "PASS")
			}
			return nil
		})
	})
}
