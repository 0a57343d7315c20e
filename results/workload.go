package results

import "fmt"

// WorkItem is Count instances of one pattern point: one term of a program
// phase's communication (docs/ARCHITECTURE.md, contract 4). An application record
// carries its phase's communication as a list of WorkItems (Record.Workload),
// so that any fitted model predicts the phase from the records alone:
// T_pred = sum over items of Count x Predict(Bench, Params, Ranks).
//
// Bench and Params name a point exactly as the pattern's own records do
// (e.g. bench "kkaccess", params {"k": 4, "l": 1024, "r": 1, "op": "read"}),
// so a model fitted on those records reads the item without translation.
//
// View groups items into alternative descriptions of the same phase: a
// program's communication can be stated at several levels (paper 003's
// aggregate operations; the rounds of point-to-point messages those
// operations are made of; paper 001's contention patterns), and each model
// describes only some of them (the two-level model predicts aggregate
// operations, Hockney single messages). Items with the same View form one
// complete description; a model predicts the phase from the first view, in
// the order the views first appear, whose every item it describes. A
// workload whose items all have View "" is one description.
type WorkItem struct {
	Count  float64 `json:"count"`
	Bench  string  `json:"bench"`
	Params Params  `json:"params"`
	Ranks  int     `json:"ranks,omitempty"`
	View   string  `json:"view,omitempty"`
}

// WorkViews splits a workload into its views (see WorkItem.View), in the
// order each view first appears.
func WorkViews(w []WorkItem) (names []string, items map[string][]WorkItem) {
	items = map[string][]WorkItem{}
	for _, it := range w {
		if _, ok := items[it.View]; !ok {
			names = append(names, it.View)
		}
		items[it.View] = append(items[it.View], it)
	}
	return names, items
}

// Validate reports an item no model could predict: a count that is negative
// or not finite, an empty bench, or a parameter that is not a JSON scalar.
func (w WorkItem) Validate() error {
	if w.Bench == "" {
		return fmt.Errorf("workload item has no bench name")
	}
	if !isScalar(w.Count) || w.Count < 0 || w.Count > MaxRecordValue {
		return fmt.Errorf("workload item %s has count %v; want a finite number from 0 to %g", w.Bench, w.Count, MaxRecordValue)
	}
	if w.Ranks < 0 || w.Ranks > MaxRecordRanks {
		return fmt.Errorf("workload item %s has ranks %d; want 0 to %d", w.Bench, w.Ranks, MaxRecordRanks)
	}
	for k, v := range w.Params {
		if k == "" || !isScalar(v) {
			return fmt.Errorf("workload item %s: parameter %q is %T; want a number, string or bool", w.Bench, k, v)
		}
	}
	if err := CheckBenchParams(w.Bench, w.Params); err != nil {
		return fmt.Errorf("workload item %w", err)
	}
	if w.Ranks > 0 {
		return w.checkRanks()
	}
	return nil
}

// checkRanks applies bench's item check (RegisterItemCheck) to w.
func (w WorkItem) checkRanks() error {
	if f, ok := itemChecks.Load(w.Bench); ok {
		if err := f.(func(WorkItem) error)(w); err != nil {
			return fmt.Errorf("workload item %s %s: %w", w.Bench, paramString(w.Params), err)
		}
	}
	return nil
}
