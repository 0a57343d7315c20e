// Package dsmexp runs the experiments of paper 004 (Krick, Meyer auf der
// Heide, Räcke, Vöcking, Westermann, "Data Management in Networks:
// Experimental Evaluation of a Provably Good Strategy",
// section 3): an application of
// package apps run over every DIVA strategy of package divalib (fixed home;
// 2-, 4-, 16-, 2-4- and 4-16-ary access trees) and, where the paper has one,
// a hand-optimised message-passing version, reporting per strategy
//
//   - the congestion: the most bytes (and messages) one directed link of
//     the virtual mesh carries in the measured section, under
//     dimension-order routing (divalib.Traffic). It is counted, not timed,
//     so it is the same on mpi/local with 1024 goroutine ranks as on a
//     cluster;
//   - the time: per repetition the maximum over ranks of the rank's
//     measured execution (the sum of the phases the application times),
//     meaningful only under mpirun (the backend is in every record);
//   - ratios of both to the hand-optimised version (Figures 6-7), or the
//     absolute figures where there is none (Barnes-Hut, Figures 8-11).
//
// The applications stay ignorant of the strategy: they call an apps.Probe
// at the start of each measured phase, right after a store barrier, and the
// probe of this package adds the store's traffic and access counters to the
// phase's totals (counter.go). Records (records.go) carry every figure, so
// the ratio tables and the figures (plot.go) are drawn from records alone.
// Sweep (sweep.go) runs an experiment over one world per mesh size (or the
// launcher's one world) into one Output, which writes the records as they
// come and the tables, CSV and figures at the end, over a Host of worlds
// and checks (host.go: package job's).
//
// The subcommands of `commcost dsm` are this package's experiments (Defs,
// commands.go): configurations whose tagged fields are their flags, with
// the shared ones embedded (flags.go: job.Launch, StoreFlags, SweepFlags,
// WarmupFlag), Validate for what needs no world and Run. Every run goes
// through job.World, so the watchdog of --timeout watches it; every
// strategy at every point is a watched point.
//
// The package sits above both apps and divalib (divalib must not import
// apps; apps takes its store from the caller), and below cmd/commcost.
package dsmexp
