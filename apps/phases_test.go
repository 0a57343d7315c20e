package apps

import (
	"fmt"
	"slices"
	"testing"
)

// registeredPhases checks a run's phases against its program's registered
// list (Program.Phases), which 'app table' names missing phases from: the
// same names (the order a run enters them in may depend on the ranks).
func registeredPhases(app App, out Outcome) error {
	want := PhasesOf(app.Name(), app.Params())
	got := out.Phases.Names()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		return fmt.Errorf("%s %v timed phases %v, but its program registers %v", app.Name(), app.Params(), got, want)
	}
	return nil
}

// TestEveryProgramRegistersPhases: a program without its phase list
// would leave 'app table' unable to name the phases its records lack.
func TestEveryProgramRegistersPhases(t *testing.T) {
	for _, p := range Programs() {
		if p.Phases == nil || len(p.Phases(nil)) == 0 {
			t.Errorf("program %s registers no phases", p.Name)
		}
	}
}
