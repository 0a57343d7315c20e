package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/optsplit"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

func init() {
	register(command{Name: "emulate", Summary: "the service network of paper 000 on MPI ranks", More: emulateMore})
	register(command{Name: "emulate info", Summary: "the network and the partition of the world into application and service ranks (no MPI needed)", Run: runEmulateInfo})
	register(command{Name: "emulate kk", Summary: "k-k-access sweep (k, l, r) through the emulated network", Run: runEmulateKK})
	register(command{Name: "emulate kaccess", Summary: "k-access sweep (h, a, es): receive hot spots and asynchrony", Run: runEmulateKAccess})
	register(command{Name: "emulate split", Summary: "packet splitting, versions 1, 2, 3 (paper 000, section 7, Fig. 14): version 3's k0, l0 from the trilinear model of a calibration sweep or --fit FILE", Run: runEmulateSplit})
	register(command{Name: "emulate selftest", Summary: "functional check of the running network: reads return what was written, barriers hold, no hang under a hot spot, locks exclude, no message lost", Run: runEmulateSelfTest})
}

const emulateMore = `Networks: SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC). A network of
p application ranks and n service nodes runs on p + n ranks, e.g.
  mpirun -np 16 --oversubscribe --mca mpi_yield_when_idle 1 commcost emulate kk --net 'BF(2)'
`

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

// emuFlags are the flags every measuring emulate subcommand shares: the
// pattern subcommands' measurement flags (repetitions, --sync, --seed,
// output, backend) and the network's own.
type emuFlags struct {
	patternFlags
	netSpec   string
	t         *emulate.Topology
	placement string
	moduleMem string
	moduleB   int
	window    int
	linkSlots int
	stall     float64
	packetB   int // version-2 packet length (split only)
	idleYield time.Duration
	idleSleep time.Duration
}

// Defaults of the emulated measurements: a point through the emulated
// network is slower and noisier than a plain one.
const (
	defaultEmuMaxReps = 100
	defaultEmuMaxTime = 2.0 // seconds per point
)

func (e *emuFlags) register(fs *flag.FlagSet, what string) {
	e.registerPattern(fs, patternSpec{name: "emulate " + what, sync: true, seed: true, warmupReps: true,
		maxTime: defaultEmuMaxTime, maxReps: defaultEmuMaxReps})
	// --np defaults to the ranks the network needs (check).
	e.np = 0
	fs.Lookup("np").DefValue = "0"
	fs.Lookup("np").Usage = "ranks for --backend local (default: what the network needs)"
	fs.Lookup("seed").Usage = "seed of the access patterns and of the hash placement (recorded in meta.seed)"
	fs.Lookup("validate").Usage = "not used: the emulated accesses carry no check pattern (emulate selftest checks what reads return)"
	fs.StringVar(&e.netSpec, "net", "BF(2)", "service `network`: SE(d), CCC(d), HC(d), BF(d), mesh(RxC), torus(RxC)")
	fs.StringVar(&e.placement, "placement", "direct", "placement of the Store's variables: direct or hash (the drivers place one variable per module)")
	fs.StringVar(&e.moduleMem, "module-mem", "64M", "memory of one module in bytes (K, M, G = 2^10, 2^20, 2^30)")
	fs.IntVar(&e.window, "window", emulate.DefaultWindow, "requests an application rank keeps in flight")
	fs.IntVar(&e.linkSlots, "link-slots", emulate.DefaultLinkSlots, "packet buffers per link and buffer class (bounded buffering)")
	fs.Float64Var(&e.stall, "stall", emulate.DefaultStallTimeout.Seconds(), "seconds without progress before a stalled network is reported")
	fs.DurationVar(&e.idleYield, "idle-yield", 50*time.Millisecond, "an idle rank polls with sched_yield this long before it sleeps (longer: lower latency, more CPU; local backend default 1ms)")
	fs.DurationVar(&e.idleSleep, "idle-sleep", time.Millisecond, "longest sleep of an idle rank between polls (local backend default 50us)")
}

