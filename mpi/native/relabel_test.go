package native

import (
	"strings"
	"testing"
)

// TestRelabel: the launchers' rank tags are removed from rank 0's lines,
// even where a chunk boundary put one mid-line (a benchmark writes its name
// and its figures separately), so go test and benchstat read them; other
// ranks' lines are labelled and their progress lines dropped.
func TestRelabel(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"open mpi rank 0", "[1,0]<stdout>:--- FAIL: TestX\n", "--- FAIL: TestX\n"},
		{"open mpi benchmark split in two writes",
			"[1,0]<stdout>:BenchmarkKernels/x-2   \t[1,0]<stdout>:      20\t  2620 ns/op\n",
			"BenchmarkKernels/x-2   \t      20\t  2620 ns/op\n"},
		{"open mpi: another rank's chunk between a benchmark's two writes",
			"[1,0]<stdout>:BenchmarkKernels/x-2   \t[1,1]<stdout>:goos: linux\n" +
				"[1,0]<stdout>:      20\t  2620 ns/op\n",
			"rank 1: goos: linux\nBenchmarkKernels/x-2   \t      20\t  2620 ns/op\n"},
		{"open mpi: stderr kept apart from stdout",
			"[1,0]<stdout>:Benchmark[1,0]<stderr>:warning\n[1,0]<stdout>:X-2\t1\t5 ns/op\n",
			"warning\nBenchmarkX-2\t1\t5 ns/op\n"},
		{"open mpi: unfinished line written at the end", "[1,1]<stdout>:last words", "rank 1: last words\n"},
		{"mpich rank 0", "[0] ok line\n", "ok line\n"},
		{"mpich benchmark split in two writes",
			"[0] BenchmarkKernels/x-2   \t[0]       20\t  2620 ns/op\n",
			"BenchmarkKernels/x-2   \t      20\t  2620 ns/op\n"},
		{"mpich: another rank's chunk between a benchmark's two writes",
			"[0] BenchmarkKernels/x-2   \t[1]     bench_test.go:167: serving\n[0]       20\t  2620 ns/op\n",
			"rank 1:     bench_test.go:167: serving\nBenchmarkKernels/x-2   \t      20\t  2620 ns/op\n"},
		{"mpich: another rank number in text is text", "[1] got [3] want [4]\n", "rank 1: got [3] want [4]\n"},
		{"other rank labelled", "[1] rank one says hi\n", "rank 1: rank one says hi\n"},
		{"other rank's progress dropped", "[1,1]<stdout>:=== RUN   TestX\n", ""},
		{"untagged launcher message kept", "mpirun noticed something\n", "mpirun noticed something\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			relabel(&out, strings.NewReader(tc.in))
			if out.String() != tc.want {
				t.Errorf("relabel(%q) = %q; want %q", tc.in, out.String(), tc.want)
			}
		})
	}
}
