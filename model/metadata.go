package model

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/commcost/commcost/results"
)

// checkMetadata refuses the stored metadata of a model file that no fit
// writes (a corrupt or hand-edited file), so that no command shows it as
// a fit's: v is the decoded body, the top-level params or the validation,
// name its JSON name and path where it is. What it holds is told by its
// JSON names, in every kind alike:
//
//   - standard errors, residual and relative errors, sums of squares and
//     condition numbers are >= 0;
//   - counts (points, degrees of freedom, levels, grid sides) are >= 0, and
//     rank counts at most results.MaxRecordRanks;
//   - sizes in bytes (*_bytes, l_levels, breakpoints) are whole numbers
//     in 0..results.MaxRecordBytes, what a record's bytes may be;
//   - an adjusted R^2 (adj_r2) is at most 1;
//   - ranges are in order: min_bytes <= max_bytes, from_bytes <= to_bytes,
//     a 95% interval's ends, dof <= n, the validation's median <= p95 <=
//     max error, and it lists n_test held-out points;
//   - a parameter's 95% interval agrees with its standard error
//     (checkInterval), and a link's per-byte time or latency is within
//     plausible bounds (checkPlausible);
//   - a 95% interval contains its value, and trimmed counts the points
//     trimmed_points names (trimming drops points before n is counted, so
//     trimmed is not bounded by n).
func checkMetadata(v reflect.Value, name, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkMetadata(v.Elem(), name, path)
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			p := fmt.Sprintf("%s[%d]", path, i)
			if err := checkNumber(name, e, p); err != nil {
				return err
			}
			if err := checkMetadata(e, name, p); err != nil {
				return err
			}
		}
		if name == "cov" {
			return checkCov(v, path)
		}
	case reflect.Struct:
		fields := map[string]reflect.Value{}
		err := eachJSONField(v.Type(), path, func(f reflect.StructField, n, _, sub string) error {
			fv := v.FieldByIndex(f.Index)
			fields[n] = fv
			if err := checkNumber(n, fv, sub); err != nil {
				return err
			}
			return checkMetadata(fv, n, sub)
		})
		if err != nil {
			return err
		}
		if v.Type() == paramType {
			if err := checkUnit(v.Interface().(Param), path); err != nil {
				return err
			}
		}
		if v.Type() == qualityType {
			if err := checkRSEUnit(v.Interface().(Quality), path); err != nil {
				return err
			}
		}
		if err := checkOrder(fields, path); err != nil {
			return err
		}
		if v.Type() == paramType {
			p := v.Interface().(Param)
			if err := checkInterval(p, path); err != nil {
				return err
			}
			return checkPlausible(p, path)
		}
	}
	return nil
}

// Units. A parameter's value is in the unit its fit writes (Param.Unit),
// and Predict uses the value as that unit: no reader converts another, so
// a file whose unit says otherwise would predict off by the conversion
// without a word. fitUnits are the units fits write ("" for a ratio, and
// for a unit left out, which the reader takes as the model's own);
// namedUnits are the units of the parameters whose name fixes the unit in
// every kind ("t_w[...]" is "t_w"; "b@p", "c@p", a bisection's links
// crossed at p ranks, are in links).
var (
	fitUnits   = []string{"s", "s/B", "B", "links", "units", ""}
	namedUnits = map[string]string{
		"t_s": "s", "t_w": "s/B", "t_h": "s", "L": "s",
		"alpha": "s", "beta": "s/B", "beta_x": "s/B", "gamma": "s/B", "delta": "s",
		"lambda": "units", "unit": "s",
	}
)

// MaxParamSecondsPerByte bounds a time per byte (unit s/B): 0.1 s/B is a
// rate of 10 bytes a second, no machine's; a larger value is one written
// in another unit (1 meant as 1 ns/B) or a corrupt file.
const MaxParamSecondsPerByte = 0.1

// unitOfName is the unit a parameter of this name is in, in every kind.
func unitOfName(name string) (string, bool) {
	if b, p, ok := strings.Cut(name, "@"); ok && (b == "b" || b == "c") && p != "" && strings.Trim(p, "0123456789") == "" {
		return "links", true
	}
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	u, ok := namedUnits[name]
	return u, ok
}