// check validates the shared flags after parsing.
func (e *emuFlags) check(fs *flag.FlagSet) error {
	var err error
	if e.t, err = parseNet(e.netSpec); err != nil {
		return err
	}
	if e.np == 0 {
		e.np = e.t.Ranks()
	}
	if err := e.checkPattern(fs); err != nil {
		return err
	}
	if e.set["validate"] {
		return usagef("--validate: the emulated accesses carry no check pattern; 'commcost emulate selftest' checks what reads return")
	}
	if e.backend == backendLocal {
		if err := e.t.CheckRanks(e.np); err != nil {
			return usagef("--np %d: %v", e.np, err)
		}
	}
	if _, err := emulate.ParsePlacement(e.placement); err != nil {
		return usagef("--placement %s: accepted values are direct and hash", e.placement)
	}
	if e.moduleB, err = parseSize(e.moduleMem); err != nil || e.moduleB < 1 || e.moduleB > 1<<30 {
		return usagef("--module-mem %s: a module's memory must be a size from 1 byte to 1G, e.g. 64M", e.moduleMem)
	}
	if e.window < 1 {
		return mustBePositive("window", e.window)
	}
	if e.linkSlots < 1 || e.linkSlots > 255 {
		return usagef("--link-slots %d: must be an integer in 1..255", e.linkSlots)
	}
	if !(e.stall > 0) || math.IsInf(e.stall, 0) {
		return usagef("--stall %v: must be a positive number of seconds", e.stall)
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
	if e.set["idle-yield"] {
		cfg.Idle.YieldFor = e.idleYield
	}
	if e.set["idle-sleep"] {
		cfg.Idle.MaxSleep = e.idleSleep
	}
	return cfg
}

func (e *emuFlags) bench(meta results.Meta) emulate.BenchConfig {
	meta.Seed = e.seed
	return emulate.BenchConfig{Reps: e.patternReps(), Seed: e.seed, Meta: meta}
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
func (e *emuFlags) run(what string, stdout io.Writer, body emuBody) error {
	return runMeasured(&e.measureFlags, stdout, e.rankCheck(what), func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
		return e.emulation(c, what, e.bench(meta), emit, body)
	})
}

// emuBody is what a measuring emulate subcommand does on an application rank.
type emuBody func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error

// emulation runs the network on the ranks of c and body on its application
// ranks (optsplit.RunEmulated: a verdict every application rank reaches
// shuts the network down in order). The verdict is agreed over the whole
// world (the service ranks return nil), so that every rank ends alike, the
// message printed once, without MPI_Abort.
func (e *emuFlags) emulation(c mpi.Comm, what string, bc emulate.BenchConfig, emit func(results.Record) error, body emuBody) error {
	err := optsplit.RunEmulated(c, e.config(), func(s *emulate.Store) error { return body(s, bc, emit) })
	var me *optsplit.ModelError
	if err != nil && !errors.As(err, &me) {
		return err
	}
	var mine error
	if me != nil && me.Reporter {
		mine = fmt.Errorf("emulate %s: %w", what, err)
	}
	return agree(c, mine)
}

// parseOps reads --op: read, write or both.
func parseOps(s string) ([]string, error) {
	return parseListOf("op", s, "read, write, or read,write", func(f string) (string, error) {
		if f != "read" && f != "write" {
			return "", fmt.Errorf("%s is not read or write", echo(f))
		}
		return f, nil
	})
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
	e.register(fs, "kk")
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
	kv, err := paramGrid("k", *ks, patterns.BenchKKAccess, "k")
	if err != nil {
		return err
	}
	lv, err := parseLengths("l", *ls)
	if err != nil {
		return err
	}
	rv, err := paramFloats("r", *rs, patterns.BenchKKAccess, "r")
	if err != nil {
		return err
	}
	ops, err := parseOps(*opS)
	if err != nil {
		return err
	}
	if err := e.fitsModule("l", *ls, slices.Max(lv)); err != nil {
		return err
	}
	g := emulate.KKGrid{K: kv, L: lv, R: rv, Ops: ops}
	return e.run("kk", stdout, func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error {
		return emulate.KKSweep(s, g, bc, emit)
	})
}

func runEmulateKAccess(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate kaccess", stderr)
	var e emuFlags
	e.register(fs, "kaccess")
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
	kv, err := paramGrid("k", *ks, patterns.BenchKAccess, "k")
	if err != nil {
		return err
	}
	lv, err := parseLengths("l", *ls)
	if err != nil {
		return err
	}
	hspec, err := opts.ParseList(*hs, "a list of numbers in [1/p, 1], where 1/p may be written as is (1/p,0.5,1)", func(v string) (patterns.Hot, error) {
		var h patterns.Hot
		return h, h.UnmarshalText([]byte(v))
	})
	if err != nil {
		return usagef("--h %s: %v", *hs, err)
	}
	p := e.t.Apps()
	var hv []float64
	for _, h := range hspec {
		v := h.On(p)
		if v < 1/float64(p)-1e-12 {
			return usagef("--h %s: %v is below 1/p; accepted: [1/p, 1] = [%.4g, 1] for %s (p = %d application ranks)", *hs, v, 1/float64(p), e.t.Name(), p)
		}
		hv = append(hv, v)
	}
	av, err := paramGrid("a", *as, patterns.BenchKAccess, "a")
	if err != nil {
		return err
	}
	esv, err := parseBoolGrid("es", *ess)
	if err != nil {
		return err
	}
	if err := e.fitsModule("l", *ls, slices.Max(lv)); err != nil {
		return err
	}
	g := emulate.KAGrid{K: kv, L: lv, H: hv, A: av, ES: esv}
	return e.run("kaccess", stdout, func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error {
		return emulate.KASweep(s, g, bc, emit)
	})
}

func runEmulateSplit(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate split", stderr)
	var e emuFlags
	e.register(fs, "split")
	ints := fs.String("ints", "16,64,256,1K,4K,16K,64K", "variable sizes in integers of 4 bytes (Fig. 14: 16 ... 64K)")
	vs := fs.String("versions", "1,2,3", "splitting versions: 1 one packet, 2 fixed --packet bytes, 3 k0, l0 from the fitted model")
	packet := fs.String("packet", "4K", "packet length of version 2 in bytes")
	minPacket := fs.String("min-packet", "64", "smallest packet version 3 may choose, in bytes")
	fitFile := fs.String("fit", "", "JSON Lines `file` of kkaccess records of this network to fit the model of version 3 (default: measure a calibration sweep first)")
	var cal calFlags
	cal.register(fs, "1,2,4,8", "64,1K,8K,64K", "0.5,1", 1)
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
	versions, err := parseListOf("versions", *vs, "1, 2, 3 as a list (e.g. 1,2,3)", func(f string) (emulate.SplitVersion, error) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > 3 {
			return 0, fmt.Errorf("%s is not 1, 2 or 3", echo(f))
		}
		return emulate.SplitVersion(v), nil
	})
	if err != nil {
		return err
	}
	pk, err := parseSize(*packet)
	if err != nil || pk < 1 {
		return usagef("--packet %s: packet length must be a size >= 1 byte, e.g. 4K", *packet)
	}
	mp, err := parseSize(*minPacket)
	if err != nil || mp < 1 {
		return usagef("--min-packet %s: must be a size >= 1 byte, e.g. 64", *minPacket)
	}
	e.packetB = pk
	if err := e.fitsModule("ints", *ints, slices.Max(iv)*emulate.IntBytes); err != nil {
		return err
	}
	var fitted *model.Trilinear
	var grid optsplit.Grid
	switch {
	case !slices.Contains(versions, emulate.SplitModel):
		// Versions 1 and 2 need no model: a model source would be ignored.
		if e.set["fit"] {
			return usagef("--fit %s: only version 3 uses a model, and --versions %s leaves it out", *fitFile, *vs)
		}
		if err := cal.refuseWith(e.set, "--versions "+*vs+" (only version 3 uses the model)"); err != nil {
			return err
		}
	case *fitFile != "":
		if err := cal.refuseWith(e.set, "--fit "+*fitFile); err != nil {
			return err
		}
		if fitted, err = fitFromFile(*fitFile, e.t.Name(), stderr); err != nil {
			return err
		}
	default:
		if grid, err = cal.parse(); err != nil {
			return err
		}
		if err := e.fitsModule("cal-l", *cal.l, slices.Max(grid.L)); err != nil {
			return err
		}
	}
	return e.run("split", stdout, func(s *emulate.Store, bc emulate.BenchConfig, emit func(results.Record) error) error {
		res, err := optsplit.Versions(s, optsplit.VersionsConfig{Ints: iv, Versions: versions, MinPacket: mp,
			Grid: grid, Model: fitted, Bench: bc}, emit)
		if me := (*optsplit.ModelError)(nil); errors.As(err, &me) && me.Reporter && grid.Cells() > 0 {
			// The sweep's records are written: say so, so the run is not lost.
			return &optsplit.ModelError{Err: fmt.Errorf("%w (the calibration's kkaccess records are in the output; 'commcost emulate split --fit FILE' refits them)", me.Err), Reporter: true}
		}
		if err != nil {
			return err
		}
		if s.Rank() == 0 {
			// Rank 0's records are in; a failure to print is its own.
			return optsplit.WriteVersionsReport(stderr, s.Topology().Name(), res)
		}
		return nil
	})
}

// fitFromFile reads --fit for optsplit.FitNetwork; a missing file, one
// without records of the network or an unusable fit is bad input.
func fitFromFile(path, network string, stderr io.Writer) (*model.Trilinear, error) {
	recs, err := readRecordsFile("--fit", path, stderr)
	if err != nil {
		return nil, err
	}
	tr, err := optsplit.FitNetwork(recs, network)
	if errors.Is(err, optsplit.ErrNoNetworkRecords) {
		return nil, usagef("--fit %s: no kkaccess records with network %q (measure them with: commcost emulate kk --net '%s' --out %s)", path, network, network, path)
	}
	if err != nil {
		return nil, usagef("--fit %s: trilinear fit for %s: %v", path, network, err)
	}
	return tr, nil
}

func runEmulateSelfTest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("emulate selftest", stderr)
	var e emuFlags
	e.register(fs, "selftest")
	if err := parseFlags(fs, args, false); err != nil {
		return err
	}
	if err := e.check(fs); err != nil {
		return err
	}
	return withWorld(e.backend, e.np, func(c mpi.Comm) error {
		if err := agree(c, e.rankCheck("selftest")(c)); err != nil {
			return err
		}
		return emulate.RunSelfTest(c, e.config(), stdout)
	})
}
