// Package report turns records and fitted models into what people read:
// the fit report of each model kind (parameters, the kind's own tables,
// fit quality, held-out validation), the generic table of models against
// measured points (Comparison), plots of measured points against model
// curves, and a run directory's report.md and plots/, regenerated from its
// records.jsonl alone (WriteRunDir; `commcost report DIR`).
//
// Everything here is computed from records and models; nothing measures.
// Later presentation (application tables of predicted vs measured phases,
// `commcost compare`) belongs here too and is meant to be built from
// Comparison.
//
// Units follow the records (seconds, bytes, bytes per second); tables
// scale them for reading and say so in their headers: us for seconds, ns/B
// for seconds per byte, MB/s (10^6 bytes) for bytes per second, and sizes
// as 8, 1K, 64K, 1M (K = 2^10).
//
// Files are written whole or not at all: each is rendered in memory,
// written to a temporary file in the target directory and renamed over
// the target, so a failure never leaves a half-written report.md or plot.
package report
