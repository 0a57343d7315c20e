package main

import (
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/simgrid"
)

func init() {
	cli.Register(cli.Command{Name: "export", Summary: "write commcost's calibration or traces in another tool's format"})
	cli.Register(cli.Command{Name: "export simgrid", Run: runExportSimGrid,
		Summary: "a SimGrid platform (platform.xml, hostfile) and SMPI configuration (smpi.cfg: lat-factor, bw-factor, os, or, ois) reproducing a fitted model: commcost export simgrid MODEL.json [--out DIR]"})
	cli.Register(cli.Command{Name: "export tit", Run: runExportTIT,
		Summary: "convert a trace directory to SimGrid's time-independent trace format (rank-N.tit and simgrid.txt for smpirun -replay), as commcost trace --simgrid does"})
}

func runExportSimGrid(args []string, stdout, stderr io.Writer) error {
	var e simgrid.Export
	fs := cli.NewFlagSet("export simgrid", stderr)
	b := cli.Bind(fs, &e)
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return opts.Badf("want one model file: commcost export simgrid MODEL.json [--out DIR]")
	}
	if err := b.Validate(); err != nil {
		return err
	}
	e.Model = pos[0]
	return e.Run()
}

func runExportTIT(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("export tit", stderr)
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return opts.Badf("want one trace directory: commcost export tit DIR")
	}
	return simgrid.WriteDirTIT(pos[0])
}
