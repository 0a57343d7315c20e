package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/commcost/commcost/results"
)

// C3 is the C^3 model of paper 003's survey (Grama, Kumar, Ranka, Singh,
// slides, "The C^3 model"; Hambrusch and Khokhar): packet size l, message
// setup s, latency h and bisection width b; in a superstep "a blocking
// communication of m packets is charged a time 2(s+h) + m + h at the
// sender and s + 2h + m at the receiver", "a non-blocking communication of
// m packets ... s + m + h at the sender and m at the receiver"; with c
// processor pairs communicating r packets each, "the network congestion
// C_l = (r x c)/b and the processor congestion C_p = (r x c x h)/p", and
// "the overall communication cost is the maximum of sender time, receiver
// time, processor congestion, and network congestion".
//
// Packets are counted in units of tau, the time of one packet of l bytes
// (the slides' unit), so that for a superstep (Supersteps) whose busiest
// processor sends k and receives k' messages of r = ceil(x/l) packets:
//
//	sender    k (2s + 3h + tau r)   blocking,   k (s + h + tau r)  non-blocking
//	receiver  k' (s + 2h + tau r)   blocking,   k' tau r           non-blocking
//	C_p       r c h / p
//	C_l       tau r c / b = beta_p r c,  beta_p = tau / b at p processors
//	T = sum over supersteps  max{sender, receiver, C_p, C_l}.
//
// The bisection width is a property of the machine at p processors, so
// beta_p is fitted per p (as the two-level model's c) and b = tau/beta_p
// derived with its delta-method uncertainty; where the records never find
// the network the bottleneck at p there is no estimate and C_l is left out
// of the predictions at that p. s and h enter a blocking message as
// 2s + 3h and a non-blocking one as s + h, so the fit needs both kinds
// (pingpong, pairwise, aggregate records, and paper 001's all-to-all or
// k-k-accesses). l is Options.PacketBytes or, when zero, the size of a grid
// (powers of two and the message sizes) with the least residual.
type C3 struct {
	Impl      string        `json:"impl,omitempty"`
	S         Param         `json:"s"`
	H         Param         `json:"h"`
	Tau       Param         `json:"tau"`
	L         Param         `json:"l"`
	Bisection []C3Bisection `json:"bisection,omitempty"`
	Benches   []string      `json:"benches"`
	Fit       Quality       `json:"quality"`
}

// C3Bisection is the network congestion's coefficient at one processor
// count.
type C3Bisection struct {
	Ranks int   `json:"ranks"`
	Beta  Param `json:"beta"` // tau / b, s per packet and pair
	B     Param `json:"b"`    // bisection width, links
}

func init() {
	Register(Kind{
		Name:    "c3",
		Summary: "C^3: sum over supersteps of max{sender, receiver, C_p, C_l}, blocking and non-blocking (paper 003, slide \"The C^3 model\")",
		Benches: superstepPatterns,
		Options: []Option{OptWeighting, OptTrim, OptSizeRange, OptImpl, OptPacketBytes},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitC3(r, o) },
		New:     func() Model { return &C3{} },
		Size:    instanceSize,
		Check: func(m Model) error {
			if l := m.(*C3).L.Value; !(l >= 1) {
				return fmt.Errorf("l = %v: want a packet size of at least 1 byte", l)
			}
			return nil
		},
	})
}

func (c *C3) Kind() string       { return "c3" }
func (c *C3) Quality() Quality   { return c.Fit }
func (c *C3) Patterns() []string { return superstepPatterns }
func (c *C3) Params() []Param {
	out := []Param{c.S, c.H, c.Tau, c.L}
	for _, b := range c.Bisection {
		out = append(out, b.B)
	}
	return out
}

// FittedBenches lists the patterns the fit used (see FittedBencher).
func (c *C3) FittedBenches() []string { return c.Benches }

// c3Terms are the four costs of a superstep as linear forms over
// (s, h, tau, beta) for packet size l: sender, receiver, C_p, C_l.
func c3Terms(st Superstep, l float64) [4][4]float64 {
	r := packets(st.Bytes, l)
	k, kr := float64(st.Sends), float64(st.Recvs)
	c, p := float64(st.Pairs), float64(max(st.Ranks, 1))
	send := [4]float64{k, k, k * r, 0}
	recv := [4]float64{0, 0, kr * r, 0}
	if st.Blocking {
		send = [4]float64{2 * k, 3 * k, k * r, 0}
		recv = [4]float64{kr, 2 * kr, kr * r, 0}
	}
	return [4][4]float64{send, recv, {0, r * c / p, 0, 0}, {0, 0, 0, r * c}}
}

// Predict sums max{sender, receiver, C_p, C_l} over the supersteps; C_l
// only at a processor count with a bisection estimate.
func (c *C3) Predict(in Instance) (float64, error) {
	steps, err := Supersteps(in)
	if err != nil {
		return 0, err
	}
	var t float64
	for _, st := range steps {
		theta := []float64{c.S.Value, c.H.Value, c.Tau.Value, 0}
		for _, b := range c.Bisection {
			if b.Ranks == st.Ranks {
				theta[3] = b.Beta.Value
			}
		}
		best := math.Inf(-1)
		for _, term := range c3Terms(st, c.L.Value) {
			best = math.Max(best, dot(term[:], theta))
		}
		t += st.Count * best
	}
	return t, nil
}

