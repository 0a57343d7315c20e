// Command commcost measures communication costs on an MPI cluster, fits cost
// models to the measurements and compares their predictions with real
// parallel programs. Run it under mpirun or srun; see README.md.
package main

import (
	"os"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	code := exitCode(err, os.Stderr)
	// MPI requires every process that initialised it to finalise before
	// exiting, whatever the outcome; otherwise mpirun reports an abnormal
	// termination on top of our message.
	stopNative()
	os.Exit(code)
}
