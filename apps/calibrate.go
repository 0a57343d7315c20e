package apps

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// Calibration measures the patterns the models need to predict one
// application's workload on this communicator, and fits the models: the
// "calibration of the needed patterns first" of `commcost app` when no
// fitted model is given.
//
// What it measures, from the workload's items (sizes are the items'
// message sizes, spread over at most MaxSizes powers of two from half the
// smallest to twice the largest, so that the fits interpolate):
//
//   - pingpong between ranks 0 and 1 (Hockney, piecewise Hockney, BSP's
//     fallback) and roundtrip between the same ranks, from 8 bytes on (the
//     hyperbolic model's end-to-end block, eq. 3, whose a is the
//     small-message limit);
//   - prtt(n = 1 and 4, d = 0 and PRTT(1,0,s)), client and server side,
//     between ranks 0 and 1 (LogGP, LogP);
//   - for a workload with chainshift items on 3 or more ranks, the
//     all-to-all of paper 001 over the first n ranks, n = 2 .. p (the
//     hyperbolic model's a_c, b_c);
//   - for every aggregate point (op, q) on r ranks the workload names, the
//     textbook operation on the first r ranks at three sizes around the
//     item's (the two-level model per rank count, BSP), and the all-to-all
//     broadcast on all p ranks when no bisection-insensitive operation is
//     named (the two-level model's t_s, t_w need one);
//   - for every grid exchange step the workload names ("gridshift": its
//     grid, lines, mode and distance), that step on all p ranks at half,
//     once and twice the item's size (the gridstep model's line per step).
//
// Only the patterns some kind of Kinds reads are measured. Every rank must
// call Run; the records are complete on rank 0 only (sub-communicator
// patterns run on the first ranks).
type Calibration struct {
	// Reps configures each point's repetitions; the zero value means
	// patterns' defaults with MaxTime 0.5 s and MinReps 5.
	Reps patterns.Reps
	// MaxSizes bounds the message sizes per point-to-point sweep; zero
	// means 6.
	MaxSizes int
	// Kinds are the model kinds to calibrate for (FitKinds when empty):
	// only the patterns some of them read are measured.
	Kinds []string
	// Validate fills and checks every buffer of every pattern measured
	// (a mismatch is an error), as the patterns' --validate.
	Validate bool
}

// needs reports whether a kind of cal.Kinds reads records of bench.
func (cal Calibration) needs(bench string) bool {
	kinds := cal.kinds()
	for _, k := range model.Registered() {
		if slices.Contains(kinds, k.Name) && slices.Contains(k.Benches, bench) {
			return true
		}
	}
	return false
}

// calibrationMaxTime bounds each calibration point (seconds).
const calibrationMaxTime = 0.5

func (cal Calibration) reps() patterns.Reps {
	r := cal.Reps
	if r.MaxTime == 0 {
		r.MaxTime = calibrationMaxTime
	}
	if r.MinReps == 0 {
		r.MinReps = 5
	}
	return r
}

// calIters keeps a repetition near 64 KiB of traffic per rank: enough
// operations that small messages are timed well above the clock's
// resolution, and one operation per repetition from 64 KiB on, as the
// applications' phases are timed, so that the fastest repetition of a
// calibration point and of a phase are the same statistic (a repetition
// that averages several operations rarely catches only fast ones).
func calIters(bytes int) int { return max(1, min(100, (64<<10)/max(bytes, 1))) }

// calWork is what a calibration reads from a workload: the point-to-point
// and chain sizes, and the sizes of every aggregate and grid point, in the
// order the phases name them (Run measures from it, Plan lists it).
type calWork struct {
	p2p, chain []int
	aggs       map[aggKey][]int
	aggOrder   []aggKey
	grids      map[gridKey][]int
	gridOrder  []gridKey
}

type aggKey struct {
	op    string
	ranks int
	q     int
}

type gridKey struct {
	rows, cols int
	along      string
	mode       string
	d          int
}

