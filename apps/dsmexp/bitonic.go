package dsmexp

import (
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// WireOrder returns the processors of mesh m along the leaves of its
// binary decomposition tree, left to right: paper 004 numbers processors
// this way for bitonic sorting and for the costzones of Barnes-Hut
// (section 3.3), so that neighbouring wires (zones) share small submeshes.
// The 4-, 16- and l-k-ary decompositions skip levels of the binary one and
// have the same leaf order up to the l-k-ary leaves' row-major
// enumeration; the binary order is used for every strategy and for the
// hand-optimised version alike, so all run the same circuit placement.
func WireOrder(m divalib.Mesh) ([]int, error) {
	t, err := divalib.TreeFor(m, divalib.Tree2)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, m.Size())
	for n := 0; n < t.Nodes(); n++ { // preorder: leaves come left to right
		if s := t.Submesh(n); s.Size() == 1 {
			out = append(out, m.Rank(s.Row, s.Col))
		}
	}
	return out, nil
}

// Bitonic runs bitonic sorting with merge&split (paper 004, section 3.2)
// with each number of keys per rank in keys, over every strategy of s
// (Hand: apps.BitonicHand), collectively on c, and calls each with every
// result as it completes, together with the hand-optimised result of the
// same point (nil if Hand is not among the strategies). Figures 6 (over m
// on a 16x16 mesh) and 7 (over the mesh with 4096 keys) are runs of this.
func Bitonic(c mpi.Comm, s Setup, keys []int, each func(r Result, hand *Result) error) error {
	p := c.Size()
	if err := s.Check(p, true); err != nil {
		return err
	}
	for _, m := range keys {
		if err := (apps.BitonicConfig{Keys: m}).Check(p); err != nil {
			return err
		}
	}
	mesh, err := s.mesh(p)
	if err != nil {
		return err
	}
	wires, err := WireOrder(mesh)
	if err != nil {
		return err
	}
	for _, m := range keys {
		var hand *Result
		for _, name := range s.ordered() {
			mk := func(probe apps.Probe, links apps.Charger) apps.App {
				cfg := apps.BitonicConfig{Keys: m, Wires: wires, Probe: probe}
				if name == Hand {
					return apps.NewBitonicHand(cfg, links)
				}
				return apps.NewBitonicStore(cfg)
			}
			r, err := runStrategy(c, s, name, pointName(BenchBitonic, results.Params{"keys": m, "strategy": name}), mk)
			if err != nil {
				return fmt.Errorf("bitonic m=%d %s: %w", m, name, err)
			}
			delete(r.Params, "impl")
			if name == Hand {
				h := r
				hand = &h
			}
			if err := each(r, hand); err != nil {
				return err
			}
		}
	}
	return nil
}
