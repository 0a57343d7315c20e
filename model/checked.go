package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrUnphysical marks a prediction that cannot be a time or a bandwidth:
// negative or not finite. It comes from parameters
// fitted outside their physical range (a negative latency fitted to noisy
// small messages) or used far outside the fitted sizes, and is an error,
// not a number to print.
var ErrUnphysical = errors.New("prediction is not physical")

// NegativeTimeFit names what every command that refuses a model for a
// negative time says the model is (predict, replay, export simgrid), each
// followed by what the command cannot do with it.
const NegativeTimeFit = "a fit that prices messages in negative time"

// PredictChecked is m.Predict that refuses a result that is negative or
// not finite with an error wrapping ErrUnphysical, naming the model, the
// instance and the model's parameters. Every caller that shows or sums
// predictions (commcost predict, PredictSum) uses it.
//
// A pattern outside m.Patterns() is refused first, as not described by
// the model kind (naming the ones it describes): asked of hockney,
// kkaccess would otherwise fail on the parameter hockney reads (bytes),
// as if the instance lacked it.
func PredictChecked(m Model, in Instance) (float64, error) {
	if !slices.Contains(m.Patterns(), in.Pattern) {
		return 0, unsupported(m.Kind(), in.Pattern, m.Patterns())
	}
	v, err := m.Predict(in)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		var ps []string
		for _, p := range m.Params() {
			ps = append(ps, fmt.Sprintf("%s = %.4g %s", p.Name, p.Value, p.Unit))
		}
		what := "negative: " + NegativeTimeFit + " cannot predict it"
		if math.IsNaN(v) || math.IsInf(v, 0) {
			what = "not finite"
		}
		return 0, fmt.Errorf("%w: %s predicts %g for %s %s, which is %s; its parameters (%s) do not describe this instance",
			ErrUnphysical, m.Kind(), v, in.Pattern, paramString(in.Params), what, strings.Join(ps, ", "))
	}
	return v, nil
}
