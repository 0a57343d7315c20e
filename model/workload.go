package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/commcost/commcost/results"
)

// InstanceOfItem returns the pattern instance one workload item counts.
func InstanceOfItem(w results.WorkItem) Instance {
	return Instance{Pattern: w.Bench, Params: w.Params, Ranks: w.Ranks}
}

// PredictWorkload predicts a program phase whose communication is given as
// pattern instances with counts (results.WorkItem; docs/ARCHITECTURE.md, contract 4):
//
//	T_pred = sum_i Count_i * m.Predict(instance_i).
//
// This is how every model predicts every application: the application
// states its phases' communication (e.g. paper 000, section 6:
// T_MM = (p+2) ceil(n^2/(p k l)) T_kk(k, l, 1) is one item of count
// (p+2) ceil(n^2/(p k l)) at the kkaccess point (k, l, r = 1)), and no
// application computes a prediction by hand. The first item the model cannot
// predict is an error naming it (wrapping ErrUnsupportedPattern when the
// model does not describe that pattern), never a silent zero. An empty
// workload predicts 0.
//
// A workload with several views (results.WorkItem.View) is predicted from
// the first view the model describes completely; PredictWorkloadView also
// says which.
func PredictWorkload(m Model, w []results.WorkItem) (float64, error) {
	v, _, err := PredictWorkloadView(m, w)
	return v, err
}

// PredictWorkloadView is PredictWorkload that also returns the view it
// predicted from. Views are tried in the order they first appear; a view
// with an item the model does not describe (ErrUnsupportedPattern: a
// pattern outside m.Patterns(), or one the fitted parameters cannot
// reach, such as the two-level model at a rank count it has no bisection
// estimate for) is skipped. When no view is described the error joins
// every view's reason; any other error (a malformed item) is returned at
// once.
func PredictWorkloadView(m Model, w []results.WorkItem) (float64, string, error) {
	names, items := results.WorkViews(w)
	var errs []error
	for _, view := range names {
		v, err := predictItems(m, items[view])
		if err == nil {
			return v, view, nil
		}
		if !errors.Is(err, ErrUnsupportedPattern) {
			return 0, view, err
		}
		if view != "" {
			err = fmt.Errorf("view %s: %w", view, err)
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return 0, "", nil
	}
	return 0, "", errors.Join(errs...)
}

// predictItems is the sum over one view's items.
func predictItems(m Model, w []results.WorkItem) (float64, error) {
	var sum float64
	for i, it := range w {
		v, err := PredictItem(m, it)
		if err != nil {
			if it.Validate() != nil || !slices.Contains(m.Patterns(), it.Bench) {
				return 0, fmt.Errorf("workload item %d: %w", i+1, err)
			}
			return 0, fmt.Errorf("workload item %d (%s %s): %w", i+1, it.Bench, paramString(it.Params), err)
		}
		sum += v
	}
	return sum, nil
}

// PredictItem is one workload item's share of PredictWorkload, Count
// times the model's time of its instance (0 for a count of 0), its error
// naming no item: a caller that predicts items one by one names the item
// itself, by its place in the whole workload.
func PredictItem(m Model, it results.WorkItem) (float64, error) {
	if err := it.Validate(); err != nil {
		return 0, err
	}
	if it.Count == 0 {
		return 0, nil
	}
	if !slices.Contains(m.Patterns(), it.Bench) {
		return 0, unsupported(m.Kind(), it.Bench, m.Patterns())
	}
	// A negative time is a fit outside its physical range (e.g. LogGP's
	// L below zero on noisy round trips), not a prediction:
	// PredictChecked says so (ErrUnphysical) with the parameters.
	v, err := PredictChecked(m, InstanceOfItem(it))
	if err != nil {
		return 0, err
	}
	return it.Count * v, nil
}
