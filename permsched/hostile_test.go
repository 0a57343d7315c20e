package permsched

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/results"
)

// TestMatrixHeaderAgreesWithBody: WriteMatrix's header, when a file has
// one, must agree with the rows and with the kind the file is read as; a
// file without one is read as before.
func TestMatrixHeaderAgreesWithBody(t *testing.T) {
	const body = "0 8 8\n8 0 8\n8 8 0\n"
	tests := []struct {
		name, file string
		kind       EntryKind
		want       string // "" accepted
	}{
		{"no header", body, EntryBytes, ""},
		{"header as written", "# commcost permsched matrix: n = 3, entries = bytes\n" + body, EntryBytes, ""},
		{"header n larger than the rows", "# commcost permsched matrix: n = 4, entries = bytes\n" + body, EntryBytes,
			"line 2: the first row has 3 entries, but the header on line 1 gives n = 4"},
		{"header n smaller", "# commcost permsched matrix: n = 2, entries = bytes\n" + body, EntryBytes, "gives n = 2"},
		{"header of another kind", "# commcost permsched matrix: n = 3, entries = count\n" + body, EntryBytes,
			"the header says entries = count, but the file is read with entries = bytes (pass --entries count)"},
		{"header n not a number", "# commcost permsched matrix: n = many, entries = bytes\n" + body, EntryBytes, "the header gives n = many"},
		{"two headers", "# commcost permsched matrix: n = 3, entries = bytes\n# commcost permsched matrix: n = 3, entries = bytes\n" + body, EntryBytes, "a second header"},
		{"header after the rows", "0 8 8\n# commcost permsched matrix: n = 3, entries = bytes\n8 0 8\n8 8 0\n", EntryBytes, "a header after the first row"},
		{"other comments", "# my trace\n" + body, EntryBytes, ""},
		{"read as the header says, bytes", "# commcost permsched matrix: n = 3, entries = bytes\n" + body, EntryHeader, ""},
		{"read as the header says, count", "# commcost permsched matrix: n = 3, entries = count\n0 1 1\n1 0 2\n1 1 0\n", EntryHeader, ""},
		{"read as the header says, no header", body, EntryHeader, ""},
		{"header of no kind", "# commcost permsched matrix: n = 3, entries = words\n" + body, EntryHeader, "the header says entries = words; want bytes or count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadMatrix(strings.NewReader(tc.file), tc.kind)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadMatrixFileRefusesNonRegular: --matrix on a FIFO or a device is
// refused at once.
func TestReadMatrixFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "m.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte("0 1\n1 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"regular", good, ""},
		{"fifo", fifo, "named pipe"},
		{"device", "/dev/zero", "character device"},
		{"directory", dir, "directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadMatrixFile(tc.path, EntryCount); done <- err }()
			select {
			case err := <-done:
				if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("error %v, want %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("blocked on %s", tc.path)
			}
		})
	}
}

// liveBytes is the heap that make's result keeps alive.
func liveBytes(make func() any) (float64, any) {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	v := make()
	runtime.GC()
	runtime.ReadMemStats(&b)
	return float64(b.HeapAlloc) - float64(a.HeapAlloc), v
}

// TestDemandBoundsAllocations: each demand is at least what the structure
// it stands for keeps alive (so a run that passes the check does not die
// for lack of memory the estimate left out) and within a small factor of
// it (so the check refuses nothing the machine could hold); and the
// fields name the flag the need grows with.
func TestDemandBoundsAllocations(t *testing.T) {
	tests := []struct {
		name  string
		need  func() (est float64, field string)
		live  func() any
		field string
	}{
		{"fig7 n=3000 d=40", func() (float64, string) { n := GenDemand(GenFig7, 3000, 40, 0); return n.Bytes, n.Field },
			func() any { m, _ := Fig7(3000, 40, 1); return m }, "d"},
		{"samplesort n=48 keys=20000", func() (float64, string) { n := GenDemand("samplesort", 48, 0, 20000); return n.Bytes, n.Field },
			func() any {
				// The keys are the peak; the trace keeps only its entries.
				k := make([][]uint64, 48)
				for i := range k {
					k[i] = make([]uint64, 20000)
				}
				m, _ := SampleSortTrace(48, 20000, 1)
				return []any{k, m}
			}, "keys"},
		{"GM's dense array at n=2000", func() (float64, string) {
			m, _ := Fig7(2000, 1, 1)
			n := CountConfig{Matrix: m, Schedulers: []Scheduler{GM{}}, Matrices: 1}.Demand()
			return n.Bytes, n.Field
		}, func() any { return make([]int32, 2000*2000) }, "matrix"},
		{"CGM on one dense row", func() (float64, string) {
			rows := make([][]int32, 2000)
			for j := 1; j < 2000; j++ {
				rows[0] = append(rows[0], int32(j))
			}
			m, _ := NewMatrix(2000, rows)
			n := CountConfig{Matrix: m, Schedulers: []Scheduler{CGM{}}, Matrices: 1}.Demand()
			return n.Bytes, n.Field
		}, func() any { return [2][]int32{make([]int32, 2000*1999), make([]int32, 2000*1999)} }, "matrix"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			est, field := tc.need()
			live, keep := liveBytes(tc.live)
			runtime.KeepAlive(keep)
			if field != tc.field {
				t.Errorf("field %q, want %q", field, tc.field)
			}
			if est < live || est > 8*live {
				t.Errorf("estimate %.0f bytes for %.0f live: want within [1, 8] times", est, live)
			}
		})
	}
}