// checkUnit refuses a parameter at path whose unit is not the one the
// model reads its value in, and a time per byte beyond
// MaxParamSecondsPerByte.
func checkUnit(p Param, path string) error {
	if want, ok := unitOfName(p.Name); ok && p.Unit != want && p.Unit != "" {
		return fmt.Errorf("%s.unit = %q: %s is read in %s, and no reader converts units (its value would be used as %s); accepted: %q (convert the value, or refit; a corrupt or hand-edited file)", where(path), p.Unit, p.Name, want, want, want)
	}
	if !slices.Contains(fitUnits, p.Unit) {
		return fmt.Errorf("%s.unit = %q is no unit a fit writes, and no reader converts units (the value would be used as written); accepted: s, s/B, B, links, units (convert the value, or refit; a corrupt or hand-edited file)", where(path), p.Unit)
	}
	if (p.Unit == "s/B" || p.Unit == "" && namedUnits[strings.SplitN(p.Name, "[", 2)[0]] == "s/B") && math.Abs(p.Value) > MaxParamSecondsPerByte {
		return fmt.Errorf("%s.value = %v s/B: a time per byte beyond %g s/B (a rate below 10 bytes a second) is no machine's; a value meant in another unit, e.g. ns/B, is to be converted to s/B (a corrupt or hand-edited file)", where(path), p.Value, MaxParamSecondsPerByte)
	}
	return nil
}

// checkRSEUnit refuses a residual standard error's unit other than the
// one its weighting gives (relative weighting: relative; ci: standard
// errors; none: s), which the reports print it in.
func checkRSEUnit(q Quality, path string) error {
	want := "s"
	switch q.Weighting {
	case "":
		return nil
	case "relative":
		want = "relative"
	case "ci":
		want = "standard errors"
	}
	if q.RSEUnit != "" && q.RSEUnit != want {
		return fmt.Errorf("%s.rse_unit = %q: a fit of weighting %q writes its residual standard error in %q; accepted: %q (a corrupt or hand-edited file)", where(path), q.RSEUnit, q.Weighting, want, want)
	}
	return nil
}

// Metadata names by what they hold (checkMetadata).
var (
	nonNegativeNames = map[string]string{
		"se": "a standard error", "k0_se": "a standard error", "l0_se": "a standard error",
		"rse": "a residual standard error", "sse": "a sum of squares", "cond": "a condition number",
		"rel_err": "a relative error", "median_rel_err": "a relative error", "p95_rel_err": "a relative error",
		"max_rel_err": "a relative error", "ac_change": "a relative change",
	}
	countNames = map[string]bool{
		"n": true, "dof": true, "trimmed": true, "n_train": true, "n_test": true, "failed": true,
		"k": true, "k_int": true, "rows": true, "cols": true, "d": true,
	}
	byteNames = map[string]bool{"l_levels": true, "breakpoints": true}
)

// checkNumber checks one number by its JSON name (checkMetadata); a slice
// element is checked by its slice's name.
func checkNumber(name string, v reflect.Value, path string) error {
	bad := func(val any, why string) error {
		return fmt.Errorf("%s = %v: %s (a corrupt or hand-edited file)", where(path), val, why)
	}
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		f := v.Float()
		if what, ok := nonNegativeNames[name]; ok && f < 0 {
			return bad(f, what+" is >= 0")
		}
		if strings.HasSuffix(name, "_bytes") || byteNames[name] {
			if !(f >= 0 && f <= results.MaxRecordBytes) {
				return bad(f, fmt.Sprintf("a size is 0 to %g bytes", float64(results.MaxRecordBytes)))
			}
			if f != math.Trunc(f) {
				return bad(f, "a size is a whole number of bytes, as the records' sizes a fit reads")
			}
		}
		if name == "adj_r2" && f > 1+1e-9 {
			return bad(f, "an adjusted R^2 is at most 1 (it may be negative)")
		}
		if name == "measured" && !(f > 0) {
			return bad(f, "a held-out point's measured time is positive")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n := v.Int()
		if name == "ranks" && (n < 0 || n > results.MaxRecordRanks) {
			return bad(n, fmt.Sprintf("a rank count is 0 to %d", results.MaxRecordRanks))
		}
		if countNames[name] && n < 0 {
			return bad(n, "a count is >= 0")
		}
	}
	return nil
}

