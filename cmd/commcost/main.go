// Command commcost measures communication costs on an MPI cluster, fits cost
// models to the measurements and compares their predictions with real
// parallel programs. Run it under mpirun or srun; see README.md.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode is main but for the exit: it runs the command and returns the
// exit status, so the mapping of runtime failures to status 1 is tested.
func mainCode(args []string, stdout, stderr io.Writer) (code int) {
	// A panic is a runtime failure, exit status 1 like any other (Go's
	// default, 2, is the status of bad input); it ends the job, since
	// peers may wait for this rank.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "commcost: internal error: %v\n%s", r, debug.Stack())
			abortNative(1)
			code = 1
		}
	}()
	err := run(args, stdout, stderr)
	code = exitCode(err, stderr)
	if err != nil && !collective(err) {
		// Possibly this rank's failure alone: peers may wait for it
		// forever, and so would MPI_Finalize.
		abortNative(code)
	}
	// MPI requires every process that initialised it to finalise before
	// exiting, whatever the outcome; otherwise mpirun reports an abnormal
	// termination on top of our message.
	stopNative()
	return code
}
