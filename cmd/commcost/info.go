package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

func init() {
	cli.Register(cli.Command{Name: "info", Summary: "MPI library, ranks, hosts, ranks per host, GOMAXPROCS, CPU binding, backend", Run: runInfo})
}

// infoFieldLen bounds each rank's per-rank text gathered by info.
const infoFieldLen = 256

func runInfo(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("info", stderr)
	backend := fs.String("backend", job.Native, "native (system MPI) or local (goroutine ranks)")
	np := fs.Int("np", 2, "ranks for --backend local (the native backend runs the world mpirun -np starts: a --np that differs is refused)")
	if err := cli.Parse(fs, args, false); err != nil {
		return err
	}
	if *backend == job.Local && (*np < 1 || *np > 4096) {
		return opts.Badf("--np %d: the local backend takes 1 to 4096 ranks", *np)
	}
	launch := job.Launch{Backend: *backend, NP: *np, Timeout: job.DefaultTimeoutSec, Asked: opts.Given{"NP": cli.Given(fs)["np"]}}
	return launch.World(func(c mpi.Comm) error {
		meta, err := job.NewMeta(c)
		if err != nil {
			return err
		}
		// Each rank's own view: host, binding, GOMAXPROCS.
		mine := fmt.Sprintf("%s\t%s\t%d", mpi.ProcessorName(c), results.Binding(), runtime.GOMAXPROCS(0))
		send := make([]byte, infoFieldLen)
		copy(send, mine)
		// Only rank 0 prints, so only it holds the P fields (an Allgather
		// would cost P^2 bytes over the local backend's ranks).
		var all []byte
		if c.Rank() == 0 {
			all = make([]byte, infoFieldLen*c.Size())
		}
		if err := c.Gather(send, all, 0); err != nil {
			return err
		}
		if c.Rank() != 0 {
			return nil
		}
		var inf mpi.Info
		if d, ok := c.(mpi.Describer); ok {
			inf = d.Info()
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "backend\t%s\n", c.Backend())
		fmt.Fprintf(tw, "mpi library\t%s\n", firstLine(inf.Library))
		fmt.Fprintf(tw, "mpi version\t%s\n", inf.Version)
		fmt.Fprintf(tw, "thread level\t%s\n", inf.ThreadLevel)
		fmt.Fprintf(tw, "wtick\t%g s\n", c.Wtick())
		fmt.Fprintf(tw, "ranks\t%d\n", c.Size())
		hosts := make([]string, len(meta.Hosts))
		for i, h := range meta.Hosts {
			hosts[i] = fmt.Sprintf("%s (%d ranks)", h, meta.RanksPerHost[i])
		}
		fmt.Fprintf(tw, "hosts\t%d: %s\n", len(meta.Hosts), strings.Join(hosts, ", "))
		fmt.Fprintf(tw, "commit\t%s\n", meta.Commit)
		fmt.Fprintf(tw, "go\t%s %s/%s\n", meta.GoVersion, meta.GOOS, meta.GOARCH)
		fmt.Fprintf(tw, "cpu\t%s\n", meta.CPU)
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "rank\thost\tbinding\tgomaxprocs")
		for r := 0; r < c.Size(); r++ {
			f := string(bytes.TrimRight(all[r*infoFieldLen:(r+1)*infoFieldLen], "\x00"))
			fmt.Fprintf(tw, "%d\t%s\n", r, f)
		}
		return tw.Flush()
	})
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimRight(s, ", ")
}
