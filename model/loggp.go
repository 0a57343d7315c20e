package model

import (
	"container/heap"
	"fmt"
	"math"
	"sort"

	"github.com/commcost/commcost/results"
)

// LogGP holds the LogGP parameters (Alexandrov, Ionescu, Schauser,
// Scheiman, SPAA 1995; paper 003, slide "The LogGP Model") measured with
// netgauge's parametrised round trips (Hoefler, Lichei, Rehm, "Low-Overhead
// LogGP Parameter Assessment for Modern Interconnection Networks", IPDPS
// 2007; netgauge ptrn_loggp.c). The client sends n messages of s bytes
// with a delay d between consecutive sends, the server answers with one
// message of s bytes once all n arrived; PRTT(n, d, s) is the client's time
// for that exchange. With s' = max(s-1, 0):
//
//	PRTT(1, 0, s) = 2 (o_s + L + s' G + o_r)                      (one round trip)
//	PRTT(n, d, s) = PRTT(1, 0, s) + (n-1) max{o_s + d, g + s' G}  (n messages)
//
// hence, per size s,
//
//	g + s' G = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n-1)     (d = 0: gap-bound)
//	o_s(s)   = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n-1) - d (d >= g + s' G: overhead-bound)
//	o_r(s)   = (T_srv - (n-1) d) / (n-1)                   (server: delay d before each receive)
//	L        = PRTT(1, 0, s_0)/2 - o_s - o_r - s_0' G      (s_0 the smallest size)
//
// g and G are the intercept and slope of the gap fit; o_s and o_r are the
// intercepts of straight-line fits of o_s(s) and o_r(s) over s (LogGP's o
// is size-independent; the slopes O_s, O_r are the per-byte CPU overheads of
// LogGOPS and are reported for information). netgauge takes d =
// PRTT(1, 0, s), which exceeds g + s' G; smaller delays are flagged in the
// notes. Without server-side records o_r is set to o_s (LogGP's single o)
// and a note says so. netgauge itself reports L as PRTT(1,0,s_0)/2; here L
// is the wire latency of the LogGP definition, with the overheads removed.
// Fit describes the g, G fit, weighted as Options.Weighting says (relative
// by default); the overhead lines are fitted with absolute weights because
// o(s) may be near zero, except under WeightCI, where every line is
// weighted by the standard errors propagated from the records' CI95s.
type LogGP struct {
	L   Param `json:"L"`
	Os  Param `json:"o_s"`
	Or  Param `json:"o_r"`
	G   Param `json:"g"`
	BG  Param `json:"G"`
	OsB Param `json:"O_s"` // per-byte send overhead (slope of o_s(s))
	OrB Param `json:"O_r"` // per-byte receive overhead (slope of o_r(s))
	// CovGG is the covariance of g and G (same fit), for error propagation.
	CovGG float64 `json:"cov_g_G"`
	// MinBytes is the smallest PRTT size (the s_0 of L).
	MinBytes float64 `json:"min_bytes"`
	Fit      Quality `json:"quality"`
}

var loggpPatterns = []string{"prtt", "pingpong", "roundtrip", "bandwidth"}

// prttBenches are the records the LogGP family is fitted from.
var prttBenches = []string{"prtt"}

