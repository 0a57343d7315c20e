package model

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// Aggregate operations as the "aggregate" records name them (params op,
// impl, bytes; Ranks = p), with bytes the message size m of the paper's
// cost table.
var aggregateOps = []string{"bcast", "allgather", "scatter", "alltoall", "qshift", "news"}

// BisectionSensitive reports whether an aggregate operation is sensitive to
// the bisection width (paper 003, slide "A Two-Level Model": random
// permutations, all-to-all personalized and circular q-shift are; one-to-all
// and all-to-all broadcasts, one-to-all personalized and NEWS shifts are
// not).
func BisectionSensitive(op string) (bool, error) {
	switch op {
	case "alltoall", "qshift":
		return true, nil
	case "bcast", "allgather", "scatter", "news":
		return false, nil
	}
	return false, fmt.Errorf("%w: aggregate op %q (want one of %s)", ErrBadRecord, op, strings.Join(aggregateOps, ", "))
}

// MaxVolumeBytes is the m of the two-level model: the largest amount of
// data entering or leaving any processor during the operation, for message
// size m and p processors: bcast m (every processor receives the message),
// allgather, scatter and alltoall (p-1) m, qshift m, news 2d m with d the
// grid dimension (4 m on the paper's 2-D grid).
func MaxVolumeBytes(op string, m float64, p int, neighbors float64) (float64, error) {
	if p < 1 {
		return 0, fmt.Errorf("%w: aggregate %s with ranks = %d", ErrBadRecord, op, p)
	}
	switch op {
	case "bcast", "qshift":
		return m, nil
	case "allgather", "scatter", "alltoall":
		return float64(p-1) * m, nil
	case "news":
		if neighbors <= 0 {
			neighbors = 4
		}
		return neighbors * m, nil
	}
	_, err := BisectionSensitive(op)
	return 0, err
}

// TwoLevel is the two-level model of paper 003 ("A Two-Level Model for
// Estimating Communication Overheads"): with link time t_w per byte, p
// processors, bisection width c and m the most data entering or leaving a
// processor,
//
//	bisection-sensitive operations:   t = t_w m (p/c)
//	bisection-insensitive operations: t = t_w m
//
// The paper's model is asymptotic (large m); a startup term t_s is added to
// both so that latency-bound small messages do not bias t_w. Since c is a
// property of the machine at a given p, t_w p/c is fitted per p (Beta) and
// c = p t_w / Beta is derived with the delta method.
type TwoLevel struct {
	Impl string `json:"impl,omitempty"`
	Ts   Param  `json:"t_s"`
	Tw   Param  `json:"t_w"`
	// Bisection holds, per p with sensitive records, the fitted t_w p/c
	// and the derived bisection width c (in links).
	Bisection []BisectionFit `json:"bisection,omitempty"`
	Fit       Quality        `json:"quality"`
}

// BisectionFit is the bisection estimate at one processor count.
type BisectionFit struct {
	Ranks int   `json:"ranks"`
	Beta  Param `json:"beta"` // t_w p / c, s/B
	C     Param `json:"c"`    // bisection width
}

var twoLevelPatterns = []string{"aggregate"}

func init() {
	Register(Kind{
		Name:           "twolevel",
		Summary:        "two-level model of aggregate operations: t_s + t_w m, bisection width c per p (paper 003)",
		Benches:        twoLevelPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptImpl},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitTwoLevel(r, o) },
		New:            func() Model { return &TwoLevel{} },
		ProgramOptions: &Options{Impl: "textbook"},
	})
	// The cost table is derived from a two-level fit (TableFromTwoLevel),
	// never fitted; it is registered so that its JSON decodes.
	Register(Kind{
		Name:    "aggregate-table",
		Summary: "paper 003's aggregate cost table on one topology, with t_s, t_w from a two-level fit",
		New:     func() Model { return &AggregateTable{} },
		Check: func(m Model) error {
			_, err := AggregateCost("bcast", m.(*AggregateTable).Topology, 2, 0, 0, 0, 0)
			return err
		},
	})
}

