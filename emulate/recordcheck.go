package emulate

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"

	// Every store family an application calibrates, so a record naming
	// its store is read as one wherever this check is linked.
	_ "github.com/commcost/commcost/directstore"
	_ "github.com/commcost/commcost/divalib"
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
// parentheses or not) or its record counts the network's service ranks;
// any other name is a store's, one globalvar.ParseStrategy reads.

func init() {
	patterns.RegisterNetworkCheck(checkRecordName)
	// Fig. 14's accesses of ints integers (bytes = IntBytes x ints) under
	// a splitting version, on the network the record names.
	patterns.RegisterBench(BenchSplit,
		patterns.ParamSpec{Key: "ints", Kind: patterns.ParamInt, Min: 1, NoMax: true},
		patterns.SpecBytes,
		patterns.ParamSpec{Key: "version", Kind: patterns.ParamInt, Min: float64(SplitOne), Max: float64(SplitModel)},
		patterns.SpecOp,
		patterns.ParamSpec{Key: "network", Kind: patterns.ParamString})
}

// checkRecordName is the network check of a record as registered: the
// checks of checkRecordNetwork, then the spelling, which is the one its
// writer writes. An emulated network is written by its canonical name
// (Topology.Name: "mesh(2x2)", "BF(3)"), a calibrated store by its
// strategy's Name ("direct", "tree-4"). Other spellings of the same
// network parse, but fit, compare and the tables group records by the
// name as written, and would split one network's records in two.
func checkRecordName(network string, r *results.Record, must bool) error {
	if err := checkRecordNetwork(network, r, must); err != nil {
		return err
	}
	if !must && !emulated(network, r) {
		st, err := globalvar.ParseStrategy(network, 0)
		if err == nil && st.Name() != network {
			return fmt.Errorf("network = %q: a calibration of this store writes it %q", network, st.Name())
		}
		return nil
	}
	if want := canonicalName(network); want != network {
		return fmt.Errorf("network = %q: the emulation writes this network %q (the family's name as in %s, sizes without spaces or leading zeros)", network, want, NetworkForms())
	}
	return checkCountersPresent(r)
}

// canonicalName is the name Topology.Name gives the network spec parses
// to ("mesh(4x4)", "SE(3)"), spec itself when it does not parse.
func canonicalName(spec string) string {
	d, dims, err := parseSpec(spec)
	if err != nil {
		return spec
	}
	if d.Arg == ArgSides {
		return fmt.Sprintf("%s(%dx%d)", d.Kind, dims[0], dims[1])
	}
	return fmt.Sprintf("%s(%d)", d.Kind, dims[0])
}

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

// diameters caches the diameter of SE(d) and CCC(d) by kind and d, the
// only families whose diameter networkShape measures (by breadth-first
// search, at most a few dozen networks in all).
var diameters sync.Map // string -> int

// shapeOf reads network as Parse does and measures it without building
// its routing tables: every spelling of one network has the same shape,
// so the cost of a check depends on the family and sizes only.
func shapeOf(network string) netShape {
	d, dims, err := parseSpec(network)
	if err != nil {
		return netShape{err: err}
	}
	return networkShape(d.Kind, dims)
}

