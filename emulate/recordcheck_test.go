package emulate

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestRecordNetwork: an emulated record's network is one --net accepts,
// serving the record's ranks, with the service ranks and mean hops a run
// on it has; a record as the driver writes it passes.
func TestRecordNetwork(t *testing.T) {
	rec := func(network string, ranks int, hops, service float64) results.Record {
		return results.Record{Bench: BenchKKAccess, Ranks: ranks, Unit: results.UnitSeconds,
			Params:  results.Params{"k": 1, "l": 64, "r": 0.5, "op": "read", "network": network},
			Summary: results.Summarize([]float64{3e-6, 9e-6, 3e-5}),
			Derived: map[string]float64{"hops_mean": hops}, Counters: map[string]float64{"service_ranks": service, "r_asked": 0.5,
				"reps_counted": 3, "reads": float64(3 * patterns.AccessingRanks(0.5, ranks)), "writes": 0, "packets": 0, "bytes": 0}}
	}
	// A calibration of an application's store names the store.
	store := func(name string) results.Record {
		r := rec(name, 4, 0, 0)
		r.Derived, r.Counters = nil, map[string]float64{"accessing_ranks": 2, "r_realised": 0.5, "r_asked": 0.5}
		return r
	}
	tests := []struct {
		name string
		rec  results.Record
		want string // "" accepted
	}{
		{"mesh(1x2) as measured", rec("mesh(1x2)", 2, 1.52, 2), ""},
		{"torus(4x4) as measured", rec("torus(4x4)", 16, 2.9, 16), ""},
		{"emu_netbad", rec("nosuch(9)", 2, 1.5, 2), `network = "nosuch(9)": topology "nosuch(9)": unknown network "nosuch"; accepted: SE(d)`},
		{"emu_net13", rec("mesh(1x3)", 2, 1.5, 3), `network = "mesh(1x3)" on ranks = 2: the network serves 3 application ranks`},
		{"emu_net_huge", rec("mesh(8589934605x545761658833005647)", 2, 1.5, 2), "sides out of range; accepted 1..64"},
		{"emu_hops", rec("mesh(1x2)", 2, 1e300, 2), "derived hops_mean = 1e+300: a request on mesh(1x2) crosses 1 to 2 links (its application link included), so their mean is in [1, 2]"},
		{"hops below one link", rec("mesh(1x2)", 2, 0.5, 2), "derived hops_mean = 0.5"},
		{"service ranks of another network", rec("mesh(1x2)", 2, 1.5, 9), "counters service_ranks = 9 disagrees with the 2 service nodes of mesh(1x2)"},
		{"an application's store, fixed-home", store("fixed-home"), ""},
		{"an application's store, tree-4", store("tree-4"), ""},
		{"an application's store, direct", store("direct"), ""},
		{"an application's store, tree-2-4", store("tree-2-4"), ""},
		{"a store no family has", store("nosuch"), `network = "nosuch": neither a network --net accepts nor a store an application calibrates ("nosuch" is not a store; accepted: a comma list of direct,`},
		{"a store spelled with a control character", store("direct\x1b[2J"), `network = "direct\x1b[2J": neither`},
		{"a network without parentheses on the wrong ranks", store("bf3"), `network = "bf3" on ranks = 4: the network serves 8 application ranks`},
		{"an unknown network of the emulation's counters", rec("nosuch", 2, 1.5, 2), `network = "nosuch": topology "nosuch": unknown network "nosuch"`},
		{"a network in capitals", rec("Mesh(1x2)", 2, 1.52, 2), `network = "Mesh(1x2)": the emulation writes this network "mesh(1x2)" (the family's name as in SE(d),`},
		{"a network with spaces", rec("mesh(1 x 2)", 2, 1.52, 2), `network = "mesh(1 x 2)": the emulation writes this network "mesh(1x2)"`},
		{"a network with a leading zero", rec("torus(04x4)", 16, 2.9, 16), `writes this network "torus(4x4)"`},
		{"a network in lower case", rec("se(2)", 4, 1.5, 4), `network = "se(2)": the emulation writes this network "SE(2)"`},
		{"a network by its alias", rec("butterfly(1)", 2, 2, 4), `writes this network "BF(1)"`},
		{"a network without parentheses", rec("bf1", 2, 2, 4), `network = "bf1": the emulation writes this network "BF(1)"`},
		{"a square mesh by one side", rec("mesh(2)", 4, 1.5, 4), `writes this network "mesh(2x2)"`},
		{"SE(2) as measured", rec("SE(2)", 4, 1.5, 4), ""},
		{"an emulated record without its counters", func() results.Record { r := rec("SE(2)", 4, 1.5, 4); r.Counters = nil; return r }(), "counters service_ranks, reps_counted, reads, writes, packets, bytes missing"},
		{"a store of the emulation's prefix", store("emulate:bf1"), `network = "emulate:bf1": a calibration of this store writes it "BF(1)"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rec.CheckValues()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestNetworkShape: the shape a record check uses (applications, service
// nodes, fewest and most links of an access) is the one the built
// network has, measured over every pair of application and module, and
// a network its constructor refuses is refused with the same message.
func TestNetworkShape(t *testing.T) {
	var specs []string
	for d := 1; d <= 12; d++ {
		for _, f := range []string{"SE", "CCC", "HC", "BF"} {
			specs = append(specs, fmt.Sprintf("%s(%d)", f, d))
		}
	}
	for r := 0; r <= 9; r++ {
		for c := 0; c <= 9; c++ {
			specs = append(specs, fmt.Sprintf("mesh(%dx%d)", r, c), fmt.Sprintf("torus(%dx%d)", r, c))
		}
	}
	specs = append(specs, "mesh(65x1)", "torus(2x65)", "mesh(3x64)", "torus(64x3)", "SE(0)", "SE(13)", "CCC(1)", "BF(10)")
	for _, spec := range specs {
		got := shapeOf(spec)
		// Only the networks up to 2048 nodes are built here, to keep the
		// test short.
		if got.err == nil && got.nodes > 2048 {
			continue
		}
		top, err := Parse(spec)
		if err != nil {
			if got.err == nil || got.err.Error() != err.Error() {
				t.Errorf("%s: shape error %v, Parse %v", spec, got.err, err)
			}
			continue
		}
		if name := canonicalName(spec); name != top.Name() {
			t.Errorf("%s: canonical name %q, built network %q", spec, name, top.Name())
		}
		want := netShape{apps: top.Apps(), nodes: top.Nodes(), minHops: -1}
		for i := range top.Apps() {
			for m := range top.Apps() {
				h := top.AccessDistance(i, m)
				if want.minHops < 0 || h < want.minHops {
					want.minHops = h
				}
				want.maxHops = max(want.maxHops, h)
			}
		}
		if got != want {
			t.Errorf("%s: shape %+v, built network %+v", spec, got, want)
		}
	}
}

// distinctSpellings are n spellings of the largest networks of each
// family, each written differently (case, leading zeros, a sign, spaces,
// parentheses left out).
func distinctSpellings(n int) []string {
	bases := []func(pad string) string{
		func(p string) string { return "mesh(" + p + "64x64)" },
		func(p string) string { return "TORUS(" + p + "64X" + p + "64)" },
		func(p string) string { return "hc(" + p + "12)" },
		func(p string) string { return "SE " + p + "12" },
		func(p string) string { return "ccc(+" + p + "8)" },
		func(p string) string { return "butterfly" + p + "8" },
	}
	var out []string
	for i := 0; len(out) < n; i++ {
		for _, b := range bases {
			out = append(out, b(strings.Repeat("0", i)))
		}
	}
	return out[:n]
}

// TestRecordNetworkSpellings: a few hundred records naming the largest
// networks, each spelled differently, are each checked as the network
// they name (healthy ranks pass, wrong ranks are refused).
func TestRecordNetworkSpellings(t *testing.T) {
	for _, spec := range distinctSpellings(300) {
		s := shapeOf(spec)
		if s.err != nil {
			t.Fatalf("%s: %v", spec, s.err)
		}
		r := results.Record{Bench: BenchKKAccess, Ranks: s.apps, Unit: results.UnitSeconds,
			Params:  results.Params{"k": 1, "l": 64, "r": 0.5, "op": "read", "network": spec},
			Summary: results.Summarize([]float64{3e-6, 9e-6, 3e-5}),
			Derived: map[string]float64{"hops_mean": float64(s.minHops+s.maxHops) / 2}, Counters: map[string]float64{"service_ranks": float64(s.nodes), "r_asked": 0.5, "reps_counted": 3, "reads": float64(3 * patterns.AccessingRanks(0.5, s.apps)), "writes": 0, "packets": 0, "bytes": 0}}
		if err := checkRecordNetwork(spec, &r, false); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
		r.Ranks++
		if err := checkRecordNetwork(spec, &r, false); err == nil || !strings.Contains(err.Error(), "application ranks") {
			t.Errorf("%s on ranks %d: %v, want a refusal of the ranks", spec, r.Ranks, err)
		}
	}
}

// BenchmarkRecordNetworkSpellings is the cost of checking the network of
// one record, over records naming the largest networks each spelled
// differently (ns/op is per record).
func BenchmarkRecordNetworkSpellings(b *testing.B) {
	specs := distinctSpellings(300)
	for i := 0; b.Loop(); i++ {
		if s := shapeOf(specs[i%len(specs)]); s.err != nil {
			b.Fatal(s.err)
		}
	}
}

// TestAccessCounterRecords: the k-k-access and k-access records the
// drivers write on networks of 2, 3 and 4 application ranks, with and
// without warm-up, reads and writes, pass the record check; the same
// records with the module counters or hot ranks edited are refused,
// naming the relation.
func TestAccessCounterRecords(t *testing.T) {
	recs := map[string]results.Record{}
	for _, net := range []struct {
		spec   string
		warmup int
	}{{"BF(1)", -1}, {"mesh(1x3)", 5}, {"SE(2)", 0}} {
		runLocal(t, net.spec, Config{}, func(s *Store) error {
			bc := BenchConfig{Reps: patterns.Reps{Warmup: net.warmup, MinReps: 3, MaxReps: 3}, Seed: 2}
			kk, err := KKAccess(s, KKPoint{K: 3, L: 40, R: 0.7, Op: "write"}, bc)
			if err != nil {
				return err
			}
			kr, err := KKAccess(s, KKPoint{K: 2, L: 24, R: 1, Op: "read"}, bc)
			if err != nil {
				return err
			}
			ka, err := KAccess(s, KAPoint{K: 3, L: 16, H: 0.4, A: 3}, bc)
			if err != nil {
				return err
			}
			sp, err := SplitAccess(s, SplitPoint{Ints: 24, Version: SplitOne, Op: "read"}, bc)
			if err != nil {
				return err
			}
			if s.Rank() == 0 {
				recs[net.spec+" kk write"], recs[net.spec+" kk read"], recs[net.spec+" kaccess"] = kk, kr, ka
				recs[net.spec+" split"] = sp
			}
			return nil
		})
	}
	for name, r := range recs {
		if err := r.CheckValues(); err != nil {
			t.Errorf("%s as the driver wrote it: %v", name, err)
		}
	}
	edits := []struct {
		name, rec string
		edit      func(r *results.Record)
		want      string
	}{
		{"fewer repetitions counted than timed", "mesh(1x3) kk read", func(r *results.Record) { r.Counters["reps_counted"] = 2 }, "counters reps_counted = 2 with n = 3: the repetitions the counters cover are the n timed ones and up to"},
		{"a fraction of a repetition", "BF(1) kaccess", func(r *results.Record) { r.Counters["reps_counted"] += 0.5 }, "a whole number"},
		{"writes on a read", "SE(2) kk read", func(r *results.Record) { r.Counters["writes"] = 1 }, "counters writes = 1 with op = read: a read access writes nothing"},
		{"writes on a k-access", "mesh(1x3) kaccess", func(r *results.Record) { r.Counters["writes"] = 4 }, "counters writes = 4 with op = read"},
		{"reads on a write", "BF(1) kk write", func(r *results.Record) { r.Counters["reads"] = 2 }, "counters reads = 2 with op = write: a write access reads nothing"},
		{"a write short of its packets", "mesh(1x3) kk write", func(r *results.Record) { r.Counters["writes"]-- }, "with k x accessing ranks = 3 x 2 = 6 accesses a repetition and n = 3: the repetitions that ran make a whole number"},
		{"reads of another k", "SE(2) kk read", func(r *results.Record) { r.Params["k"] = 5 }, "with k x accessing ranks = 5 x 4 = 20 accesses a repetition"},
		{"reads of fewer repetitions than timed", "BF(1) kaccess", func(r *results.Record) { r.Counters["reads"] = 2 * 18 }, "with a x k x ranks = 3 x 3 x 2 = 18 accesses a repetition and n = 3"},
		{"reads of a k-access series of another a", "SE(2) kaccess", func(r *results.Record) { r.Params["a"] = 7 }, "with a x k x ranks = 7 x 3 x 4 = 84 accesses a repetition"},
		{"hot ranks of another h", "mesh(1x3) kaccess", func(r *results.Record) { r.Derived["hot_ranks"] = 3 }, "derived hot_ranks = 3 disagrees with h = 0.3333333333333333 on ranks = 3: 1 ranks hit the hot module"},
		{"busiest link below the mean over links", "mesh(1x3) kk write", func(r *results.Record) {
			dropLinkKeys(r)
			r.Counters["link_packets_max"] = r.Counters["link_packets_mean"] / 2
		}, "the busiest link carries at least the mean over links"},
		{"busiest link beyond every link's packets", "BF(1) kaccess", func(r *results.Record) {
			dropLinkKeys(r)
			r.Counters["link_packets_max"] = r.Counters["packets"] + 1
		}, "a link carries at most the packets of every link together"},
		{"busiest link's bytes beyond every link's", "SE(2) kk read", func(r *results.Record) {
			dropLinkKeys(r)
			r.Counters["link_bytes_max"] = r.Counters["bytes"] * 2
		}, "a link carries at most the bytes of every link together"},
		{"busiest link not the most of the links", "mesh(1x3) kk read", func(r *results.Record) { r.Counters["link_packets_max"]-- }, "disagrees with the record's link.U-V.packets counters: it is the most over the links between service nodes"},
		{"mean over links not the links' mean", "SE(2) kaccess", func(r *results.Record) { r.Counters["link_packets_mean"] += 0.5 }, "it is the mean over the links between service nodes"},
		{"busiest link's bytes not the most", "BF(1) kk write", func(r *results.Record) { r.Counters["link_bytes_max"]++ }, "counters link_bytes_max"},
		{"one link's packets edited", "mesh(1x3) kaccess", func(r *results.Record) { r.Counters["link.0-app.packets"]++ }, "counters packets = "},
		{"bytes not the links' total", "BF(1) kk read", func(r *results.Record) { r.Counters["bytes"]-- }, "disagrees with the record's link.*.bytes counters: it is the total over every link"},
		{"queue high-water mark of no link", "SE(2) kk write", func(r *results.Record) { r.Counters["queue_hwm_max"] += 7 }, "counters queue_hwm_max"},
		{"held buffers of no node", "mesh(1x3) kk write", func(r *results.Record) { r.Counters["held_hwm_max"] += 3 }, "it is the most over the nodes"},
		{"no counters", "SE(2) kk read", func(r *results.Record) { r.Counters = map[string]float64{} }, "counters service_ranks, reps_counted, reads, writes, packets, bytes missing: an emulated kkaccess record carries"},
		{"a k-access without its repetition count", "BF(1) kaccess", func(r *results.Record) { delete(r.Counters, "reps_counted") }, "counters reps_counted missing"},
		{"a split without its module counters", "mesh(1x3) split", func(r *results.Record) { delete(r.Counters, "reads"); delete(r.Counters, "writes") }, "counters reads, writes missing"},
		// Fig. 14's packet splitting: its parameters and its network's
		// counters are checked as a k-k-access's are.
		{"a split of another size", "SE(2) split", func(r *results.Record) { r.Params["bytes"] = 65 }, "bytes = 65 with ints = 24: an access of ints integers moves 4 x ints = 96 bytes"},
		{"a split version no router has", "BF(1) split", func(r *results.Record) { r.Params["version"] = 9 }, "version = 9"},
		{"a split of no access kind", "mesh(1x3) split", func(r *results.Record) { r.Params["op"] = "frobnicate" }, `op = "frobnicate"`},
		{"a split on a network of other ranks", "mesh(1x3) split", func(r *results.Record) { r.Params["network"] = "torus(9x9)" }, "the network serves 81 application ranks"},
		{"a split's network misspelt", "SE(2) split", func(r *results.Record) { r.Params["network"] = "se(2)" }, `network = "se(2)": the emulation writes this network "SE(2)"`},
		{"a split's link counters edited", "SE(2) split", func(r *results.Record) { r.Counters["link_bytes_max"]++ }, "counters link_bytes_max"},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := recs[tc.rec]
			if !ok {
				t.Fatalf("no record %q", tc.rec)
			}
			r = cloneRecord(r)
			tc.edit(&r)
			err := r.CheckValues()
			if err == nil {
				err = r.Validate() // the parameters' checks too, as a read has them
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
		})
	}
}

// dropLinkKeys removes r's per-link counters, leaving the totals and
// maxima over the network.
func dropLinkKeys(r *results.Record) {
	for k := range r.Counters {
		if strings.HasPrefix(k, "link.") {
			delete(r.Counters, k)
		}
	}
}

// cloneRecord copies r's maps, so an edit leaves r as it was.
func cloneRecord(r results.Record) results.Record {
	r.Params, r.Derived, r.Counters = maps.Clone(r.Params), maps.Clone(r.Derived), maps.Clone(r.Counters)
	return r
}