func init() {
	Register(Kind{
		Name:           "loggp",
		Summary:        "LogGP L, o_s, o_r, g, G from netgauge's parametrised round trips PRTT(n, d, s) (paper 003; Hoefler et al. 2007)",
		Benches:        prttBenches,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitLogGP(r, o) },
		New:            func() Model { return &LogGP{} },
		ProgramOptions: &Options{},
	})
	Register(Kind{
		Name:           "logp",
		Summary:        "LogP L, o, g with packets of w bytes, reduced from the LogGP fit (paper 003; Culler et al. 1993)",
		Benches:        prttBenches,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange, OptPacketBytes},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitLogP(r, o) },
		New:            func() Model { return &LogP{} },
		ProgramOptions: &Options{},
		Check: func(m Model) error {
			if t := m.(*LogP); !(t.PacketBytes > 0) {
				return fmt.Errorf("packet_bytes = %g, want > 0", t.PacketBytes)
			}
			return nil
		},
	})
	Register(Kind{
		Name:    "postal",
		Summary: "postal model: latency lambda in units of o, reduced from LogP (paper 003; Bar-Noy and Kipnis 1992)",
		Benches: prttBenches,
		Options: []Option{OptWeighting, OptTrim, OptSizeRange, OptPacketBytes},
		Fit:     func(r []results.Record, o Options) (Model, error) { return FitPostal(r, o) },
		New:     func() Model { return &Postal{} },
		Check: func(m Model) error {
			if t := m.(*Postal); !(t.PacketBytes > 0) || !(t.Unit.Value > 0) {
				return fmt.Errorf("packet_bytes = %g and unit = %g, want both > 0", t.PacketBytes, t.Unit.Value)
			}
			return nil
		},
	})
}

func (m *LogGP) Kind() string       { return "loggp" }
func (m *LogGP) Quality() Quality   { return m.Fit }
func (m *LogGP) Patterns() []string { return loggpPatterns }
func (m *LogGP) Params() []Param {
	return []Param{m.L, m.Os, m.Or, m.G, m.BG, m.OsB, m.OrB}
}

func sPrime(s float64) float64 { return math.Max(s-1, 0) }

// SendOverhead is o_s + O_s s; RecvOverhead is o_r + O_r s.
func (m *LogGP) SendOverhead(s float64) float64 { return m.Os.Value + m.OsB.Value*s }
func (m *LogGP) RecvOverhead(s float64) float64 { return m.Or.Value + m.OrB.Value*s }

// Gap is g + s' G, the time between consecutive s-byte sends.
func (m *LogGP) Gap(s float64) float64 { return m.G.Value + sPrime(s)*m.BG.Value }

// OneWay is o_s + L + s' G + o_r.
func (m *LogGP) OneWay(s float64) float64 {
	return m.SendOverhead(s) + m.L.Value + sPrime(s)*m.BG.Value + m.RecvOverhead(s)
}

// PRTT is PRTT(1,0,s) + (n-1) max{o_s + d, g + s' G}.
func (m *LogGP) PRTT(n, d, s float64) float64 {
	return 2*m.OneWay(s) + (n-1)*math.Max(m.SendOverhead(s)+d, m.Gap(s))
}

// Predict covers "prtt" (the client's PRTT(n, d, s), or with params
// side=server the server's (n-1)(d + o_r)), "pingpong" (one way),
// "roundtrip", and "bandwidth" in bytes per second: a window of w messages
// issued back to back, o_s + (w-1) max{o_s, g + s' G} + s' G + L + o_r,
// followed by a 4-byte acknowledgement (MEASURE.md bandwidth method).
func (m *LogGP) Predict(in Instance) (float64, error) {
	s, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	switch in.Pattern {
	case "pingpong":
		return m.OneWay(s), nil
	case "roundtrip":
		return 2 * m.OneWay(s), nil
	case "prtt":
		n, err := in.Num("n")
		if err != nil {
			return 0, err
		}
		d, err := in.Num("delay_s")
		if err != nil {
			return 0, err
		}
		if in.Str("side") == "server" {
			return (n - 1) * (d + m.RecvOverhead(s)), nil
		}
		return m.PRTT(n, d, s), nil
	case "bandwidth":
		w, err := in.Num("window")
		if err != nil {
			return 0, err
		}
		t := m.SendOverhead(s) + (w-1)*math.Max(m.SendOverhead(s), m.Gap(s)) +
			sPrime(s)*m.BG.Value + m.L.Value + m.RecvOverhead(s) + m.OneWay(4)
		return s * w / t, nil
	}
	return 0, unsupported(m.Kind(), in.Pattern, loggpPatterns)
}

