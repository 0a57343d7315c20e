package emulate

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The experiments of 'commcost emulate' as configurations (package opts:
// tagged fields are their flags, Validate checks them in field terms) with
// a Run on a world of the network's ranks: KKJob, KAJob, SelfTestJob,
// InfoJob here, and optsplit.SplitJob (Figure 14, which needs the model).

// Summary is the summary of 'commcost emulate'.
const Summary = "the service network of paper 000 on MPI ranks"

// More is what the emulate subcommands share, for the group's usage.
func More() string {
	return fmt.Sprintf(`Networks: %s. A network of
p application ranks and n service nodes runs on p + n ranks, e.g.
  mpirun -np 16 --oversubscribe --mca mpi_yield_when_idle 1 commcost emulate kk --net 'BF(2)'
`, NetworkForms())
}

// NetFlags are the settings of the emulated network every experiment on
// one shares. Zero fields are refused (opts.FillDefaults gives the flags'
// defaults), except the idle policy's, which leave Run's defaults (they
// differ between the native and the local backend).
type NetFlags struct {
	Net       Net           `flag:"net" default:"BF(2)" value:"network" usage:"service network"`
	Placement Placement     `flag:"placement" default:"direct" usage:"placement of the Store's variables: direct or hash (the drivers place one variable per module)"`
	ModuleMem opts.Bytes    `flag:"module-mem" default:"64M" usage:"memory of one module in bytes (K, M, G = 2^10, 2^20, 2^30)"`
	Window    int           `flag:"window" default:"64" usage:"requests an application rank keeps in flight"`
	LinkSlots int           `flag:"link-slots" default:"2" usage:"packet buffers per link and buffer class (bounded buffering)"`
	Stall     float64       `flag:"stall" default:"60" usage:"seconds without progress before a stalled network is reported"`
	IdleYield time.Duration `flag:"idle-yield" usage:"an idle rank polls with sched_yield this long before it sleeps (longer: lower latency, more CPU; default 50ms, local backend 1ms)"`
	IdleSleep time.Duration `flag:"idle-sleep" usage:"longest sleep of an idle rank between polls (default 1ms, local backend 50us)"`
	// Given are the fields set explicitly: an idle duration given as 0 is
	// refused rather than read as its default.
	Given opts.Given
}

// Check refuses settings no network runs with.
func (n *NetFlags) Check() error {
	positive := func(field string, d time.Duration, eg string) error {
		if d < 0 || d == 0 && n.Given.Has(field) {
			return opts.Field(field, "", "must be a positive duration, e.g. %s", eg)
		}
		return nil
	}
	switch {
	case n.Net.Topology == nil:
		return opts.Field("Net", "", "a service network is required: %s", NetworkForms())
	case n.ModuleMem < 1 || n.ModuleMem > 1<<30:
		return opts.Field("ModuleMem", int(n.ModuleMem), "a module's memory must be a size from 1 byte to 1G, e.g. 64M")
	case n.Window < 1 || n.Window > MaxWindow:
		return opts.Field("Window", n.Window, "must be an integer in 1..%d (requests an application rank keeps in flight)", MaxWindow)
	case n.LinkSlots < 1 || n.LinkSlots > 255:
		return opts.Field("LinkSlots", n.LinkSlots, "must be an integer in 1..255")
	}
	if err := opts.CheckSeconds("Stall", n.Stall); err != nil {
		return err
	}
	return patterns.Checks(
		func() error { return positive("IdleYield", n.IdleYield, "5ms") },
		func() error { return positive("IdleSleep", n.IdleSleep, "1ms") })
}

// Network is the service network.
func (n *NetFlags) Network() *Topology { return n.Net.Topology }

// Config is the network's configuration, its hash placement seeded by seed.
func (n *NetFlags) Config(seed int64) Config {
	return Config{Topology: n.Net.Topology, Placement: n.Placement, Seed: seed, ModuleBytes: int(n.ModuleMem),
		Window: n.Window, LinkSlots: n.LinkSlots, StallTimeout: time.Duration(n.Stall * float64(time.Second)),
		Idle: IdlePolicy{YieldFor: n.IdleYield, MaxSleep: n.IdleSleep}}
}

// CheckFits refuses a variable of bytes, whose size field sets, that a
// module cannot hold.
func (n *NetFlags) CheckFits(field string, bytes int) error {
	if bytes > int(n.ModuleMem) {
		return &opts.FieldError{Field: field, Reason: fmt.Sprintf("a variable of %d bytes does not fit in a module's memory of %d bytes ({ModuleMem})", bytes, n.ModuleMem)}
	}
	return nil
}

// CheckLengths refuses a packet length below 1 byte in field: a packet
// through the network carries at least one byte of data.
func CheckLengths(field string, ls []int) error {
	if slices.Contains(ls, 0) {
		return &opts.FieldError{Field: field, Reason: "packet length 0; a packet carries at least 1 byte (e.g. 64,256,1K)"}
	}
	return nil
}

// maxOf is the largest of xs, 0 for none.
func maxOf(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

// Measuring is what the measuring experiments share: the pattern sweeps'
// repetitions (without --validate: the emulated accesses carry no check
// pattern; SelfTestJob checks what reads return), how they start, the
// seed of the access patterns and the hash placement, and the network.
type Measuring struct {
	patterns.RepLimits
	patterns.RepWarmup
	patterns.SyncFlags
	patterns.SeedFlag
	NetFlags
}

// Emulated points are slower and noisier than plain ones: these defaults
// replace the pattern sweeps' (FlagDefaults).
const (
	DefaultMaxReps = 100
	DefaultMaxTime = 2.0 // seconds per point
)

// FlagDefaults are the defaults of the shared flags that the emulation
// sets apart from their structs' (the command line applies them).
func (m *Measuring) FlagDefaults() map[string]string {
	return map[string]string{"max-reps": fmt.Sprint(DefaultMaxReps), "max-time": fmt.Sprint(DefaultMaxTime)}
}

// FlagUsage is the help of the shared flags in the emulation's terms.
func (m *Measuring) FlagUsage() map[string]string {
	return map[string]string{"net": NetUsage(), "seed": "seed of the access patterns and of the hash placement (recorded in meta.seed)"}
}

// Check checks the shared settings.
func (m *Measuring) Check() error {
	return patterns.Checks(m.RepLimits.Check, m.RepWarmup.Check, m.SyncFlags.Check, m.SeedFlag.Check, m.NetFlags.Check)
}

// Bench is the drivers' configuration: the repetitions, the seed, and meta
// with the seed in it.
func (m *Measuring) Bench(meta results.Meta) BenchConfig {
	meta.Seed = m.Seed
	return BenchConfig{Reps: m.SyncFlags.Reps(m.RepWarmup.Reps(m.RepLimits.Reps())), Seed: m.Seed, Meta: meta}
}

// KKJob is 'commcost emulate kk': the k-k-access of paper 000 (section 4)
// through the network over op x r x k x l (KKSweep).
type KKJob struct {
	Measuring
	patterns.KKGrid
	Op []patterns.AccessOp `flag:"op" default:"read" usage:"read, write, or read,write"`
}

// Summary is the subcommand's summary.
func (*KKJob) Summary() string {
	return "k-k-access sweep (k, l, r) through the emulated network"
}

// FlagDefaults are the emulation's defaults and the grid's own.
func (j *KKJob) FlagDefaults() map[string]string {
	d := j.Measuring.FlagDefaults()
	d["l"], d["r"] = "64,1K,8K,64K", "0.25,0.5,1"
	return d
}

// Validate checks the settings and that a packet fits a module, and
// keeps one of the portions r that realise the same r on the network's
// application ranks (patterns.RealisedPortions: listed twice, refused).
func (j *KKJob) Validate() error {
	return patterns.Checks(j.Measuring.Check, j.KKGrid.Validate,
		func() error { return CheckLengths("L", j.L) },
		func() error { return j.CheckFits("L", maxOf(j.L)) },
		func() error {
			rs, err := patterns.RealisedPortions("R", j.R, j.Network().Apps(), j.Given.Has("R"))
			j.R = rs
			return err
		})
}

// Points is the number of records.
func (j *KKJob) Points() int { return len(KKPoints(j.KKGrid, j.Op)) }

// Run measures the sweep on the ranks of c (emulate.Run: c must have the
// network's ranks); emit is called on the application ranks, rank 0's
// records complete.
func (j *KKJob) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, _ io.Writer) error {
	bc := j.Bench(meta)
	return Run(c, j.Config(j.Seed), func(s *Store) error { return KKSweep(s, j.KKGrid, j.Op, bc, emit) })
}

// KAJob is 'commcost emulate kaccess': the k-access of paper 000 (section
// 5) with receive hot spots h and asynchrony a (KASweep).
type KAJob struct {
	Measuring
	K  opts.Ints      `flag:"k" default:"5" param:"k" usage:"send hot spots k: a list or a power-of-two range"`
	L  opts.Ints      `flag:"l" default:"256" param:"l" usage:"packet lengths l in bytes"`
	H  []patterns.Hot `flag:"h" default:"1/p,0.5,1" usage:"receive hot spots h in [1/p, 1]: the portion of ranks hitting one module in a step; 1/p is none"`
	A  opts.Ints      `flag:"a" default:"1,4,16" param:"a" usage:"asynchrony a: k-accesses between synchronisations"`
	ES opts.Bools     `flag:"es" default:"false,true" usage:"es: same hot module in all a k-accesses (true) or moving (false); true is skipped for a = 1"`
}

// Summary is the subcommand's summary.
func (*KAJob) Summary() string {
	return "k-access sweep (h, a, es): receive hot spots and asynchrony"
}

// Validate checks the settings: every h at least 1/p for the network's p
// application ranks, and a packet fits a module.
func (j *KAJob) Validate() error {
	return patterns.Checks(j.Measuring.Check,
		func() error {
			return patterns.CheckRunValues("K", patterns.BenchKAccess, "k", j.K, patterns.MaxPackets, "the send hot spot k")
		},
		func() error { return patterns.CheckValues("L", patterns.BenchKAccess, "l", j.L) },
		func() error { return CheckLengths("L", j.L) },
		func() error {
			p := j.Net.Apps()
			for _, h := range j.H {
				if h.On(p) < 1/float64(p)-1e-12 {
					return opts.Item("H", h, "below 1/p; accepted: [1/p, 1] = [%.4g, 1] for %s (p = %d application ranks)", 1/float64(p), j.Net.Name(), p)
				}
			}
			return nil
		},
		func() error {
			return patterns.CheckRunValues("A", patterns.BenchKAccess, "a", j.A, patterns.MaxPackets, "the k-accesses a between synchronisations")
		},
		func() error { return j.CheckFits("L", maxOf(j.L)) })
}

// Grid is the sweep's grid on the network's application ranks.
func (j *KAJob) Grid() KAGrid {
	g := KAGrid{K: j.K, L: j.L, A: j.A, ES: j.ES}
	for _, h := range j.H {
		g.H = append(g.H, h.On(j.Net.Apps()))
	}
	return g
}

// Points is the number of records.
func (j *KAJob) Points() int { return len(j.Grid().Points()) }

// Run measures the sweep on the ranks of c, as KKJob.Run.
func (j *KAJob) Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, _ io.Writer) error {
	bc, g := j.Bench(meta), j.Grid()
	return Run(c, j.Config(j.Seed), func(s *Store) error { return KASweep(s, g, bc, emit) })
}