// checkOrder checks the ranges of one structure (checkMetadata).
func checkOrder(f map[string]reflect.Value, path string) error {
	num := func(n string) (float64, bool) {
		v, ok := f[n]
		if !ok {
			return 0, false
		}
		switch v.Kind() {
		case reflect.Float64, reflect.Float32:
			return v.Float(), true
		case reflect.Int, reflect.Int64, reflect.Int32:
			return float64(v.Int()), true
		}
		return 0, false
	}
	sub := func(n string) string {
		if path == "" {
			return n
		}
		return path + "." + n
	}
	for _, pair := range [][2]string{{"min_bytes", "max_bytes"}, {"from_bytes", "to_bytes"}, {"dof", "n"},
		{"median_rel_err", "p95_rel_err"}, {"p95_rel_err", "max_rel_err"}} {
		lo, ok1 := num(pair[0])
		hi, ok2 := num(pair[1])
		if ok1 && ok2 && lo > hi*(1+1e-9) {
			return fmt.Errorf("%s = %v is above %s = %v: no fit writes them so (a corrupt or hand-edited file)", sub(pair[0]), lo, sub(pair[1]), hi)
		}
	}
	if ci, ok := f["ci95"]; ok && ci.Kind() == reflect.Array && ci.Len() == 2 {
		lo, hi := ci.Index(0).Float(), ci.Index(1).Float()
		if lo > hi+1e-9*math.Max(math.Abs(lo), math.Abs(hi)) {
			return fmt.Errorf("%s = [%v, %v]: the 95%% interval's low end is above its high end (a corrupt or hand-edited file)", sub("ci95"), lo, hi)
		}
	}
	if ci, ok := f["ci95"]; ok && ci.Kind() == reflect.Array && ci.Len() == 2 {
		lo, hi := ci.Index(0).Float(), ci.Index(1).Float()
		// [0, 0] is a parameter written without an interval
		if v, ok := num("value"); ok && (lo != 0 || hi != 0) {
			tol := 1e-9 * math.Max(math.Abs(v), math.Max(math.Abs(lo), math.Abs(hi)))
			if v < lo-tol || v > hi+tol {
				return fmt.Errorf("%s = [%v, %v] does not contain %s = %v: a 95%% interval contains its estimate (a corrupt or hand-edited file)", sub("ci95"), lo, hi, sub("value"), v)
			}
		}
	}
	if tp, ok := f["trimmed_points"]; ok && tp.Kind() == reflect.Slice {
		if n, ok := num("trimmed"); ok && int(n) != tp.Len() {
			return fmt.Errorf("%s = %v but %s names %d points: a fit names every point it trims (a corrupt or hand-edited file)", sub("trimmed"), n, sub("trimmed_points"), tp.Len())
		}
	}
	if pts, ok := f["points"]; ok && pts.Kind() == reflect.Slice {
		if n, ok := num("n_test"); ok && int(n) != pts.Len() {
			return fmt.Errorf("%s = %v but %s lists %d held-out points (a corrupt or hand-edited file)", sub("n_test"), n, sub("points"), pts.Len())
		}
	}
	return nil
}

// checkCov refuses a covariance matrix that is not square or has a
// negative variance on its diagonal.
func checkCov(v reflect.Value, path string) error {
	n := v.Len()
	for i := 0; i < n; i++ {
		row := v.Index(i)
		if row.Kind() != reflect.Slice {
			return nil
		}
		if row.Len() != n {
			return fmt.Errorf("%s has %d rows but row %d has %d entries: a covariance matrix is square (a corrupt or hand-edited file)", where(path), n, i, row.Len())
		}
		if d := row.Index(i).Float(); d < 0 {
			return fmt.Errorf("%s[%d][%d] = %v: a variance is >= 0 (a corrupt or hand-edited file)", where(path), i, i, d)
		}
	}
	return nil
}

// where names a metadata path for a message.
func where(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}
