package main

// Names the subcommand files used before the job runtime and the command
// tree left this package; each goes as its file is rebuilt on the
// libraries' configurations.

import (
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

type command = cli.Command

func register(c command) { cli.Register(c) }

var root = cli.Root

func lookup(name string) *cli.Node { return cli.Lookup(name) }

func usagef(format string, args ...any) error { return opts.Badf(format, args...) }

func isUsage(err error) bool { return opts.IsBadInput(err) }

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet { return cli.NewFlagSet(name, stderr) }

func parseFlags(fs *flag.FlagSet, args []string, allowArgs bool) error {
	return cli.Parse(fs, args, allowArgs)
}

func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	return cli.ParseInterspersed(fs, args)
}

func echo(s string) string      { return opts.Echo(s) }
func printable(s string) string { return cli.Printable(s) }

const (
	backendNative     = job.Native
	backendLocal      = job.Local
	defaultTimeoutSec = job.DefaultTimeoutSec
	localRankBytes    = job.LocalRankBytes
)

func agree(c mpi.Comm, err error) error { return job.Agree(c, err) }

func withWorld(backend string, np int, fn func(c mpi.Comm) error) error {
	return job.World(backend, np, fn)
}

func newMeta(c mpi.Comm) (results.Meta, error) { return job.NewMeta(c) }
func shortHost(hosts []string) string          { return job.ShortHost(hosts) }
func runLine(np int, args ...string) string    { return job.RunLine(np, args...) }
func collective(err error) bool                { return job.Collective(err) }
func setTimeout(sec float64)                   { job.SetTimeout(sec) }

func checkTimeout(sec float64) error {
	if !(sec > 0) || math.IsInf(sec, 0) {
		return usagef("--timeout %v: must be a positive number of seconds", sec)
	}
	return nil
}

type memNeed struct {
	perRank  float64
	inFlight float64
	flag     string
	what     string
}

func (n memNeed) job() job.MemNeed {
	return job.MemNeed{PerRank: n.perRank, InFlight: n.inFlight, Flag: n.flag, What: n.what}
}

func checkInProcess(flag, what string, bytes float64) error {
	return job.CheckInProcess(flag, what, bytes)
}

func checkMemory(c mpi.Comm, mf *measureFlags, meta results.Meta, need memNeed) error {
	return job.CheckMemory(c, meta, need.job())
}

func pointName(pat patterns.Pattern, p int) string { return job.PointName(pat, p) }

func openOut(path string) (*results.JSONLWriter, error) { return job.OpenOut(path) }

var _ = fmt.Sprint
var _ = sysmem.Format

func checkPlotPath(p string) error {
	if err := report.CheckPlotPath(p); err != nil {
		return usagef("--plot %s: %v", p, err)
	}
	return nil
}
