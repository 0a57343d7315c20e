package emulate

import (
	"slices"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Sweeps of the drivers over a grid of points, in the order 'commcost
// emulate kk' and 'emulate kaccess' have always measured them (the order
// is part of the output: records stream in it).

// KKPoints lists the k-k-accesses of grid g for every access kind of ops
// in sweep order: op outermost, then r, k, and l innermost.
func KKPoints(g patterns.KKGrid, ops []patterns.AccessOp) []KKPoint {
	var out []KKPoint
	for _, op := range ops {
		for _, r := range g.R {
			for _, k := range g.K {
				for _, l := range g.L {
					out = append(out, KKPoint{K: k, L: l, R: r, Op: op.String()})
				}
			}
		}
	}
	return out
}

// KAGrid is a k-access sweep (paper 000, sections 5.1-5.3): every point of
// ES x H x A x K x L, in that nesting order, except ES with A = 1 (one
// k-access has one hot spot, so "the same in all" and "moving" are the
// same point, measured once with ES false).
type KAGrid struct {
	K  []int     // send hot spots
	L  []int     // packet lengths in bytes
	H  []float64 // receive hot spots, each in [1/p, 1]
	A  []int     // k-accesses between synchronisations
	ES []bool    // same hot module in all A k-accesses
}

// Points lists the grid's points in sweep order.
func (g KAGrid) Points() []KAPoint {
	var out []KAPoint
	for _, es := range g.ES {
		for _, h := range g.H {
			for _, a := range g.A {
				if es && a == 1 {
					continue
				}
				for _, k := range g.K {
					for _, l := range g.L {
						out = append(out, KAPoint{K: k, L: l, H: h, A: a, ES: es})
					}
				}
			}
		}
	}
	return out
}

// KKSweep measures every point of KKPoints(g, ops) with KKAccess and hands
// each record to emit as it completes. Collective over the application
// ranks; emit is called on every rank (rank 0's records are the ones to
// write).
func KKSweep(s *Store, g patterns.KKGrid, ops []patterns.AccessOp, bc BenchConfig, emit func(results.Record) error) error {
	return sweep(s, g.L, KKPoints(g, ops), KKAccess, bc, emit)
}

// KASweep measures every point of g with KAccess, as KKSweep does.
func KASweep(s *Store, g KAGrid, bc BenchConfig, emit func(results.Record) error) error {
	return sweep(s, g.L, g.Points(), KAccess, bc, emit)
}

// sweep measures points in order. The variables are created once, at the
// largest packet length of ls, so that the sweep leaves no smaller sets
// behind in the modules (BenchVars).
func sweep[P any](s *Store, ls []int, points []P, measure func(*Store, P, BenchConfig) (results.Record, error),
	bc BenchConfig, emit func(results.Record) error) error {
	if len(points) == 0 {
		return nil
	}
	if _, err := s.BenchVars(slices.Max(ls)); err != nil {
		return err
	}
	for _, pt := range points {
		rec, err := measure(s, pt, bc)
		if err != nil {
			return err
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}