// TestDemandNamesTheFlag: the demand that grows with a flag names it, at
// sizes no machine holds, computed without allocating them.
func TestDemandNamesTheFlag(t *testing.T) {
	huge, _ := NewWeighted(3, [][]int32{{1, 2}, {0}, {0}}, [][]int64{{1<<31 - 1, 1<<31 - 1}, {1<<31 - 1}, {1 << 30}})
	tests := []struct {
		name  string
		need  func() (bytes float64, field string)
		min   float64
		field string
	}{
		{"sched gen --keys 1e9", func() (float64, string) { n := GenDemand("samplesort", 16, 0, 1e9); return n.Bytes, n.Field }, 16 * 8e9, "keys"},
		{"sched gen --n 65536 samplesort", func() (float64, string) { n := GenDemand("samplesort", 65536, 0, 1); return n.Bytes, n.Field }, 8 * 65536 * 65536, "n"},
		{"sched count --samples 1e9", func() (float64, string) {
			n := CountConfig{Ns: []int{32}, Matrices: 1e9}.Demand()
			return n.Bytes, n.Field
		}, 8e9, "matrices"},
		{"sched count --n 65536 with GM", func() (float64, string) {
			n := CountConfig{Ns: []int{65536}, Densities: Densities{1}, Matrices: 1}.Demand()
			return n.Bytes, n.Field
		}, 4 * 65536 * 65536, "n"},
		{"sched comm matrix of 2 GB entries", func() (float64, string) {
			n := CommDemand(3, CommConfig{Matrix: huge})
			return n.Bytes + n.InFlight, n.Field
		}, 3 * (1<<31 - 1), "matrix"},
		{"sched comm --sizes 1G --d 24", func() (float64, string) {
			n := CommDemand(32, CommConfig{Sizes: []int{1 << 30}, Densities: []int{24}})
			return n.Bytes, n.Field
		}, 48 << 30, "sizes"},
		{"sched comm --matrices 1e6", func() (float64, string) {
			n := CommDemand(512, CommConfig{Sizes: []int{16}, Densities: []int{24}, Matrices: 1e6})
			return n.Bytes, n.Field
		}, 1e6 * 512 * 24 * 12, "matrices"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, field := tc.need()
			if b < tc.min || field != tc.field {
				t.Errorf("need %.3g bytes for field %q; want at least %.3g for %q", b, field, tc.min, tc.field)
			}
		})
	}
}

