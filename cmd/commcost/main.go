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
	if err != nil && !collective(err) {
		// Possibly this rank's failure alone: peers may wait for it
		// forever, and so would MPI_Finalize.
		abortNative(code)
	}
	// MPI requires every process that initialised it to finalise before
	// exiting, whatever the outcome; otherwise mpirun reports an abnormal
	// termination on top of our message.
	stopNative()
	os.Exit(code)
}
