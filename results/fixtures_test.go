package results

// testMeta and testRecords are canonical records: every value is in the form
// the reader produces (int for integral parameters, non-nil slices), so a
// round trip must reproduce them exactly.
func testMeta() Meta {
	return Meta{
		Commit:       "6466eda3c1f2",
		MPILibrary:   "Open MPI",
		MPIVersion:   "4.1.6",
		Hosts:        []string{"node01", "node02"},
		RanksPerHost: []int{1, 1},
		GOMAXPROCS:   4,
		Binding:      "cpus=0-3 ompi_local_rank=0",
		Backend:      "native",
		Date:         "2025-06-01T12:00:00Z",
		Command:      []string{"commcost", "pingpong", "-bytes", "8,1024"},
		GOOS:         "linux",
		GOARCH:       "amd64",
		GoVersion:    "go1.26.0",
		CPU:          "AMD EPYC 7742 64-Core Processor",
	}
}

func testRecords() []Record {
	m := testMeta()
	// The k-k-access ran on 16 ranks, 8 per host.
	m16 := testMeta()
	m16.RanksPerHost = []int{8, 8}
	return []Record{
		{
			Schema: SchemaVersion, Bench: "pingpong", Params: Params{"bytes": 8}, Ranks: 2, Unit: UnitSeconds,
			Summary: Summary{N: 10, Min: 1.48e-6, Median: 1.52e-6, Mean: 1.563e-6, Max: 1.9e-6, P90: 1.63e-6, P99: 1.873e-6,
				CI95: [2]float64{1.48e-6, 1.9e-6}}, // MedianCIRanks(10): the 1st and 10th of the samples
			Reduction: ReductionRank0, Stop: StopRelCI,
			Derived: map[string]float64{"latency_s": 0.76e-6},
			Samples: []float64{1.48e-6, 1.5e-6, 1.51e-6, 1.52e-6, 1.52e-6, 1.52e-6, 1.53e-6, 1.55e-6, 1.6e-6, 1.9e-6},
			Meta:    m,
		},
		{
			Schema: SchemaVersion, Bench: "pingpong", Params: Params{"bytes": 1 << 20}, Ranks: 2, Unit: UnitSeconds,
			Summary: Summary{N: 200, Min: 1.1e-4, Median: 1.234e-4, Mean: 1.25e-4, Max: 3e-4, P90: 1.3e-4, P99: 2.5e-4,
				CI95: [2]float64{1.22e-4, 1.25e-4}, Dropped: 2},
			Reduction: ReductionRank0, Stop: StopMaxReps,
			Derived: map[string]float64{"latency_s": 0.617e-4},
			Meta:    m,
		},
		{
			Schema: SchemaVersion, Bench: "bandwidth", Params: Params{"bytes": 65536, "window": 64}, Ranks: 2, Unit: UnitBytesPerSec,
			Summary: Summary{N: 20, Min: 9.1e9, Median: 9.87e9, Mean: 9.8e9, Max: 1.01e10, P90: 1e10, P99: 1.01e10,
				CI95: [2]float64{9.8e9, 9.9e9}},
			Stop: StopMaxReps, Meta: m,
		},
		{
			Schema: SchemaVersion, Bench: "kkaccess", Params: Params{"k": 4, "strategy": "access tree", "fraction": 0.25, "sync": true},
			Ranks: 16, Unit: UnitSeconds,
			Summary: Summary{N: 30, Min: 0.011, Median: 0.0123, Mean: 0.0125, Max: 0.02, P90: 0.014, P99: 0.019,
				CI95: [2]float64{0.012, 0.0127}, Invalid: 1},
			RankMin: 0.010, RankAvg: 0.0115, RankMax: 0.0123, Reduction: ReductionWindowLatestEnd, Stop: StopRelCI,
			Counters: map[string]float64{"messages": 4096, "bytes": 1.5e7},
			Meta:     m16,
		},
	}
}