// parseCalWork reads work's phases in name order: every rank must build
// the same plan (a map's order differs between ranks, and the
// sub-communicator operations of Run would then pair different
// operations).
func parseCalWork(work map[string][]results.WorkItem) calWork {
	w := calWork{aggs: map[aggKey][]int{}, grids: map[gridKey][]int{}}
	for _, ph := range slices.Sorted(maps.Keys(work)) {
		for _, it := range work[ph] {
			b := intParam(it.Params, "bytes")
			switch it.Bench {
			case "pingpong":
				w.p2p = append(w.p2p, b)
			case "chainshift":
				w.chain = append(w.chain, b)
				w.p2p = append(w.p2p, b)
			case patterns.BenchGridShift:
				along, _ := it.Params["along"].(string)
				mode, _ := it.Params["mode"].(string)
				k := gridKey{intParam(it.Params, "rows"), intParam(it.Params, "cols"), along, mode, intParam(it.Params, "d")}
				if _, ok := w.grids[k]; !ok {
					w.gridOrder = append(w.gridOrder, k)
				}
				w.grids[k] = append(w.grids[k], b)
			case "aggregate":
				op, _ := it.Params["op"].(string)
				q := intParam(it.Params, "q")
				k := aggKey{op, it.Ranks, q}
				if _, ok := w.aggs[k]; !ok {
					w.aggOrder = append(w.aggOrder, k)
				}
				w.aggs[k] = append(w.aggs[k], b)
			}
		}
	}
	return w
}

