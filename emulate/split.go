package emulate

import "github.com/commcost/commcost/model"

// splitAccess returns how an access of d bytes is cut into k packets of at
// most l bytes under a splitting version (paper 000, section 7): version 1
// sends one packet (k = 1, l = d); version 2 packets of cfg.PacketBytes;
// version 3 the k0, l0 of cfg.SplitFunc. A zero-length access is one empty
// packet, so that it still reaches the module and is acknowledged.
func splitAccess(d int, version SplitVersion, cfg Config) (k, l int) {
	if d <= 0 {
		return 1, 0
	}
	switch version {
	case SplitFixed:
		l = cfg.PacketBytes
	case SplitModel:
		if cfg.SplitFunc != nil {
			_, l = cfg.SplitFunc(d)
		}
	}
	if l <= 0 || l > d {
		l = d
	}
	return (d + l - 1) / l, l
}

// Packets returns how this rank's router cuts an access of d bytes under
// version: k packets of at most l bytes (version 3 by the rule SetSplitFunc
// set; without one, one packet).
func (s *Store) Packets(d int, version SplitVersion) (k, l int) {
	return splitAccess(d, version, s.cfg)
}

// SetSplitFunc sets the k0, l0 rule of splitting version 3 on this rank.
// Every application rank must set the same rule (optsplit.Versions
// broadcasts the model for that).
func (s *Store) SetSplitFunc(f SplitFunc) { s.cfg.SplitFunc = f }

// ModelSplit is the version-3 rule from a fitted trilinear model: for an
// access of d bytes, the whole-packet optimum model.OptimalSplit gives (paper
// 000, section 7), never below minPacket bytes per packet. Without an
// interior optimum (a1 or a2 not positive) it falls back to one packet.
func ModelSplit(tr *model.Trilinear, minPacket int) SplitFunc {
	minPacket = max(minPacket, 1)
	return func(d int) (int, int) {
		if d <= 0 {
			return 1, 0
		}
		sp, err := model.OptimalSplit(tr, float64(d))
		if err != nil {
			return 1, d
		}
		k := min(max(sp.KInt, 1), max(d/minPacket, 1))
		l := (d + k - 1) / k
		return (d + l - 1) / l, l
	}
}