// prttSeries is one size's PRTT medians and the standard errors their
// CI95s imply (0 when unknown).
type prttSeries struct {
	s                                     float64
	p1, pn0, pnd, srv                     float64
	n0, nd, d, nsrv, ds                   float64
	p1Sigma, pn0Sigma, pndSigma, srvSigma float64
}

// derivedSigma is the standard error of (a - b)/k for independent a, b
// with standard errors sa, sb; 0 (unknown) when either is unknown.
func derivedSigma(sa, sb, k float64) float64 {
	if sa <= 0 || sb <= 0 {
		return 0
	}
	return math.Hypot(sa, sb) / k
}

// FitLogGP derives LogGP parameters from "prtt" records (params bytes, n,
// delay_s; records with side=server carry the server's receive time).
func FitLogGP(recs []results.Record, opt Options) (*LogGP, error) {
	return fitLogGP("loggp", recs, opt)
}

// fitLogGP is FitLogGP for the kind the caller fits (loggp, or logp and
// postal, which are reduced from it), so that a refusal names the model
// the user asked for.
func fitLogGP(kind string, recs []results.Record, opt Options) (*LogGP, error) {
	sel, err := selectRecords(recs, kind, "prtt")
	if err != nil {
		return nil, err
	}
	var client, server []results.Record
	for _, r := range sel {
		if s, _ := r.Params["side"].(string); s == "server" {
			server = append(server, r)
		} else {
			client = append(client, r)
		}
	}
	cp, err := mergePoints(client, "bytes", "n", "delay_s")
	if err != nil {
		return nil, err
	}
	sp, err := mergePoints(server, "bytes", "n", "delay_s")
	if err != nil {
		return nil, err
	}
	cp = filterBytes(cp, 0, opt)
	sp = filterBytes(sp, 0, opt)
	bySize := map[float64]*prttSeries{}
	get := func(s float64) *prttSeries {
		if bySize[s] == nil {
			bySize[s] = &prttSeries{s: s}
		}
		return bySize[s]
	}
	for _, p := range cp {
		s, n, d := p.x[0], p.x[1], p.x[2]
		ser := get(s)
		switch {
		case n < 1:
			return nil, fmt.Errorf("%w: prtt record %s: n = %g, want n >= 1", ErrBadRecord, p.label(), n)
		case d < 0:
			return nil, fmt.Errorf("%w: prtt record %s: delay_s = %g is negative", ErrBadRecord, p.label(), d)
		case n == 1 && d == 0:
			ser.p1, ser.p1Sigma = p.y, p.sigma
		case n > 1 && d == 0:
			ser.pn0, ser.n0, ser.pn0Sigma = p.y, n, p.sigma
		case n > 1 && d > 0:
			ser.pnd, ser.nd, ser.d, ser.pndSigma = p.y, n, d, p.sigma
		}
	}
	for _, p := range sp {
		if p.x[1] > 1 {
			ser := get(p.x[0])
			ser.srv, ser.nsrv, ser.ds, ser.srvSigma = p.y, p.x[1], p.x[2], p.sigma
		}
	}
	var sizes []float64
	for s := range bySize {
		sizes = append(sizes, s)
	}
	sort.Float64s(sizes)

	m := &LogGP{}
	var notes []string
	// Gap fit: g + s' G per size.
	var gapPts []point
	var gapY []float64
	var osPts, orPts []point
	var osY, orY []float64
	var missing []string
	for _, s := range sizes {
		ser := bySize[s]
		lbl := fmt.Sprintf("s=%g", s)
		if ser.p1 == 0 {
			missing = append(missing, fmt.Sprintf("PRTT(1,0,%g)", s))
			continue
		}
		if ser.pn0 > 0 {
			gap := (ser.pn0 - ser.p1) / (ser.n0 - 1)
			if gap > 0 {
				gapPts = append(gapPts, point{key: lbl, x: []float64{s}, y: gap, sigma: derivedSigma(ser.pn0Sigma, ser.p1Sigma, ser.n0-1)})
				gapY = append(gapY, gap)
			} else {
				notes = append(notes, fmt.Sprintf("gap not resolved at %g bytes (PRTT(n,0,s) <= PRTT(1,0,s)); size left out of the g, G fit", s))
			}
		}
		if ser.pnd > 0 {
			o := (ser.pnd-ser.p1)/(ser.nd-1) - ser.d
			osPts = append(osPts, point{key: lbl, x: []float64{s}, y: o, sigma: derivedSigma(ser.pndSigma, ser.p1Sigma, ser.nd-1)})
			osY = append(osY, o)
		}
		if ser.srv > 0 {
			o := (ser.srv - (ser.nsrv-1)*ser.ds) / (ser.nsrv - 1)
			var sig float64
			if ser.srvSigma > 0 {
				sig = ser.srvSigma / (ser.nsrv - 1)
			}
			orPts = append(orPts, point{key: lbl, x: []float64{s}, y: o, sigma: sig})
			orY = append(orY, o)
		}
	}
	if len(missing) > 0 && len(gapPts) == 0 {
		return nil, fmt.Errorf("%w: %s needs PRTT(1,0,s) records (n=1, delay_s=0); missing %v", ErrNoRecords, kind, missing)
	}
	if len(gapPts) < 3 {
		return nil, fmt.Errorf("%w: %s needs PRTT(1,0,s) and PRTT(n,0,s) (n>1, delay_s=0) at 3 or more sizes to fit g and G; found %d",
			ErrIllConditioned, kind, len(gapPts))
	}
	if len(osPts) < 3 {
		return nil, fmt.Errorf("%w: %s needs PRTT(n,d,s) records with delay_s > 0 at 3 or more sizes to fit o_s; found %d",
			ErrIllConditioned, kind, len(osPts))
	}
	lineRows := func(pts []point) ([][]float64, []string) {
		rows := make([][]float64, len(pts))
		lbl := make([]string, len(pts))
		for i, p := range pts {
			rows[i] = []float64{1, sPrime(p.x[0])}
			lbl[i] = p.key
		}
		return rows, lbl
	}
	// The g, G fit takes opt.Weighting like every other fit: relative by
	// default, none, or ci with the standard errors of the derived gaps
	// propagated from the records' CI95s (a point's sigma is that of
	// (PRTT(n,0,s) - PRTT(1,0,s))/(n-1)).
	rows, lbl := lineRows(gapPts)
	w, gapNote := weights(gapPts, gapY, opt)
	gapFit, err := fitLinearTrimmed(rows, gapY, w, []string{"g", "G"}, lbl, opt)
	if err != nil {
		return nil, fmt.Errorf("loggp g, G: %w", err)
	}
	m.G = gapFit.fit.param(0, "s")
	m.BG = gapFit.fit.param(1, "s/B")
	m.CovGG = gapFit.fit.cov.At(0, 1)
	m.Fit = gapFit.fit.quality(effectiveWeighting(opt, gapNote), gapFit.trimmed)
	if gapNote != "" {
		notes = append(notes, "g, G: "+gapNote)
	}

	// Overheads: the per-size values may be near zero or, with noise,
	// negative, so relative weights (1/o) would be meaningless there: they
	// are fitted with absolute weights, or with the propagated standard
	// errors under --weighting ci.
	ovOpt := opt
	if opt.Weighting != WeightCI {
		ovOpt.Weighting = WeightNone
	}
	ovFit := func(pts []point, ys []float64, name string) (Param, Param, error) {
		rows := make([][]float64, len(pts))
		lbl := make([]string, len(pts))
		for i, p := range pts {
			rows[i] = []float64{1, p.x[0]}
			lbl[i] = p.key
		}
		w, note := weights(pts, ys, ovOpt)
		if note != "" {
			// Near-zero overheads cannot take the relative fallback.
			w, _ = weights(pts, ys, Options{Weighting: WeightNone})
			notes = append(notes, name+": some records lack a confidence interval; fitted with absolute weights")
		}
		f, err := fitLinearTrimmed(rows, ys, w, []string{name, "O" + name[1:]}, lbl, opt)
		if err != nil {
			return Param{}, Param{}, fmt.Errorf("loggp %s: %w", name, err)
		}
		return f.fit.param(0, "s"), f.fit.param(1, "s/B"), nil
	}
	if m.Os, m.OsB, err = ovFit(osPts, osY, "o_s"); err != nil {
		return nil, err
	}
	if len(orPts) >= 3 {
		if m.Or, m.OrB, err = ovFit(orPts, orY, "o_r"); err != nil {
			return nil, err
		}
	} else {
		m.Or, m.OrB = m.Os, m.OsB
		m.Or.Name, m.OrB.Name = "o_r", "O_r"
		notes = append(notes, "no server-side prtt records (side=server): o_r set to o_s, LogGP's single o")
	}
	for _, s := range sizes {
		ser := bySize[s]
		if ser.pnd > 0 && ser.d < m.Gap(s) {
			notes = append(notes, fmt.Sprintf("delay %.3g s at %g bytes is below g + (s-1)G = %.3g s: o_s(s) there is gap-bound (netgauge uses d = PRTT(1,0,s))", ser.d, s, m.Gap(s)))
		}
	}
	// L from the smallest size with a single round trip.
	var s0 *prttSeries
	for _, s := range sizes {
		if bySize[s].p1 > 0 {
			s0 = bySize[s]
			break
		}
	}
	m.MinBytes = s0.s
	lv := s0.p1/2 - m.SendOverhead(s0.s) - m.RecvOverhead(s0.s) - sPrime(s0.s)*m.BG.Value
	lse := math.Sqrt(sq(s0.p1Sigma/2) + sq(m.Os.SE) + sq(m.Or.SE) + sq(s0.s*m.OsB.SE) + sq(s0.s*m.OrB.SE) + sq(sPrime(s0.s)*m.BG.SE))
	t := tQuantile975(max(m.Fit.DoF, 1))
	m.L = Param{Name: "L", Unit: "s", Value: lv, SE: lse, CI95: [2]float64{lv - t*lse, lv + t*lse}}
	if lv < 0 {
		notes = append(notes, fmt.Sprintf("L = %.3g s is negative: the overheads o_s + o_r exceed half the round trip, the LogGP decomposition does not fit these records", lv))
	}
	m.Fit.Notes = append(m.Fit.Notes, notes...)
	return m, nil
}

