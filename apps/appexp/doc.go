// Package appexp holds the experiments of 'commcost app' and of the
// applications' part of 'commcost suite', so that the CLI keeps only its
// flags, one call and the printing:
//
//   - StoreRun: paper 000's programs over global-variable stores (direct,
//     divalib's strategies, an emulated service network), each
//     configuration measured phase by phase (apps.Measure), every
//     communication phase predicted by the --model files or by the
//     trilinear fit of a k-k-access sweep measured first on the same store
//     (paper 000, section 4; apps.KKCalibration, apps.FitTrilinearRW), the
//     predictions stored in the records (report.AnnotateApps).
//   - MPRun: the message-passing programs of papers 001 and 003 over
//     mpi.Comm: a calibration of exactly the patterns their workloads name
//     (apps.Calibration), every model kind fitted to it (apps.Fit), each
//     program measured and the models ranked on it (apps.RankAnnotated,
//     report.AppRanking), with paper 003's closed forms where a Hockney or
//     two-level fit gives t_s and t_w.
//   - SuiteStoreSweep and SuiteMP: the small instances 'commcost suite'
//     runs, so that report.md's application tables come from
//     records.jsonl alone.
//
// Every routine that takes an mpi.Comm is collective over it. Records are
// complete on rank 0; emit functions are called where the records are
// written (rank 0, or every rank where a routine says so). Units: seconds
// and bytes.
//
// apps cannot import report (report reads application records without
// knowing the programs), and report does not import apps; this package
// joins them, as apps/dsmexp does for paper 004's experiments.
package appexp