// networkShape is the shape of the network of kind and dims, refused as
// its constructor refuses it (dimension or sides out of range, more than
// MaxNodes service nodes). An access crosses 1 + Dist(entry, module)
// links: on a direct network (node i is application i's entry and holds
// module i) that is 1 to 1 + the diameter; on BF(d) every access crosses
// the d levels, 1 + d links. The diameters: mesh (R-1)+(C-1), torus
// floor(R/2)+floor(C/2), HC(d) d; SE(d) and CCC(d) are searched.
func networkShape(kind Kind, dims []int) netShape {
	var s netShape
	name := fmt.Sprintf("%s(%d)", kind, dims[0])
	switch kind {
	case KindMesh, KindTorus:
		r, c := dims[0], dims[1]
		if s.err = checkSides(kind, r, c); s.err != nil {
			return s
		}
		s.apps, s.nodes, s.minHops = r*c, r*c, 1
		if kind == KindMesh {
			s.maxHops = 1 + (r - 1) + (c - 1)
		} else {
			s.maxHops = 1 + r/2 + c/2
		}
		return s
	case KindSE, KindCCC, KindHC, KindBF:
		d := dims[0]
		if s.err = checkDim(kind, d); s.err != nil {
			return s
		}
		switch kind {
		case KindCCC:
			s.nodes = d << d
		case KindBF:
			s.nodes = (d + 1) << d
		default:
			s.nodes = 1 << d
		}
		if s.err = checkNodes(name, s.nodes); s.err != nil {
			return s
		}
		s.apps, s.minHops, s.maxHops = s.nodes, 1, 1+d
		switch kind {
		case KindBF:
			s.apps, s.minHops = 1<<d, 1+d
		case KindSE:
			s.maxHops = 1 + searchedDiameter(name, s.nodes, func(link func(u, v int)) { seLinks(d, link) })
		case KindCCC:
			s.maxHops = 1 + searchedDiameter(name, s.nodes, func(link func(u, v int)) { cccLinks(d, link) })
		}
		return s
	}
	s.err = fmt.Errorf("%s: no shape for this family", kind)
	return s
}

// searchedDiameter is the diameter of the n-node graph links gives, by
// one breadth-first search per node (cached by name).
func searchedDiameter(name string, n int, links func(link func(u, v int))) int {
	if v, ok := diameters.Load(name); ok {
		return v.(int)
	}
	adj := make([][]int32, n)
	links(func(u, v int) {
		if u != v {
			adj[u] = append(adj[u], int32(v))
			adj[v] = append(adj[v], int32(u))
		}
	})
	dist := make([]int32, n)
	queue := make([]int32, 0, n)
	diam := int32(0)
	for src := range n {
		for i := range dist {
			dist[i] = -1
		}
		dist[src] = 0
		queue = append(queue[:0], int32(src))
		for k := 0; k < len(queue); k++ {
			v := queue[k]
			for _, u := range adj[v] {
				if dist[u] < 0 {
					dist[u] = dist[v] + 1
					diam = max(diam, dist[u])
					queue = append(queue, u)
				}
			}
		}
	}
	diameters.Store(name, int(diam))
	return int(diam)
}