// FitC3 fits s, h, tau and beta_p (for every p of the records) for the
// packet size l.
func FitC3(recs []results.Record, opt Options) (*C3, error) {
	pts, benches, err := superstepPoints(recs, "c3", superstepPatterns, opt)
	if err != nil {
		return nil, err
	}
	var blocking, nonBlocking bool
	var ranks []int
	for _, p := range pts {
		for _, st := range p.steps {
			blocking = blocking || st.Blocking
			nonBlocking = nonBlocking || !st.Blocking
			if !slices.Contains(ranks, st.Ranks) {
				ranks = append(ranks, st.Ranks)
			}
		}
	}
	if !blocking || !nonBlocking {
		return nil, fmt.Errorf("%w: c3 tells its setup s from its latency h by blocking messages (2s + 3h: pingpong, pairwise, rowcontention, aggregate) beside non-blocking ones (s + h: paper 001's alltoall, kkaccess); the records have only %s ones (%s)",
			ErrIllConditioned, map[bool]string{true: "blocking", false: "non-blocking"}[blocking], strings.Join(benches, ", "))
	}
	sort.Ints(ranks)
	names := []string{"s", "h", "tau"}
	col := map[int]int{}
	for i, p := range ranks {
		col[p] = 3 + i
		names = append(names, fmt.Sprintf("beta@%d", p))
	}
	design := func(l float64) [][]maxStep {
		steps := make([][]maxStep, len(pts))
		for i, p := range pts {
			for _, st := range p.steps {
				var alts [][]float64
				for _, term := range c3Terms(st, l) {
					a := make([]float64, len(names))
					copy(a, term[:3])
					a[col[st.Ranks]] = term[3]
					alts = append(alts, a)
				}
				steps[i] = append(steps[i], maxStep{count: st.Count, alts: alts})
			}
		}
		return steps
	}
	ls := gridCandidates(pts)
	if opt.PacketBytes > 0 {
		ls = []float64{opt.PacketBytes}
	}
	var best *maxFit
	var bestL, bestObj float64
	var lastErr error
	for _, l := range ls {
		f, err := fitMaxLinear(pts, design(l), names, nil, opt)
		if err != nil {
			lastErr = err
			continue
		}
		if !f.live[0] || !f.live[1] || !f.live[2] {
			lastErr = fmt.Errorf("%w: at l = %g the records leave s, h or tau undetermined", ErrIllConditioned, l)
			continue
		}
		if obj := f.fit.rse; best == nil || obj <= bestObj*(1+1e-9)+1e-12 {
			best, bestL, bestObj = f, l, obj
		}
	}
	if best == nil {
		return nil, errorf("c3", lastErr)
	}
	m := &C3{S: best.param(0, "s", "s"), H: best.param(1, "h", "s"), Tau: best.param(2, "tau", "s"),
		L: fixedParam("l", "B", bestL), Benches: benches, Impl: implOf(pts)}
	var undetermined []string
	for i, p := range ranks {
		j := 3 + i
		if !best.live[j] {
			undetermined = append(undetermined, fmt.Sprint(p))
			continue
		}
		beta := best.param(j, fmt.Sprintf("tau/b @%d", p), "s")
		// b = tau / beta; gradient (1/beta, -tau/beta^2) over (tau, beta).
		tau, bv := best.coef[2], best.coef[j]
		g1, g2 := 1/bv, -tau/(bv*bv)
		cov := c3Cov(best, 2, j)
		se := math.Sqrt(math.Max(g1*g1*cov[0]+g2*g2*cov[1]+2*g1*g2*cov[2], 0))
		b := tau / bv
		m.Bisection = append(m.Bisection, C3Bisection{Ranks: p, Beta: beta,
			B: Param{Name: fmt.Sprintf("b@%d", p), Unit: "links", Value: b, SE: se, CI95: [2]float64{b - best.fit.tcrit*se, b + best.fit.tcrit*se}}})
	}
	m.Fit = best.quality(opt, make([]string, len(names)))
	if len(undetermined) > 0 {
		m.Fit.Notes = append(m.Fit.Notes, "the network congestion C_l is the largest term of no superstep at ranks "+strings.Join(undetermined, ", ")+": no bisection width there, C_l left out")
	}
	if opt.PacketBytes == 0 {
		m.Fit.Notes = append(m.Fit.Notes, fmt.Sprintf("packet size l = %g B: the least residual over a grid of sizes", bestL))
	}
	return m, nil
}

// c3Cov is the variances of parameters a and b of a max fit and their
// covariance, from the linear fit of its live columns.
func c3Cov(f *maxFit, a, b int) [3]float64 {
	idx := func(j int) int {
		c := 0
		for i := 0; i < j; i++ {
			if f.live[i] {
				c++
			}
		}
		return c
	}
	ia, ib := idx(a), idx(b)
	return [3]float64{f.fit.cov.At(ia, ia), f.fit.cov.At(ib, ib), f.fit.cov.At(ia, ib)}
}