func (t *TwoLevel) Kind() string       { return "twolevel" }
func (t *TwoLevel) Quality() Quality   { return t.Fit }
func (t *TwoLevel) Patterns() []string { return twoLevelPatterns }
func (t *TwoLevel) Params() []Param {
	out := []Param{t.Ts, t.Tw}
	for _, b := range t.Bisection {
		out = append(out, b.C)
	}
	return out
}

// Predict gives t_s + t_w m (insensitive) or t_s + (t_w p/c) m (sensitive,
// with the c fitted at that p).
func (t *TwoLevel) Predict(in Instance) (float64, error) {
	if in.Pattern != "aggregate" {
		return 0, unsupported(t.Kind(), in.Pattern, twoLevelPatterns)
	}
	op := in.Str("op")
	sens, err := BisectionSensitive(op)
	if err != nil {
		return 0, err
	}
	m, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	nb, _ := in.Num("neighbors")
	M, err := MaxVolumeBytes(op, m, in.Ranks, nb)
	if err != nil {
		return 0, err
	}
	if !sens {
		return t.Ts.Value + t.Tw.Value*M, nil
	}
	var have []string
	for _, b := range t.Bisection {
		if b.Ranks == in.Ranks {
			return t.Ts.Value + b.Beta.Value*M, nil
		}
		have = append(have, strconv.Itoa(b.Ranks))
	}
	return 0, fmt.Errorf("%w: twolevel has no bisection estimate at ranks = %d (fitted at ranks %s)", ErrUnsupportedPattern, in.Ranks, strings.Join(have, ", "))
}

// selectImpl keeps the aggregate records of opt.Impl or of the only impl.
func selectImpl(recs []results.Record, opt Options) ([]results.Record, string, error) {
	return selectByParam(recs, "aggregate", "impl", "impls", opt.Impl, "--impl mpi, textbook, mesh1d or mesh2d")
}

