package model

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/commcost/commcost/results"
)

// The classic algorithms of MPI's collectives, priced from point-to-point
// parameters (Thakur, Rabenseifner and Gropp, "Optimization of Collective
// Communication Operations in MPICH", IJHPCA 19(1), 2005, sections 3-4;
// Chan, Heimlich, Purkayastha and van de Geijn, "Collective communication:
// theory, practice, and experience", CCPE 19(13), 2007, section 3): a
// message of m bytes costs alpha + beta m, reducing m bytes costs gamma m,
// and an algorithm is a sequence of rounds along its critical path, each a
// message (an exchange costs one message each way at once) followed by the
// reduction of the bytes it brought. On p ranks with lg = ceil(lg p), p' the
// largest power of two <= p, and n the bytes of the operation (the
// collective record's "bytes": the vector of a reduction or broadcast, m a
// rank's block otherwise):
//
//	bcast binomial                 sum over the critical path of (alpha + c n beta)  (Open MPI, below)
//	bcast scatter_allgather        2 lg alpha + 2 (p-1)/p n beta        (recursive-doubling allgather; p = 2^k)
//	bcast scatter_allgather_ring   (lg + p - 1) alpha + 2 (p-1)/p n beta (van de Geijn)
//	reduce binomial                lg (alpha + n beta + n gamma)
//	reduce rabenseifner            2 lg alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
//	allreduce recursive_doubling   lg (alpha + n beta + n gamma)
//	allreduce rabenseifner         2 lg alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
//	allreduce ring                 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma (Patarasuk and Yuan 2009)
//	allgather recursive_doubling   lg alpha + (p-1) m beta               (p = 2^k)
//	allgather bruck                lg alpha + (p-1) m beta
//	allgather ring                 (p-1) (alpha + m beta)
//	alltoall modified_bruck        lg alpha + sum_k |{i < p: bit k of i}| m beta  ((p/2) m lg beta for p = 2^k)
//	alltoall pairwise              (p-1) (alpha + m beta)
//	reduce_scatter recursive_halving  lg alpha + (p-1)/p n (beta + gamma)
//	reduce_scatter ring            (p-1) (alpha + n/p beta + n/p gamma)
//	gather, scatter binomial       lg alpha + (p-1) m beta
//	barrier dissemination          lg alpha
//
// and the linear algorithms and the others of Open MPI's coll/tuned listed
// by CollAlgorithms. Open MPI's binomial broadcast (one segment, as when it
// is forced) posts the sends to all of a node's c children at once, so they
// share its link and all arrive after alpha + c n beta; on p = 2^k ranks
// the critical path is k (alpha) + k(k+1)/2 n beta, against the textbook's
// k (alpha + n beta) of sends one after the other (3 against 2 message
// times on 4 ranks). A power-of-two algorithm on p ranks that are not a
// power of two first folds the p - p' extra ranks into the others (one
// round of n with its reduction) and last sends them the result (one round
// of n), as MPICH does (Thakur et al., section 4.4).

// CollRound is Count rounds of the critical path: each a message of Bytes
// and the reduction of ReduceBytes after it. In an Exchange round every
// rank sends and receives at once (recursive doubling and halving, ring
// steps, pairwise exchanges), so its link carries a message each way.
type CollRound struct {
	Count       float64
	Bytes       float64
	ReduceBytes float64
	Exchange    bool
}

// collAlgs are the algorithms with a closed form, per collective, in the
// names Open MPI's coll/tuned gives them (ompi_info --param coll tuned
// --level 9) where it has them.
var collAlgs = map[string][]string{
	"barrier":              {"dissemination", "bruck", "recursive_doubling", "double_ring", "linear", "tree", "two_proc"},
	"bcast":                {"binomial", "basic_linear", "scatter_allgather", "scatter_allgather_ring"},
	"reduce":               {"binomial", "linear", "rabenseifner"},
	"allreduce":            {"recursive_doubling", "rabenseifner", "ring", "segmented_ring", "nonoverlapping", "basic_linear"},
	"gather":               {"binomial", "basic_linear", "linear_sync"},
	"gatherv":              {"basic_linear"},
	"scatter":              {"binomial", "basic_linear", "linear_nb"},
	"scatterv":             {"basic_linear"},
	"allgather":            {"recursive_doubling", "bruck", "ring", "neighbor", "two_proc"},
	"allgatherv":           {"ring", "bruck", "neighbor", "two_proc"},
	"alltoall":             {"pairwise", "modified_bruck", "two_proc"},
	"alltoallv":            {"pairwise"},
	"reduce_scatter_block": {"recursive_halving", "butterfly", "pairwise", "basic_linear"},
	"reduce_scatter":       {"recursive_halving", "butterfly", "ring", "pairwise", "non-overlapping"},
}

