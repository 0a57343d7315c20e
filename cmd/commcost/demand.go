package main

import (
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
	"github.com/commcost/commcost/runguard"
)

// Ask for what the machine has, before allocating (issue 18, class 2):
// every measuring subcommand states what its parameters need per rank
// (measureFlags.points, whose patterns own their Demand, or need), and
// runMeasured refuses with exit 2 and one message naming the flag, the
// need and what is available before it creates any output, instead of
// letting the run grow into the out-of-memory killer. Counts a repetition
// cannot get through within the time budget are refused the same way.

// memNeed is the memory a run asks of one rank.
type memNeed struct {
	perRank  float64 // bytes of buffers on the rank that allocates most
	inFlight float64 // payload in flight per rank: the local backend's queues hold it again
	flag     string  // the flag the need grows with, as given ("--sizes 1G")
	what     string  // the instance or structure that needs it
}

// localRankBytes is what one goroutine rank of the local backend costs
// beyond its buffers.
const localRankBytes = runguard.LocalRankBytes

// memFlags maps the parameter a pattern's memory grows with to the flag
// that sets it.
var memFlags = map[string]string{"bytes": "sizes", "l": "l", "k": "k"}

// flagText is "--name value" for a flag as given on the command line, or
// "--name" when it was left at its default.
func flagText(mf *measureFlags, name string) string {
	if v, ok := mf.given[name]; ok {
		return "--" + name + " " + echo(v)
	}
	return "--" + name
}

// availableMemory is what this process may still allocate and where the
// bound comes from; a test may replace it.
var availableMemory = sysmem.Available

// checkDemand checks the run's points (or need) on this rank: each
// point's repetitions against --max-time, and the memory of the largest
// point against what this host has for the ranks on it (the whole world
// for the local backend, which runs in this process).
func checkDemand(c mpi.Comm, mf *measureFlags, meta results.Meta) error {
	p := c.Size()
	var worst memNeed
	if mf.plan != nil {
		plan := mf.plan(p)
		i, d, err := runguard.Largest(plan, p, mf.maxTime)
		if err != nil {
			return usagef("%s: %v or raise --max-time", pointName(plan[i], p), err)
		}
		if i >= 0 {
			flag := memFlags[d.MemParam]
			if flag == "" {
				flag = d.MemParam
			}
			worst = memNeed{perRank: float64(d.BufferBytes), inFlight: float64(d.InFlightBytes), flag: flagText(mf, flag), what: pointName(plan[i], p)}
		}
	}
	if mf.need != nil {
		if n := mf.need(p); n.perRank+n.inFlight > worst.perRank+worst.inFlight {
			worst = n
		}
	}
	return checkMemory(c, mf, meta, worst)
}

// checkMemory compares need with the memory available to the ranks of
// this host.
func checkMemory(c mpi.Comm, mf *measureFlags, meta results.Meta, need memNeed) error {
	avail, source, ok := availableMemory()
	if !ok {
		return nil
	}
	p := c.Size()
	if c.Backend() == backendLocal {
		// Every rank lives in this process; queues copy messages.
		total := runguard.Need{BufferBytes: need.perRank, InFlightBytes: need.inFlight}.InProcess(p)
		if total <= float64(avail) {
			return nil
		}
		if need.perRank+need.inFlight < localRankBytes || need.flag == "" {
			return usagef("--np %d: the local backend's %d ranks need about %s in this process (%s per rank); available: %s (%s)",
				p, p, sysmem.Format(total), sysmem.Format(total/float64(p)), sysmem.Format(float64(avail)), source)
		}
		parts := "buffers " + sysmem.Format(need.perRank)
		if need.inFlight > 0 {
			parts += ", messages in flight " + sysmem.Format(need.inFlight)
		}
		return usagef("%s: %s needs %s per rank (%s), %s for the %d local ranks (--np %d) in this process; available: %s (%s)",
			need.flag, need.what, sysmem.Format(need.perRank+need.inFlight+localRankBytes), parts,
			sysmem.Format(total), p, p, sysmem.Format(float64(avail)), source)
	}
	here := ranksOnThisHost(c, meta)
	total := runguard.Need{BufferBytes: need.perRank}.OnHost(here)
	if total <= float64(avail) {
		return nil
	}
	return usagef("%s: %s needs %s per rank, %s for the %d ranks on host %s; available there: %s (%s)",
		need.flag, need.what, sysmem.Format(need.perRank), sysmem.Format(total), here, mpi.ProcessorName(c), sysmem.Format(float64(avail)), source)
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

// checkInProcess refuses a need of bytes in this process that the
// machine cannot give, naming flag (as given) and what needs it.
func checkInProcess(flag, what string, bytes float64) error {
	avail, source, ok := availableMemory()
	if !ok || bytes <= float64(avail) {
		return nil
	}
	return usagef("%s: %s needs about %s in this process; available: %s (%s)",
		flag, what, sysmem.Format(bytes), sysmem.Format(float64(avail)), source)
}
