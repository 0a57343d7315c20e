// Command commcost measures communication costs on an MPI cluster, fits cost
// models to the measurements and compares their predictions with real
// parallel programs. Run it under mpirun or srun; see README.md.
package main

import (
	"io"
	"os"
	"runtime/debug"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/job"
)

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode is main but for the exit: it runs the command and returns the
// exit status (job.Main: the error policy), so that it is tested.
func mainCode(args []string, stdout, stderr io.Writer) int {
	return job.Main(func() error { return run(args, stdout, stderr) }, stderr, cli.Printable, debug.Stack)
}

// run is the whole program: main only maps its error to an exit status.
func run(args []string, stdout, stderr io.Writer) error {
	job.Begin(args)
	return cli.Root.Dispatch(args, stdout, stderr)
}

// exitCode is the exit status of err, its message printed on stderr.
func exitCode(err error, stderr io.Writer) int { return job.ExitCode(err, stderr, cli.Printable) }
