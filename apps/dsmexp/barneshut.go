package dsmexp

import (
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// BarnesHut runs the Barnes-Hut simulation (paper 004, section 3.3) with
// each number of bodies in bodies (cfg gives theta, the steps and the
// rest; its Bodies, Zones and Probe are set here) over every strategy of s,
// collectively on c, and calls each with every result as it completes. The
// zones go to the processors along the mesh decomposition's leaves
// (WireOrder), as in the paper. Figure 8 (N = 10,000-60,000 on 16x16),
// Figures 9-10 (its tree-building and force phases) and Figure 11 (N = 200
// P over the mesh) are runs of this.
func BarnesHut(c mpi.Comm, s Setup, cfg apps.BarnesHutConfig, bodies []int, each func(r Result) error) error {
	p := c.Size()
	if err := s.Check(p, false); err != nil {
		return err
	}
	mesh, err := s.mesh(p)
	if err != nil {
		return err
	}
	zones, err := WireOrder(mesh)
	if err != nil {
		return err
	}
	for _, n := range bodies {
		bc := cfg
		bc.Bodies, bc.Zones = n, zones
		if err := bc.Check(p); err != nil {
			return err
		}
	}
	for _, n := range bodies {
		for _, name := range s.ordered() {
			mk := func(probe apps.Probe, _ apps.Charger) apps.App {
				bc := cfg
				bc.Bodies, bc.Zones, bc.Probe = n, zones, probe
				return apps.NewBarnesHut(bc)
			}
			r, err := runStrategy(c, s, name, pointName(BenchBarnesHut, results.Params{"bodies": n, "strategy": name}), mk)
			if err != nil {
				return fmt.Errorf("barneshut N=%d %s: %w", n, name, err)
			}
			if err := each(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// bhRecordPhases are the record phases of a Barnes-Hut result: the whole
// measured part, then the paper's six phases (the force phase's time is
// its walk plus its interactions).
var bhRecordPhases = []string{PhaseTotal, apps.BHLoad, apps.BHCofm, apps.BHPartition, apps.BHForce, apps.BHAdvance, apps.BHSize}

// BarnesHutRecords turns a result into one record per phase (param
// "phase": total, load, cofm, partition, force, advance, size): the time
// summed over the measured steps (per repetition, max over ranks), the
// congestion and access counts of the phase, and on the total record the
// application's figures (energy drift, force errors against direct
// summation, interactions); the force record's derived local_comp_s is the
// median time of its interactions (local computation, Fig. 10).
func BarnesHutRecords(r Result, ranks int, meta results.Meta) []results.Record {
	phaseSec := func(name string) []float64 {
		for _, ph := range r.Phases {
			if ph.Name == name {
				return ph.Sec
			}
		}
		return nil
	}
	var out []results.Record
	for _, ph := range bhRecordPhases {
		sec := r.TimeSec
		if ph != PhaseTotal {
			sec = append([]float64(nil), phaseSec(ph)...)
		}
		var comp []float64
		if ph == apps.BHForce {
			// Per repetition the walk and the interactions add up: both
			// are maxima over ranks, so the sum bounds the phase from
			// above by at most the imbalance between them.
			comp = phaseSec(apps.BHForceComp)
			for i := range sec {
				if i < len(comp) {
					sec[i] += comp[i]
				}
			}
		}
		s, _ := r.Section(ph)
		rec := r.record(BenchBarnesHut, ranks, meta, sec, s, nil, nil, Section{}, results.Params{"phase": ph})
		if comp != nil {
			rec.Derived[KeyLocalComp] = results.Summarize(comp).Median
		}
		if ph == PhaseTotal {
			for k, v := range r.Counters {
				if k == KeyEnergyDrift {
					rec.Derived[k] = v
				} else {
					rec.Counters[k] = v
				}
			}
		}
		out = append(out, rec)
	}
	return out
}
