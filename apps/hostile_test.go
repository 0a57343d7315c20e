package apps

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// peakPerRank runs app once on p goroutine ranks and returns the bytes it
// allocated per rank (runtime.MemStats.TotalAlloc: every buffer, kept or
// not, so at least the peak of what the run holds).
func allocPerRank(t *testing.T, p int, app App) float64 {
	t.Helper()
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	if err := local.Run(p, func(c mpi.Comm) error {
		_, err := app.Run(Env{Comm: c, Seed: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&b)
	return float64(b.TotalAlloc-a.TotalAlloc) / float64(p)
}

// TestProgramDemands: each message-passing program's stated need per rank
// covers the large buffers its run allocates (within a factor, as its run
// also allocates the local backend's message copies and small garbage),
// and names --n.
func TestProgramDemands(t *testing.T) {
	tests := []struct {
		name string
		p    int
		app  interface {
			App
			Demand(int) sysmem.Need
		}
	}{
		{"gauss n=256", 4, &Gauss{N: 256}},
		{"multigrid n=63", 3, &Multigrid{N: 63, Iters: 2}},
		{"cannon n=192", 4, Cannon{N: 192}},
		{"checkerboard n=180", 6, Checkerboard{N: 180}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			need := tc.app.Demand(tc.p)
			alloc := allocPerRank(t, tc.p, tc.app)
			est := need.Bytes + need.InFlight
			t.Logf("need %.0f, allocated %.0f per rank (%.2f)", est, alloc, est/alloc)
			if need.Field != "n" {
				t.Errorf("field %q, want n", need.Field)
			}
			// The run allocates at least the big buffers the demand
			// counts, and the demand is not a multiple of what the run
			// takes.
			if est < 0.5*alloc || est > 8*alloc {
				t.Errorf("need %.0f bytes per rank, the run allocated %.0f: want within [0.5, 8] times", est, alloc)
			}
		})
	}
}

// TestDemandsAtAbsurdSizes: the needs grow with the flag that asks for
// them, computed without allocating (these sizes hold on no machine).
func TestDemandsAtAbsurdSizes(t *testing.T) {
	tests := []struct {
		name  string
		need  sysmem.Need
		min   float64
		field string
	}{
		{"gauss --n 65536", (&Gauss{N: 65536}).Demand(4), 2 * 8 * 65536.0 * 65536, "n"},
		{"gauss oracle --n 65536", (&Gauss{N: 65536}).OracleDemand(), 2 * 8 * 65536.0 * 65536, "n"},
		{"multigrid --n 16383", (&Multigrid{N: 16383, Iters: 1}).Demand(8), 8 * 2 * 8 * 16383.0 * 16383, "n"},
		{"cannon --n 100000", Cannon{N: 100000}.Demand(4), 5 * 8 * 50000.0 * 50000, "n"},
		{"checkerboard --n 90000", Checkerboard{N: 90000}.Demand(6), 8 * 45000.0 * 90000, "n"},
		{"barneshut --steps 1e8", BarnesHutConfig{Bodies: 64, Steps: 1e8}.Demand(4), 8e8, "steps"},
		{"barneshut --bodies 1e8", BarnesHutConfig{Bodies: 1e8}.Demand(4), 96e8, "bodies"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.need.Bytes < tc.min || tc.need.Field != tc.field || tc.need.What == "" {
				t.Errorf("need %+v; want at least %.3g bytes for %q", tc.need, tc.min, tc.field)
			}
		})
	}
	if f := (&Gauss{N: 8192}).OracleFlops(); f < 3.6e11 || f > 3.8e11 {
		t.Errorf("gauss oracle at n = 8192: %.3g flops, want 2n^3/3 = 3.66e11", f)
	}
}

// TestGaussOracleGuarded: the serial oracle is refused when the process
// cannot hold it (before allocating), and runs as a watched point, so one
// that outlasts the timeout ends the job with a message naming it.
func TestGaussOracleGuarded(t *testing.T) {
	saved := availableMemory
	defer func() { availableMemory = saved }()
	availableMemory = func() (int64, string, bool) { return 1 << 20, "a test's 1 MiB", true }
	err := (&Gauss{N: 1024}).Input(1)
	if err == nil || !strings.Contains(err.Error(), "--n 1024: gauss's serial oracle (an LU of the 1024 x 1024 matrix) needs about 16.0 MiB in this process; available: 1.0 MiB (a test's 1 MiB)") {
		t.Errorf("oracle beyond the memory: %v", err)
	}
	availableMemory = func() (int64, string, bool) { return 0, "", false }

	fired := make(chan patterns.Stall, 1)
	w := patterns.NewWatchdog(20*time.Millisecond, func(s patterns.Stall) { fired <- s })
	defer w.Stop()
	patterns.Install(w)
	defer patterns.Install(nil)
	if err := (&Gauss{N: 900}).Input(1); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-fired:
		if !strings.Contains(s.String(), "app gauss n=900 matrix=dd: the serial oracle") {
			t.Errorf("stall %q", s)
		}
	default:
		t.Error("an oracle of 4.9e8 flops ran 20 times past a 20 ms timeout without the watchdog firing")
	}
}

