package apps

import (
	"fmt"
	"math"
	"sort"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// The verification of the Barnes-Hut program (barneshut.go).

// bhForceLimits are the verification's bounds on the error of the tree
// accelerations of the sample against direct summation, as functions of
// theta: on the median of the bodies' relative errors |a_tree - a|/|a|,
// and on the sample's relative error sqrt(sum |a_tree - a|^2 / sum |a|^2)
// (the largest single relative error is reported, not bounded: it comes
// from bodies near the centre, whose acceleration nearly cancels). The
// monopole error of a cell accepted at s < theta d grows like theta^2; the
// constants are about 3 times the largest values measured on the Plummer
// model for N = 300 to 4000, theta = 0.3 to 2 and three seeds each
// (median/theta^2 at most 0.035, global/theta^2 at most 0.09), so a correct
// walk passes and a walk that loses or double-counts a subtree (errors of
// order 1 on most bodies) fails.
func bhForceLimits(theta float64) (median, global float64) {
	t2 := theta * theta
	return 0.1*t2 + 1e-9, 0.25*t2 + 1e-9
}

// verify checks the run and fills the outcome's counters (identical on
// every rank).
func (r *bhRun) verify(out Outcome, kin, pot, zoned, rootMass []float64, interactions float64) (Outcome, error) {
	c := r.c
	cfg := r.cfg
	steps := cfg.Steps
	// One reduction for the per-step figures and the interactions.
	vec := make([]float64, 3*steps+1)
	copy(vec, kin)
	copy(vec[steps:], pot)
	copy(vec[2*steps:], zoned)
	vec[3*steps] = interactions
	sum := make([]float64, len(vec))
	if err := c.AllreduceFloat64s(vec, sum, mpi.OpSum); err != nil {
		return out, err
	}
	var verr error
	for s := 0; s < steps && verr == nil; s++ {
		if got := int(sum[2*steps+s]); got != cfg.Bodies {
			verr = fmt.Errorf("barneshut: step %d: the zones hold %d bodies, want %d (costzones lost or doubled bodies)", s, got, cfg.Bodies)
		}
		// The total mass is 1 (N bodies of mass 1/N).
		if math.Abs(rootMass[s]-1) > 1e-9 {
			verr = fmt.Errorf("barneshut: step %d: the root's mass is %v, the bodies' is 1", s, rootMass[s])
		}
	}
	energy := make([]float64, steps)
	for s := range energy {
		energy[s] = sum[s] + sum[steps+s]
	}
	// Energies beyond what a record holds are an integration gone wild
	// (bodies flung far apart by a huge step; every rank sees the same
	// sums): said as such, not as an unwritable record after the run.
	for s := 0; s < steps && verr == nil; s++ {
		if !(math.Abs(energy[s]) <= results.MaxRecordValue) {
			verr = fmt.Errorf("barneshut: step %d: the total energy is %.3g (%.3g at the first step): the integration diverged; lower the time step --dt (SPLASH-2: 0.025)", s, energy[s], energy[0])
		}
	}
	drift := math.Abs(energy[steps-1]-energy[0]) / math.Abs(energy[0])
	med, largest, global, err := r.forceErrors()
	if err != nil {
		return out, err
	}
	if verr == nil && cfg.Sample > 0 {
		limMed, limGlobal := bhForceLimits(cfg.Theta)
		if med > limMed || global > limGlobal {
			verr = fmt.Errorf("barneshut: tree forces differ from direct summation: median relative error %.3g (limit %.3g), relative error of the sample %.3g (limit %.3g) at theta %v", med, limMed, global, limGlobal, cfg.Theta)
		}
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, err
	}
	// Cells of the last step's tree: the most one rank created (what its
	// pool must hold) and the total.
	used := []float64{float64(r.used), float64(r.used)}
	if r.me == 0 {
		used[1]++ // the root
	}
	cellsMax := []float64{0}
	cellsSum := []float64{0}
	if err := c.AllreduceFloat64s(used[:1], cellsMax, mpi.OpMax); err != nil {
		return out, err
	}
	if err := c.AllreduceFloat64s(used[1:], cellsSum, mpi.OpSum); err != nil {
		return out, err
	}
	out.Counters = map[string]float64{
		"cells": cellsSum[0], "cells_max_per_rank": cellsMax[0], "cell_pool_per_rank": float64(r.pool),
		"energy_first": energy[0], "energy_last": energy[steps-1], "energy_drift": drift,
		"force_err_median": med, "force_err_max": largest, "force_err_global": global,
		"interactions_per_measured_step": sum[3*steps] / math.Max(1, float64(cfg.Measured)),
	}
	return out, nil
}

// forceErrors compares the last step's tree accelerations of the sample
// bodies with direct summation over all bodies at the positions of that
// force phase (on rank 0; the figures are broadcast): the median and the
// largest relative error of a body, and the sample's relative error
// sqrt(sum |a_tree - a|^2 / sum |a|^2).
func (r *bhRun) forceErrors() (median, largest, global float64, err error) {
	c := r.c
	cfg := r.cfg
	n := cfg.Bodies
	// Every rank sends (index, mass, position) of its bodies and
	// (index, tree acceleration) of its sample bodies.
	isSample := func(i int) bool { return cfg.Sample > 0 && i%(n/cfg.Sample) == 0 && i/(n/cfg.Sample) < cfg.Sample }
	// Only local data from here on: the gathers below are plain MPI, and a
	// rank blocked in one serves no store request.
	mine := make([]float64, 0, 5*len(r.mine))
	var samp []float64
	for k, i := range r.mine {
		p := r.forceP[k]
		mine = append(mine, float64(i), r.forceM[k], p[0], p[1], p[2])
		if isSample(i) {
			a := r.acc[k]
			samp = append(samp, float64(i), a[0], a[1], a[2])
		}
	}
	all, err := gatherFloat64s(c, mine)
	if err != nil {
		return 0, 0, 0, err
	}
	tree, err := gatherFloat64s(c, samp)
	if err != nil {
		return 0, 0, 0, err
	}
	res := make([]float64, 3)
	if c.Rank() == 0 && len(tree) > 0 {
		mass := make([]float64, n)
		pos := make([][3]float64, n)
		for k := 0; k+4 < len(all); k += 5 {
			i := int(all[k])
			mass[i], pos[i] = all[k+1], [3]float64{all[k+2], all[k+3], all[k+4]}
		}
		eps2 := cfg.Eps * cfg.Eps
		var errs []float64
		var num, den float64
		for k := 0; k+3 < len(tree); k += 4 {
			i := int(tree[k])
			var a [3]float64
			for j := 0; j < n; j++ {
				if j == i {
					continue
				}
				dx, dy, dz := pos[j][0]-pos[i][0], pos[j][1]-pos[i][1], pos[j][2]-pos[i][2]
				d2 := dx*dx + dy*dy + dz*dz + eps2
				f := mass[j] / (d2 * math.Sqrt(d2))
				a[0] += f * dx
				a[1] += f * dy
				a[2] += f * dz
			}
			ex, ey, ez := tree[k+1]-a[0], tree[k+2]-a[1], tree[k+3]-a[2]
			e2, a2 := ex*ex+ey*ey+ez*ez, a[0]*a[0]+a[1]*a[1]+a[2]*a[2]
			num += e2
			den += a2
			if a2 > 0 {
				errs = append(errs, math.Sqrt(e2/a2))
			}
		}
		if len(errs) > 0 {
			sort.Float64s(errs)
			res[0] = errs[len(errs)/2]
			res[1] = errs[len(errs)-1]
		}
		if den > 0 {
			res[2] = math.Sqrt(num / den)
		}
	}
	if err := mpi.BcastFloat64s(c, res, 0); err != nil {
		return 0, 0, 0, err
	}
	return res[0], res[1], res[2], nil
}

// gatherFloat64s gathers every rank's slice at rank 0 (concatenated in rank
// order; nil elsewhere).
func gatherFloat64s(c mpi.Comm, mine []float64) ([]float64, error) {
	p := c.Size()
	cnt := make([]int64, p)
	if err := c.Allgather(mpi.Int64Bytes([]int64{int64(8 * len(mine))}), mpi.Int64Bytes(cnt)); err != nil {
		return nil, err
	}
	counts := make([]int, p)
	displs := make([]int, p)
	total := 0
	for i, n := range cnt {
		counts[i], displs[i] = int(n), total
		total += int(n)
	}
	var recv []byte
	var out []float64
	if c.Rank() == 0 {
		out = make([]float64, total/8)
		recv = mpi.Float64Bytes(out)
	}
	if err := c.Gatherv(mpi.Float64Bytes(mine), recv, counts, displs, 0); err != nil {
		return nil, err
	}
	return out, nil
}
