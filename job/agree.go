package job

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
)

// agreedError is the error Agree returns on the lowest failing rank. Every
// rank returned from Agree with this verdict, so MPI can be finalised.
type agreedError struct{ err error }

func (a *agreedError) Error() string { return a.err.Error() }
func (a *agreedError) Unwrap() error { return a.err }

// quietError is an error already reported by another rank: it carries the
// exit status but prints nothing, so a bad input under mpirun -np 8 prints
// one message, not eight.
type quietError struct {
	err   error
	usage bool
}

func (q *quietError) Error() string { return q.err.Error() }
func (q *quietError) Unwrap() error { return q.err }

// Reported marks err as a verdict every rank reached, which this rank
// prints (without MPI_Abort).
func Reported(err error) error {
	if err == nil {
		return nil
	}
	return &agreedError{err}
}

// Quiet marks err as a verdict every rank reached, which another rank
// prints; this rank exits with the status without a message.
func Quiet(err error) error {
	if err == nil {
		return nil
	}
	return &quietError{err: err, usage: opts.IsBadInput(err)}
}

// Verdict is Reported on the reporting rank and Quiet on the others.
func Verdict(err error, reporter bool) error {
	if reporter {
		return Reported(err)
	}
	return Quiet(err)
}

// Collective reports whether err is a verdict every rank reached (Agree,
// Reported, Quiet). Any other error may be this rank's alone, with peers
// blocked in a call it will never make; MPI_Finalize would then wait for
// them, so Main aborts the job instead.
func Collective(err error) bool {
	var a *agreedError
	var q *quietError
	return errors.As(err, &a) || errors.As(err, &q)
}

// Agree makes every rank return the same verdict after a step that may
// fail on some ranks only (a rank-count check, opening the output on rank
// 0). It is collective. The lowest failing rank returns its error, which
// Main prints; the others return a quiet error with the same exit status.
func Agree(c mpi.Comm, err error) error {
	var flags [2]int64 // failed, bad input
	lowest := []int64{int64(c.Size())}
	if err != nil {
		flags[0] = 1
		if isUsage(err) {
			flags[1] = 1
		}
		lowest[0] = int64(c.Rank())
	}
	var any [2]int64
	if aerr := c.AllreduceInt64s(flags[:], any[:], mpi.OpMax); aerr != nil {
		return errors.Join(err, aerr)
	}
	if any[0] == 0 {
		return nil
	}
	low := []int64{0}
	if aerr := c.AllreduceInt64s(lowest, low, mpi.OpMin); aerr != nil {
		return errors.Join(err, aerr)
	}
	if err != nil && low[0] == int64(c.Rank()) {
		return &agreedError{err}
	}
	if err == nil {
		err = fmt.Errorf("rank %d failed", low[0])
	}
	return &quietError{err: err, usage: any[1] == 1}
}

// isUsage reports whether err is bad input (exit status 2), a help
// request included.
func isUsage(err error) bool {
	return opts.IsBadInput(err) || errors.Is(err, flag.ErrHelp)
}

// UsageGrace is how long a rank other than the launcher's rank 0 waits
// before it reports bad input found before MPI started (ExitCode).
var UsageGrace = 3 * time.Second

// ExitCode is the exit status of err, printing its message on stderr
// unless another rank prints it: 0 for nil and for a help request (-h,
// --help: the usage was printed), 2 for bad input, 1 for any other
// failure. Bad input found before MPI is started is found the same way
// by every rank of the launch: rank 0 says it at once, the others only
// when the job outlives UsageGrace. printable escapes what a terminal
// must not see raw.
func ExitCode(err error, stderr io.Writer, printable func(string) string) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0 // asked for the usage, as 'commcost help SUB' is
	}
	var q *quietError
	if errors.As(err, &q) {
		if q.usage {
			return 2
		}
		return 1
	}
	usage := isUsage(err)
	if usage && !MPIStarted() && LauncherRank() > 0 {
		// Rank 0 says it; but a rank that exits first makes the launcher
		// end the job, rank 0 perhaps before it printed. So wait: rank 0's
		// exit ends this process; past the grace, rank 0 has not failed
		// (it may not have found the same error: a file on its host) and
		// this rank says it.
		time.Sleep(UsageGrace)
	}
	fmt.Fprintln(stderr, "commcost:", printable(err.Error()))
	if usage {
		return 2
	}
	return 1
}

// Main runs run and returns the exit status: a panic is a runtime failure
// (status 1, the stack on stderr) and ends the job, since peers may wait
// for this rank; an error that is not a collective verdict aborts the job
// (MPI_Abort) for the same reason; MPI is finalised in every other case.
func Main(run func() error, stderr io.Writer, printable func(string) string, stack func() []byte) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "commcost: internal error: %v\n%s", r, stack())
			Abort(1)
			code = 1
		}
	}()
	err := run()
	code = ExitCode(err, stderr, printable)
	if err != nil && !Collective(err) && !errors.Is(err, flag.ErrHelp) {
		Abort(code)
	}
	Stop()
	return code
}

// IsReported reports whether err is a verdict this rank prints (Agree's on
// the lowest failing rank, or Reported).
func IsReported(err error) bool {
	var a *agreedError
	return errors.As(err, &a)
}

// IsQuiet reports whether err is a verdict another rank prints.
func IsQuiet(err error) bool {
	var q *quietError
	return errors.As(err, &q)
}
