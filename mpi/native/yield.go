package native

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
)

// YieldEnv names the environment variable that decides whether an Iprobe
// that finds nothing yields the processor: "1" yes, "0" no, unset: yes
// under MPICH when its launcher started more ranks on this host than the
// process may use cores.
//
// Polling code (divalib's store, the emulated network's nodes) waits for
// messages with Iprobe. On an oversubscribed host a rank that polls without
// pause holds a core that a rank with work needs, until the kernel's time
// slice ends: every message then waits milliseconds. Open MPI yields inside
// an empty poll when mpirun says --mca mpi_yield_when_idle 1 (mpi/mpirun
// adds it). MPICH 4's ch4 device has no such setting
// (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's and changed nothing here), so the
// binding yields itself, with a raw system call: through syscall.Syscall
// the Go scheduler hands the thread's P away whenever the yield lets
// another process run, and takes it back with futex wake-ups. Without
// the yield, commcost dsm check on 4 ranks on 2 cores does not finish
// under MPICH. Blocking calls (Recv, Wait, collectives, the C kernels)
// still spin inside MPICH without yielding, which is why it stays several
// times slower than Open MPI there.
const YieldEnv = "COMMCOST_YIELD_WHEN_IDLE"

// hydraLocalRanks is the variable MPICH's Hydra sets to the number of
// ranks it started on this host.
const hydraLocalRanks = "MPI_LOCALNRANKS"

var yieldIdle atomic.Bool

// yieldWhenIdle decides YieldEnv's question for implementation impl with
// the environment getenv and cores usable by this process. A process bound
// to one core counts as oversubscribed when it has local peers; a yield
// with nothing else runnable on the core returns at once.
func yieldWhenIdle(impl string, getenv func(string) string, cores int) (bool, error) {
	switch v := getenv(YieldEnv); v {
	case "1":
		return true, nil
	case "0":
		return false, nil
	case "":
	default:
		return false, fmt.Errorf("%s=%q: want 1 (yield after an empty Iprobe) or 0 (never); unset, MPICH ranks yield when they outnumber the cores", YieldEnv, v)
	}
	if impl != "mpich" {
		return false, nil
	}
	n, err := strconv.Atoi(getenv(hydraLocalRanks))
	if err != nil {
		return false, nil // not started by Hydra (a singleton, srun): no count to go by
	}
	return n > cores, nil
}

func setYieldWhenIdle() error {
	y, err := yieldWhenIdle(Implementation(), os.Getenv, runtime.NumCPU())
	yieldIdle.Store(y)
	setEngineYield(y)
	return err
}

// idle is called after a poll found nothing.
func idle() {
	if yieldIdle.Load() {
		syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	}
}