// SelfTestJob is 'commcost emulate selftest' (RunSelfTest).
type SelfTestJob struct {
	NetFlags
	patterns.SeedFlag
}

// Summary is the subcommand's summary.
func (*SelfTestJob) Summary() string {
	return "functional check of the running network: reads return what was written, barriers hold, no hang under a hot spot, locks exclude, no message lost"
}

// FlagUsage is the help of the shared flags in the self-test's terms.
func (*SelfTestJob) FlagUsage() map[string]string {
	return map[string]string{"net": NetUsage(), "seed": "seed of the hash placement (--placement hash)"}
}

// Validate checks the settings.
func (j *SelfTestJob) Validate() error { return patterns.Checks(j.NetFlags.Check, j.SeedFlag.Check) }

// Run runs the self-test on the ranks of c and writes its lines to w on
// rank 0.
func (j *SelfTestJob) Run(c mpi.Comm, w io.Writer) error { return RunSelfTest(c, j.Config(j.Seed), w) }

// InfoJob is 'commcost emulate info' (WriteInfo); it needs no MPI.
type InfoJob struct {
	Net    Net            `flag:"net" default:"BF(2)" value:"network" usage:"service network"`
	NP     int            `flag:"np" usage:"check that a world of this many ranks fits the network (0: do not check)"`
	Routes bool           `flag:"routes" usage:"also print every node's routing table"`
	Format results.Format `flag:"format" value:"format" usage:"output format on stdout: table or markdown (info prints tables only)"`
}