func sq(x float64) float64 { return x * x }

// LogP is the LogP model (Culler et al., PPoPP 1993) with packets of W
// bytes. Paper 003, slide "The LogGP Model": sending a k-item message takes
//
//	o + (k-1) max{g, o} + L + o
//
// with k = ceil(s/W) packets. It is derived from a LogGP fit: o = (o_s +
// o_r)/2 at s = W, g_P = g + (W-1) G (LogGP's gap for one W-byte packet),
// L_P = L + (W-1) G (LogGP's one-way time of a W-byte packet less 2o).
type LogP struct {
	L           Param   `json:"L"`
	O           Param   `json:"o"`
	G           Param   `json:"g"`
	PacketBytes float64 `json:"packet_bytes"`
	Fit         Quality `json:"quality"`
}

var logpPatterns = []string{"pingpong", "roundtrip"}

func (m *LogP) Kind() string       { return "logp" }
func (m *LogP) Params() []Param    { return []Param{m.L, m.O, m.G} }
func (m *LogP) Quality() Quality   { return m.Fit }
func (m *LogP) Patterns() []string { return logpPatterns }

// OneWay is o + (k-1) max{g, o} + L + o with k = max(ceil(s/W), 1).
func (m *LogP) OneWay(s float64) float64 {
	k := math.Max(math.Ceil(s/m.PacketBytes), 1)
	return 2*m.O.Value + (k-1)*math.Max(m.G.Value, m.O.Value) + m.L.Value
}