// TestCountStopsDrawingWhenEverySchedulerIsDone: once every scheduler has
// used --cell-sec, the cell stops drawing matrices instead of growing to
// --samples.
func TestCountStopsDrawingWhenEverySchedulerIsDone(t *testing.T) {
	var got CountCell
	err := RunCount(CountConfig{Ns: []int{16}, Densities: Densities{3}, Matrices: 1 << 30,
		Schedulers: []Scheduler{LP{}}, CellSeconds: 1e-9, MinMatrices: 5}, func(c CountCell) error { got = c; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got.Samples != 5 || len(got.MaxDeg) != 5 {
		t.Errorf("cell drew %d matrices (samples %d); want 5, the minimum before --cell-sec stops", len(got.MaxDeg), got.Samples)
	}
}

// TestSchedRecordParamsChecked: the experiments' records read from a
// file (sched breakeven --in) must name possible points.
func TestSchedRecordParamsChecked(t *testing.T) {
	line := func(bench, params string) string {
		return `{"schema":1,"bench":"` + bench + `","params":` + params + `,"ranks":4,"unit":"s","n":1,"min":1e-3,"median":1e-3,"max":1e-3,"ci95":[1e-3,1e-3],"meta":{}}` + "\n"
	}
	tests := []struct{ name, bench, params, want string }{
		{"comm", BenchComm, `{"d":3,"gen":"fig7","matrix":0,"bytes":1024,"scheduler":"CGM"}`, ""},
		{"comm of density n", BenchComm, `{"d":4,"gen":"fig7","matrix":0,"bytes":1024,"scheduler":"CGM"}`, "d = 4 at ranks = 4: want 0 <= d <= n-1 = 3"},
		{"a trace's degree beyond n-1", BenchComm, `{"d":9,"gen":"trace","matrix":0,"bytes":1024,"scheduler":"CGM"}`, ""},
		{"schedule of density 1e12", BenchSchedule, `{"d":1e12,"gen":"fig7","matrix":0,"scheduler":"CGM"}`, "d = 1000000000000 at ranks = 4"},
		{"a scheduling time of n beside the ranks", "sched.time", `{"n":16,"d":1,"gen":"fig7","scheduler":"CGM"}`, "n = 16 on ranks = 4: a record's matrix has a row per rank"},
		{"comm of -16 bytes", BenchComm, `{"d":4,"gen":"fig7","matrix":0,"bytes":-16,"scheduler":"CGM"}`, "bytes = -16: must not be negative"},
		{"comm of density -1", BenchComm, `{"d":-1,"gen":"fig7","matrix":0,"bytes":16,"scheduler":"CGM"}`, "d = -1"},
		{"comm without a scheduler", BenchComm, `{"d":4,"gen":"fig7","matrix":0,"bytes":16}`, "scheduler is missing"},
		{"perms at n = 0", "sched.perms", `{"n":0,"d":1,"gen":"fig7","scheduler":"CGM"}`, "n = 0"},
		{"breakeven reuse 0", BenchBreak, `{"bytes":16,"reuse":0}`, "reuse = 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(line(tc.bench, tc.params)))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSchedRecordValuesChecked: the experiments' records hold the unit
// their bench writes, counts that are not negative, an exchange's
// scheduling time and ratio as RunComm computes them, and the values a
// record repeats in its summary; the fitted constants may be negative.
func TestSchedRecordValuesChecked(t *testing.T) {
	comm := func(derived string) string {
		return `{"schema":1,"bench":"sched.comm","params":{"d":2,"gen":"fig7","matrix":0,"bytes":16,"scheduler":"CGM"},"ranks":8,"unit":"s",` +
			`"n":3,"min":1e-5,"median":2e-5,"max":3e-5,"ci95":[1e-5,3e-5],"counters":{"phases":3,"D":2,"messages":16,"total_bytes":256},"derived":` + derived + `,"meta":{}}`
	}
	costfit := func(c2 string) string {
		return `{"schema":1,"bench":"sched.costfit","params":{"reuse":1},"ranks":8,"unit":"` + UnitSlope + `","n":1,"min":-2e-9,"median":-2e-9,"max":-2e-9,` +
			`"ci95":[-2e-9,-2e-9],"derived":{"C2_s":` + c2 + `,"tau_s":-1e-7,"alpha_s":3e-6},"meta":{}}`
	}
	perms := func(counters, derived string) string {
		return `{"schema":1,"bench":"sched.perms","params":{"n":8,"d":4,"gen":"uniform","scheduler":"CGM"},"ranks":8,"unit":"count",` +
			`"n":3,"min":4,"median":5,"mean":5,"max":6,"ci95":[4,6],"counters":` + counters + `,"derived":` + derived + `,"meta":{}}`
	}
	tests := []struct{ name, line, want string }{
		{"schedule lengths as counted", perms(`{"optimal":2,"matrices":3}`, `{"d_plus_log2d":6,"mean_D":4.3}`), ""},
		{"optimal beyond the matrices", perms(`{"optimal":9,"matrices":3}`, `{}`), "counters optimal = 9 of n = 3 matrices"},
		{"matrices beside n", perms(`{"optimal":2,"matrices":1e15}`, `{}`), "counters matrices = 1e+15 but n = 3"},
		{"d + log2 d of another d", perms(`{"matrices":3}`, `{"d_plus_log2d":99}`), "derived d_plus_log2d = 99 disagrees with d + log2 d, 6"},
		{"an exchange as measured", comm(`{"sched_s":4e-5,"sched_over_comm":2}`), ""},
		{"an exchange without scheduling", comm(`{}`), ""},
		{"scheduling of -1 s", comm(`{"sched_s":-1,"sched_over_comm":-50000}`), "derived sched_s = -1: the scheduling time is at least 1e-12 s"},
		{"scheduling of 1e-300 s", comm(`{"sched_s":1e-300,"sched_over_comm":5e-296}`), "derived sched_s = 1e-300"},
		{"a ratio of 1e300", comm(`{"sched_s":4e-5,"sched_over_comm":1e300}`), "derived sched_over_comm = 1e+300 disagrees with sched_s / median, 2"},
		{"a ratio without its time", comm(`{"sched_over_comm":2}`), "derived sched_over_comm = 2 without a sched_s"},
		{"a negative phase count", strings.Replace(comm(`{}`), `"phases":3`, `"phases":-3`, 1), "counters phases = -3 is negative"},
		{"an exchange in ms", strings.Replace(comm(`{}`), `"unit":"s"`, `"unit":"ms"`, 1), `unit "ms": sched.comm records are in "s"`},
		{"a negative fitted C2", costfit("-2e-9"), ""},
		{"C2_s beside the record's value", costfit("5"), "derived C2_s = 5 disagrees with the median"},
		{"a cost fit in another unit", strings.Replace(costfit("-2e-9"), `"unit":"`+UnitSlope+`"`, `"unit":"s/B"`, 1), `unit "s/B": sched.costfit records are in "s/(d*n*ln(d))"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSONL(strings.NewReader(tc.line + "\n"))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("read: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCommDemandBoundsTheExchange: CommDemand counts what the exchanges
// RunComm builds allocate on the rank that allocates most (the send and
// receive buffers, the send side once more in flight), and release gives
// them back, so that one exchange at a time is what a run holds.
func TestCommDemandBoundsTheExchange(t *testing.T) {
	weighted := func(n int, bytes int64) *Matrix {
		rows, sizes := make([][]int32, n), make([][]int64, n)
		for i := range rows {
			for j := 0; j < n; j++ {
				if j != i {
					rows[i], sizes[i] = append(rows[i], int32(j)), append(sizes[i], bytes*int64(1+i))
				}
			}
		}
		m, err := NewWeighted(n, rows, sizes)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	fig7, err := Generate(GenFig7, 6, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  CommConfig
		m    *Matrix // the matrix the exchange is built of
		size int
	}{
		{"trace of two ranks", CommConfig{Matrix: weighted(2, 3000)}, weighted(2, 3000), 0},
		{"trace of four ranks, unequal rows", CommConfig{Matrix: weighted(4, 1000)}, weighted(4, 1000), 0},
		{"fig7 d = 3 of 8 KiB", CommConfig{Densities: Densities{3}, Sizes: []int{16, 8192}}, fig7, 8192},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.m.N()
			need := CommDemand(n, tt.cfg)
			var mu sync.Mutex
			var most, flight float64
			err := local.Run(n, func(c mpi.Comm) error {
				x, err := NewAlltoallv(c, tt.m, tt.size)
				if err != nil {
					return err
				}
				b, s := float64(len(x.send)+len(x.recv)+16*len(x.sendOff)), float64(len(x.send))
				x.release()
				if x.send != nil || x.recv != nil || x.sendOff != nil {
					return fmt.Errorf("rank %d: release kept the buffers", c.Rank())
				}
				mu.Lock()
				most, flight = max(most, b), max(flight, s)
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if need.Bytes < most || need.InFlight < flight {
				t.Errorf("CommDemand %.0f bytes (in flight %.0f) < the %.0f (%.0f) a rank allocates", need.Bytes, need.InFlight, most, flight)
			}
			// Beyond the buffers, no more than the per-message allowance
			// and a generated matrix held.
			slack := (perMessage(tt.cfg)+matrixMessageBytes)*float64(tt.m.Len()) + matrixRankBytes*float64(n)
			if need.Bytes > most+slack {
				t.Errorf("CommDemand %.0f bytes, far above the %.0f a rank allocates", need.Bytes, most)
			}
		})
	}
	for _, tc := range []struct{ b, want float64 }{{1 << 20, 1 << 20}, {goArenaBytes, goArenaBytes}, {150e6, 3 * goArenaBytes}, {300e6, 5 * goArenaBytes}} {
		if got := heapMapped(tc.b); got != tc.want {
			t.Errorf("heapMapped(%.0f) = %.0f, want %.0f", tc.b, got, tc.want)
		}
	}
}
