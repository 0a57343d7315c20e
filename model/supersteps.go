package model

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"

	"github.com/commcost/commcost/results"
)

// The bulk-synchronous models of paper 003's survey (Grama, Kumar, Ranka,
// Singh, "A Simple and Asymptotically Accurate Model for Parallel
// Computation", slides "The CGM model", "The BSP* Model", "Contention
// Modeling Abstractions" and "The C^3 model": bspstar.go, cgm.go, qsm.go,
// c3.go) charge a communication by its supersteps: in each, every
// processor sends and receives some messages, and the step costs a
// function of the most any processor sends or receives. Supersteps states
// every pattern instance commcost measures that way.

// Superstep is one communication step of a pattern instance: Count equal
// steps in which every processor sends at most Sends messages and receives
// at most Recvs (the contention of the step at the busiest receiver) of
// Bytes bytes each (the largest message of the step, which bounds it),
// Pairs (sender, receiver) pairs communicate, among Ranks processors.
// Blocking says that a send waits for its receiver (MPI_Send, MPI_Sendrecv
// of the textbook algorithms, the collectives) rather than being posted
// with the receives (paper 001's all-to-all, a k-k-access's k packets in
// flight).
type Superstep struct {
	Count    float64
	Sends    int
	Recvs    int
	Bytes    float64
	Pairs    int
	Ranks    int
	Blocking bool
}

// h is the BSP h of the step: the most messages a processor sends or
// receives.
func (s Superstep) h() float64 { return float64(max(s.Sends, s.Recvs)) }

// superstepPatterns are the patterns Supersteps states.
var superstepPatterns = []string{"aggregate", "alltoall", "kkaccess", "pairwise", "pingpong", "rowcontention"}

// Supersteps states a pattern instance as supersteps:
//
//   - pingpong (a one-way message of x bytes): one step, one message, one
//     pair, 2 processors, blocking;
//   - pairwise and rowcontention (n pairs exchanging x, half a round
//     trip): one step of one message per processor, n pairs among 2n;
//   - alltoall (paper 001: every one of n processors posts n-1 sends of x
//     and waits): one non-blocking step of n-1 messages sent and received,
//     n(n-1) pairs;
//   - kkaccess (k packets of l bytes in flight from each of the r p
//     accessing processors, each module receiving at most k): one
//     non-blocking step of k messages of l bytes, k ceil(r p) pairs;
//   - aggregate: the rounds of the record's implementation
//     (aggregateSupersteps).
func Supersteps(in Instance) ([]Superstep, error) {
	one := func(x float64, sends, recvs, pairs, ranks int, blocking bool) []Superstep {
		return []Superstep{{Count: 1, Sends: sends, Recvs: recvs, Bytes: x, Pairs: pairs, Ranks: ranks, Blocking: blocking}}
	}
	switch in.Pattern {
	case "pingpong":
		x, err := in.Num("bytes")
		if err != nil {
			return nil, err
		}
		return one(x, 1, 1, 1, 2, true), nil
	case "pairwise", "rowcontention":
		x, err := in.Num("bytes")
		if err != nil {
			return nil, err
		}
		if in.Ranks < 2 {
			return nil, fmt.Errorf("%w: %s with ranks = %d", ErrBadRecord, in.Pattern, in.Ranks)
		}
		return one(x, 1, 1, in.Ranks/2, in.Ranks, true), nil
	case "alltoall":
		x, err := in.Num("bytes")
		if err != nil {
			return nil, err
		}
		n := in.Ranks
		if n < 2 {
			return nil, fmt.Errorf("%w: alltoall with ranks = %d", ErrBadRecord, n)
		}
		return one(x, n-1, n-1, n*(n-1), n, false), nil
	case "kkaccess":
		k, err := in.Num("k")
		if err != nil {
			return nil, err
		}
		l, err := in.Num("l")
		if err != nil {
			return nil, err
		}
		r, err := in.Num("r")
		if err != nil {
			return nil, err
		}
		p := max(in.Ranks, 1)
		active := max(1, int(math.Ceil(r*float64(p)-1e-9)))
		return one(l, int(k), int(k), int(k)*active, p, false), nil
	case "aggregate":
		return aggregateSupersteps(in)
	}
	return nil, fmt.Errorf("%w: supersteps of %q (described: %s)", ErrUnsupportedPattern, in.Pattern, strings.Join(superstepPatterns, ", "))
}

