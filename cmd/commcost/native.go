package main

import (
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/native"
)

// init installs the native backend: the system MPI through mpi/native, the
// one package that imports "C", which the job runtime reaches through this
// adapter.
func init() { job.UseNative(nativeMPI{}) }

type nativeMPI struct{}

// Start initialises MPI at MPI_THREAD_SINGLE, as MPI_Init gives OSU's
// benchmarks: every MPI call of commcost comes from the goroutine that
// runs the subcommand, which native.Start locks to its OS thread. Any
// higher level costs Open MPI 4.1 a third more 8-byte latency (see
// mpi/native's doc).
func (nativeMPI) Start() error                 { return native.Start(native.ThreadSingle) }
func (nativeMPI) World() mpi.Comm              { return native.World() }
func (nativeMPI) Initialized() bool            { return native.Initialized() }
func (nativeMPI) Stop() error                  { return native.Stop() }
func (nativeMPI) Abort(code int)               { native.Abort(code) }
func (nativeMPI) WorldRank() int               { return native.WorldRank() }
func (nativeMPI) WorldSize() int               { return native.WorldSize() }
func (nativeMPI) Blocked() (string, int, bool) { return native.Blocked() }
