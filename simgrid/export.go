package simgrid

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/replay"
	"github.com/commcost/commcost/trace"
)

// Export is `commcost export simgrid MODEL.json`: a SimGrid platform of
// Hosts hosts (one rank each) whose links and SMPI factors reproduce the
// model's point-to-point times, written into Out as platform.xml,
// hostfile and smpi.cfg (one --cfg=... per line, for smpirun).
type Export struct {
	Out   string     `flag:"out" default:"simgrid" usage:"the dir to write platform.xml, hostfile and smpi.cfg into" value:"dir"`
	Hosts int        `flag:"hosts" default:"4" usage:"hosts of the platform (one rank each)"`
	Eager opts.Bytes `flag:"eager" default:"64K" value:"bytes" usage:"SMPI's detached-send threshold in bytes (smpi/send-is-detached-thresh; K, M, G = 2^10, 2^20, 2^30): the MPI's eager limit"`
	Trace string     `flag:"trace" usage:"take the eager limit from this trace dir (the MPI's own, as commcost replay does) unless --eager is given" value:"dir"`
	// Defaults writes SimGrid's own SMPI factors and overheads instead of
	// the model's (the platform's links still come from the model).
	Defaults bool `flag:"defaults" usage:"keep SMPI's default factors and overheads: only the links' nominal latency and bandwidth come from the model"`
	Model    string
	// Given holds the flags given on the command line: an --eager given
	// wins over the trace's limit, as in commcost replay.
	Given opts.Given
}

// MaxHosts bounds the platform's hosts: the file lists every host and
// route (a billion hosts ran out of memory writing them), and SMPI runs a
// rank per host.
const MaxHosts = 1 << 16

// Validate checks the host count and threshold.
func (e Export) Validate() error {
	if e.Hosts < 1 || e.Hosts > MaxHosts {
		return &opts.FieldError{Field: "Hosts", Value: fmt.Sprint(e.Hosts), Reason: fmt.Sprintf("want 1 to %d hosts", MaxHosts)}
	}
	if e.Eager < 0 {
		return &opts.FieldError{Field: "Eager", Value: fmt.Sprint(e.Eager), Reason: "want a size >= 0"}
	}
	// A threshold is a message size: SMPI compares it with one call's
	// bytes, and every other size flag stops there too.
	if e.Eager > opts.MaxSize {
		return &opts.FieldError{Field: "Eager", Value: fmt.Sprint(e.Eager), Reason: "want a size of at most " + opts.MaxSizeText()}
	}
	return nil
}

// segment is t(m) = ts + tw m for m >= from.
type segment struct{ from, ts, tw float64 }

// Calibration is what a platform takes from a model: the links' one-way
// latency and bandwidth, the size-dependent factors on them, the CPU
// overheads.
type Calibration struct {
	LinkLatSec  float64 // one link; a message crosses two (its hosts' private links)
	LinkBW      float64 // bytes per second
	LatFactor   []Factor
	BWFactor    []Factor
	OsSec, OsB  float64 // send overhead and per byte
	OrSec, OrB  float64
	Description string
}

// Factor applies from FromBytes on.
type Factor struct{ FromBytes, Value float64 }

// Calibrate derives the platform of a model: Hockney and piecewise
// segments become the latency and bandwidth factors of SMPI's network
// model (smpi/lat-factor, smpi/bw-factor: "size:factor;..."), relative to
// links of the first segment's latency and the last segment's bandwidth;
// LogGP gives L and 1/G to the links and o_s, o_r (with O_s, O_r) to
// smpi/os, smpi/or; the hyperbolic model its asymptote a + b m.
func Calibrate(m model.Model) (*Calibration, error) {
	var segs []segment
	c := &Calibration{}
	switch t := m.(type) {
	case *model.Hockney:
		segs = []segment{{0, t.Ts.Value, t.Tw.Value}}
	case *model.Piecewise:
		for _, s := range t.Segments {
			segs = append(segs, segment{s.FromBytes, s.Ts.Value, s.Tw.Value})
		}
		sort.Slice(segs, func(i, j int) bool { return segs[i].from < segs[j].from })
		segs[0].from = 0
	case *model.Hyperbolic:
		b := t.EndToEndBlock()
		segs = []segment{{0, b.A, b.B}}
	case *model.LogGP:
		segs = []segment{{0, t.L.Value, t.BG.Value}}
		c.OsSec, c.OsB, c.OrSec, c.OrB = t.Os.Value, t.OsB.Value, t.Or.Value, t.OrB.Value
	default:
		return nil, opts.Badf("the %s model cannot be exported to SimGrid (hockney, piecewise, loggp or hyperbolic)", m.Kind())
	}
	for _, s := range segs {
		if s.ts < 0 || s.tw < 0 {
			return nil, opts.Badf("the %s model has a segment from %g B with t_s = %g s and t_w = %g s/B: %s cannot be exported (SimGrid needs both positive)", m.Kind(), s.from, s.ts, s.tw, model.NegativeTimeFit)
		}
		if !(s.ts > 0) || !(s.tw > 0) || math.IsInf(s.ts, 0) || math.IsInf(s.tw, 0) {
			return nil, opts.Badf("the %s model has a segment from %g B with t_s = %g s and t_w = %g s/B: SimGrid needs both positive", m.Kind(), s.from, s.ts, s.tw)
		}
	}
	last := segs[len(segs)-1]
	c.LinkLatSec = segs[0].ts / 2
	c.LinkBW = 1 / last.tw
	for _, s := range segs {
		c.LatFactor = append(c.LatFactor, Factor{s.from, s.ts / segs[0].ts})
		c.BWFactor = append(c.BWFactor, Factor{s.from, (1 / s.tw) / c.LinkBW})
	}
	c.Description = fmt.Sprintf("%s: %d segment(s); links %.4g s, %.4g B/s", m.Kind(), len(segs), c.LinkLatSec, c.LinkBW)
	return c, nil
}