// aggregateSupersteps are the rounds of an aggregate operation (op, impl,
// bytes m, q, neighbors; p = Ranks) as the algorithms of package patterns
// run them, each round a step of one message per processor (its largest,
// bounding the round):
//
//	impl       op         rounds (message, pairs)
//	textbook   bcast      ceil lg p binomial rounds (m, the senders of the round)
//	           scatter    the same tree, the root's (cnt - 2^j) m per round
//	           allgather  lg p rounds (2^j m, p), or p-1 ring rounds (m, p) when p is not 2^d
//	           alltoall   p-1 rounds (m, p)
//	           qshift     1 round (m, p)
//	           news       one round per neighbour (m, p)
//	mesh1d     bcast      the textbook's
//	           allgather  p-1 ring rounds (m, p)
//	           scatter    p-1 pipeline steps (m, t pairs in step t)
//	           alltoall   p-1 steps ((p-k) m, p)
//	           qshift     min(q, p-q) rounds (m, p)
//	mesh2d     on the r x c = Dims2(p) mesh: each phase of the 1-D
//	           algorithm along the rows (c members), then the columns (r)
//	mpi        one step: every processor sends its data directly (the
//	           library's algorithm is not visible): bcast and scatter p-1
//	           messages from the root, allgather and alltoall p-1 per
//	           processor, qshift one, news one per neighbour
//
// (Every implementation runs news as the same neighbour shifts.)
func aggregateSupersteps(in Instance) ([]Superstep, error) {
	op, impl := in.Str("op"), in.Str("impl")
	m, err := in.Num("bytes")
	if err != nil {
		return nil, err
	}
	p := in.Ranks
	if p < 1 {
		return nil, fmt.Errorf("%w: aggregate %s with ranks = %d", ErrBadRecord, op, p)
	}
	if _, err := BisectionSensitive(op); err != nil {
		return nil, err
	}
	q, _ := in.Num("q")
	nb, _ := in.Num("neighbors")
	if op == "news" && nb <= 0 {
		nb = 4
	}
	var st stepList
	step := func(x float64, pairs int) {
		st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: x, Pairs: pairs, Ranks: p, Blocking: true})
	}
	if p == 1 {
		return nil, nil
	}
	if op == "news" {
		for range int(nb) {
			step(m, p)
		}
		return st.steps, nil
	}
	switch impl {
	case "mpi":
		s := Superstep{Count: 1, Sends: p - 1, Recvs: p - 1, Bytes: m, Pairs: p * (p - 1), Ranks: p, Blocking: true}
		switch op {
		case "bcast", "scatter":
			s.Recvs, s.Pairs = 1, p-1
		case "qshift":
			s.Sends, s.Recvs, s.Pairs = 1, 1, p
		}
		return []Superstep{s}, nil
	case "textbook", "":
		switch op {
		case "bcast":
			binomialSteps(&st, p, 1, p, m, false)
		case "scatter":
			binomialSteps(&st, p, 1, p, m, true)
		case "allgather":
			if p&(p-1) == 0 {
				for mask := 1; mask < p; mask <<= 1 {
					step(float64(mask)*m, p)
				}
			} else {
				ringSteps(&st, p-1, m, p, p)
			}
		case "alltoall":
			ringSteps(&st, p-1, m, p, p)
		case "qshift":
			step(m, p)
		}
		return st.steps, nil
	case "mesh1d", "mesh2d":
		rows, cols := 1, p
		if impl == "mesh2d" {
			rows, cols = dims2(p)
		}
		meshSteps(&st, op, p, rows, cols, m, int(q))
		return st.steps, nil
	}
	return nil, fmt.Errorf("%w: aggregate impl %q (want mpi, textbook, mesh1d or mesh2d)", ErrBadRecord, impl)
}