// checkRecordNetwork is the network check of a record (see above).
func checkRecordNetwork(network string, r *results.Record, must bool) error {
	if !must && !emulated(network, r) {
		if _, err := globalvar.ParseStrategy(network, 0); err != nil {
			return fmt.Errorf("network = %q: neither a network --net accepts nor a store an application calibrates (%v)", network, err)
		}
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
	if err := checkLinkCounters(r); err != nil {
		return err
	}
	if r.Bench == BenchSplit {
		ints, ok1 := r.Params["ints"].(int)
		bytes, ok2 := r.Params["bytes"].(int)
		if ok1 && ok2 && int64(bytes) != int64(ints)*IntBytes {
			return fmt.Errorf("bytes = %d with ints = %d: an access of ints integers moves %d x ints = %d bytes", bytes, ints, IntBytes, int64(ints)*IntBytes)
		}
	}
	return checkAccessCounters(r)
}

// linkTol is the relative slack of a link counter recomputed from the
// per-link ones (sums of whole counts, exact; the mean divides them).
const linkTol = 1e-9

// checkLinkCounters ties an emulated record's network counters to each
// other as Counters writes them. With the per-link keys a record has
// ("link.U-V.packets", "link.U-app.bytes", ...): packets and bytes are
// their totals over every link, application links included;
// link_packets_max and link_bytes_max the most, and link_packets_mean the
// mean, over the links between service nodes (written only when the
// network has such links); queue_hwm_max the most over every link and
// held_hwm_max over the nodes ("node.U.held_hwm"). Whether or not the
// per-link keys are there, the busiest link carries at least the mean
// over links and at most the packets or bytes of every link together.
func checkLinkCounters(r *results.Record) error {
	c := r.Counters
	// by field ("packets", "bytes", "queue_hwm"): every link, and the
	// links between service nodes
	all, between := map[string]*linkAgg{}, map[string]*linkAgg{}
	var held linkAgg
	add := func(m map[string]*linkAgg, field string, v float64) {
		if m[field] == nil {
			m[field] = &linkAgg{}
		}
		m[field].add(v)
	}
	for k, v := range c {
		if rest, ok := strings.CutPrefix(k, "link."); ok {
			i := strings.LastIndexByte(rest, '.')
			if i < 0 {
				continue
			}
			pair, field := rest[:i], rest[i+1:]
			add(all, field, v)
			if !strings.HasSuffix(pair, "-app") {
				add(between, field, v)
			}
		} else if strings.HasPrefix(k, "node.") && strings.HasSuffix(k, ".held_hwm") {
			held.add(v)
		}
	}
	differs := func(v, want float64) bool { return math.Abs(v-want) > linkTol*math.Max(1, math.Abs(want)) }
	if all["packets"] != nil || all["bytes"] != nil {
		get := func(m map[string]*linkAgg, field string) *linkAgg {
			if m[field] == nil {
				return &linkAgg{}
			}
			return m[field]
		}
		pk, by := get(between, "packets"), get(between, "bytes")
		for _, t := range []struct {
			key, of, how string
			want         float64
			has          bool
		}{
			{"packets", "link.*.packets", "the total over every link", get(all, "packets").sum, true},
			{"bytes", "link.*.bytes", "the total over every link", get(all, "bytes").sum, true},
			{"link_packets_max", "link.U-V.packets", "the most over the links between service nodes", pk.most, pk.n > 0},
			{"link_bytes_max", "link.U-V.bytes", "the most over the links between service nodes", by.most, by.n > 0},
			{"link_packets_mean", "link.U-V.packets", "the mean over the links between service nodes", pk.mean(), pk.n > 0},
			{"queue_hwm_max", "link.*.queue_hwm", "the most over every link", get(all, "queue_hwm").most, get(all, "queue_hwm").n > 0},
		} {
			v, ok := c[t.key]
			switch {
			case ok && !t.has && strings.HasPrefix(t.key, "link_"):
				return fmt.Errorf("counters %s = %v on a record with no %s counter: the network has no link between service nodes, and the emulation writes %s only when it has", t.key, v, t.of, t.key)
			case ok && t.has && differs(v, t.want):
				return fmt.Errorf("counters %s = %v disagrees with the record's %s counters: it is %s, %v", t.key, v, t.of, t.how, t.want)
			}
		}
	}
	if v, ok := c["held_hwm_max"]; ok && held.n > 0 && differs(v, held.most) {
		return fmt.Errorf("counters held_hwm_max = %v disagrees with the record's node.*.held_hwm counters: it is the most over the nodes, %v", v, held.most)
	}
	most, hasMost := c["link_packets_max"]
	mean, hasMean := c["link_packets_mean"]
	if hasMost && hasMean && most < mean*(1-linkTol) {
		return fmt.Errorf("counters link_packets_max = %v with link_packets_mean = %v: the busiest link carries at least the mean over links", most, mean)
	}
	for _, t := range []struct{ max, total string }{{"link_packets_max", "packets"}, {"link_packets_mean", "packets"}, {"link_bytes_max", "bytes"}} {
		v, ok1 := c[t.max]
		total, ok2 := c[t.total]
		if ok1 && ok2 && v > total*(1+linkTol) {
			return fmt.Errorf("counters %s = %v with %s = %v: a link carries at most the %s of every link together", t.max, v, t.total, total, t.total)
		}
	}
	if n := between["packets"]; hasMost && hasMean && n != nil && most > mean*float64(n.n)*(1+linkTol) {
		return fmt.Errorf("counters link_packets_max = %v with link_packets_mean = %v over %d links: the busiest link carries at most the total over links, %v", most, mean, n.n, mean*float64(n.n))
	}
	return nil
}

// linkAgg is the total, the most and the number of a set of per-link or
// per-node counters (zero when the record has none).
type linkAgg struct {
	sum, most float64
	n         int
}

func (a *linkAgg) add(v float64) {
	a.sum += v
	a.most = max(a.most, v)
	a.n++
}

func (a *linkAgg) mean() float64 {
	if a.n == 0 {
		return 0
	}
	return a.sum / float64(a.n)
}

// checkAccessCounters ties an emulated access record's module counters
// to its parameters (Store.measure, KKAccess, KAccess): reps_counted, the
// repetitions the counters cover, is n plus the warm-up, a whole number;
// a read access writes nothing and a write reads nothing; and every
// accessing rank sends k packets per k-access, each one read or write
// served by a module: a k-k-access has AccessingRanks(r, ranks) accessing
// ranks, a series of a k-accesses has every rank access a times, so
// reads + writes is a whole multiple, at least n, of k x accessing ranks
// (x a): a warm-up cut short by --max-time and late window starts run
// again make the repetitions that ran differ from reps_counted. Derived
// hot_ranks of a k-access is HotRanks(h, ranks).
func checkAccessCounters(r *results.Record) error {
	c := r.Counters
	reps, hasReps := c["reps_counted"]
	if hasReps && (reps != math.Trunc(reps) || reps < float64(r.N) || reps-float64(r.N) > patterns.MaxCount) {
		return fmt.Errorf("counters reps_counted = %v with n = %d: the repetitions the counters cover are the n timed ones and up to %d warm-up ones, a whole number", reps, r.N, patterns.MaxCount)
	}
	reads, hasReads := c["reads"]
	writes, hasWrites := c["writes"]
	switch op, _ := r.Params["op"].(string); {
	case op == patterns.AccessRead.String() && hasWrites && writes != 0:
		return fmt.Errorf("counters writes = %v with op = read: a read access writes nothing", writes)
	case op == patterns.AccessWrite.String() && hasReads && reads != 0:
		return fmt.Errorf("counters reads = %v with op = write: a write access reads nothing", reads)
	}
	k, hasK := patterns.Number(r.Params["k"])
	if !hasK || r.Ranks < 1 {
		return nil
	}
	var per float64
	var how string
	switch r.Bench {
	case BenchKKAccess:
		rr, ok := patterns.Number(r.Params["r"])
		if !ok || !(rr > 0 && rr <= 1) {
			return nil
		}
		n := patterns.AccessingRanks(rr, r.Ranks)
		per, how = k*float64(n), fmt.Sprintf("k x accessing ranks = %v x %d", k, n)
	case BenchKAccess:
		a, ok := patterns.Number(r.Params["a"])
		if !ok {
			return nil
		}
		if h, ok := patterns.Number(r.Params["h"]); ok && h > 0 && h <= 1 {
			if v, ok := r.Derived[patterns.CounterHotRanks]; ok && v != float64(patterns.HotRanks(h, r.Ranks)) {
				return fmt.Errorf("derived %s = %v disagrees with h = %v on ranks = %d: %d ranks hit the hot module", patterns.CounterHotRanks, v, h, r.Ranks, patterns.HotRanks(h, r.Ranks))
			}
		}
		per, how = a*k*float64(r.Ranks), fmt.Sprintf("a x k x ranks = %v x %v x %d", a, k, r.Ranks)
	default:
		return nil
	}
	// Every repetition that ran (warm-up, timed, a late window start run
	// again) made per accesses; at least the n timed ones ran.
	if total := reads + writes; hasReads && hasWrites && per > 0 {
		if q := total / per; q != math.Trunc(q) || q < float64(r.N) {
			return fmt.Errorf("counters reads + writes = %v with %s = %v accesses a repetition and n = %d: the repetitions that ran make a whole number of at least n times those", total, how, per, r.N)
		}
	}
	return nil
}

// accessCounters are the counters measure writes on every access record
// of an emulated network: without them a record's time has nothing to
// tie it to its network, so a record missing one is not the emulation's.
var accessCounters = []string{"service_ranks", "reps_counted", "reads", "writes", "packets", "bytes"}

// checkCountersPresent refuses an emulated access record (k-k-access,
// k-access, packet splitting) that lacks one of accessCounters.
func checkCountersPresent(r *results.Record) error {
	switch r.Bench {
	case BenchKKAccess, BenchKAccess, BenchSplit:
	default:
		return nil
	}
	var missing []string
	for _, k := range accessCounters {
		if _, ok := r.Counters[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("counters %s missing: an emulated %s record carries %s, the network counters of its repetitions", strings.Join(missing, ", "), r.Bench, strings.Join(accessCounters, ", "))
	}
	return nil
}