// selectAggregateImpl is selectImpl of the aggregate records among recs,
// keeping the records of other benches as they are: the selection of the
// kinds that read aggregate records beside others (bsp, the superstep
// models). impl is "" without aggregate records.
func selectAggregateImpl(recs []results.Record, opt Options) ([]results.Record, string, error) {
	var agg, rest []results.Record
	for _, r := range recs {
		if r.Bench == "aggregate" {
			agg = append(agg, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(agg) == 0 {
		return rest, "", nil
	}
	agg, impl, err := selectImpl(agg, opt)
	if err != nil {
		return nil, "", err
	}
	return append(rest, agg...), impl, nil
}

// FitTwoLevel fits t_s, t_w and t_w p/c to "aggregate" records.
func FitTwoLevel(recs []results.Record, opt Options) (*TwoLevel, error) {
	sel, err := selectRecords(recs, "twolevel", "aggregate")
	if err != nil {
		return nil, err
	}
	sel, impl, err := selectImpl(sel, opt)
	if err != nil {
		return nil, err
	}
	// Points are keyed by op as well: split by op first, since mergePoints()
	// keys on numeric parameters only.
	byOp := map[string][]results.Record{}
	for _, r := range sel {
		op, _ := r.Params["op"].(string)
		if _, err := BisectionSensitive(op); err != nil {
			return nil, err
		}
		byOp[op] = append(byOp[op], r)
	}
	var ops []string
	for op := range byOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var pts []point
	for _, op := range ops {
		ps, err := mergePoints(byOp[op], "bytes")
		if err != nil {
			return nil, err
		}
		for i := range ps {
			ps[i].key = op + " " + ps[i].key
		}
		pts = append(pts, filterBytes(ps, 0, opt)...)
	}
	var sensRanks []int
	seen := map[int]bool{}
	insensM := map[float64]bool{}
	type row struct {
		M    float64
		sens bool
		p    int
	}
	rs := make([]row, len(pts))
	for i, p := range pts {
		op := p.inst.Str("op")
		sens, _ := BisectionSensitive(op)
		nb, _ := p.inst.Num("neighbors")
		M, err := MaxVolumeBytes(op, p.x[0], p.inst.Ranks, nb)
		if err != nil {
			return nil, err
		}
		rs[i] = row{M: M, sens: sens, p: p.inst.Ranks}
		if sens && !seen[p.inst.Ranks] {
			seen[p.inst.Ranks] = true
			sensRanks = append(sensRanks, p.inst.Ranks)
		}
		if !sens {
			insensM[M] = true
		}
	}
	sort.Ints(sensRanks)
	if len(insensM) < 2 {
		return nil, fmt.Errorf("%w: twolevel needs bisection-insensitive records (bcast, allgather, scatter, news) at 2 or more data volumes to fit t_s and t_w; have %d",
			ErrIllConditioned, len(insensM))
	}
	names := []string{"t_s", "t_w"}
	col := map[int]int{}
	for i, p := range sensRanks {
		col[p] = 2 + i
		names = append(names, fmt.Sprintf("beta@%d", p))
	}
	rows := make([][]float64, len(pts))
	ys := make([]float64, len(pts))
	labels := make([]string, len(pts))
	for i, r := range rs {
		x := make([]float64, len(names))
		x[0] = 1
		if r.sens {
			x[col[r.p]] = r.M
		} else {
			x[1] = r.M
		}
		rows[i], ys[i], labels[i] = x, pts[i].y, pts[i].label()
	}
	w, note := weights(pts, ys, opt)
	tr, err := fitLinearTrimmed(rows, ys, w, names, labels, opt)
	if err != nil {
		return nil, fmt.Errorf("twolevel: %w", err)
	}
	f := tr.fit
	t := &TwoLevel{Impl: impl, Ts: f.param(0, "s"), Tw: f.param(1, "s/B")}
	for i, p := range sensRanks {
		j := 2 + i
		beta := f.param(j, "s/B")
		beta.Name = fmt.Sprintf("t_w p/c @%d", p)
		// c = p t_w / beta; gradient (p/beta, -p t_w/beta^2).
		tw, bv := f.coef[1], f.coef[j]
		cv := float64(p) * tw / bv
		g1, g2 := float64(p)/bv, -float64(p)*tw/(bv*bv)
		cse := math.Sqrt(math.Max(g1*g1*f.cov.At(1, 1)+g2*g2*f.cov.At(j, j)+2*g1*g2*f.cov.At(1, j), 0))
		t.Bisection = append(t.Bisection, BisectionFit{
			Ranks: p, Beta: beta,
			C: Param{Name: fmt.Sprintf("c@%d", p), Unit: "links", Value: cv, SE: cse, CI95: [2]float64{cv - f.tcrit*cse, cv + f.tcrit*cse}},
		})
	}
	t.Fit = f.quality(effectiveWeighting(opt, note), tr.trimmed)
	if note != "" {
		t.Fit.Notes = append(t.Fit.Notes, note)
	}
	return t, nil
}

// Topologies of paper 003's aggregate-operation cost table.
var Topologies = []string{"mesh1d", "mesh2d", "hypercube"}

// AggregateCost is paper 003's table "Timings for Various Aggregate
// Communication Operations" for message size m on p processors with
// startup t_s, per-byte t_w and per-hop t_h (log is base 2):
//
//	op (table row)            1-D mesh                 2-D mesh                          hypercube
//	bcast (one-to-all bcast)  (ts+tw m) log p+th(p-1)  (ts+tw m) log p+2th(sqrt p-1)     (ts+tw m) log p
//	bcast2 (two-step bcast)   2(ts p+tw m)             2(2ts sqrt p+tw m)                2(ts log p+tw m)
//	allgather (all-to-all bc) (ts+tw m)(p-1)           2ts(sqrt p-1)+tw m(p-1)           ts log p+tw m(p-1)
//	scatter (one-to-all pers) (ts+tw m)(p-1)           2ts(sqrt p-1)+tw m(p-1)           ts log p+tw m(p-1)
//	alltoall (all-to-all pers)(ts+tw m p/2)(p-1)       (2ts+tw m p)(sqrt p-1)            (ts+tw m)(p-1)+(th/2)p log p
//	qshift (circular q-shift) (ts+tw m) floor(p/2)     (ts+tw m)(2 floor(sqrt p/2)+1)    ts+tw m+th log p
//
// The slide's 2-D q-shift entry reads 2 floor(p/2)+1; the square root was
// lost in its conversion (Kumar, Grama, Gupta, Karypis, "Introduction to
// Parallel Computing", q-shift on a sqrt(p) x sqrt(p) mesh), so sqrt p is
// used. The second one-to-all broadcast row is the two-step (scatter, then
// all-to-all broadcast) algorithm for long messages; "bcast2" selects it.
func AggregateCost(op, topology string, p int, m, ts, tw, th float64) (float64, error) {
	if p < 1 {
		return 0, fmt.Errorf("%w: aggregate cost with p = %d", ErrBadRecord, p)
	}
	P := float64(p)
	lg := math.Log2(P)
	sp := math.Sqrt(P)
	var col int
	switch topology {
	case "mesh1d":
		col = 0
	case "mesh2d":
		col = 1
	case "hypercube":
		col = 2
	default:
		return 0, fmt.Errorf("topology %q: want one of %s", topology, strings.Join(Topologies, ", "))
	}
	var v [3]float64
	switch op {
	case "bcast":
		v = [3]float64{(ts+tw*m)*lg + th*(P-1), (ts+tw*m)*lg + 2*th*(sp-1), (ts + tw*m) * lg}
	case "bcast2":
		v = [3]float64{2 * (ts*P + tw*m), 2 * (2*ts*sp + tw*m), 2 * (ts*lg + tw*m)}
	case "allgather", "scatter":
		v = [3]float64{(ts + tw*m) * (P - 1), 2*ts*(sp-1) + tw*m*(P-1), ts*lg + tw*m*(P-1)}
	case "alltoall":
		v = [3]float64{(ts + tw*m*P/2) * (P - 1), (2*ts + tw*m*P) * (sp - 1), (ts+tw*m)*(P-1) + th/2*P*lg}
	case "qshift":
		v = [3]float64{(ts + tw*m) * math.Floor(P/2), (ts + tw*m) * (2*math.Floor(sp/2) + 1), ts + tw*m + th*lg}
	default:
		return 0, fmt.Errorf("%w: the aggregate cost table has no row for op %q (rows: bcast, bcast2, allgather, scatter, alltoall, qshift)", ErrUnsupportedPattern, op)
	}
	return v[col], nil
}

// AggregateTable predicts aggregate operations with paper 003's cost table
// on one topology, with t_s and t_w from a fit (a baseline beside the
// two-level model and the measurements).
type AggregateTable struct {
	Topology string  `json:"topology"`
	Ts       Param   `json:"t_s"`
	Tw       Param   `json:"t_w"`
	Th       Param   `json:"t_h"`
	Fit      Quality `json:"quality"`
}

func (a *AggregateTable) Kind() string       { return "aggregate-table" }
func (a *AggregateTable) Params() []Param    { return []Param{a.Ts, a.Tw, a.Th} }
func (a *AggregateTable) Quality() Quality   { return a.Fit }
func (a *AggregateTable) Patterns() []string { return twoLevelPatterns }

// Predict evaluates AggregateCost for an "aggregate" instance; params
// op=bcast with algorithm=two-step selects the bcast2 row.
func (a *AggregateTable) Predict(in Instance) (float64, error) {
	if in.Pattern != "aggregate" {
		return 0, unsupported(a.Kind(), in.Pattern, twoLevelPatterns)
	}
	m, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	op := in.Str("op")
	if op == "bcast" && in.Str("algorithm") == "two-step" {
		op = "bcast2"
	}
	return AggregateCost(op, a.Topology, in.Ranks, m, a.Ts.Value, a.Tw.Value, a.Th.Value)
}

// TableFromTwoLevel builds the cost-table predictor of a topology from a
// two-level fit's t_s and t_w and the per-hop time th (seconds).
func TableFromTwoLevel(t *TwoLevel, topology string, th float64) (*AggregateTable, error) {
	if _, err := AggregateCost("bcast", topology, 2, 0, 0, 0, 0); err != nil {
		return nil, err
	}
	return &AggregateTable{Topology: topology, Ts: t.Ts, Tw: t.Tw, Th: fixedParam("t_h", "s", th), Fit: t.Fit}, nil
}