// meshSteps are the rounds of the mesh algorithms on rows x cols (a ring
// when rows = 1): along the rows (cols members, rows lines at once), then
// the columns (rows members, cols lines).
func meshSteps(st *stepList, op string, p, rows, cols int, m float64, q int) {
	R, C := float64(rows), float64(cols)
	switch op {
	case "bcast":
		binomialSteps(st, cols, 1, p, m, false)
		binomialSteps(st, rows, cols, p, m, false)
	case "allgather":
		ringSteps(st, cols-1, m, p, p)
		ringSteps(st, rows-1, C*m, p, p)
	case "scatter":
		// Pipelines: down the root's column (blocks of a row), then along
		// every row; step t has t senders per line.
		for t := 1; t < rows; t++ {
			st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: C * m, Pairs: t, Ranks: p, Blocking: true})
		}
		for t := 1; t < cols; t++ {
			st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: m, Pairs: t * rows, Ranks: p, Blocking: true})
		}
	case "alltoall":
		for k := 1; k < cols; k++ {
			st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: float64(cols-k) * R * m, Pairs: p, Ranks: p, Blocking: true})
		}
		for k := 1; k < rows; k++ {
			st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: float64(rows-k) * C * m, Pairs: p, Ranks: p, Blocking: true})
		}
	case "qshift":
		qc, qr := q%cols, q/cols
		ringSteps(st, shiftSteps(qc, cols), m, p, p)
		if rows > 1 {
			if qc > 0 {
				st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: m, Pairs: rows * qc, Ranks: p, Blocking: true})
			}
			ringSteps(st, shiftSteps(qr, rows), m, p, p)
		}
	}
}

// binomialSteps are the ceil(lg n) rounds of a binomial tree on n members,
// lines trees at once among p processors: round t with mask M =
// 2^(L-1-t) has ceil((n-M)/(2M)) senders per tree; a scatter's round
// carries the root's (min(n, 2M) - M) blocks of m.
func binomialSteps(st *stepList, n, lines, p int, m float64, scatter bool) {
	L := bits.Len(uint(n - 1))
	for t := 0; t < L; t++ {
		M := 1 << (L - 1 - t)
		x := m
		if scatter {
			x = float64(min(n, 2*M)-M) * m
		}
		senders := (n - M + 2*M - 1) / (2 * M)
		st.add(Superstep{Count: 1, Sends: 1, Recvs: 1, Bytes: x, Pairs: lines * senders, Ranks: p, Blocking: true})
	}
}

// ringSteps are k rounds of one message of x per processor, pairs pairs.
func ringSteps(st *stepList, k int, x float64, pairs, ranks int) {
	if k > 0 {
		st.add(Superstep{Count: float64(k), Sends: 1, Recvs: 1, Bytes: x, Pairs: pairs, Ranks: ranks, Blocking: true})
	}
}

// shiftSteps is the number of neighbour steps of a k-shift on a ring of n
// in the shorter direction.
func shiftSteps(k, n int) int {
	k = ((k % n) + n) % n
	return min(k, n-k)
}

// dims2 is the most nearly square rows x cols = p with rows <= cols (as
// patterns.Dims2 and MPI_Dims_create).
func dims2(p int) (rows, cols int) {
	for r := int(math.Sqrt(float64(p))); r >= 1; r-- {
		if p%r == 0 {
			return r, p / r
		}
	}
	return 1, p
}

// stepList collects supersteps, merging a step equal to the last one.
type stepList struct{ steps []Superstep }

func (l *stepList) add(s Superstep) {
	if n := len(l.steps); n > 0 {
		last := l.steps[n-1]
		last.Count = s.Count
		if last == s {
			l.steps[n-1].Count += s.Count
			return
		}
	}
	l.steps = append(l.steps, s)
}

// rounds is the number of supersteps of an instance (the CGM's lambda).
func rounds(steps []Superstep) float64 {
	var n float64
	for _, s := range steps {
		n += s.Count
	}
	return n
}

