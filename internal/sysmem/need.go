package sysmem

import (
	"fmt"
	"strings"
)

// Need is memory a configuration asks for, estimated from its parameters
// before anything is allocated, so that a run the machine cannot hold is
// refused with one message instead of dying in the runtime's "fatal error:
// out of memory". The libraries state their needs (permsched, apps,
// dsmexp, divalib); the command checks them (job.CheckNeed,
// job.MemNeedOf) and names the flag that Field stands for.
type Need struct {
	// Field is the configuration field the need grows with, by its flag
	// name without dashes ("keys", "samples", "matrix", "steps").
	Field string
	// What names the structure that needs the memory, for the message.
	What string
	// Bytes is the memory: in this process for a sequential computation
	// (sched gen, sched count, a serial oracle), per rank for a program
	// run on every rank of a communicator.
	Bytes float64
	// InFlight is, per rank, the payload in flight at once, which the
	// local backend's queues hold once more; 0 for in-process needs.
	InFlight float64
}

// Largest returns the largest of needs (by Bytes + InFlight), the zero
// Need for none.
func Largest(needs ...Need) Need {
	var worst Need
	for _, n := range needs {
		if n.Bytes+n.InFlight > worst.Bytes+worst.InFlight {
			worst = n
		}
	}
	return worst
}

// Allows says what a bound of Available leaves for a need of need bytes,
// for messages: "available: X (MemAvailable ...)" for the machine's free
// memory, "the limit allows X (...)" when a limit of the job's (a cgroup,
// ulimit -v) is the bound; under ulimit -v it adds the limit that would
// hold the need (RaiseAddressLimit), since most of a small limit is the
// address space the Go runtime and the MPI library reserve at start.
func Allows(need float64, avail int64, source string) string {
	if strings.Contains(source, "RLIMIT") {
		msg := fmt.Sprintf("the limit allows %s (%s)", Format(float64(avail)), source)
		if kb, ok := RaiseAddressLimit(need); ok {
			msg += fmt.Sprintf(": ulimit -v %d or more would hold it", kb)
		}
		return msg
	}
	if strings.Contains(source, "cgroup") {
		return fmt.Sprintf("the limit allows %s (%s)", Format(float64(avail)), source)
	}
	return fmt.Sprintf("available: %s (%s)", Format(float64(avail)), source)
}

// RaiseAddressLimit is the RLIMIT_AS, in kB as ulimit -v takes it, under
// which this process could still take need bytes of heap: what it has
// mapped, the margin and the heap's mapping factor of addressSpaceRoom,
// rounded up to 100000 kB. ok is false when VmSize cannot be read.
func RaiseAddressLimit(need float64) (kb int64, ok bool) {
	mapped, err := vmSize("/proc/self/status")
	if err != nil {
		return 0, false
	}
	bytes := float64(mapped) + goArenaBytes + need*goAddressFactor
	const step = 100000
	return max((int64(bytes/1024)/step+1)*step, MinAddressLimitKB), true
}

// MinAddressLimitKB is the least ulimit -v, in kB, commcost advises: below
// 2 GiB the binary refuses to start (mpi/native's constructor), since the
// Go runtime and the MPI library reserve about 1.6 GiB at start.
const MinAddressLimitKB = 2200000