// Run measures the calibration for work on c and returns the records
// (complete on rank 0); emit, when not nil, is called on every rank with
// each record as it completes (rank 0's copy is the one to write).
func (cal Calibration) Run(c mpi.Comm, work map[string][]results.WorkItem, meta results.Meta, emit func(results.Record) error) ([]results.Record, error) {
	p := c.Size()
	if p < 2 {
		return nil, errors.New("a calibration needs at least 2 ranks")
	}
	// One watched span: a rank stopped between two points (in the
	// barrier before a warm-up) stalls the others there.
	defer patterns.Installed().Span(fmt.Sprintf("the application calibration on %d ranks", p))()
	reps := cal.reps()
	var recs []results.Record
	add := func(rec results.Record) error {
		recs = append(recs, rec)
		if emit != nil {
			return emit(rec)
		}
		return nil
	}
	w := parseCalWork(work)
	p2p, chain, aggs, aggOrder, grids, gridOrder := w.p2p, w.chain, w.aggs, w.aggOrder, w.grids, w.gridOrder
	sizes := sweepSizes(p2p, cal.maxSizes())
	if len(sizes) == 0 {
		return nil, errors.New("the workload has no message to calibrate for")
	}

	// Point-to-point between ranks 0 and 1.
	pairColor := mpi.Undefined
	if c.Rank() < 2 {
		pairColor = 0
	}
	pair, err := c.Split(pairColor, c.Rank())
	if err != nil {
		return nil, err
	}
	wantRT := slices.Contains(cal.kinds(), "hyperbolic")
	roundTrip := func(s int) error {
		rt := patterns.RoundTrip{Bytes: s, Peer: 1, Iters: calIters(s), Reps: reps, Validate: cal.Validate}
		m, err := rt.Run(c)
		if err != nil {
			return err
		}
		return add(rt.Record(m, meta))
	}
	if wantRT {
		// The hyperbolic model's a is the small-message limit (eq. 3,
		// RTT(0)/2): its round trips start from small sizes.
		for _, s := range []int{8, 1 << 10, 8 << 10} {
			if s < sizes[0] {
				if err := roundTrip(s); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, s := range sizes {
		if pair != nil && cal.needs("pingpong") {
			pp := patterns.PingPong{Bytes: s, Iters: calIters(s), Reps: reps, Validate: cal.Validate}
			m, err := pp.Run(pair)
			if err != nil {
				return nil, err
			}
			if err := add(pp.Record(m, meta)); err != nil {
				return nil, err
			}
		}
		if err := c.Barrier(); err != nil {
			return nil, err
		}
		if wantRT {
			if err := roundTrip(s); err != nil {
				return nil, err
			}
		}
		if !cal.needs("prtt") {
			continue
		}
		pr1 := patterns.PRTT{Bytes: s, N: 1, Peer: 1, Iters: calIters(s), Reps: reps, Validate: cal.Validate}
		one, err := pr1.Run(c)
		if err != nil {
			return nil, err
		}
		if err := add(pr1.Record(one, meta)); err != nil {
			return nil, err
		}
		const n = 4
		for _, d := range []float64{0, one.Summary.Median} {
			for _, server := range []bool{false, true} {
				if server && d == 0 {
					continue
				}
				pr := patterns.PRTT{Bytes: s, N: n, DelaySec: d, Server: server, Peer: 1, Iters: max(1, calIters(s)/n), Reps: reps, Validate: cal.Validate}
				res, err := pr.Run(c)
				if err != nil {
					return nil, err
				}
				if err := add(pr.Record(res, meta)); err != nil {
					return nil, err
				}
			}
		}
	}
	if pair != nil {
		if err := pair.Free(); err != nil {
			return nil, err
		}
	}

	// Paper 001's all-to-all for the hyperbolic model's network block,
	// which needs n >= 3 nodes (model.FitHyperbolic). On 2 ranks the chain
	// is one message, which the round trips' end-to-end block prices
	// (eq. 3; model.ChainShift).
	if len(chain) > 0 && p >= 3 && cal.needs("alltoall") {
		// Sizes from 0 (T(0) = a(n), rule 4) to the plane, as paper 001
		// fits a(n) and b(n) per n.
		for _, s := range append([]int{0}, spread(chain)...) {
			for n := 2; n <= p; n++ {
				a := patterns.AllToAll{Bytes: s, Ranks: n, Iters: 1, Reps: reps, Validate: cal.Validate}
				res, err := a.Run(c)
				if err != nil {
					return nil, err
				}
				if err := add(a.Record(res, meta)); err != nil {
					return nil, err
				}
			}
		}
	}

	// The grid exchange steps, on the whole grid as the application runs
	// them (a step's grid is all p ranks).
	if cal.needs(patterns.BenchGridShift) {
		for _, k := range gridOrder {
			if k.rows*k.cols != p {
				continue
			}
			for _, s := range gridSizes(grids[k]) {
				g := patterns.GridShift{Bytes: s, Rows: k.rows, Cols: k.cols, Along: k.along, Mode: k.mode, D: k.d, Iters: 1, Reps: reps, Validate: cal.Validate}
				res, err := g.Run(c)
				if err != nil {
					return nil, err
				}
				if err := add(g.Record(res, meta)); err != nil {
					return nil, err
				}
			}
		}
	}

	// Paper 003's aggregate operations, on the ranks each item names.
	if !cal.needs("aggregate") {
		aggOrder = nil
	}
	insensitive := false
	for _, k := range aggOrder {
		sens, err := model.BisectionSensitive(k.op)
		if err != nil {
			return nil, err
		}
		insensitive = insensitive || !sens
	}
	if len(aggOrder) > 0 && !insensitive {
		var all []int
		for _, k := range aggOrder {
			all = append(all, aggs[k]...)
		}
		k := aggKey{"allgather", p, 0}
		aggOrder = append(aggOrder, k)
		aggs[k] = all
	}
	for _, k := range aggOrder {
		op, err := patterns.ParseAggKind(k.op)
		if err != nil {
			return nil, err
		}
		if k.ranks < 2 || k.ranks > p {
			continue
		}
		color := mpi.Undefined
		if c.Rank() < k.ranks {
			color = 0
		}
		sub, err := c.Split(color, c.Rank())
		if err != nil {
			return nil, err
		}
		for _, s := range spread(aggs[k]) {
			if sub != nil {
				a := patterns.AggregateOp{Op: op, Impl: patterns.ImplTextbook, Bytes: s, Q: k.q, Iters: calIters(s), Reps: reps, Validate: cal.Validate}
				res, err := a.Run(sub)
				if err != nil {
					return nil, err
				}
				if err := add(a.Record(res, meta)); err != nil {
					return nil, err
				}
			}
			if err := c.Barrier(); err != nil {
				return nil, err
			}
		}
		if sub != nil {
			if err := sub.Free(); err != nil {
				return nil, err
			}
		}
	}
	return recs, nil
}

// CalPoint is one pattern instance a calibration measures and the ranks
// it runs on (the first Ranks of the communicator).
type CalPoint struct {
	Pattern patterns.Pattern
	Ranks   int
}

// Plan lists the instances Run measures for work on p ranks, in its
// order, for the demand check before anything is measured. PRTT's delayed
// points are listed with no delay (Run sets it from the measured round
// trip; it changes no buffer).
func (cal Calibration) Plan(work map[string][]results.WorkItem, p int) []CalPoint {
	if p < 2 {
		return nil
	}
	reps := cal.reps()
	w := parseCalWork(work)
	sizes := sweepSizes(w.p2p, cal.maxSizes())
	var out []CalPoint
	add := func(pat patterns.Pattern, ranks int) { out = append(out, CalPoint{pat, ranks}) }
	wantRT := slices.Contains(cal.kinds(), "hyperbolic")
	roundTrip := func(s int) {
		add(patterns.RoundTrip{Bytes: s, Peer: 1, Iters: calIters(s), Reps: reps, Validate: cal.Validate}, p)
	}
	if wantRT && len(sizes) > 0 {
		for _, s := range []int{8, 1 << 10, 8 << 10} {
			if s < sizes[0] {
				roundTrip(s)
			}
		}
	}
	for _, s := range sizes {
		if cal.needs("pingpong") {
			add(patterns.PingPong{Bytes: s, Iters: calIters(s), Reps: reps, Validate: cal.Validate}, 2)
		}
		if wantRT {
			roundTrip(s)
		}
		if !cal.needs("prtt") {
			continue
		}
		add(patterns.PRTT{Bytes: s, N: 1, Peer: 1, Iters: calIters(s), Reps: reps, Validate: cal.Validate}, p)
		add(patterns.PRTT{Bytes: s, N: 4, Peer: 1, Iters: max(1, calIters(s)/4), Reps: reps, Validate: cal.Validate}, p)
	}
	if len(w.chain) > 0 && p >= 3 && cal.needs("alltoall") {
		for _, s := range append([]int{0}, spread(w.chain)...) {
			for n := 2; n <= p; n++ {
				add(patterns.AllToAll{Bytes: s, Ranks: n, Iters: 1, Reps: reps, Validate: cal.Validate}, p)
			}
		}
	}
	if cal.needs(patterns.BenchGridShift) {
		for _, k := range w.gridOrder {
			if k.rows*k.cols != p {
				continue
			}
			for _, s := range gridSizes(w.grids[k]) {
				add(patterns.GridShift{Bytes: s, Rows: k.rows, Cols: k.cols, Along: k.along, Mode: k.mode, D: k.d, Iters: 1, Reps: reps, Validate: cal.Validate}, p)
			}
		}
	}
	if cal.needs("aggregate") {
		order := w.aggOrder
		insensitive := false
		for _, k := range order {
			sens, err := model.BisectionSensitive(k.op)
			insensitive = insensitive || (err == nil && !sens)
		}
		if len(order) > 0 && !insensitive {
			var all []int
			for _, k := range order {
				all = append(all, w.aggs[k]...)
			}
			k := aggKey{"allgather", p, 0}
			order = append(order, k)
			w.aggs[k] = all
		}
		for _, k := range order {
			op, err := patterns.ParseAggKind(k.op)
			if err != nil || k.ranks < 2 || k.ranks > p {
				continue
			}
			for _, s := range spread(w.aggs[k]) {
				add(patterns.AggregateOp{Op: op, Impl: patterns.ImplTextbook, Bytes: s, Q: k.q, Iters: calIters(s), Reps: reps, Validate: cal.Validate}, k.ranks)
			}
		}
	}
	return out
}

// Demand is the memory the largest instance of the calibration of work on
// p ranks asks of a rank (its buffers, and its payload in flight), by
// the patterns' own Demand; Field is "n", as the message sizes follow the
// programs' sizes. Counting it on every rank overstates the point-to-point
// points, which run on two ranks, on the safe side.
func (cal Calibration) Demand(work map[string][]results.WorkItem, p int) sysmem.Need {
	var worst sysmem.Need
	for _, pt := range cal.Plan(work, p) {
		d := pt.Pattern.Demand(pt.Ranks)
		if n := float64(d.BufferBytes) + float64(d.InFlightBytes); n > worst.Bytes+worst.InFlight {
			worst = sysmem.Need{Field: "n", Bytes: float64(d.BufferBytes), InFlight: float64(d.InFlightBytes),
				What: fmt.Sprintf("the calibration's %s on %d ranks", pt.Pattern.Bench()+" "+results.ParamList(pt.Pattern.Params(pt.Ranks)), pt.Ranks)}
		}
	}
	return worst
}

func (cal Calibration) kinds() []string {
	if len(cal.Kinds) == 0 {
		return FitKinds()
	}
	return cal.Kinds
}

func (cal Calibration) maxSizes() int {
	if cal.MaxSizes <= 0 {
		return 6
	}
	return cal.MaxSizes
}

// intParam reads an integral parameter written as int or, after a JSON
// round trip through other code, float64.
func intParam(p results.Params, key string) int {
	switch v := p[key].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// sweepSizes spreads at most k powers of two from half the smallest to
// twice the largest of sizes (at least three, for the hyperbolic fit).
func sweepSizes(sizes []int, k int) []int {
	lo, hi := math.MaxInt, 0
	for _, s := range sizes {
		lo, hi = min(lo, s), max(hi, s)
	}
	if hi == 0 {
		return nil
	}
	e0 := max(0, int(math.Floor(math.Log2(float64(max(lo, 1))/2))))
	e1 := int(math.Ceil(math.Log2(float64(hi) * 2)))
	if e1-e0 < 2 {
		e0 = max(0, e1-2)
	}
	step := max(1, int(math.Ceil(float64(e1-e0)/float64(max(k-1, 1)))))
	var out []int
	for e := e1; e >= e0; e -= step {
		out = append(out, 1<<e)
	}
	sort.Ints(out)
	return out
}

// spread returns three sizes around the given ones: the smallest, the
// largest and their geometric mean, or s/4, s/2, s for a single size.
func spread(sizes []int) []int {
	lo, hi := math.MaxInt, 0
	for _, s := range sizes {
		lo, hi = min(lo, s), max(hi, s)
	}
	if lo >= hi {
		return []int{max(1, hi/4), max(1, hi/2), hi}
	}
	mid := int(math.Round(math.Sqrt(float64(lo) * float64(hi))))
	if mid <= lo || mid >= hi {
		return []int{lo, hi}
	}
	return []int{lo, mid, hi}
}

// gridSizes are the sizes a grid step is calibrated at: half the
// smallest, the sizes' geometric middle and twice the largest, so that the
// line the gridstep model fits spans the step's sizes. One repetition is
// one step, as the applications time it.
func gridSizes(sizes []int) []int {
	lo, hi := math.MaxInt, 0
	for _, s := range sizes {
		lo, hi = min(lo, s), max(hi, s)
	}
	mid := int(math.Round(math.Sqrt(float64(lo) * float64(hi))))
	// One MPI call carries at most mpi.MaxCount bytes: a block above half
	// of it is calibrated up to the limit, not refused.
	return []int{max(1, lo/2), max(1, mid), min(2*hi, mpi.MaxCount)}
}

// FitKinds are the model kinds Fit tries: those registered for programs
// (model.ProgramKinds), sorted by name.
func FitKinds() []string { return model.ProgramKinds() }

// Fit fits every kind of kinds to recs, each with the options its
// registration gives for programs (model.Kind.ProgramOptions: the
// two-level model with the textbook implementation, the hyperbolic model
// with absolute weights); a kind the records cannot support is left out
// and its reason returned. With kinds empty it tries FitKinds, less those
// that read none of the records' benches (gridstep without gridshift
// records: a calibration for a program with no grid steps), which are left
// out without a note.
func Fit(recs []results.Record, kinds []string) ([]NamedModel, []string) {
	if len(kinds) == 0 {
		have := map[string]bool{}
		for _, r := range recs {
			have[r.Bench] = true
		}
		for _, k := range FitKinds() {
			if kind, ok := model.Lookup(k); ok && slices.ContainsFunc(kind.Benches, func(b string) bool { return have[b] }) {
				kinds = append(kinds, k)
			}
		}
	}
	var out []NamedModel
	var notes []string
	for _, k := range kinds {
		opt := model.Options{}
		if kind, ok := model.Lookup(k); ok && kind.ProgramOptions != nil {
			opt = *kind.ProgramOptions
		}
		m, err := model.Fit(k, recs, opt)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s not fitted: %v", k, err))
			continue
		}
		if h, ok := m.(*model.Hyperbolic); ok && h.Medium == model.MediumUndecided && h.DuplexRatio != nil {
			r := h.DuplexRatio
			notes = append(notes, fmt.Sprintf("hyperbolic: the all-to-all cannot tell a full-duplex node from a shared medium (b(n) = %.3g (n-1) b_w, 95%% CI [%.3g, %.3g]); its all-to-all and chain predictions are the mean of both", r.Value, r.CI95[0], r.CI95[1]))
		}
		out = append(out, NamedModel{Name: k, Model: m})
	}
	return out, notes
}
