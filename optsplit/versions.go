package optsplit

import (
	"errors"
	"slices"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Derived speedups of Figure 14 on the packetsplit records, each a ratio of
// median times of one variable size: version 2 over version 1 (on the
// version-2 record), version 3 over version 2 and version 3 over version 1
// ("total", both on the version-3 record).
const (
	DerivedSpeedupV2V1  = "speedup_v2_over_v1"
	DerivedSpeedupV3V2  = "speedup_v3_over_v2"
	DerivedSpeedupTotal = "speedup_total"
)

// VersionsConfig configures the Figure 14 experiment on an emulated network.
type VersionsConfig struct {
	Ints     []int                  // variable sizes in integers of emulate.IntBytes bytes
	Versions []emulate.SplitVersion // measured in increasing order
	// MinPacket is the smallest packet version 3 may choose, in bytes.
	MinPacket int
	// Grid is the calibration sweep of version 3's model (reads); with no
	// cells, rank 0's Model is used. Neither is needed without version 3.
	Grid  patterns.KKGrid
	Model *model.Trilinear
	Bench emulate.BenchConfig
}

// errNoModel: version 3 was asked for but there is no model to choose k0.
var errNoModel = errors.New("optsplit: splitting version 3 needs a trilinear model (a calibration grid or a fitted model)")

// Versions runs the recipe on the application ranks of an emulated network
// (paper 000, section 7, Figure 14): the calibration cells are the
// network's k-k-accesses ("kkaccess" records, reads), version 3's rule is
// the whole-packet optimum of the broadcast model (emulate.ModelSplit),
// and every variable size is read by every rank from a distinct module
// (r = 1) under each version, one "packetsplit" record per size and
// version, with the speedups of Figure 14 over the versions measured before
// it. Collective over the application ranks of s.
func Versions(s *emulate.Store, cfg VersionsConfig, emit func(results.Record) error) (*Result, error) {
	versions := slices.Sorted(slices.Values(cfg.Versions))
	// The largest variable first: growing sizes would leave smaller sets
	// behind in the modules (Store.BenchVars).
	size := slices.Max(cfg.Ints) * emulate.IntBytes
	if len(cfg.Grid.L) > 0 {
		size = max(size, slices.Max(cfg.Grid.L))
	}
	if _, err := s.BenchVars(size); err != nil {
		return nil, err
	}
	const op = "read"
	// medians of the versions measured so far for the current size.
	var size0 int
	medians := map[emulate.SplitVersion]float64{}
	return Run(s.AppComm(), Config{
		Grid:  cfg.Grid,
		Op:    op,
		Model: cfg.Model,
		Calibrate: func(k, l int, r float64) (results.Record, error) {
			return emulate.KKAccess(s, emulate.KKPoint{K: k, L: l, R: r, Op: op}, cfg.Bench)
		},
		Plan: func(m *model.Trilinear) ([]Point, error) {
			if m != nil {
				s.SetSplitFunc(emulate.ModelSplit(m, cfg.MinPacket))
			} else if slices.Contains(versions, emulate.SplitModel) {
				return nil, errNoModel
			}
			var points []Point
			for _, n := range cfg.Ints {
				d := n * emulate.IntBytes
				for _, v := range versions {
					k, l := s.Packets(d, v)
					points = append(points, Point{DataBytes: d, K: k, L: l, Version: int(v)})
				}
			}
			return points, nil
		},
		Measure: func(p Point) (results.Record, error) {
			v := emulate.SplitVersion(p.Version)
			rec, err := emulate.SplitAccess(s, emulate.SplitPoint{Ints: p.DataBytes / emulate.IntBytes, Version: v, Op: op}, cfg.Bench)
			if err != nil {
				return rec, err
			}
			if p.DataBytes != size0 {
				size0 = p.DataBytes
				clear(medians)
			}
			medians[v] = rec.Median
			addSpeedups(rec.Derived, v, medians)
			return rec, nil
		},
	}, emit)
}

// addSpeedups puts the speedups of Figure 14 that version v's record
// completes into derived, from the medians of one size's versions.
func addSpeedups(derived map[string]float64, v emulate.SplitVersion, medians map[emulate.SplitVersion]float64) {
	ratio := func(a, b emulate.SplitVersion) (float64, bool) {
		ma, okA := medians[a]
		mb, okB := medians[b]
		if !okA || !okB || !(mb > 0) {
			return 0, false
		}
		return ma / mb, true
	}
	switch v {
	case emulate.SplitFixed:
		if r, ok := ratio(emulate.SplitOne, emulate.SplitFixed); ok {
			derived[DerivedSpeedupV2V1] = r
		}
	case emulate.SplitModel:
		if r, ok := ratio(emulate.SplitFixed, emulate.SplitModel); ok {
			derived[DerivedSpeedupV3V2] = r
		}
		if r, ok := ratio(emulate.SplitOne, emulate.SplitModel); ok {
			derived[DerivedSpeedupTotal] = r
		}
	}
}