// Summary is the subcommand's summary.
func (*InfoJob) Summary() string {
	return "the network and the partition of the world into application and service ranks (no MPI needed)"
}

// FlagUsage is the help of --net.
func (*InfoJob) FlagUsage() map[string]string { return map[string]string{"net": NetUsage()} }

// Validate refuses a world size the network does not fit, and a format
// that is not a table.
func (j *InfoJob) Validate() error {
	if j.Net.Topology == nil {
		return opts.Field("Net", "", "a service network is required: %s", NetworkForms())
	}
	if j.Format != results.FormatTable && j.Format != results.FormatMarkdown {
		return opts.Field("Format", j.Format, "emulate info prints tables: accepted are table and markdown")
	}
	if j.NP != 0 {
		if err := j.Net.CheckRanks(j.NP); err != nil {
			if rc := (*RankCountError)(nil); errors.As(err, &rc) {
				return opts.Field("NP", j.NP, "{Net} %s %s", j.Net.Name(), rc.Needs())
			}
			return opts.Field("NP", j.NP, "%v", err)
		}
	}
	return nil
}

// Write prints the network (WriteInfo).
func (j *InfoJob) Write(w io.Writer) error {
	return WriteInfo(w, j.Net.Topology, j.Routes, j.Format == results.FormatMarkdown)
}
