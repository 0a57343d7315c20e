package replay

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
)

// Pricer prices one point-to-point message of m bytes for the engine in
// LogGP's terms (Alexandrov et al. 1995; LogGOPSim, Hoefler, Schneider,
// Lumsdaine, HPDC 2010, section 2):
//
//	SendCPU(m)  the sender's CPU overhead o_s (+ O_s m)
//	Wire(m)     from the end of o_s to the last byte at the receiver: L + (m-1) G
//	RecvCPU(m)  the receiver's CPU overhead o_r (+ O_r m)
//	Gap(m)      how long the NIC is busy with the message: g + (m-1) G
//
// A LogGP model gives all four. The other models price a message as one
// duration T(m) (Hockney t_s + t_w m, a piecewise fit's segment, the
// hyperbolic end-to-end block a^2/(a + b m) + b m) and have no overheads or
// gaps: Wire(m) = T(m), the rest 0, so a message overlaps everything but
// the wait for it.
type Pricer struct {
	Name  string // what the output calls the model: its file's base name
	Kind  string // the model's kind
	loggp *loggpParams
	one   func(m float64) float64
	// Breakpoint is the first breakpoint of a piecewise fit (the size
	// where the MPI's protocol likely changes), 0 when none.
	Breakpoint float64
}

type loggpParams struct{ L, os, or, osB, orB, g, G float64 }

// SendCPU is the sender's overhead.
func (p *Pricer) SendCPU(m float64) float64 {
	if p.loggp != nil {
		return p.loggp.os + p.loggp.osB*m
	}
	return 0
}

// RecvCPU is the receiver's overhead.
func (p *Pricer) RecvCPU(m float64) float64 {
	if p.loggp != nil {
		return p.loggp.or + p.loggp.orB*m
	}
	return 0
}

// Wire is the time from the end of the send overhead to the arrival of
// the last byte.
func (p *Pricer) Wire(m float64) float64 {
	if p.loggp != nil {
		return p.loggp.L + math.Max(m-1, 0)*p.loggp.G
	}
	return p.one(m)
}

// Gap is the NIC's occupancy by the message.
func (p *Pricer) Gap(m float64) float64 {
	if p.loggp != nil {
		return p.loggp.g + math.Max(m-1, 0)*p.loggp.G
	}
	return 0
}

// OneWay is the time of an isolated message: SendCPU + Wire + RecvCPU.
func (p *Pricer) OneWay(m float64) float64 { return p.SendCPU(m) + p.Wire(m) + p.RecvCPU(m) }

// Scale is a what-if: factors for the network's bandwidth (2 means twice
// the bandwidth: every per-byte term divided by 2), its latency (every
// per-message term multiplied), the compute gaps, and named parameters of
// the model (L, o_s, o_r, g, G, O_s, O_r; t_s, t_w; a, b), multiplied.
type Scale map[string]float64

// The generic what-if parameters.
const (
	ScaleBandwidth = "bandwidth"
	ScaleLatency   = "latency"
	ScaleCompute   = "compute"
)

// scaleParams lists the names each model kind accepts besides the generic ones.
var scaleParams = map[string][]string{
	"loggp":      {"L", "o_s", "o_r", "g", "G", "O_s", "O_r"},
	"hockney":    {"t_s", "t_w"},
	"piecewise":  {"t_s", "t_w"},
	"hyperbolic": {"a", "b"},
}

// underGeneric names, per kind, the parameters a generic what-if already
// scales (NewPricer): latency the per-message terms, bandwidth the
// per-byte ones. Given with the generic factor, such a parameter would be
// scaled by both, their product, which no one asks for: refused.
var underGeneric = map[string]map[string][]string{
	"loggp":      {ScaleLatency: {"L", "o_s", "o_r", "g"}, ScaleBandwidth: {"G", "O_s", "O_r"}},
	"hockney":    {ScaleLatency: {"t_s"}, ScaleBandwidth: {"t_w"}},
	"piecewise":  {ScaleLatency: {"t_s"}, ScaleBandwidth: {"t_w"}},
	"hyperbolic": {ScaleLatency: {"a"}, ScaleBandwidth: {"b"}},
}

// A what-if factor outside [MinScale, MaxScale] is no network a
// prediction can speak for (a millionfold change moves every message
// time out of the range the model was fitted on), and 1e-308 priced
// times beyond any record's bound.
const (
	MinScale = 1e-6
	MaxScale = 1e6
)

// ParseScale reads "PARAM=FACTOR" items (a flag given several times).
func ParseScale(items []string) (Scale, error) {
	s := Scale{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || k == "" || err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, &opts.FieldError{Field: "Scale", Value: it, Reason: "want PARAM=FACTOR with a factor > 0, e.g. bandwidth=2 or latency=0.5"}
		}
		if f < MinScale || f > MaxScale {
			return nil, &opts.FieldError{Field: "Scale", Value: it, Reason: fmt.Sprintf("a factor of %g: want %g to %g (a millionfold change is beyond what a fitted model predicts)", f, MinScale, MaxScale)}
		}
		if _, dup := s[k]; dup {
			return nil, &opts.FieldError{Field: "Scale", Value: it, Reason: fmt.Sprintf("%s is scaled twice; give each parameter once", k)}
		}
		s[k] = f
	}
	return s, nil
}

func (s Scale) get(k string) float64 {
	if f, ok := s[k]; ok {
		return f
	}
	return 1
}