// TestStoreSizeCheckedUpFront: an application whose store variable is
// beyond one MPI message is refused by its Check, which the command runs
// before the calibration, naming --n and the largest n that fits.
func TestStoreSizeCheckedUpFront(t *testing.T) {
	tests := []struct {
		name string
		app  App
		p    int
		want string
	}{
		{"matmul n=65536 on 4", MatMul{N: 65536, Access: Access{K: 1, L: 64}}, 4, "--n 65536: the submatrix of n^2/p integers on 4 ranks is 4294967296 bytes, more than one store variable holds (2147483583 bytes); want n <= 46340 on 4 ranks (or more ranks)"},
		{"matmul the largest on 4", MatMul{N: 46340, Access: Access{K: 1, L: 64}}, 4, ""},
		{"matmul above the largest on 4", MatMul{N: 46344, Access: Access{K: 1, L: 64}}, 4, "want n <= 46340 on 4 ranks"},
		{"matmul n=16384 on 4", MatMul{N: 16384, Access: Access{K: 1, L: 64}}, 4, ""},
		{"concomp on 4", ConnComp{N: 1 << 20, Access: Access{K: 1, L: 64}}, 4, "--n 1048576: the submatrix of n^2/(16p) integers on 4 ranks is 68719476736 bytes, more than one store variable holds (2147483583 bytes); want n <= 185360 on 4 ranks (or more ranks)"},
		{"concomp the largest on 4", ConnComp{N: 185360, Access: Access{K: 1, L: 64}}, 4, ""},
		{"bitonic", BitonicSort{N: 1e9, Access: Access{K: 1, L: 64}}, 4, "--n 1000000000: the array of n keys is 4000000000 bytes, more than one store variable holds (2147483583 bytes); want n <= 536870895"},
		{"samplesort holds 2n keys", SampleSort{N: 3e8, Access: Access{K: 1, L: 64}}, 4, "--n 300000000: the array A_i of 2n keys is 2400000000 bytes, more than one store variable holds (2147483583 bytes); want n <= 268435392"},
		{"samplesort the largest", SampleSort{N: 268435392, Access: Access{K: 1, L: 64}}, 4, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.app.Check(tc.p)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAppRecordParamsChecked: an application record read from a file must
// name its program, phase and kind; app table printed a missing phase as
// <nil>.
func TestAppRecordParamsChecked(t *testing.T) {
	raw := func(params string) string {
		return `{"schema":1,"bench":"app","params":` + params + `,"ranks":4,"unit":"s","n":1,"min":1e-3,"median":1e-3,"max":1e-3,"ci95":[1e-3,1e-3],"meta":{}}` + "\n"
	}
	line := func(params string) string { return withWorkload(raw(params)) }
	tests := []struct{ name, params, want string }{
		{"whole", `{"app":"matmul","phase":"mm","kind":"comm","n":64,"k":4,"l":64,"sync":false}`, ""},
		{"no phase", `{"app":"matmul","kind":"comm"}`, "impossible parameter phase is missing"},
		// The program's own parameters, as its flags and App.Check bound
		// them on the record's 4 ranks.
		{"order 1e308", `{"app":"gauss","phase":"xbcast","kind":"comm","n":1e308,"matrix":"dd","variant":"async"}`, "gauss: n = 1e+308: must be at most 2^53"},
		{"order -5", `{"app":"gauss","phase":"xbcast","kind":"comm","n":-5,"matrix":"dd","variant":"async"}`, "gauss: n = -5: must be positive"},
		{"order a string", `{"app":"gauss","phase":"xbcast","kind":"comm","n":"x","matrix":"dd","variant":"async"}`, `gauss: n = "x": must be a number`},
		{"order the ranks do not divide", `{"app":"gauss","phase":"xbcast","kind":"comm","n":66,"matrix":"dd","variant":"async"}`, "gauss on ranks = 4: no run has these parameters"},
		{"an unknown matrix", `{"app":"gauss","phase":"xbcast","kind":"comm","n":64,"matrix":"x","variant":"async"}`, `matrix = "x": must be one of dd, random`},
		{"an unknown program", `{"app":"x","phase":"p","kind":"comm","n":64}`, `app = "x": the programs are barneshut, bitonic, bitonic-ms, cannon`},
		{"measured steps beyond the steps", `{"app":"barneshut","phase":"force","kind":"comm","bodies":64,"theta":1,"steps":7,"measured_steps":1000}`, "measured steps = 1000: must be in 0..7"},
		{"Barnes-Hut as run", `{"app":"barneshut","phase":"force","kind":"comm","bodies":64,"theta":1,"steps":7,"measured_steps":5}`, ""},
		{"Barnes-Hut with its dt and eps", `{"app":"barneshut","phase":"force","kind":"comm","bodies":64,"theta":1,"steps":7,"measured_steps":5,"dt":1,"eps":0.001}`, ""},
		{"bh_app_dt_beyond", `{"app":"barneshut","phase":"force","kind":"comm","bodies":64,"theta":1,"steps":7,"measured_steps":5,"dt":2,"eps":0.05}`, "barneshut: dt = 2: must be in (0, 1]"},
		{"a block the grid does not make", `{"app":"checkerboard","phase":"rowbcast","kind":"comm","n":8,"variant":"sync","grid":"2x2","block_bytes":1}`, "block_bytes = 1, but a run of these parameters on 4 ranks records block_bytes = 128"},
		{"a grid of 8 places", `{"app":"checkerboard","phase":"rowbcast","kind":"comm","n":8,"variant":"sync","grid":"2x4","block_bytes":64}`, "--grid 2x4: a 2x4 grid has 8 places, but there are 4 ranks"},
		{"a grid that is no grid", `{"app":"checkerboard","phase":"rowbcast","kind":"comm","n":8,"variant":"sync","grid":"two"}`, `grid "two": want ROWSxCOLS`},
		{"cannon on 4 ranks", `{"app":"cannon","phase":"shift","kind":"comm","n":8,"variant":"async"}`, ""},
		{"multigrid's V-cycles not as derived", `{"app":"multigrid","phase":"exchange","kind":"comm","n":7,"iters":2,"variant":"async","cycles":1,"plane_bytes":1}`, "plane_bytes = 1, but a run of these parameters"},
		// Sizes whose byte counts wrap around an int product.
		{"cannon of order 2^32", `{"app":"cannon","phase":"shift","kind":"comm","n":4294967296,"variant":"async"}`, "--n 4294967296: a block of 3.6893488147419103e+19 bytes exceeds one MPI message"},
		{"checkerboard of order 3 x 2^32", `{"app":"checkerboard","phase":"rowbcast","kind":"comm","n":12884901888,"variant":"async","grid":"2x2","block_bytes":0}`, "--n 12884901888: a panel of"},
		{"matmul of k l = 2^64", `{"app":"matmul","phase":"mm","kind":"comm","n":64,"k":8589934592,"l":2147483648,"sync":false}`, "k = 8589934592: must be an integer from 1 to 2147483647"},
		{"matmul of k l = 2^62", `{"app":"matmul","phase":"mm","kind":"comm","n":64,"k":2147483647,"l":2147483647,"sync":false}`, "k l = 4.6116860141324206e+18 bytes is above the submatrix"},
		{"multigrid of order 2^32-1", `{"app":"multigrid","phase":"exchange","kind":"comm","n":4294967295,"iters":2,"variant":"async","cycles":1,"plane_bytes":0}`, "--n 4294967295: a plane of"},
		{"a bitonic-ms of 2^53 keys", `{"app":"bitonic-ms","phase":"exchange","kind":"comm","keys":9007199254740992,"impl":"hand"}`, "keys = 9007199254740992: must be an integer from 1 to 536870895"},
		{"a bitonic-ms as run", `{"app":"bitonic-ms","phase":"exchange","kind":"comm","keys":1024,"impl":"hand"}`, ""},
		{"empty app", `{"app":"","phase":"read","kind":"comm"}`, "app is empty"},
		{"unknown kind", `{"app":"matmul","phase":"mm","kind":"magic"}`, "kind = \"magic\": must be one of comm, comp, sync"},
		{"phase a number", `{"app":"matmul","phase":3,"kind":"comm"}`, "phase = 3"},
		{"mm_variant", `{"app":"matmul","phase":"mm","kind":"comm","n":64,"k":4,"l":64,"sync":false,"variant":"nosuch"}`,
			`matmul: parameter variant = "nosuch" is none of a matmul record's: app, k, kind, l, n, phase, store, sync`},
		{"mm_phase", `{"app":"matmul","phase":"nosuch","kind":"comm","n":64,"k":4,"l":64,"sync":false}`,
			`matmul: phase = "nosuch": a run of these parameters times mm, compute`},
		{"matmul's barrier phase when synchronous", `{"app":"matmul","phase":"sync","kind":"sync","n":64,"k":4,"l":64,"sync":true,"store":"direct"}`, ""},
		{"matmul's barrier phase when asynchronous", `{"app":"matmul","phase":"sync","kind":"sync","n":64,"k":4,"l":64,"sync":false}`,
			`matmul: phase = "sync": a run of these parameters times mm, compute`},
		{"a gauss phase of another program", `{"app":"gauss","phase":"mm","kind":"comm","n":64,"matrix":"dd","variant":"async"}`,
			`gauss: phase = "mm": a run of these parameters times pivotbcast, eliminate, xbcast, backsolve`},
		{"gauss's barrier when synchronous", `{"app":"gauss","phase":"barrier","kind":"sync","n":64,"matrix":"dd","variant":"sync"}`, ""},
		{"a gauss over a store", `{"app":"gauss","phase":"xbcast","kind":"comm","n":64,"matrix":"dd","variant":"async","store":"direct"}`,
			`gauss: parameter store = "direct" is none of a gauss record's`},
		{"a cannon phase nosuch", `{"app":"cannon","phase":"nosuch","kind":"comm","n":8,"variant":"async"}`, `cannon: phase = "nosuch": a run of these parameters times align, multiply, shift`},
		{"a samplesort phase nosuch", `{"app":"samplesort","phase":"nosuch","kind":"comm","n":128,"k":4,"l":64}`, `samplesort: phase = "nosuch"`},
		{"a bitonic-ms phase nosuch", `{"app":"bitonic-ms","phase":"nosuch","kind":"comm","keys":1024,"impl":"hand"}`,
			`bitonic-ms: phase = "nosuch": a run of these parameters times local-sort, exchange, merge`},
		{"a Barnes-Hut phase of the dsm records", `{"app":"barneshut","phase":"total","kind":"comp","bodies":64,"theta":1,"steps":7,"measured_steps":5}`,
			`barneshut: phase = "total": a run of these parameters times load, cofm, partition, force, force-comp, advance, size`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(line(tc.params)))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
	// A workload item names a point some model prices: a pattern's or a
	// chain shift, of a known bench.
	mg := raw(`{"app":"multigrid","phase":"exchange","kind":"comm","n":7,"iters":2,"variant":"async","cycles":1,"plane_bytes":392}`)
	for _, tc := range []struct{ name, item, want string }{
		{"the chain shift and messages a run writes", `{"count":2,"bench":"chainshift","params":{"bytes":392},"ranks":4,"view":"contention"},{"count":2,"bench":"pingpong","params":{"bytes":392},"view":"p2p"}`, ""},
		{"wl_bench_unk", `{"count":2,"bench":"nosuch","params":{"bytes":72},"ranks":4}`, `workload item 1: bench "nosuch" is no pattern or workload point of this commcost`},
		{"cs_bneg", `{"count":2,"bench":"chainshift","params":{"bytes":-5},"ranks":4}`, "impossible parameter bytes = -5"},
		{"cs_ranks99", `{"count":2,"bench":"chainshift","params":{"bytes":72},"ranks":99}`, "chainshift on ranks = 99, more than the record's 4"},
	} {
		rec := strings.Replace(mg, `"meta":{}`, `"workload":[`+tc.item+`],"meta":{}`, 1)
		_, err := results.ReadJSONL(strings.NewReader(rec))
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: read: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A prediction beyond any machine's time is no value a record holds.
	bad := strings.Replace(line(`{"app":"matmul","phase":"mm","kind":"comm","n":64,"k":4,"l":64,"sync":false}`), `"meta":{}`, `"derived":{"pred_hockney_s":1e294},"meta":{}`, 1)
	if _, err := results.ReadJSONL(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), `derived "pred_hockney_s" = 1e+294 is beyond 1e+09 seconds`) {
		t.Errorf("prediction of 1e294 s: %v", err)
	}
}

// TestBarnesHutDemand: the per-rank need is twice the live store state of
// every variable (bodies, cell pools, root, space) plus a rank's fixed
// part and its force results; on 4 ranks it covers the peak RSS measured
// for the whole run of all six strategies (2 steps) at these body counts.
func TestBarnesHutDemand(t *testing.T) {
	tests := []struct {
		bodies, p int
		want      float64 // bytes per rank
		peak      float64 // measured peak RSS of the process, all ranks
	}{
		// vars = N + p (ceil(2N/p) + 16) + 2
		{10000, 4, 2*300*(10000+4*(5000+16)+2) + 8<<20 + 2500*80, 88.9e6},
		{20000, 4, 2*300*(20000+4*(10000+16)+2) + 8<<20 + 5000*80, 153.3e6},
		{40000, 4, 2*300*(40000+4*(20000+16)+2) + 8<<20 + 10000*80, 265.9e6},
		{1000, 1, 2*300*(1000+1*(2000+16)+2) + 8<<20 + 1000*80, 0},
	}
	for _, tc := range tests {
		need := BarnesHutConfig{Bodies: tc.bodies, Steps: 2, Measured: 1}.Demand(tc.p)
		if got := need.Bytes - 11*8*2; math.Abs(got-tc.want) > 1 || need.Field != "bodies" {
			t.Errorf("N = %d on %d ranks: %.0f bytes per rank (%q), want %.0f", tc.bodies, tc.p, got, need.Field, tc.want)
		}
		if total := float64(tc.p) * need.Bytes; total < tc.peak || tc.peak > 0 && total > 1.25*tc.peak {
			t.Errorf("N = %d on %d ranks: %.3g bytes in all, want within [1, 1.25] of the measured peak %.3g", tc.bodies, tc.p, total, tc.peak)
		}
	}
}

// TestBarnesHutProcessDemand: under mpirun a rank process's need covers
// the peak RSS measured per rank (fixed-home, 2 steps; the figures of
// docs/findings/dsm.md), by at most a quarter more.
func TestBarnesHutProcessDemand(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		bodies, p int
		peak      float64 // bytes per rank
	}{
		{120000, 1, 466 * mib},
		{60000, 2, 176 * mib},
		{200000, 2, 571 * mib},
		{400000, 2, 1105 * mib},
		{90000, 3, 244 * mib},
		{300000, 3, 666 * mib},
		{120000, 4, 255 * mib},
	}
	for _, tc := range tests {
		need := BarnesHutConfig{Bodies: tc.bodies, Steps: 2, Measured: 1}.ProcessDemand(tc.p)
		if need.Bytes < tc.peak || need.Bytes > 1.25*tc.peak || need.Field != "bodies" {
			t.Errorf("N = %d on %d ranks: %.3g bytes per rank (%q), want within [1, 1.25] of the measured peak %.3g", tc.bodies, tc.p, need.Bytes, need.Field, tc.peak)
		}
		if local := (BarnesHutConfig{Bodies: tc.bodies, Steps: 2, Measured: 1}).Demand(tc.p); local.Bytes >= need.Bytes {
			t.Errorf("N = %d on %d ranks: a goroutine rank's need %.3g is not below a process's %.3g", tc.bodies, tc.p, local.Bytes, need.Bytes)
		}
	}
}
