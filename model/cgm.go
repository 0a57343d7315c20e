package model

import (
	"strings"

	"github.com/commcost/commcost/results"
)

// CGM is the coarse-grained multicomputer model of paper 003's survey
// (Grama, Kumar, Ranka, Singh, slides, "The CGM model"): an algorithm
// alternates computation with global communication phases, each "a single
// h-relation in BSP" whose size is h = n/p, "so the communication cost of a
// parallel algorithm is simply captured in the number of communication
// phases". Every phase is charged the full h-relation of the operation's
// data, with BSP's g and L (paper 000, section 2.2; BSP):
//
//	T = lambda (g h + L),
//
// lambda the communication rounds of the instance (its supersteps,
// Supersteps) and h its h-relation (HRelationBytes: the most data a
// processor sends or receives in the whole operation, its share n/p). A
// one-round pattern costs BSP's g h + L; a textbook broadcast on p ranks
// costs ceil(lg p) of them: the model rewards few rounds, not small ones.
type CGM struct {
	Impl    string   `json:"impl,omitempty"`
	G       Param    `json:"g"`
	L       Param    `json:"L"`
	Benches []string `json:"benches"`
	Fit     Quality  `json:"quality"`
}

func init() {
	Register(Kind{
		Name:           "cgm",
		Summary:        "CGM: lambda rounds of one h-relation, lambda (g h + L) (paper 003, slide \"The CGM model\")",
		Benches:        superstepPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptImpl},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitCGM(r, o) },
		New:            func() Model { return &CGM{} },
		Size:           instanceSize,
		ProgramOptions: &Options{Impl: "textbook"},
	})
}

func (c *CGM) Kind() string       { return "cgm" }
func (c *CGM) Params() []Param    { return []Param{c.G, c.L} }
func (c *CGM) Quality() Quality   { return c.Fit }
func (c *CGM) Patterns() []string { return superstepPatterns }

// FittedBenches lists the patterns the fit used (see FittedBencher).
func (c *CGM) FittedBenches() []string { return c.Benches }

// cgmTerms are an instance's lambda and h.
func cgmTerms(in Instance) (lambda, h float64, err error) {
	steps, err := Supersteps(in)
	if err != nil {
		return 0, 0, err
	}
	if h, err = HRelationBytes(in); err != nil {
		return 0, 0, err
	}
	return rounds(steps), h, nil
}

// Predict is lambda (g h + L).
func (c *CGM) Predict(in Instance) (float64, error) {
	lambda, h, err := cgmTerms(in)
	if err != nil {
		return 0, err
	}
	return lambda * (c.G.Value*h + c.L.Value), nil
}

// FitCGM fits g and L by least squares on lambda h and lambda.
func FitCGM(recs []results.Record, opt Options) (*CGM, error) {
	pts, benches, err := superstepPoints(recs, "cgm", superstepPatterns, opt)
	if err != nil {
		return nil, err
	}
	steps := make([][]maxStep, len(pts))
	for i, p := range pts {
		lambda, h, err := cgmTerms(p.inst)
		if err != nil {
			return nil, err
		}
		steps[i] = []maxStep{{count: lambda, alts: [][]float64{{h, 1}}}}
	}
	names := []string{"g", "L"}
	f, err := fitMaxLinear(pts, steps, names, nil, opt)
	if err != nil {
		return nil, errorf("cgm", err)
	}
	m := &CGM{G: f.param(0, "g", "s/B"), L: f.param(1, "L", "s"), Benches: benches, Impl: implOf(pts), Fit: f.quality(opt, names)}
	if len(benches) > 1 {
		m.Fit.Notes = append(m.Fit.Notes, "one (g, L) for "+strings.Join(benches, ", "))
	}
	return m, nil
}
