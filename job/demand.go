package job

import (
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Ask for what the machine has, before allocating: every measuring run
// states what its parameters need per rank (its plan's patterns own their
// Demand, or a MemNeed), and Measure refuses with one message naming the
// flag, the need and what is available before it creates any output,
// instead of letting the run grow into the out-of-memory killer. Counts a
// repetition cannot get through within the time budget are refused the
// same way.

// MemNeed is the memory a run asks of one rank.
type MemNeed struct {
	PerRank  float64 // bytes of buffers on the rank that allocates most
	InFlight float64 // payload in flight per rank: the local backend's queues hold it again
	Flag     string  // the flag the need grows with, as given ("--sizes 1G")
	What     string  // the instance or structure that needs it
}

// AvailableMemory is what this process may still allocate and where the
// bound comes from; a test may replace it.
var AvailableMemory = sysmem.Available

// SharedMemory and OwnMemory split AvailableMemory for ranks that are
// processes of their own: what the ranks of a host share (MemAvailable,
// cgroups) and what each rank's address-space limit leaves it alone; a
// test may replace them.
var (
	SharedMemory = sysmem.Shared
	OwnMemory    = sysmem.Own
)

// Demand is what a run asks of the machine: its plan of pattern instances
// on p ranks, checked against MaxTime per point, and a need of its own.
type Demand struct {
	Plan    func(p int) []patterns.Pattern
	Need    func(p int) MemNeed
	MaxTime float64
	// FlagText names the flag, as given, that sets a record parameter
	// ("bytes" -> "--sizes 1G"), for the message of a plan's need.
	FlagText func(param string) string
}

// Check checks the demand on this rank: each point's repetitions against
// MaxTime, and the memory of the largest point (or Need) against what
// this host has for the ranks on it (the whole world for the local
// backend, which runs in this process).
func (d Demand) Check(c mpi.Comm, meta results.Meta) error {
	p := c.Size()
	var worst MemNeed
	if d.Plan != nil {
		plan := d.Plan(p)
		i, dm, err := Largest(plan, p, d.MaxTime)
		if err != nil {
			return opts.Badf("%s: %v", PointName(plan[i], p), err)
		}
		if i >= 0 {
			flag := "--" + dm.MemParam
			if d.FlagText != nil {
				if t := d.FlagText(dm.MemParam); t != "" {
					flag = t
				}
			}
			worst = MemNeed{PerRank: float64(dm.BufferBytes), InFlight: float64(dm.InFlightBytes), Flag: flag, What: PointName(plan[i], p)}
		}
	}
	if d.Need != nil {
		if n := d.Need(p); n.PerRank+n.InFlight > worst.PerRank+worst.InFlight {
			worst = n
		}
	}
	return CheckMemory(c, meta, worst)
}

// CheckMemory compares need with the memory available to the ranks of
// this host.
func CheckMemory(c mpi.Comm, meta results.Meta, need MemNeed) error {
	p := c.Size()
	if c.Backend() == Local {
		// Every rank lives in this process; queues copy messages.
		avail, source, ok := AvailableMemory()
		total := Need{BufferBytes: need.PerRank, InFlightBytes: need.InFlight}.InProcess(p)
		if !ok || total <= float64(avail) {
			return nil
		}
		if need.PerRank+need.InFlight < LocalRankBytes || need.Flag == "" {
			return opts.Badf("--np %d: the local backend's %d ranks need about %s in this process (%s per rank); %s",
				p, p, sysmem.Format(total), sysmem.Format(total/float64(p)), allows(total, avail, source))
		}
		parts := "buffers " + sysmem.Format(need.PerRank)
		if need.InFlight > 0 {
			parts += ", messages in flight " + sysmem.Format(need.InFlight)
		}
		return opts.Badf("%s: %s needs %s per rank (%s), %s for the %d local ranks (--np %d) in this process; %s",
			need.Flag, need.What, sysmem.Format(need.PerRank+need.InFlight+LocalRankBytes), parts,
			sysmem.Format(total), p, p, allows(total, avail, source))
	}
	return checkProcesses(need, ranksOnThisHost(c, meta), mpi.ProcessorName(c))
}

// checkProcesses checks need on the here ranks of host, each a process:
// together against what they share, and each alone against its own
// address-space limit.
func checkProcesses(need MemNeed, here int, host string) error {
	total := Need{BufferBytes: need.PerRank}.OnHost(here)
	if avail, source, ok := SharedMemory(); ok && total > float64(avail) {
		return opts.Badf("%s: %s needs %s per rank, %s for the %d ranks on host %s; %s",
			need.Flag, need.What, sysmem.Format(need.PerRank), sysmem.Format(total), here, host, allows(total, avail, source))
	}
	if avail, source, ok := OwnMemory(); ok && need.PerRank > float64(avail) {
		return opts.Badf("%s: %s needs %s in each rank's process; %s",
			need.Flag, need.What, sysmem.Format(need.PerRank), allows(need.PerRank, avail, source))
	}
	return nil
}

// allows is sysmem.Allows: "available: X (...)" or "the limit allows X
// (...)" when a job's limit is the bound, for a need of need bytes.
func allows(need float64, avail int64, source string) string {
	return sysmem.Allows(need, avail, source)
}

// ranksOnThisHost counts the ranks that share this rank's host.
func ranksOnThisHost(c mpi.Comm, meta results.Meta) int {
	me := mpi.ProcessorName(c)
	for i, h := range meta.Hosts {
		if h == me && i < len(meta.RanksPerHost) {
			return meta.RanksPerHost[i]
		}
	}
	return 1
}

// CheckInProcess refuses a need of bytes in this process that the machine
// cannot give, naming flag (as given) and what needs it.
func CheckInProcess(flag, what string, bytes float64) error {
	avail, source, ok := AvailableMemory()
	if !ok || bytes <= float64(avail) {
		return nil
	}
	return opts.Badf("%s: %s needs about %s in this process; %s",
		flag, what, sysmem.Format(bytes), allows(bytes, avail, source))
}

// CheckNeed checks a library's in-process need (a sequential computation:
// sched gen, sched count, a serial oracle) against what this process may
// take, naming flag, the flag of n.Field as given ("--keys 1e9").
func CheckNeed(flag string, n sysmem.Need) error {
	return CheckInProcess(flag, n.What, n.Bytes+n.InFlight)
}

// MemNeedOf is a library's per-rank need (a program run on every rank) as
// the MemNeed of a measured run (Demand.Need, CheckMemory).
func MemNeedOf(flag string, n sysmem.Need) MemNeed {
	return MemNeed{PerRank: n.Bytes, InFlight: n.InFlight, Flag: flag, What: n.What}
}

// PointName names a pattern instance as its record does: bench and
// parameters.
func PointName(pat patterns.Pattern, p int) string {
	return pat.Bench() + " " + results.ParamList(pat.Params(p))
}
