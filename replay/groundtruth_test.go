package replay

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestAssess: the assertions pass and fail where they should.
func TestAssess(t *testing.T) {
	prog := func(name string, mpi, wall float64, models map[string][2]float64, cal float64) ProgramFigures {
		return ProgramFigures{Program: name, MeasuredMPI: mpi, MeasuredWall: wall, Models: models, SimGridCal: cal, SimGridDefault: math.NaN()}
	}
	for _, tc := range []struct {
		name string
		ps   []ProgramFigures
		want []string // substrings of the failures, none when empty
	}{
		{"all close", []ProgramFigures{
			prog("a", 1, 2, map[string][2]float64{"h": {1.05, 2.1}, "l": {1.5, 2.5}}, 2.3),
			prog("b", 1, 2, map[string][2]float64{"h": {0.92, 1.9}}, 2.4),
			prog("c", 1, 2, map[string][2]float64{"h": {1.2, 2.05}}, math.NaN()),
		}, nil},
		{"median too far", []ProgramFigures{
			prog("a", 1, 2, map[string][2]float64{"h": {1.3, 2}}, math.NaN()),
			prog("b", 1, 2, map[string][2]float64{"h": {0.8, 2}}, math.NaN()),
		}, []string{"25.0% off the measured (median over 2 programs)"}},
		{"SimGrid closer", []ProgramFigures{
			prog("a", 1, 2, map[string][2]float64{"h": {1.01, 2.4}}, 2.1),
		}, []string{"a: commcost's best wall-time error 20.0% is larger than SimGrid's calibrated 5.0%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			fails := Assess(tc.ps, 0.10, &log)
			if len(fails) != len(tc.want) {
				t.Fatalf("failures %q, want %d", fails, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(fails[i], w) {
					t.Errorf("failure %q lacks %q", fails[i], w)
				}
			}
			if !strings.Contains(log.String(), "median over") {
				t.Errorf("log lacks the median:\n%s", log.String())
			}
		})
	}
}
