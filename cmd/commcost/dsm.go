package main

import (
	"io"

	"github.com/commcost/commcost/apps/dsmexp"
	"github.com/commcost/commcost/cli"
)

// init registers the dsm subcommands (paper 004): each is an experiment of
// package dsmexp (dsmexp.Defs), its configuration bound to the flags,
// checked and run.
func init() {
	cli.Register(cli.Command{Name: "dsm", Summary: "DIVA global variables (paper 004)",
		More: cli.Wrap(dsmexp.StrategiesHelp(), "", cli.UsageWidth) + dsmexp.Examples})
	for _, d := range dsmexp.Defs() {
		cli.Register(cli.Command{Name: "dsm " + d.Name, Summary: d.Summary, Run: func(args []string, stdout, stderr io.Writer) error {
			return runDSM(d, args, stdout, stderr)
		}})
	}
}

// runDSM binds a new configuration of d to its flags (with d's defaults
// and help of the shared ones), checks it and runs it.
func runDSM(d dsmexp.Def, args []string, stdout, stderr io.Writer) error {
	cfg := d.New()
	fs := cli.NewFlagSet("dsm "+d.Name, stderr)
	b := cli.Bind(fs, cfg)
	for name, v := range d.Defaults {
		cli.Default(fs, name, v)
	}
	for name, u := range d.Usage {
		cli.Usage(fs, name, u)
	}
	if d.Args {
		pos, err := cli.ParseInterspersed(fs, args)
		if err != nil {
			return err
		}
		cfg.(dsmexp.ArgsSetter).SetArgs(pos)
		if err := b.Validate(); err != nil {
			return err
		}
	} else if err := b.Check(args, false); err != nil {
		return err
	}
	return cfg.Run(dsmexp.IO{Stdout: stdout, Stderr: stderr, Tell: b.Err, FlagText: b.Binding(0).FlagText})
}
