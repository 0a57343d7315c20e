package emulate

import (
	"fmt"
	"strings"
	"sync"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The check of an emulated record's network (patterns.RegisterNetworkCheck):
// its "network" parameter is a network --net accepts (Parse, the same
// sides and dimensions), the record's ranks are the network's application
// ranks (the Store's Apps, one per memory module), its service_ranks
// counter is the network's service nodes, and derived hops_mean, a mean of
// the links requests cross (meanHops), lies between the shortest and the
// longest access on it. The parameter also names the store of an
// application's k-k-access calibration ("direct", "fixed-home", "tree-4":
// apps.StoreKKAccess), which no network emulates: a name is an emulated
// network's when it is written as one (a family's name and its size, in
// parentheses or not) or its record counts the network's service ranks.

func init() { patterns.RegisterNetworkCheck(checkRecordNetwork) }

// emulated reports whether network, the "network" parameter of r, names
// an emulated network rather than an application's store (see above).
func emulated(network string, r *results.Record) bool {
	if _, ok := r.Counters["service_ranks"]; ok || strings.ContainsAny(network, "()") {
		return true
	}
	s := strings.ToLower(strings.TrimSpace(network))
	name := strings.TrimRightFunc(s, func(c rune) bool { return c >= '0' && c <= '9' || c == 'x' })
	_, ok := lookupNetwork(name)
	return ok && name != s
}

// netShape is what a record check needs of a network: its application
// ranks, service nodes and the fewest and most links of an access.
type netShape struct {
	apps, nodes      int
	minHops, maxHops int
	err              error
}

// netShapes caches netShape by the network's name as a record spells it:
// a file's records name a few networks, and building one (its routing
// tables) costs up to a second.
var netShapes sync.Map // string -> netShape

// shapeOf parses network and measures it (cached).
func shapeOf(network string) netShape {
	if v, ok := netShapes.Load(network); ok {
		return v.(netShape)
	}
	var s netShape
	t, err := Parse(network)
	if err != nil {
		s.err = err
	} else {
		s.apps, s.nodes = t.Apps(), t.Nodes()
		s.minHops, s.maxHops = -1, 0
		for i := range t.Apps() {
			for m := range t.Apps() {
				d := t.AccessDistance(i, m)
				if s.minHops < 0 || d < s.minHops {
					s.minHops = d
				}
				s.maxHops = max(s.maxHops, d)
			}
		}
	}
	netShapes.Store(network, s)
	return s
}

// checkRecordNetwork is the network check of a record (see above).
func checkRecordNetwork(network string, r *results.Record) error {
	if !emulated(network, r) {
		return nil
	}
	s := shapeOf(network)
	if s.err != nil {
		return fmt.Errorf("network = %q: %v", network, s.err)
	}
	if r.Ranks != s.apps {
		return fmt.Errorf("network = %q on ranks = %d: the network serves %d application ranks, one per memory module, and a record's ranks are those", network, r.Ranks, s.apps)
	}
	if v, ok := r.Counters["service_ranks"]; ok && v != float64(s.nodes) {
		return fmt.Errorf("counters service_ranks = %v disagrees with the %d service nodes of %s", v, s.nodes, network)
	}
	if v, ok := r.Derived["hops_mean"]; ok && (v < float64(s.minHops)*(1-1e-9) || v > float64(s.maxHops)*(1+1e-9)) {
		return fmt.Errorf("derived hops_mean = %v: a request on %s crosses %d to %d links (its application link included), so their mean is in [%d, %d]", v, network, s.minHops, s.maxHops, s.minHops, s.maxHops)
	}
	return nil
}
