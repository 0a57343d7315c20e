package model

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/results"
)

// Hockney is the two-parameter point-to-point model t(m) = t_s + t_w m for
// a one-way message of m bytes (Hockney, Parallel Computing 17 (1991); the
// "t_s + m t_w" of paper 003, slide "Role of Data Locality", with the per-hop
// term dropped).
type Hockney struct {
	Ts       Param   `json:"t_s"`
	Tw       Param   `json:"t_w"`
	MinBytes float64 `json:"min_bytes"` // smallest fitted size
	MaxBytes float64 `json:"max_bytes"` // largest fitted size
	Fit      Quality `json:"quality"`
}

var hockneyPatterns = []string{"pingpong", "roundtrip"}

func init() {
	Register(Kind{
		Name:           "hockney",
		Summary:        "t(m) = t_s + t_w m, one line over the message sizes (Hockney 1991)",
		Benches:        hockneyPatterns,
		Options:        []Option{OptWeighting, OptTrim, OptSizeRange},
		Fit:            func(r []results.Record, o Options) (Model, error) { return FitHockney(r, o) },
		New:            func() Model { return &Hockney{} },
		ProgramOptions: &Options{},
	})
}

func (h *Hockney) Kind() string       { return "hockney" }
func (h *Hockney) Params() []Param    { return []Param{h.Ts, h.Tw} }
func (h *Hockney) Quality() Quality   { return h.Fit }
func (h *Hockney) Patterns() []string { return hockneyPatterns }

// OneWay returns t_s + t_w m.
func (h *Hockney) OneWay(bytes float64) float64 { return h.Ts.Value + h.Tw.Value*bytes }

// Predict gives the one-way time for "pingpong" (whose records hold half the
// round trip) and the full round trip 2 t(m) for "roundtrip".
func (h *Hockney) Predict(in Instance) (float64, error) {
	m, err := in.Num("bytes")
	if err != nil {
		return 0, err
	}
	switch in.Pattern {
	case "pingpong":
		return h.OneWay(m), nil
	case "roundtrip":
		return 2 * h.OneWay(m), nil
	}
	return 0, unsupported(h.Kind(), in.Pattern, hockneyPatterns)
}

// oneWayPoints reads ping-pong (one-way) and round-trip (halved) records
// into points with x[0] = bytes, restricted to opt's size window. ys are
// one-way times.
func oneWayPoints(recs []results.Record, kind string, opt Options) ([]point, []float64, error) {
	sel, err := selectRecords(recs, kind, "pingpong", "roundtrip")
	if err != nil {
		return nil, nil, err
	}
	pts, err := mergePoints(sel, "bytes")
	if err != nil {
		return nil, nil, err
	}
	all := pts
	pts = filterBytes(pts, 0, opt)
	if len(pts) == 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range all {
			lo, hi = math.Min(lo, p.x[0]), math.Max(hi, p.x[0])
		}
		return nil, nil, fmt.Errorf("%w: %s: no message size is %s; the records' sizes are %s to %s bytes", ErrNoRecords, kind, opt.SizeRange(), results.FormatBytes(lo), results.FormatBytes(hi))
	}
	ys := make([]float64, len(pts))
	for i, p := range pts {
		ys[i] = p.y
		if p.inst.Pattern == "roundtrip" {
			ys[i] = p.y / 2
		}
	}
	return pts, ys, nil
}

// FitHockney fits t_s and t_w to ping-pong and/or round-trip records by
// weighted QR least squares on per-size medians.
func FitHockney(recs []results.Record, opt Options) (*Hockney, error) {
	pts, ys, err := oneWayPoints(recs, "hockney", opt)
	if err != nil {
		return nil, err
	}
	if lv := levels(pts, 0); len(lv) < 3 {
		return nil, fmt.Errorf("%w: hockney needs at least 3 distinct message sizes to fit t_s, t_w with an uncertainty; the records have bytes = %s",
			ErrIllConditioned, formatLevels(lv))
	}
	h, err := fitHockneyPoints(pts, ys, opt)
	if err != nil {
		return nil, fmt.Errorf("hockney: %w", err)
	}
	return h, nil
}

// fitHockneyPoints fits one Hockney line to points (x[0] = bytes).
func fitHockneyPoints(pts []point, ys []float64, opt Options) (*Hockney, error) {
	rows := make([][]float64, len(pts))
	labels := make([]string, len(pts))
	for i, p := range pts {
		rows[i] = []float64{1, p.x[0]}
		labels[i] = p.label()
	}
	w, note := weights(pts, ys, opt)
	tr, err := fitLinearTrimmed(rows, ys, w, []string{"t_s", "t_w"}, labels, opt)
	if err != nil {
		return nil, err
	}
	h := &Hockney{
		Ts:  tr.fit.param(0, "s"),
		Tw:  tr.fit.param(1, "s/B"),
		Fit: tr.fit.quality(effectiveWeighting(opt, note), tr.trimmed),
	}
	h.MinBytes, h.MaxBytes = pts[tr.kept[0]].x[0], pts[tr.kept[0]].x[0]
	for _, i := range tr.kept {
		h.MinBytes = min(h.MinBytes, pts[i].x[0])
		h.MaxBytes = max(h.MaxBytes, pts[i].x[0])
	}
	if note != "" {
		h.Fit.Notes = append(h.Fit.Notes, note)
	}
	if h.Tw.Value <= 0 {
		h.Fit.Notes = append(h.Fit.Notes, fmt.Sprintf("t_w = %.3g s/B is not positive: the size range does not resolve a bandwidth", h.Tw.Value))
	}
	return h, nil
}

// TCPWireSecPerByte is the t_w a shaped Ethernet link of rateBitsPerSec
// imposes on TCP payload: each frame of mtu+14 bytes on the wire (Ethernet
// header) carries mtu-52 payload bytes (IPv4 20, TCP 20, timestamp option
// 12), so t_w = 8/R (mtu+14)/(mtu-52). For mtu 1500 that is 8/R x
// 1514/1448, which the shaped test cluster gives back
// (docs/findings/model-truth.md). (tbf
// counts the Ethernet header but not the preamble and inter-frame gap.)
func TCPWireSecPerByte(rateBitsPerSec float64, mtu int) float64 {
	return 8 / rateBitsPerSec * float64(mtu+14) / float64(mtu-52)
}
