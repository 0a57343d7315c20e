// Package model holds commcost's communication cost models
// (docs/ARCHITECTURE.md, contract 4): each model has named parameters
// with standard errors and 95% confidence intervals, is fitted from
// results.Record values, and predicts the time of a pattern instance
// (Model.Predict).
//
// Models, with the paper each comes from (README.md, "The papers"):
//
//   - Hockney t = t_s + t_w m, and piecewise Hockney with automatic
//     breakpoints (protocol switches), fitted on ping-pong records.
//   - LogGP (L, o_s, o_r, g, G) from netgauge's parametrised round trips
//     PRTT(n, d, s), and the LogP and postal baselines reduced from it
//     (paper 003, "LogP", "postal model", "LogGP" slides).
//   - Hyperbolic T(x; a, b) = a^2/(a + b x) + b x with the communication-block
//     algebra (paper 001, rules 1-4) and the derivation of a_w, b_w, a_c, b_c
//     from round-trip, all-to-all, pairwise and row-contention records
//     (paper 001, eqs. 3-5, 8-10, 12-14).
//   - Trilinear k-k-access model T(k,l,r) with eight coefficients (paper 000,
//     section 4, Table 1) and the optimal packet split (paper 000, section 7).
//   - Two-level bisection model and the aggregate-operation cost table for
//     1-D mesh, 2-D mesh and hypercube (paper 003).
//   - BSP (g, L) on h-relations.
//   - The bulk-synchronous models of paper 003's survey, on the supersteps
//     every measured instance consists of (Supersteps): BSP* (g, B, L),
//     QSM (g, d, L), C^3 (s, h, tau, l, bisection width b per p) and CGM
//     (g, L per round of the operation's h-relation).
//
// Fitting rules (docs/MEASURE.md): fit on per-point medians (records at
// the same parameter point are merged by the median of their medians);
// minimise relative error by default (rows weighted by 1/y, because times
// span orders of magnitude); solve least squares by QR, never the normal
// equations; report residual standard error, adjusted R^2, per-coefficient
// standard errors and Student-t 95% confidence intervals and the condition
// number of the design; refuse rank-deficient or ill-conditioned designs
// (condition number above MaxCondition) with an error naming the missing
// parameter levels; trim outliers one-sided only (a measurement can be slowed
// down by interference, never sped up) and count them.
//
// Records read (Record.Median is y; numbers in Params may be int or
// float64; Ranks is the rank count):
//
//	pingpong       {bytes}                 one-way time (half round trip), s
//	roundtrip      {bytes}                 full round trip, s
//	bandwidth      {bytes, window}         B/s (predicted by LogGP only)
//	prtt           {bytes, n, delay_s}     netgauge PRTT(n, d, s), s; with
//	               side=server             the server's time over its n-1
//	                                       delayed receives (gives o_r)
//	alltoall       {bytes}, Ranks = n      s
//	pairwise       {bytes}, Ranks = 2n     s
//	rowcontention  {bytes}, Ranks = 2n     s
//	kkaccess       {k, l, r, op}           time of one k-k-access, s
//	aggregate      {op, impl, bytes}       op in bcast, allgather, scatter,
//	                                       alltoall, qshift, news; impl in
//	                                       mpi, textbook, mesh1d, mesh2d; s
//
// Instances predicted but never fitted (no pattern records them):
//
//	chainshift     {bytes}, Ranks = n      rank i sends x bytes to i+1, all
//	                                       at once (paper 001's multigrid,
//	                                       Table 1); hyperbolic only
//
// Each fitter picks the benches it needs and ignores the others, so one run
// file can feed every model; it is an error when none is present.
//
// Kinds are registered once, from each model's own file (Register in an
// init function, as database/sql drivers register): the fitter, the benches
// it reads, the option groups it reads (Fit refuses the others instead of
// ignoring them), the constructor and check Unmarshal decodes with, and the
// size of a record the MinBytes/MaxBytes window restricts. Kinds, Fit,
// CrossValidate, Unmarshal, the CLI's usage and README's list all read the
// registry, so adding a kind is one file. Presentation (fit tables, plots,
// reports) lives in package report. LeastSquares exports the QR fit every
// linear model here uses, for other packages' cost fits (permsched).
//
// Units: seconds and bytes throughout, in code, in JSON and in Param values
// (Param.Unit names the unit, e.g. "s/B"). Tables may print microseconds and
// say so in the header.
//
// Panics are reserved for programmer misuse; bad data (empty input, records of
// the wrong pattern, NaN/Inf, too few levels) is reported as an error.
package model
