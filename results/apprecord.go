package results

// Application records (DESIGN.md contract 5, package apps): bench BenchApp,
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
