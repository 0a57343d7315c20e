package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/optsplit"
	"github.com/commcost/commcost/results"
)

// init registers the emulate subcommands: each binds a library
// configuration (emulate's jobs, optsplit.SplitJob) and runs it on a world
// of the network's ranks.
func init() {
	cli.Register(cli.Command{Name: "emulate", Summary: emulate.Summary, More: emulate.More()})
	for _, row := range []struct {
		name string
		new  func() emuJob
	}{
		{"info", func() emuJob { return new(emulate.InfoJob) }},
		{"kk", func() emuJob { return new(emulate.KKJob) }},
		{"kaccess", func() emuJob { return new(emulate.KAJob) }},
		{"split", func() emuJob { return new(optsplit.SplitJob) }},
		{"selftest", func() emuJob { return new(emulate.SelfTestJob) }},
	} {
		cli.Register(cli.Command{Name: "emulate " + row.name, Summary: row.new().Summary(), Run: func(args []string, stdout, stderr io.Writer) error {
			return runEmulate(row.name, row.new(), args, stdout, stderr)
		}})
	}
}

// emuJob is an emulate configuration: InfoJob (no MPI), SelfTestJob
// (text on stdout) or a recorder.
type emuJob interface{ Summary() string }

// recorder is an emulate experiment that writes records.
type recorder interface {
	Network() *emulate.Topology
	Run(c mpi.Comm, meta results.Meta, emit func(results.Record) error, log io.Writer) error
	Points() int
}

// loader is a configuration that reads an input on rank 0 once the ranks
// are up, before any output is opened (optsplit.SplitJob's --fit).
type loader interface {
	Load(c mpi.Comm, warn io.Writer) error
}

// tuneFlags applies a configuration's own defaults and help of the
// shared flags it binds (FlagDefaults, FlagUsage).
func tuneFlags(fs *flag.FlagSet, cfg any) {
	if d, ok := cfg.(interface{ FlagDefaults() map[string]string }); ok {
		for name, v := range d.FlagDefaults() {
			cli.Default(fs, name, v)
		}
	}
	if u, ok := cfg.(interface{ FlagUsage() map[string]string }); ok {
		for name, text := range u.FlagUsage() {
			cli.Usage(fs, name, text)
		}
	}
}

// bindEmulate binds cfg and the launch (and the output, for a recorder)
// to fs and parses args; --np defaults to the ranks the network needs.
func bindEmulate(fs *flag.FlagSet, cfg emuJob, launch *job.Launch, out *job.Output, args []string) (*cli.Bound, error) {
	bound := []any{cfg, launch}
	if _, ok := cfg.(recorder); ok {
		bound = append(bound, out)
	}
	b := cli.Bind(fs, bound...)
	tuneFlags(fs, cfg)
	cli.Default(fs, "np", "0")
	cli.Usage(fs, "np", "ranks for --backend local (default: what the network needs)")
	if err := cli.Parse(fs, args, false); err != nil {
		return b, err
	}
	if t := cfg.(interface{ Network() *emulate.Topology }).Network(); launch.NP == 0 && t != nil {
		launch.NP = min(t.Ranks(), job.MaxLocalRanks)
	}
	return b, b.Validate()
}

func runEmulate(name string, cfg emuJob, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("emulate "+name, stderr)
	if info, ok := cfg.(*emulate.InfoJob); ok {
		b := cli.Bind(fs, info)
		tuneFlags(fs, info)
		if err := b.Check(args, false); err != nil {
			return err
		}
		return info.Write(stdout)
	}
	var launch job.Launch
	var out job.Output
	b, err := bindEmulate(fs, cfg, &launch, &out, args)
	if err != nil {
		return err
	}
	t := cfg.(interface{ Network() *emulate.Topology }).Network()
	ranks := func(c mpi.Comm) error {
		if err := t.CheckRanks(c.Size()); err != nil {
			// Name what set the count (--np, or the launcher's -np) and
			// the network as the user gave it, then the count it takes.
			msg := err.Error()
			if rc := (*emulate.RankCountError)(nil); errors.As(err, &rc) {
				msg = fmt.Sprintf("%s: %s %s", job.RanksText(c), netFlagText(b), rc.Needs())
			}
			if c.Backend() == job.Native {
				return opts.Badf("%s (run: %s)", msg, job.RunLine(t.Ranks(), "emulate", name, "--net", t.Name()))
			}
			return opts.Badf("%s; give --np %d", msg, t.Ranks())
		}
		if l, ok := cfg.(loader); ok {
			return b.Err(l.Load(c, stderr))
		}
		return nil
	}
	r, ok := cfg.(recorder)
	if !ok { // selftest: text on stdout
		return launch.World(func(c mpi.Comm) error {
			if err := job.Agree(c, ranks(c)); err != nil {
				return err
			}
			return cfg.(*emulate.SelfTestJob).Run(c, stdout)
		})
	}
	if m, ok := cfg.(interface{ Mixed() bool }); ok {
		out.Mixed = m.Mixed()
	}
	return job.Measure{Launch: launch, Output: out, Ranks: ranks, Points: r.Points(), Progress: stderr, Label: fs.Name()}.Run(stdout,
		func(c mpi.Comm, meta results.Meta, emit func(results.Record) error) error {
			return r.Run(c, meta, emit, stderr)
		})
}

// netFlagText is "--net SE(1)" as the user gave it (or its default).
func netFlagText(b *cli.Bound) string {
	for _, field := range []string{"Net", "NetFlags.Net"} {
		if b.Binding(0).Flag(field) != "" {
			return b.Binding(0).FlagText(field)
		}
	}
	return "--net"
}