// instanceSize is the size a superstep model's Options.MinBytes and
// MaxBytes restrict: a record's "bytes", or a k-k-access's packet size l.
func instanceSize(r results.Record) (float64, bool) {
	if b, err := numParam(r.Params, "bytes", r.Bench); err == nil {
		return b, true
	}
	l, err := numParam(r.Params, "l", r.Bench)
	return l, err == nil
}

// stepPoint is one measured instance with its supersteps.
type stepPoint struct {
	point
	steps []Superstep
}

// superstepPoints selects the records of the benches a superstep model
// reads (the aggregate ones of opt.Impl or the only impl present), merges
// them per instance (the median of the records' medians, as everywhere in
// this package) within the options' size range, and states each as its
// supersteps. It returns the benches used.
func superstepPoints(recs []results.Record, kind string, benches []string, opt Options) ([]stepPoint, []string, error) {
	sel, err := selectRecords(recs, kind, benches...)
	if err != nil {
		return nil, nil, err
	}
	rest, _, err := selectAggregateImpl(sel, opt)
	if err != nil {
		return nil, nil, err
	}
	groups := map[string][]results.Record{}
	var keys []string
	for _, r := range rest {
		k := fmt.Sprintf("%s %s ranks=%d", r.Bench, paramString(r.Params), r.Ranks)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Strings(keys)
	var pts []stepPoint
	used := map[string]bool{}
	for _, k := range keys {
		g := groups[k]
		if size, ok := instanceSize(g[0]); ok && !opt.inRange(size) {
			continue
		}
		in := InstanceOf(g[0])
		steps, err := Supersteps(in)
		if err != nil {
			return nil, nil, err
		}
		if len(steps) == 0 {
			continue // one rank: nothing is communicated
		}
		var ms, ss []float64
		for _, r := range g {
			ms = append(ms, r.Median)
			if w := r.CI95[1] - r.CI95[0]; w > 0 {
				ss = append(ss, w/(2*1.96))
			}
		}
		pt := point{key: k, inst: in, y: median(ms), nrec: len(g)}
		if len(ss) == len(ms) {
			pt.sigma = median(ss)
		}
		pts = append(pts, stepPoint{point: pt, steps: steps})
		used[in.Pattern] = true
	}
	if len(pts) == 0 {
		return nil, nil, fmt.Errorf("%w: %s: no record within the size range", ErrNoRecords, kind)
	}
	var out []string
	for b := range used {
		out = append(out, b)
	}
	sort.Strings(out)
	return pts, out, nil
}

// maxStep is one superstep's cost as the largest of linear forms in the
// parameters: count * max_j alts[j]·θ.
type maxStep struct {
	count float64
	alts  [][]float64
}

// maxFit is the result of fitMaxLinear.
type maxFit struct {
	coef    []float64 // every parameter; 0 for those never the largest term
	se      []float64 // their standard errors (0 where not determined)
	ci      [][2]float64
	live    []bool     // whether the parameter's term is the largest anywhere
	fit     *linearFit // the linear fit of the final active terms, live columns
	trimmed []string
	note    string // the weighting's fallback, if any
}

// quality is the fit's Quality under the weighting it ended up using,
// with a note for each parameter not determined.
func (f *maxFit) quality(opt Options, names []string) Quality {
	q := f.fit.quality(effectiveWeighting(opt, f.note), f.trimmed)
	if f.note != "" {
		q.Notes = append(q.Notes, f.note)
	}
	for j, name := range names {
		if name != "" && !f.live[j] {
			q.Notes = append(q.Notes, name+" is not determined by the records (its term is the largest of no superstep, or the records cannot tell it from the others): 0")
		}
	}
	return q
}

// fitMaxLinear fits a cost that sums, over each point's supersteps, the
// largest of several linear forms in the parameters (the max{...} of
// BSP*, QSM and C^3). For a given choice of the largest term of every
// step the cost is linear, so it alternates: the weighted least-squares
// fit of the chosen terms (fitLinear, which refuses an ill-conditioned
// design), then the largest term of every step at that fit, until the
// choice repeats. It starts from the fit of the mean of each step's terms
// (every parameter in play) and from each term's index chosen everywhere,
// and keeps the fit of the least weighted residual sum of squares of the
// true cost (merge: see solve). Since the cost is piecewise linear, the final
// linear fit is its linearisation at the solution: its uncertainties and
// the trimming of one-sided outliers (fitLinearTrimmed's) are those of the
// chosen terms. A parameter whose term is never the largest is not
// determined by the records: it is 0 and not live.
func fitMaxLinear(pts []stepPoint, steps [][]maxStep, names []string, merge []int, opt Options) (*maxFit, error) {
	np := len(names)
	ys := make([]float64, len(pts))
	plain := make([]point, len(pts))
	labels := make([]string, len(pts))
	for i, p := range pts {
		ys[i], plain[i], labels[i] = p.y, p.point, p.key
	}
	w, note := weights(plain, ys, opt)
	nalts := 1
	for _, ss := range steps {
		for _, s := range ss {
			nalts = max(nalts, len(s.alts))
		}
	}
	eval := func(i int, theta []float64) float64 {
		var sum float64
		for _, s := range steps[i] {
			best := math.Inf(-1)
			for _, a := range s.alts {
				best = math.Max(best, dot(a, theta))
			}
			sum += s.count * best
		}
		return sum
	}
	// solve fits the rows of the kept points over the columns that are
	// not all zero; the coefficients of the others stay as in theta. When
	// those columns are collinear it leaves out the first parameter of
	// merge that makes them not (merge names parameters the records may
	// not tell from another, such as QSM's d from L when every step's
	// contention is 1).
	solve := func(kept []int, rows [][]float64, theta []float64) (*linearFit, []float64, []bool, error) {
		live := make([]bool, np)
		for _, r := range rows {
			for j, v := range r {
				live[j] = live[j] || v != 0
			}
		}
		fit := func(live []bool) (*linearFit, []float64, error) {
			var cols []int
			var cn []string
			for j := range np {
				if live[j] {
					cols = append(cols, j)
					cn = append(cn, names[j])
				}
			}
			rr := make([][]float64, len(kept))
			yy := make([]float64, len(kept))
			ww := make([]float64, len(kept))
			for a, i := range kept {
				rr[a] = make([]float64, len(cols))
				for c, j := range cols {
					rr[a][c] = rows[a][j]
				}
				yy[a], ww[a] = ys[i], w[i]
			}
			f, err := fitLinear(rr, yy, ww, cn)
			if err != nil {
				return nil, nil, err
			}
			coef := append([]float64(nil), theta...)
			for c, j := range cols {
				coef[j] = f.coef[c]
			}
			return f, coef, nil
		}
		f, coef, err := fit(live)
		if errors.Is(err, ErrIllConditioned) {
			for _, j := range merge {
				if !live[j] {
					continue
				}
				fewer := append([]bool(nil), live...)
				fewer[j] = false
				if f2, c2, err2 := fit(fewer); err2 == nil {
					c2[j] = 0
					return f2, c2, fewer, nil
				}
			}
		}
		if err != nil {
			return nil, nil, nil, err
		}
		return f, coef, live, nil
	}
	// iterate alternates from the choice active (nil: the largest terms
	// at theta).
	iterate := func(kept []int, active [][]int, theta []float64) (*linearFit, []float64, []bool, error) {
		pick := func(theta []float64) bool {
			changed := false
			for a, i := range kept {
				for k, s := range steps[i] {
					cur := dot(s.alts[active[a][k]], theta)
					for j, alt := range s.alts {
						if v := dot(alt, theta); v > cur+1e-12*math.Abs(cur) {
							active[a][k], cur, changed = j, v, true
						}
					}
				}
			}
			return changed
		}
		if theta == nil {
			theta = make([]float64, np)
		} else {
			pick(theta)
		}
		var f *linearFit
		var live []bool
		for iter := 0; iter < 100; iter++ {
			rows := make([][]float64, len(kept))
			for a, i := range kept {
				rows[a] = make([]float64, np)
				for k, s := range steps[i] {
					for j, v := range s.alts[active[a][k]] {
						rows[a][j] += s.count * v
					}
				}
			}
			var err error
			if f, theta, live, err = solve(kept, rows, theta); err != nil {
				return nil, nil, nil, err
			}
			if !pick(theta) {
				break
			}
		}
		return f, theta, live, nil
	}
	var final struct {
		coef []float64
		live []bool
	}
	fitKept := func(kept []int) (*linearFit, error) {
		choice := func(start int) [][]int {
			active := make([][]int, len(kept))
			for a, i := range kept {
				active[a] = make([]int, len(steps[i]))
				for k, s := range steps[i] {
					active[a][k] = min(start, len(s.alts)-1)
				}
			}
			return active
		}
		var thetas [][]float64
		mean := make([][]float64, len(kept))
		for a, i := range kept {
			mean[a] = make([]float64, np)
			for _, s := range steps[i] {
				for _, alt := range s.alts {
					for j, v := range alt {
						mean[a][j] += s.count * v / float64(len(s.alts))
					}
				}
			}
		}
		if _, t0, _, err := solve(kept, mean, make([]float64, np)); err == nil {
			thetas = append(thetas, t0)
		}
		bestObj := math.Inf(1)
		var bestFit *linearFit
		var lastErr error
		try := func(active [][]int, theta []float64) {
			f, coef, live, err := iterate(kept, active, theta)
			if err != nil {
				lastErr = err
				return
			}
			for j := range coef {
				if !live[j] {
					coef[j] = 0
				}
			}
			var obj float64
			for _, i := range kept {
				d := w[i] * (ys[i] - eval(i, coef))
				obj += d * d
			}
			if obj < bestObj*(1-1e-12) {
				bestObj, bestFit = obj, f
				final.coef, final.live = coef, live
			}
		}
		for _, t := range thetas {
			try(choice(0), t)
		}
		for start := range nalts {
			try(choice(start), nil)
		}
		if bestFit == nil {
			return nil, lastErr
		}
		return bestFit, nil
	}
	tr, err := trimLoop(ys, w, labels, opt, fitKept)
	if err != nil {
		return nil, err
	}
	out := &maxFit{coef: final.coef, live: final.live, fit: tr.fit, trimmed: tr.trimmed, note: note,
		se: make([]float64, np), ci: make([][2]float64, np)}
	c := 0
	for j := range np {
		out.ci[j] = [2]float64{out.coef[j], out.coef[j]}
		if out.live[j] {
			out.se[j], out.ci[j] = tr.fit.se[c], tr.fit.ci[c]
			c++
		}
	}
	return out, nil
}

// param is parameter j of a max fit as a Param; one not determined is
// Fixed at 0.
func (f *maxFit) param(j int, name, unit string) Param {
	if !f.live[j] {
		return fixedParam(name, unit, 0)
	}
	return Param{Name: name, Unit: unit, Value: f.coef[j], SE: f.se[j], CI95: f.ci[j]}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// gridCandidates are the sizes a grid search over a packet size (BSP*'s
// B, C^3's l) tries: the powers of two up to twice the largest message of
// the steps and every message size.
func gridCandidates(pts []stepPoint) []float64 {
	seen := map[float64]bool{}
	var hi float64
	for _, p := range pts {
		for _, s := range p.steps {
			if s.Bytes >= 1 {
				seen[s.Bytes] = true
			}
			hi = math.Max(hi, s.Bytes)
		}
	}
	for b := 1.0; b <= 2*hi; b *= 2 {
		seen[b] = true
	}
	var out []float64
	for b := range seen {
		out = append(out, b)
	}
	sort.Float64s(out)
	return out
}

// packets is ceil(x/l), at least 1 (an empty message is one packet).
func packets(x, l float64) float64 { return math.Max(1, math.Ceil(x/l-1e-12)) }

// implOf is the impl of the points' aggregate records ("" without any).
func implOf(pts []stepPoint) string {
	for _, p := range pts {
		if p.inst.Pattern == "aggregate" {
			return p.inst.Str("impl")
		}
	}
	return ""
}

// errorf prefixes a fit's error with the kind.
func errorf(kind string, err error) error { return fmt.Errorf("%s: %w", kind, err) }