func (m *LogP) Predict(in Instance) (float64, error) {
	s, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	switch in.Pattern {
	case "pingpong":
		return m.OneWay(s), nil
	case "roundtrip":
		return 2 * m.OneWay(s), nil
	}
	return 0, unsupported(m.Kind(), in.Pattern, logpPatterns)
}

// LogPFromLogGP reduces a LogGP fit to LogP with packets of w bytes
// (w <= 0 means the LogGP fit's smallest size, at least 1 byte).
func LogPFromLogGP(g *LogGP, w float64) *LogP {
	if w <= 0 {
		w = math.Max(g.MinBytes, 1)
	}
	wp := sPrime(w)
	t := tQuantile975(max(g.Fit.DoF, 1))
	mk := func(name string, v, se float64) Param {
		return Param{Name: name, Unit: "s", Value: v, SE: se, CI95: [2]float64{v - t*se, v + t*se}}
	}
	ov := (g.SendOverhead(w) + g.RecvOverhead(w)) / 2
	ose := math.Sqrt(sq(g.Os.SE)+sq(g.Or.SE)+sq(w*g.OsB.SE)+sq(w*g.OrB.SE)) / 2
	gv := g.G.Value + wp*g.BG.Value
	gse := math.Sqrt(math.Max(sq(g.G.SE)+sq(wp*g.BG.SE)+2*wp*g.CovGG, 0))
	lv := g.L.Value + wp*g.BG.Value
	lse := math.Sqrt(sq(g.L.SE) + sq(wp*g.BG.SE))
	q := g.Fit
	q.Notes = append(append([]string(nil), g.Fit.Notes...), fmt.Sprintf("LogP derived from the LogGP fit with packets of %g bytes", w))
	return &LogP{L: mk("L", lv, lse), O: mk("o", ov, ose), G: mk("g", gv, gse), PacketBytes: w, Fit: q}
}

