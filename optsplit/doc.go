// Package optsplit runs the experiment of paper 000, section 7 (Fischer,
// Rethmann, Wachsmann, "Minimizing the routing time with use of the cost model"): an access to
// D bytes is cut into k packets of l = D/k bytes; the trilinear k-k-access
// model (section 4) at r = 1,
//
//	T(k, l, 1) = a3 kl + a2 l + a1 k + a0,
//
// is least along kl = D at
//
//	k0 = sqrt(a2/a1 * D),  l0 = sqrt(a1/a2 * D)
//
// (model.OptimalSplit). The experiment has one recipe, whatever carries the
// accesses:
//
//  1. calibrate: a k-k-access sweep over a grid of (k, l, r), one record
//     per cell (or a model fitted beforehand, on rank 0);
//  2. fit the trilinear model on rank 0;
//  3. broadcast its coefficients, so every rank plans the same sweep;
//  4. measure the planned splits and set each against the model's
//     prediction T(k, l, 1);
//  5. report from rank 0's result, which holds the model and every
//     measured point (WriteOptimizeReport and PlotFigure13,
//     WriteVersionsReport).
//
// Run is that recipe over measure functions. Two experiments call it:
// Optimize, the curve of the paper's Figure 13 on plain MPI ranks
// (patterns.KKAccess: the k-k-access around k0 for one D), and Versions, the
// speedups of Figure 14 on an emulated service network (emulate: the
// router's splitting versions 1, 2, 3 over a range of variable sizes).
//
// # Why a package of its own
//
// The recipe needs model (the fit and the optimum), patterns (the plain
// k-k-access) and emulate (the emulated one). Neither of the latter should
// know about the other, and model measures nothing, so the experiment sits
// above all three (and formats with package report). Its two experiments
// are configurations whose tagged fields are the flags of `commcost
// optimize` (OptimizeJob) and `commcost emulate split` (SplitJob): they
// validate themselves, read a --fit file on rank 0 (Load) and Run Optimize
// or Versions with the report; the command line only binds them. Their
// calibration grid is patterns.KKGrid, bound as --cal-k, --cal-l, --cal-r
// and checked for the fit by CheckGrid.
//
// # A model measured beforehand
//
// Instead of a calibration sweep, Config.Model can come from kkaccess
// records measured earlier: FitOptimum for Optimize (plain ranks, one
// access kind), FitNetwork for Versions (the records of one emulated
// network).
//
// # Collective verdicts
//
// Every function here is collective over the accessing ranks. A failure
// that every rank reaches together (the fit on rank 0 fails, or the plan
// refuses the model) is a *ModelError on every rank, so a caller can end
// all ranks alike without aborting the job (on an emulated network,
// RunEmulated shuts the network down in order on such a verdict). Records
// are handed to emit one
// at a time as each completes, on every rank (rank 0's are complete: the
// caller writes those).
//
// Times are seconds, sizes bytes; the paper's "integer" is 4 bytes
// (emulate.IntBytes).
package optsplit