// CollAlgorithms lists the algorithms of op that have a closed form here,
// the default's first.
func CollAlgorithms(op string) []string { return slices.Clone(collAlgs[op]) }

// CollOps lists the collectives with closed forms, sorted.
func CollOps() []string {
	out := make([]string, 0, len(collAlgs))
	for op := range collAlgs {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// DefaultCollAlg is the algorithm MPICH selects for op (Thakur et al.,
// sections 3-4): binomial broadcast below 12 KiB or 8 ranks and
// scatter-allgather above; binomial reduce and recursive-doubling
// allreduce up to 2 KiB and Rabenseifner's above; recursive-doubling
// allgather below 512 KiB in all on a power of two, Bruck's below 80 KiB
// otherwise, the ring above; Bruck's all-to-all for blocks up to 256 bytes
// on 8 ranks or more, pairwise otherwise; recursive halving below 512 KiB,
// pairwise above; binomial gather and scatter; dissemination barrier.
func DefaultCollAlg(op string, bytes float64, p int) string {
	pow2 := p&(p-1) == 0
	switch op {
	case "barrier":
		return "dissemination"
	case "bcast":
		if bytes < 12<<10 || p < 8 {
			return "binomial"
		}
		if pow2 {
			return "scatter_allgather"
		}
		return "scatter_allgather_ring"
	case "reduce":
		if bytes <= 2<<10 {
			return "binomial"
		}
		return "rabenseifner"
	case "allreduce":
		if bytes <= 2<<10 {
			return "recursive_doubling"
		}
		return "rabenseifner"
	case "allgather":
		total := bytes * float64(p)
		switch {
		case total < 512<<10 && pow2:
			return "recursive_doubling"
		case total < 80<<10:
			return "bruck"
		}
		return "ring"
	case "allgatherv":
		return "ring"
	case "alltoall":
		if bytes <= 256 && p >= 8 {
			return "modified_bruck"
		}
		return "pairwise"
	case "alltoallv":
		return "pairwise"
	case "reduce_scatter_block", "reduce_scatter":
		total := bytes
		if op == "reduce_scatter_block" {
			total *= float64(p)
		}
		if total < 512<<10 {
			return "recursive_halving"
		}
		return "pairwise"
	case "gather", "scatter":
		return "binomial"
	}
	return "basic_linear"
}

func ceilLg(p int) int { return bits.Len(uint(p - 1)) }

// pow2Below is the largest power of two <= p (p >= 1).
func pow2Below(p int) int { return 1 << (bits.Len(uint(p)) - 1) }

// roundList is a builder of CollRounds.
type roundList []CollRound

func (r *roundList) add(count, bytes, reduce float64) {
	if count > 0 {
		*r = append(*r, CollRound{Count: count, Bytes: bytes, ReduceBytes: reduce})
	}
}

// exchanges marks the rounds from index from on as exchanges.
func (r roundList) exchanges(from int) {
	for i := from; i < len(r); i++ {
		r[i].Exchange = true
	}
}

// halving adds recursive halving over q = 2^k ranks of n bytes: rounds of
// n/2, n/4, ..., n/q, each reduced when reduce.
func (r *roundList) halving(q int, n float64, reduce bool) {
	for s := n / 2; q > 1; q, s = q/2, s/2 {
		red := 0.0
		if reduce {
			red = s
		}
		r.add(1, s, red)
	}
}

// doubling adds recursive doubling's gathering rounds over q = 2^k ranks,
// from blocks of b bytes: b, 2b, ..., (q/2) b.
func (r *roundList) doubling(q int, b float64) {
	for s := b; q > 1; q, s = q/2, s*2 {
		r.add(1, s, 0)
	}
}

// bmtreeSends adds the critical path of Open MPI's binomial broadcast of n
// bytes over p ranks (ompi_coll_base_topo_build_bmtree: the children of
// virtual rank v are v + m for the powers of two m below v's lowest set
// bit, and below p): a round of alpha + c n beta per node on the path, c
// its children, the path the one with the most bytes.
func (r *roundList) bmtreeSends(p int, n float64) {
	var path func(v int) []int
	path = func(v int) []int {
		var kids, best []int
		for m := 1; m < p && v&m == 0; m <<= 1 {
			if v+m < p {
				kids = append(kids, v+m)
			}
		}
		if len(kids) == 0 {
			return nil
		}
		sum := func(cs []int) (t int) {
			for _, c := range cs {
				t += c
			}
			return t
		}
		for _, k := range kids {
			if cs := path(k); sum(cs) > sum(best) || (sum(cs) == sum(best) && len(cs) > len(best)) {
				best = cs
			}
		}
		return append([]int{len(kids)}, best...)
	}
	for _, c := range path(0) {
		r.add(1, float64(c)*n, 0)
	}
}

// binomialBlocks adds the root's messages of a binomial scatter (or
// gather) of blocks of m bytes over p ranks: (cnt - mask) m for mask from
// the largest power of two below p down to 1.
func (r *roundList) binomialBlocks(p int, m float64) {
	if p < 2 {
		return
	}
	cnt := p
	for mask := 1 << (ceilLg(p) - 1); mask > 0; mask >>= 1 {
		if mask < p {
			r.add(1, float64(cnt-mask)*m, 0)
			cnt = mask
		}
	}
}

// fold adds the pre- and post-steps of a power-of-two algorithm on p ranks
// that are not a power of two; the caller adds the algorithm on p' between
// (before is true for the fold).
func (r *roundList) fold(p int, n float64, reduce, before bool) {
	if p == pow2Below(p) {
		return
	}
	red := 0.0
	if reduce && before {
		red = n
	}
	r.add(1, n, red)
}

// CollRounds are the rounds of algorithm alg of the collective op on p
// ranks, at the collective record's bytes; alg "" or "default" is
// DefaultCollAlg. An algorithm without a closed form here is an error
// wrapping ErrUnsupportedPattern.
func CollRounds(op, alg string, bytes float64, p int) ([]CollRound, error) {
	if p < 2 {
		return nil, fmt.Errorf("%w: %s on %d ranks", ErrBadRecord, op, p)
	}
	if !(bytes >= 0) || math.IsInf(bytes, 0) {
		return nil, fmt.Errorf("%w: %s of %g bytes", ErrBadRecord, op, bytes)
	}
	if alg == "" || alg == "default" {
		alg = DefaultCollAlg(op, bytes, p)
	}
	algs, ok := collAlgs[op]
	if !ok {
		return nil, fmt.Errorf("%w: no collective %q (the closed forms cover %s)", ErrUnsupportedPattern, op, strings.Join(CollOps(), ", "))
	}
	if !slices.Contains(algs, alg) {
		return nil, fmt.Errorf("%w: no closed form of %s %s (its closed forms: %s)", ErrUnsupportedPattern, op, alg, strings.Join(algs, ", "))
	}
	n, fp := bytes, float64(p)
	lg, q := float64(ceilLg(p)), pow2Below(p)
	lgq := float64(ceilLg(q))
	var r roundList
	switch op + " " + alg {
	case "barrier dissemination", "barrier bruck":
		r.add(lg, 0, 0)
	case "barrier recursive_doubling":
		r.fold(p, 0, false, true)
		r.add(lgq, 0, 0)
		r.fold(p, 0, false, false)
	case "barrier double_ring":
		r.add(2*fp, 0, 0)
	case "barrier linear":
		r.add(2*(fp-1), 0, 0)
	case "barrier tree":
		r.add(2*lg, 0, 0)
	case "barrier two_proc", "allgather two_proc", "allgatherv two_proc", "alltoall two_proc":
		if p != 2 {
			return nil, fmt.Errorf("%w: %s %s runs on 2 ranks, not %d", ErrUnsupportedPattern, op, alg, p)
		}
		r.add(1, n, 0)
	case "bcast binomial":
		r.bmtreeSends(p, n)
	case "bcast basic_linear":
		r.add(fp-1, n, 0)
	case "bcast scatter_allgather":
		if p != q {
			return CollRounds(op, "scatter_allgather_ring", bytes, p)
		}
		r.halving(p, n, false)
		x := len(r)
		r.doubling(p, n/fp)
		r.exchanges(x)
	case "bcast scatter_allgather_ring":
		r.binomialBlocks(p, n/fp)
		x := len(r)
		r.add(fp-1, n/fp, 0)
		r.exchanges(x)
	case "reduce binomial":
		r.add(lg, n, n)
	case "reduce linear":
		r.add(fp-1, n, n)
	case "reduce rabenseifner":
		r.fold(p, n, true, true)
		x := len(r)
		r.halving(q, n, true)
		r.exchanges(x)
		r.binomialBlocks(q, n/float64(q))
	case "allreduce recursive_doubling":
		r.fold(p, n, true, true)
		x := len(r)
		r.add(lgq, n, n)
		r.exchanges(x)
		r.fold(p, n, true, false)
	case "allreduce rabenseifner":
		r.fold(p, n, true, true)
		x := len(r)
		r.halving(q, n, true)
		r.doubling(q, n/float64(q))
		r.exchanges(x)
		r.fold(p, n, true, false)
	case "allreduce ring", "allreduce segmented_ring":
		r.add(fp-1, n/fp, n/fp)
		r.add(fp-1, n/fp, 0)
		r.exchanges(0)
	case "allreduce nonoverlapping":
		r.add(lg, n, n)
		r.add(lg, n, 0)
	case "allreduce basic_linear":
		r.add(fp-1, n, n)
		r.add(fp-1, n, 0)
	case "gather binomial", "scatter binomial":
		r.binomialBlocks(p, n)
	case "gather basic_linear", "gather linear_sync", "gatherv basic_linear",
		"scatter basic_linear", "scatter linear_nb", "scatterv basic_linear":
		r.add(fp-1, n, 0)
	case "allgather recursive_doubling":
		if p != q {
			return CollRounds(op, "bruck", bytes, p)
		}
		r.doubling(p, n)
		r.exchanges(0)
	case "allgather bruck", "allgatherv bruck":
		for k := 0; 1<<k < p; k++ {
			r.add(1, float64(min(1<<k, p-1<<k))*n, 0)
		}
		r.exchanges(0)
	case "allgather ring", "allgatherv ring":
		r.add(fp-1, n, 0)
		r.exchanges(0)
	case "allgather neighbor", "allgatherv neighbor":
		if p%2 != 0 {
			return CollRounds(op, "ring", bytes, p)
		}
		r.add(1, n, 0)
		r.add(fp/2-1, 2*n, 0)
		r.exchanges(0)
	case "alltoall pairwise", "alltoallv pairwise":
		r.add(fp-1, n, 0)
		r.exchanges(0)
	case "alltoall modified_bruck":
		for k := 0; 1<<k < p; k++ {
			c := 0
			for i := range p {
				if i>>k&1 == 1 {
					c++
				}
			}
			r.add(1, float64(c)*n, 0)
		}
		r.exchanges(0)
	case "reduce_scatter_block recursive_halving", "reduce_scatter_block butterfly",
		"reduce_scatter recursive_halving", "reduce_scatter butterfly":
		total := n
		if op == "reduce_scatter_block" {
			total = n * fp
		}
		r.fold(p, total, true, true)
		x := len(r)
		r.halving(q, total, true)
		r.exchanges(x)
		if p != q { // the folded ranks get their blocks back
			r.add(1, total/fp, 0)
		}
	case "reduce_scatter_block pairwise":
		r.add(fp-1, n, n)
		r.exchanges(0)
	case "reduce_scatter ring", "reduce_scatter pairwise":
		r.add(fp-1, n/fp, n/fp)
		r.exchanges(0)
	case "reduce_scatter_block basic_linear":
		r.add(fp-1, n*fp, n*fp)
		r.add(fp-1, n, 0)
	case "reduce_scatter non-overlapping":
		r.add(lg, n, n)
		r.add(fp-1, n/fp, 0)
	default:
		return nil, fmt.Errorf("%w: no closed form of %s %s", ErrUnsupportedPattern, op, alg)
	}
	return r, nil
}

// CollCost prices rounds: sum of Count (alpha + beta Bytes + gamma
// ReduceBytes).
func CollCost(rs []CollRound, alpha, beta, gamma float64) float64 {
	return CollCostX(rs, alpha, beta, beta, gamma)
}

// CollCostX prices rounds as CollCost does, an exchange round's bytes at
// betaX, the per-byte time of a message while another crosses the link
// the other way (2 / the bidirectional bandwidth; beta on a link that
// carries both directions at full rate).
func CollCostX(rs []CollRound, alpha, beta, betaX, gamma float64) float64 {
	t := 0.0
	for _, r := range rs {
		b := beta
		if r.Exchange {
			b = betaX
		}
		t += r.Count * (alpha + b*r.Bytes + gamma*r.ReduceBytes)
	}
	return t
}

// CollAlg is the model of the classic collective algorithms: alpha and
// beta are a Hockney fit of the ping-pongs (t_s, t_w), beta_x the per-byte
// time of an exchange's message from the bidirectional bandwidth ("bibw"
// records: 2 / bytes per second; beta when there are none), gamma the
// slope of MPI_Reduce_local over the bytes reduced ("reducelocal"
// records); see CollRounds for the closed forms. It predicts "collective" records (their
// param "alg" names the algorithm, "default" DefaultCollAlg's), and the
// ping-pongs and local reductions it was fitted to.
type CollAlg struct {
	Alpha Param `json:"alpha"`
	Beta  Param `json:"beta"`
	BetaX Param `json:"beta_x"`
	Gamma Param `json:"gamma"`
	// Delta is the intercept of the local reduction's fit (a call's
	// overhead), used for "reducelocal" predictions only: the closed
	// forms charge gamma per byte.
	Delta Param   `json:"delta"`
	Fit   Quality `json:"quality"`
}

var collAlgPatterns = []string{"collective", "pingpong", "multilat", "reducelocal", "bibw"}

func init() {
	Register(Kind{
		Name:    "collalg",
		Summary: "classic collective algorithms (binomial, scatter-allgather, recursive doubling, Rabenseifner, ring, Bruck, pairwise, dissemination) priced alpha + beta m per message (beta_x m in an exchange, from the bidirectional bandwidth), gamma per byte reduced (Thakur et al. 2005; Chan et al. 2007)",
		Benches: []string{"pingpong", "multilat", "reducelocal", "bibw"},
		Options: []Option{OptWeighting, OptTrim, OptSizeRange},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitCollAlg(r, o) },
		New:     func() Model { return &CollAlg{} },
	})
}

func (m *CollAlg) Kind() string       { return "collalg" }
func (m *CollAlg) Params() []Param    { return []Param{m.Alpha, m.Beta, m.BetaX, m.Gamma, m.Delta} }
func (m *CollAlg) Quality() Quality   { return m.Fit }
func (m *CollAlg) Patterns() []string { return collAlgPatterns }

// Predict prices a collective by its algorithm's rounds, a ping-pong (or a
// multi-pair latency) by alpha + beta m, a local reduction by delta +
// gamma m.
func (m *CollAlg) Predict(in Instance) (float64, error) {
	b, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	switch in.Pattern {
	case "pingpong", "multilat":
		return m.Alpha.Value + m.Beta.Value*b, nil
	case "reducelocal":
		return m.Delta.Value + m.Gamma.Value*b, nil
	case "bibw":
		return 2 / m.betaX(), nil // bytes per second both ways
	case "collective":
		rs, err := CollRounds(in.Str("op"), in.Str("alg"), b, in.Ranks)
		if err != nil {
			return 0, err
		}
		return m.Cost(rs), nil
	}
	return 0, unsupported(m.Kind(), in.Pattern, collAlgPatterns)
}

// Cost prices rounds with the model's parameters (CollCostX); a model
// without beta_x (a file written before it) prices exchanges at beta.
func (m *CollAlg) Cost(rs []CollRound) float64 {
	return CollCostX(rs, m.Alpha.Value, m.Beta.Value, m.betaX(), m.Gamma.Value)
}

func (m *CollAlg) betaX() float64 {
	if m.BetaX.Value == 0 {
		return m.Beta.Value
	}
	return m.BetaX.Value
}

// FitCollAlg fits alpha and beta as Hockney does (FitHockney, with opt) and
// gamma by weighted least squares of the "reducelocal" records' per-size
// medians, t = delta + gamma bytes. Both kinds of records are needed (a
// model of the collectives without the reduction's measured cost would
// price the reductions as if they were free). Without ping-pong records
// the "multilat" records serve (OSU's multi-pair latency: every pair's half
// round trip at once, the point-to-point cost of p ranks all sending, as
// in a collective's round).
func FitCollAlg(recs []results.Record, opt Options) (*CollAlg, error) {
	var pp, ml, rl, bi []results.Record
	for _, r := range recs {
		switch r.Bench {
		case "bibw":
			bi = append(bi, r)
		case "pingpong":
			pp = append(pp, r)
		case "multilat":
			r.Bench = "pingpong" // the same one-way time per message
			ml = append(ml, r)
		case "reducelocal":
			rl = append(rl, r)
		}
	}
	if len(pp) == 0 {
		pp = ml
	}
	if len(rl) == 0 {
		return nil, fmt.Errorf("%w: collalg needs reducelocal records (commcost reducelocal) for gamma, the reduction's cost per byte", ErrNoRecords)
	}
	h, err := FitHockney(pp, opt)
	if err != nil {
		return nil, fmt.Errorf("collalg: alpha and beta: %w", err)
	}
	m := &CollAlg{Alpha: h.Ts, Beta: h.Tw, Fit: h.Fit}
	m.Alpha.Name, m.Beta.Name = "alpha", "beta"
	bx, note, err := fitBetaX(bi, opt)
	if err != nil {
		return nil, err
	}
	if note != "" {
		m.BetaX = m.Beta
		m.BetaX.Name, m.BetaX.Fixed = "beta_x", true
		m.Fit.Notes = append(m.Fit.Notes, note)
	} else {
		m.BetaX = bx
	}
	pts, err := mergePoints(rl, "bytes")
	if err != nil {
		return nil, fmt.Errorf("collalg: gamma: %w", err)
	}
	if lv := levels(pts, 0); len(lv) < 3 {
		return nil, fmt.Errorf("%w: collalg needs reducelocal records at 3 sizes or more for gamma; they have bytes = %s", ErrIllConditioned, formatLevels(lv))
	}
	rows, ys, labels := make([][]float64, len(pts)), make([]float64, len(pts)), make([]string, len(pts))
	for i, p := range pts {
		rows[i], ys[i], labels[i] = []float64{1, p.x[0]}, p.y, p.label()
	}
	w, note := weights(pts, ys, opt)
	tr, err := fitLinearTrimmed(rows, ys, w, []string{"delta", "gamma"}, labels, opt)
	if err != nil {
		return nil, fmt.Errorf("collalg: gamma: %w", err)
	}
	m.Delta, m.Gamma = tr.fit.param(0, "s"), tr.fit.param(1, "s/B")
	if note != "" {
		m.Fit.Notes = append(m.Fit.Notes, note)
	}
	m.Fit.Notes = append(m.Fit.Notes, fmt.Sprintf("gamma from %d reducelocal sizes (RSE %.3g)", len(tr.kept), tr.fit.rse))
	return m, nil
}

// fitBetaX is beta_x from the bidirectional bandwidth records within opt's
// size range: the median over sizes of 2 / rate (each direction moves half
// the bytes counted), its CI95 the range over sizes (and its SE the one
// that range implies as a 95% interval). With no such records
// it returns a note instead (an exchange is then priced at beta).
func fitBetaX(recs []results.Record, opt Options) (Param, string, error) {
	var per []float64
	for _, r := range recs {
		b, ok := r.Params["bytes"].(float64)
		if !ok {
			if i, isInt := r.Params["bytes"].(int); isInt {
				b, ok = float64(i), true
			}
		}
		if !ok || (opt.MinBytes > 0 && b < opt.MinBytes) || (opt.MaxBytes > 0 && b > opt.MaxBytes) {
			continue
		}
		if !(r.Median > 0) || math.IsInf(r.Median, 0) {
			return Param{}, "", fmt.Errorf("%w: bibw at %g bytes has rate %g", ErrBadRecord, b, r.Median)
		}
		per = append(per, 2/r.Median)
	}
	if len(per) == 0 {
		where := ""
		if sr := opt.SizeRange(); sr != "" {
			where = " " + sr
		}
		return Param{}, "no bibw records" + where + ": beta_x = beta (an exchange's message priced as a one-way one)", nil
	}
	sort.Float64s(per)
	med := per[len(per)/2]
	if len(per)%2 == 0 {
		med = (per[len(per)/2-1] + med) / 2
	}
	// The SE is the one the range implies as a 95% interval (checkInterval).
	lo, hi := per[0], per[len(per)-1]
	return Param{Name: "beta_x", Unit: "s/B", Value: med, SE: (hi - lo) / (2 * MinTQuantile), CI95: [2]float64{lo, hi}}, "", nil
}