// FitLogP fits LogGP to "prtt" records and reduces it to LogP.
func FitLogP(recs []results.Record, opt Options) (*LogP, error) {
	return fitLogP("logp", recs, opt)
}

func fitLogP(kind string, recs []results.Record, opt Options) (*LogP, error) {
	g, err := fitLogGP(kind, recs, opt)
	if err != nil {
		return nil, err
	}
	return LogPFromLogGP(g, opt.PacketBytes), nil
}

// Postal is the postal model (Bar-Noy and Kipnis 1992; paper 003, slide
// "The postal model"): a message sent at time t keeps the sender busy
// during [t, t+1] and the receiver during [t+λ-1, t+λ]. Paper 003 notes
// this is LogP with o = 1 and the same latency, so with the time unit
// Unit = o, a LogP one-way time 2o + L becomes λ = 2 + L/o units. Messages
// have a fixed size (PacketBytes); a message of k packets occupies the
// sender k units and arrives k-1+λ units after it started.
type Postal struct {
	Lambda      Param   `json:"lambda"`
	Unit        Param   `json:"unit"`
	PacketBytes float64 `json:"packet_bytes"`
	Fit         Quality `json:"quality"`
}

var postalPatterns = []string{"pingpong", "roundtrip", "aggregate"}

func (m *Postal) Kind() string       { return "postal" }
func (m *Postal) Params() []Param    { return []Param{m.Lambda, m.Unit} }
func (m *Postal) Quality() Quality   { return m.Fit }
func (m *Postal) Patterns() []string { return postalPatterns }

func (m *Postal) packets(s float64) float64 { return math.Max(math.Ceil(s/m.PacketBytes), 1) }

