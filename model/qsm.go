package model

import (
	"math"
	"strings"

	"github.com/commcost/commcost/results"
)

// QSM is the Queuing Shared Memory model of paper 003's survey (Grama,
// Kumar, Ranka, Singh, slides, "Contention Modeling Abstractions"): "if in
// a phase, a parallel algorithm executes m_op local memory operations and
// m_rw remote operations, with a contention of k, QSM associates a cost
// max{m_op, g m_rw, k} with it", g the remote data access rate; among the
// secondary parameters is the barrier time L. A communication phase does no
// local operations (m_op = 0); a message of s bytes is s remote writes, and
// the contention is the most messages queued at one processor (Superstep's
// Recvs). In seconds, with d the time a processor takes to serve one of the
// k requests queued at it and L the phase's synchronisation, added since
// every measured phase ends in one:
//
//	T = sum over phases (supersteps)  max{ g m_rw, d k } + L,
//	m_rw = Sends s (the most bytes a processor writes remotely).
type QSM struct {
	Impl    string   `json:"impl,omitempty"`
	G       Param    `json:"g"`
	D       Param    `json:"d"`
	L       Param    `json:"L"`
	Benches []string `json:"benches"`
	Fit     Quality  `json:"quality"`
}

func init() {
	Register(Kind{
		Name:           "qsm",
		Summary:        "QSM: sum over phases of max{g m_rw, d k} + L, k the contention (paper 003, slide \"Contention Modeling Abstractions\")",
		Benches:        superstepPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptImpl},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitQSM(r, o) },
		New:            func() Model { return &QSM{} },
		Size:           instanceSize,
		ProgramOptions: &Options{Impl: "textbook"},
	})
}

func (q *QSM) Kind() string       { return "qsm" }
func (q *QSM) Params() []Param    { return []Param{q.G, q.D, q.L} }
func (q *QSM) Quality() Quality   { return q.Fit }
func (q *QSM) Patterns() []string { return superstepPatterns }

// FittedBenches lists the patterns the fit used (see FittedBencher).
func (q *QSM) FittedBenches() []string { return q.Benches }

// qsmStep is max{g m_rw, d k} + L as alternatives over (g, d, L).
func qsmStep(s Superstep) maxStep {
	return maxStep{count: s.Count, alts: [][]float64{{float64(s.Sends) * s.Bytes, 0, 1}, {0, float64(s.Recvs), 1}}}
}

// Predict sums max{g m_rw, d k} + L over the instance's supersteps.
func (q *QSM) Predict(in Instance) (float64, error) {
	steps, err := Supersteps(in)
	if err != nil {
		return 0, err
	}
	var t float64
	for _, s := range steps {
		t += s.Count * (math.Max(q.G.Value*float64(s.Sends)*s.Bytes, q.D.Value*float64(s.Recvs)) + q.L.Value)
	}
	return t, nil
}

// FitQSM fits g, d and L to the superstep patterns among recs.
func FitQSM(recs []results.Record, opt Options) (*QSM, error) {
	pts, benches, err := superstepPoints(recs, "qsm", superstepPatterns, opt)
	if err != nil {
		return nil, err
	}
	steps := make([][]maxStep, len(pts))
	for i, p := range pts {
		for _, s := range p.steps {
			steps[i] = append(steps[i], qsmStep(s))
		}
	}
	names := []string{"g", "d", "L"}
	f, err := fitMaxLinear(pts, steps, names, []int{1}, opt)
	if err != nil {
		return nil, errorf("qsm", err)
	}
	m := &QSM{G: f.param(0, "g", "s/B"), D: f.param(1, "d", "s"), L: f.param(2, "L", "s"), Benches: benches,
		Impl: implOf(pts), Fit: f.quality(opt, names)}
	if len(benches) > 1 {
		m.Fit.Notes = append(m.Fit.Notes, "one (g, d, L) for "+strings.Join(benches, ", "))
	}
	return m, nil
}