func factors(fs []Factor) string {
	// SMPI reads the list from the largest size down
	var parts []string
	for i := len(fs) - 1; i >= 0; i-- {
		parts = append(parts, fmt.Sprintf("%.0f:%.6g", fs[i].FromBytes, fs[i].Value))
	}
	return strings.Join(parts, ";")
}

// HostName is host i of the platform.
func HostName(i int) string { return fmt.Sprintf("host-%d", i) }

// Run reads the model and writes the files.
func (e Export) Run() error {
	// model.ReadFile refuses a FIFO or a directory before reading
	m, _, meta, err := model.ReadFileMeta(e.Model)
	if err != nil {
		return opts.Badf("MODEL.json %s: %v", e.Model, err)
	}
	// SMPI's platform prices the simulated MPI program's messages
	if err := replay.NativeModel("MODEL.json", e.Model, meta); err != nil {
		return err
	}
	c, err := Calibrate(m)
	if err != nil {
		return opts.Badf("MODEL.json %s: %v", e.Model, err)
	}
	if e.Trace != "" {
		t, err := trace.ReadDir(e.Trace)
		if err != nil {
			return opts.Badf("--trace %s: %v", e.Trace, err)
		}
		if limit, _ := replay.TraceEager(t); limit > 0 && !e.Given.Has("Eager") {
			e.Eager = opts.Bytes(limit)
		}
	}
	return e.Write(c)
}

// platformMark is in the comment of every platform.xml Export writes.
const platformMark = "written by commcost export simgrid"

// Write writes platform.xml, hostfile and smpi.cfg for c.
func (e Export) Write(c *Calibration) error {
	if what := opts.NotDir(e.Out); what != "" {
		return opts.Badf("--out %s: %s is %s; --out names a directory (new or existing) for platform.xml, hostfile and smpi.cfg", opts.Echo(e.Out), opts.Echo(e.Out), what)
	}
	if err := checkTargets(filepath.Join(e.Out, "platform.xml"), filepath.Join(e.Out, "hostfile"), filepath.Join(e.Out, "smpi.cfg")); err != nil {
		return opts.Badf("--out %s: %v", e.Out, err)
	}
	if err := os.MkdirAll(e.Out, 0o777); err != nil {
		return opts.Badf("--out %s: %v", e.Out, err)
	}
	platform := fmt.Sprintf(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- `+platformMark+`: %s -->
<platform version="4.1">
  <cluster id="commcost" prefix="host-" suffix="" radical="0-%d" speed="%gf" bw="%.6gBps" lat="%.6gs"
           loopback_bw="%.6gBps" loopback_lat="%.6gs"/>
</platform>
`, c.Description, e.Hosts-1, HostFlops, c.LinkBW, c.LinkLatSec, c.LinkBW, c.LinkLatSec)
	var hosts strings.Builder
	for i := 0; i < e.Hosts; i++ {
		fmt.Fprintln(&hosts, HostName(i))
	}
	cfg := []string{
		fmt.Sprintf("--cfg=smpi/send-is-detached-thresh:%d", e.Eager),
		fmt.Sprintf("--cfg=smpi/async-small-thresh:%d", e.Eager),
		fmt.Sprintf("--cfg=smpi/host-speed:%gf", HostFlops),
	}
	if !e.Defaults {
		cfg = append(cfg,
			"--cfg=smpi/lat-factor:"+factors(c.LatFactor),
			"--cfg=smpi/bw-factor:"+factors(c.BWFactor),
			fmt.Sprintf("--cfg=smpi/os:0:%.6g:%.6g", c.OsSec, c.OsB),
			fmt.Sprintf("--cfg=smpi/or:0:%.6g:%.6g", c.OrSec, c.OrB),
			fmt.Sprintf("--cfg=smpi/ois:0:%.6g:%.6g", c.OsSec, c.OsB),
			"--cfg=network/crosstraffic:0",
		)
	}
	for name, body := range map[string]string{"platform.xml": platform, "hostfile": hosts.String(), "smpi.cfg": strings.Join(cfg, "\n") + "\n"} {
		if err := writeFile(filepath.Join(e.Out, name), func(w *bufio.Writer) error { _, err := w.WriteString(body); return err }); err != nil {
			return err
		}
	}
	return nil
}
