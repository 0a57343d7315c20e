package emulate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// strategyPrefix introduces an emulated network among the store
// strategies: "emulate:BF(2)".
const strategyPrefix = "emulate:"

// The service network registers itself as the store family "emulate".
func init() {
	globalvar.RegisterFamily(globalvar.Family{Name: "emulate", Order: 2,
		// The networks register in init functions of files after this
		// one: their list is read when the forms are listed.
		FormsOf: func() []string {
			return []string{strategyPrefix + "NET (NET one of " + NetworkForms() + ", the only store of a run)"}
		},
		Parse: func(s string, seed int64) (globalvar.Strategy, error) {
			spec, ok := strings.CutPrefix(s, strategyPrefix)
			if !ok {
				return nil, globalvar.ErrNotMine
			}
			t, err := Parse(spec)
			if err != nil {
				return nil, err
			}
			return Strategy{Config: Config{Topology: t, Seed: seed}}, nil
		}})
}

// Strategy is an emulated service network as a globalvar.Strategy: its
// application ranks run the programs, its service ranks route.
type Strategy struct{ Config Config }

func (st Strategy) Name() string           { return st.Config.Topology.Name() }
func (st Strategy) WorldSize() int         { return st.Config.Topology.Ranks() }
func (st Strategy) AppRanks(world int) int { return st.Config.Topology.Apps() }

// CheckRanks refuses a world that does not fit the network.
func (st Strategy) CheckRanks(world int) error { return st.Config.Topology.CheckRanks(world) }

// Open runs the network over c and fn on its application ranks.
func (st Strategy) Open(c mpi.Comm, fn func(mpi.Comm, globalvar.Store) error) error {
	return Run(c, st.Config, func(s *Store) error { return fn(s.AppComm(), s) })
}

// CheckKK refuses what the network's own k-k-access driver does not draw:
// accesses back to back, and blocks (the driver draws the paper's spread
// accesses).
func (st Strategy) CheckKK(kk patterns.KKAccess) error {
	switch {
	case kk.A > 1:
		return fmt.Errorf("a calibration of %d accesses back to back is measured on the direct store only, not on %s", kk.A, st.Name())
	case kk.Block:
		return fmt.Errorf("a calibration of block accesses is not measured on the emulated network %s", st.Name())
	}
	return nil
}

// MeasureKK measures a k-k-access through the network's own driver
// (KKAccess); s must be the store Open handed out.
func (st Strategy) MeasureKK(_ mpi.Comm, s globalvar.Store, kk patterns.KKAccess, meta results.Meta) (results.Record, error) {
	es, ok := s.(*Store)
	if !ok {
		return results.Record{}, errors.New("emulate: MeasureKK over a store the network did not open")
	}
	bc := BenchConfig{Reps: kk.Reps, Seed: kk.Seed, Meta: meta}
	return KKAccess(es, KKPoint{K: kk.K, L: kk.L, R: kk.R, Op: kk.Op.String()}, bc)
}