// Predict: "pingpong" (k-1+λ) units, "roundtrip" twice that, and
// "aggregate" with op=bcast the optimal postal broadcast to Ranks
// processors (PostalBroadcastUnits) with units of k packets.
func (m *Postal) Predict(in Instance) (float64, error) {
	s, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	k := m.packets(s)
	u := m.Unit.Value
	switch in.Pattern {
	case "pingpong":
		return (k - 1 + m.Lambda.Value) * u, nil
	case "roundtrip":
		return 2 * (k - 1 + m.Lambda.Value) * u, nil
	case "aggregate":
		if in.Str("op") != "bcast" {
			return 0, fmt.Errorf("%w: postal predicts aggregate op bcast only, not %q", ErrUnsupportedPattern, in.Str("op"))
		}
		if in.Ranks < 1 || in.Ranks > maxPostalRanks {
			return 0, fmt.Errorf("%w: postal bcast needs 1 <= ranks <= %d, got %d", ErrBadRecord, maxPostalRanks, in.Ranks)
		}
		// A k-packet message is one postal message in units of k u, with
		// latency (k-1+λ)/k of those units.
		return k * u * PostalBroadcastUnits((k-1+m.Lambda.Value)/k, in.Ranks), nil
	}
	return 0, unsupported(m.Kind(), in.Pattern, postalPatterns)
}

// maxPostalRanks bounds the broadcast simulation (O(p log p) time).
const maxPostalRanks = 1 << 24

// PostalFromLogP maps LogP to the postal model: Unit = o, λ = 2 + L/o
// (paper 003, "The postal model": LogP with o = 1).
func PostalFromLogP(p *LogP) *Postal {
	o, l := p.O.Value, p.L.Value
	lam := 2 + l/o
	// d λ = dL/o - L/o^2 do
	lse := math.Sqrt(sq(p.L.SE/o) + sq(l/(o*o)*p.O.SE))
	t := tQuantile975(max(p.Fit.DoF, 1))
	q := p.Fit
	q.Notes = append(append([]string(nil), p.Fit.Notes...), "postal model derived from LogP: unit = o, lambda = 2 + L/o")
	return &Postal{
		Lambda:      Param{Name: "lambda", Unit: "units", Value: lam, SE: lse, CI95: [2]float64{lam - t*lse, lam + t*lse}},
		Unit:        Param{Name: "unit", Unit: "s", Value: o, SE: p.O.SE, CI95: p.O.CI95},
		PacketBytes: p.PacketBytes,
		Fit:         q,
	}
}

// FitPostal fits LogGP to "prtt" records and reduces it via LogP.
func FitPostal(recs []results.Record, opt Options) (*Postal, error) {
	p, err := fitLogP("postal", recs, opt)
	if err != nil {
		return nil, err
	}
	return PostalFromLogP(p), nil
}

// PostalBroadcastUnits is the time, in units, of the optimal one-to-all
// broadcast to p processors in the postal model with latency λ >= 1: every
// informed processor sends to a new one each unit, starting when it has
// received (Bar-Noy and Kipnis, "Designing broadcasting algorithms in the
// postal model", 1992: this greedy schedule is optimal; for integer λ the
// number informed by time t satisfies N(t) = N(t-1) + N(t-λ)).
func PostalBroadcastUnits(lambda float64, p int) float64 {
	if p <= 1 {
		return 0
	}
	lambda = math.Max(lambda, 1)
	// Event simulation: a heap of the times at which informed processors
	// start their next send.
	h := &floatHeap{0}
	informed := 1
	var last float64
	for informed < p {
		t := heap.Pop(h).(float64)
		arrive := t + lambda
		informed++
		last = math.Max(last, arrive)
		heap.Push(h, t+1)    // the sender's next send
		heap.Push(h, arrive) // the new processor starts sending on receipt
	}
	return last
}

type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
