package permsched_test

import (
	"testing"

	"github.com/commcost/commcost/permsched"
	"github.com/commcost/commcost/permsched/schedtest"
)

// One line per scheduler: the conformance suite (schedtest) is the test body.

func TestConformanceAC(t *testing.T) {
	schedtest.Run(t, permsched.AC{}, schedtest.Options{Async: true})
}

func TestConformanceLP(t *testing.T) {
	schedtest.Run(t, permsched.LP{}, schedtest.Options{MaxPhases: lpBound})
}

func TestConformanceGM(t *testing.T) {
	schedtest.Run(t, permsched.GM{}, schedtest.Options{Maximal: true})
}

func TestConformanceCGM(t *testing.T) {
	schedtest.Run(t, permsched.CGM{}, schedtest.Options{Maximal: true})
}

func TestConformanceExact(t *testing.T) {
	schedtest.Run(t, permsched.Exact{}, schedtest.Options{Optimal: true})
}

// lpBound is LP's phase count: P-1 XOR steps plus a self step, once per
// copy of the most repeated (i, j) pair.
func lpBound(m *permsched.Matrix) int {
	p := 1
	for p < m.N() {
		p <<= 1
	}
	mult := 1
	for _, row := range m.Dense() {
		for _, c := range row {
			mult = max(mult, int(c))
		}
	}
	if m.Weighted() {
		mult = max(1, m.MaxOutDegree()) // weighted entries hold bytes, not counts
	}
	return mult * p
}

// TestConformanceGMFromColumnZero covers GM's literal Fig. 4 reading.
func TestConformanceGMFromColumnZero(t *testing.T) {
	schedtest.Run(t, permsched.GM{FromColumnZero: true}, schedtest.Options{Maximal: true, FuzzInstances: 50})
}

// FuzzSchedulers decodes arbitrary bytes into a multigraph (first byte: n;
// then pairs of bytes: source, destination) and runs every scheduler
// through the conformance checks.
func FuzzSchedulers(f *testing.F) {
	f.Add([]byte{4, 0, 1, 1, 2, 2, 3, 3, 0})
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Add([]byte{9, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 0, 8, 0, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := 1 + int(data[0])%40
		rows := make([][]int32, n)
		for i := 1; i+1 < len(data) && i < 2001; i += 2 {
			s, d := int(data[i])%n, int(data[i+1])%n
			rows[s] = append(rows[s], int32(d))
		}
		m, err := permsched.NewMatrix(n, rows)
		if err != nil {
			t.Fatal(err)
		}
		opts := map[string]schedtest.Options{
			"AC": {Async: true}, "LP": {MaxPhases: lpBound}, "GM": {Maximal: true}, "CGM": {Maximal: true}, "EXACT": {Optimal: true},
		}
		for _, s := range permsched.Schedulers() {
			if err := schedtest.Check(s, m, uint64(len(data)), opts[s.Name()]); err != nil {
				t.Fatalf("%s: %v", s.Name(), err)
			}
		}
	})
}
