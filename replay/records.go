package replay

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/results"
)

// Bench is the bench of a replay's records (Outcome.Records).
const Bench = "replay"

func init() { results.RegisterRecordCheck(Bench, checkRecord) }

// checkRecord is the record check of a replay record: its unit is s,
// its derived times (predicted_* and measured_*, seconds) are not
// negative and, when not 0, at least results.MinRecordSeconds; each stored error error_X_Y is
// (predicted_X_Y_s - measured_X_Y_s) / measured_X_Y_s, as Run computed it;
// best is 1 when present. report and compare show all of them, so a
// record they contradict is refused rather than shown.
func checkRecord(r *results.Record) error {
	if r.Unit != results.UnitSeconds {
		return fmt.Errorf("unit %q: a replay record is a time in %q", r.Unit, results.UnitSeconds)
	}
	d := r.Derived
	for _, kind := range []string{"mpi_max", "mpi_mean", "wall_max", "wall_mean"} {
		for _, side := range []string{"predicted_", "measured_"} {
			k := side + kind + "_s"
			if v, ok := d[k]; ok && (v < 0 || (v > 0 && v < results.MinRecordSeconds)) {
				return fmt.Errorf("derived %s = %v: a time is 0 or at least %g s", k, v, results.MinRecordSeconds)
			}
		}
		e, ok := d["error_"+kind]
		if !ok {
			continue
		}
		pred, meas := d["predicted_"+kind+"_s"], d["measured_"+kind+"_s"]
		if !(meas > 0) {
			return fmt.Errorf("derived error_%s = %v without a positive measured_%s_s to be the error of", kind, e, kind)
		}
		if want := (pred - meas) / meas; math.Abs(e-want) > 1e-9*math.Max(1, math.Abs(want)) {
			return fmt.Errorf("derived error_%[1]s = %[2]v disagrees with (predicted_%[1]s_s - measured_%[1]s_s) / measured_%[1]s_s = %.6[3]g", kind, e, want)
		}
	}
	if b, ok := d["best"]; ok && b != 1 {
		return fmt.Errorf("derived best = %v: it marks the best model with 1", b)
	}
	return nil
}