// check refuses names that neither the generic what-ifs nor the model's
// kind know.
func (s Scale) check(kind string) error {
	known := map[string]bool{ScaleBandwidth: true, ScaleLatency: true, ScaleCompute: true}
	for _, n := range scaleParams[kind] {
		known[n] = true
	}
	var bad []string
	for k := range s {
		if !known[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		for _, g := range []string{ScaleLatency, ScaleBandwidth} {
			if _, ok := s[g]; !ok {
				continue
			}
			for _, n := range underGeneric[kind][g] {
				if _, ok := s[n]; ok {
					return &opts.FieldError{Field: "Scale", Value: fmt.Sprintf("%s=%g", n, s[n]), Reason: fmt.Sprintf("%s already scales the %s model's %s; give %s=FACTOR or %s=FACTOR, not both", g, kind, n, g, n)}
				}
			}
		}
		return nil
	}
	sort.Strings(bad)
	names := append([]string{ScaleBandwidth, ScaleLatency, ScaleCompute}, scaleParams[kind]...)
	return &opts.FieldError{Field: "Scale", Value: bad[0], Reason: fmt.Sprintf("the %s model has no parameter %q (accepted: %s)", kind, bad[0], strings.Join(names, ", "))}
}

// NewPricer prices messages with m, scaled. A model that prices no
// point-to-point message (it predicts no "pingpong") is refused.
func NewPricer(name string, m model.Model, s Scale) (*Pricer, error) {
	if err := s.check(m.Kind()); err != nil {
		return nil, err
	}
	lat, inv := s.get(ScaleLatency), 1/s.get(ScaleBandwidth)
	p := &Pricer{Name: name, Kind: m.Kind()}
	switch t := m.(type) {
	case *model.LogGP:
		p.loggp = &loggpParams{
			L: t.L.Value * lat * s.get("L"), os: t.Os.Value * lat * s.get("o_s"), or: t.Or.Value * lat * s.get("o_r"),
			g: t.G.Value * lat * s.get("g"), G: t.BG.Value * inv * s.get("G"),
			osB: t.OsB.Value * inv * s.get("O_s"), orB: t.OrB.Value * inv * s.get("O_r"),
		}
	case *model.Hockney:
		ts, tw := t.Ts.Value*lat*s.get("t_s"), t.Tw.Value*inv*s.get("t_w")
		p.one = func(m float64) float64 { return ts + tw*m }
	case *model.Piecewise:
		if len(t.Segments) == 0 {
			return nil, fmt.Errorf("%s: a piecewise model without segments", name)
		}
		from := make([]float64, len(t.Segments))
		ts := make([]float64, len(t.Segments))
		tw := make([]float64, len(t.Segments))
		for i, sg := range t.Segments {
			from[i], ts[i], tw[i] = sg.FromBytes, sg.Ts.Value*lat*s.get("t_s"), sg.Tw.Value*inv*s.get("t_w")
		}
		if len(t.Breakpoints) > 0 {
			p.Breakpoint = t.Breakpoints[0]
		}
		p.one = func(m float64) float64 {
			i := len(from) - 1
			for i > 0 && m < from[i] {
				i--
			}
			return ts[i] + tw[i]*m
		}
	case *model.Hyperbolic:
		b := t.EndToEndBlock()
		b = model.Block{A: b.A * lat * s.get("a"), B: b.B * inv * s.get("b")}
		p.one = b.Time
	default:
		// A kind priced through its pingpong prediction (LogP, postal)
		// whose latency or overheads fitted negative prices each message
		// in part in negative time, hidden in the sum: refused as the
		// LogGP model of the same fit is.
		for _, prm := range m.Params() {
			if prm.Unit == "s" && prm.Value < 0 {
				return nil, opts.Badf("%s: the %s model's %s is %.3g s: %s cannot be replayed", name, m.Kind(), prm.Name, prm.Value, model.NegativeTimeFit)
			}
		}
		if !describes(m, "pingpong") {
			return nil, opts.Badf("%s: the %s model prices no point-to-point message (it predicts %s, not pingpong): replay needs a model of one message's time",
				name, m.Kind(), strings.Join(m.Patterns(), ", "))
		}
		price := func(x float64) float64 {
			v, err := m.Predict(model.Instance{Pattern: "pingpong", Params: map[string]any{"bytes": x}, Ranks: 2})
			if err != nil || math.IsNaN(v) {
				return math.NaN()
			}
			return v
		}
		t0 := price(0)
		p.one = func(x float64) float64 { return lat*t0 + (price(x)-t0)*inv }
	}
	for _, b := range []float64{0, 1 << 20} {
		for _, part := range []struct {
			name string
			v    float64
		}{{"send overhead", p.SendCPU(b)}, {"wire time", p.Wire(b)}, {"receive overhead", p.RecvCPU(b)}, {"gap", p.Gap(b)}} {
			if math.IsNaN(part.v) || part.v < 0 {
				return nil, opts.Badf("%s: the %s model gives a %g-byte message a %s of %.3g s: %s cannot be replayed", name, m.Kind(), b, part.name, part.v, model.NegativeTimeFit)
			}
		}
	}
	if v := p.OneWay(8); math.IsNaN(v) || v < 0 {
		return nil, opts.Badf("%s: the %s model prices an 8-byte message at %g s: not a usable point-to-point model", name, m.Kind(), v)
	}
	return p, nil
}

func describes(m model.Model, pattern string) bool {
	for _, p := range m.Patterns() {
		if p == pattern {
			return true
		}
	}
	return false
}
