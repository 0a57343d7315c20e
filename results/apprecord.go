package results

// Application records (docs/ARCHITECTURE.md, contract 5, package apps): bench BenchApp,
// one record per phase of a program, with params "app" (the program),
// "phase" (its name) and "kind" (one of the PhaseKind values) next to the
// program's own; the communication phases carry their Workload. Package
// report reads them without importing the programs.
const (
	BenchApp      = "app"
	PhaseKindComm = "comm" // communication: has a workload, is predicted
	PhaseKindComp = "comp" // local computation
	PhaseKindSync = "sync" // waiting in barriers or locks, which the formulas do not count
)

// DerivedEnvelope is the Derived key of an application phase record's
// lower envelope, in seconds: on every rank each entry into the phase at
// its fastest repetition, summed over the entries, then the maximum over
// ranks (apps.Measure writes it; apps.ByStat judges models on it).
const DerivedEnvelope = "envelope_s"

// DerivedRunPhases is the Derived key of the number of phases the run that
// wrote an application phase record timed (apps.Measure): a reader that
// finds fewer of the run's phase records knows one is missing.
const DerivedRunPhases = "run_phases"
