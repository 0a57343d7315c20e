package emulate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// TestNetFlagsDefaults: the flags' defaults are the package's.
func TestNetFlagsDefaults(t *testing.T) {
	var n NetFlags
	opts.FillDefaults(&n)
	if n.Net.Name() != "BF(2)" || n.Placement != PlaceDirect || int(n.ModuleMem) != DefaultModuleBytes || n.Window != DefaultWindow ||
		n.LinkSlots != DefaultLinkSlots || n.Stall != DefaultStallTimeout.Seconds() || n.IdleYield != 0 || n.IdleSleep != 0 {
		t.Errorf("defaults %+v", n)
	}
	if err := n.Check(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
	cfg := n.Config(7)
	if cfg.Topology != n.Net.Topology || cfg.Seed != 7 || cfg.StallTimeout != DefaultStallTimeout || cfg.Idle != (IdlePolicy{}) {
		t.Errorf("config %+v", cfg)
	}
}

// TestJobsValidate: each experiment refuses bad settings naming the field
// (library terms, no flags).
func TestJobsValidate(t *testing.T) {
	kk := func(f func(j *KKJob)) *KKJob {
		j := new(KKJob)
		opts.FillDefaults(j)
		f(j)
		return j
	}
	ka := func(f func(j *KAJob)) *KAJob {
		j := new(KAJob)
		opts.FillDefaults(j)
		f(j)
		return j
	}
	tests := []struct {
		name  string
		cfg   opts.Validator
		field string // "" for accepted
		want  string
	}{
		{"kk defaults", kk(func(*KKJob) {}), "", ""},
		{"kk packet length 0", kk(func(j *KKJob) { j.L = opts.Ints{0, 64} }), "L", "packet length 0"},
		{"kk packet above a module", kk(func(j *KKJob) { j.L, j.ModuleMem = opts.Ints{2 << 20}, 1<<20 }), "L", "does not fit in a module's memory of 1048576 bytes ({ModuleMem})"},
		{"kk r out of range", kk(func(j *KKJob) { j.R = opts.Floats{0, 1} }), "R", "r = 0"},
		{"kk window", kk(func(j *KKJob) { j.Window = 0 }), "Window", "must be an integer in 1..1048576 (requests an application rank keeps in flight)"},
		{"kk_window_huge", kk(func(j *KKJob) { j.Window = 9223372036854775807 }), "Window", "must be an integer in 1..1048576"},
		{"kk window at its bound", kk(func(j *KKJob) { j.Window = MaxWindow }), "", ""},
		{"kk idle yield given as 0", kk(func(j *KKJob) { j.Given = opts.Given{"IdleYield": true} }), "IdleYield", "positive duration"},
		{"kk idle sleep negative", kk(func(j *KKJob) { j.IdleSleep = -time.Millisecond }), "IdleSleep", "positive duration"},
		{"kk no network", kk(func(j *KKJob) { j.Net = Net{} }), "Net", NetworkForms()},
		{"kk r 0.25 and 0.5 listed on mesh(1x2)", kk(func(j *KKJob) {
			j.Net.UnmarshalText([]byte("mesh(1x2)"))
			j.R, j.Given = opts.Floats{0.25, 0.5}, opts.Given{"R": true}
		}), "R", "0.25 and 0.5 both realise r = 1/2 = 0.5 on 2 ranks (r p rounds to 1 accessing rank)"},
		{"kaccess defaults", ka(func(*KAJob) {}), "", ""},
		{"kaccess h below 1/p", ka(func(j *KAJob) { j.H = []patterns.Hot{{V: 0.1}} }), "H", "[1/p, 1] = [0.25, 1] for BF(2)"},
		{"kaccess a zero", ka(func(j *KAJob) { j.A = opts.Ints{0} }), "A", "a = 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var fe *opts.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate() = %v", err)
			case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Reason, tt.want)):
				t.Fatalf("Validate() = %v, want field %s: %q", err, tt.field, tt.want)
			}
		})
	}
	// A default list keeps the first of the portions that realise one r.
	mesh := kk(func(j *KKJob) { j.Net.UnmarshalText([]byte("mesh(1x2)")); j.R = opts.Floats{0.25, 0.5, 1} })
	if err := mesh.Validate(); err != nil || len(mesh.R) != 2 || mesh.R[0] != 0.25 || mesh.R[1] != 1 {
		t.Errorf("default r 0.25,0.5,1 on mesh(1x2): %v, r %v; want 0.25,1", err, mesh.R)
	}
	j := kk(func(j *KKJob) { j.K, j.L, j.R = opts.Ints{1, 2}, opts.Ints{8}, opts.Floats{0.5, 1} })
	j.Op = []patterns.AccessOp{patterns.AccessRead, patterns.AccessWrite}
	if j.Points() != 8 {
		t.Errorf("kk points %d, want 2 k x 1 l x 2 r x 2 op", j.Points())
	}
	if a := ka(func(*KAJob) {}); a.Points() != 3*3+3*2 {
		t.Errorf("kaccess default points %d, want 3 h x 3 a, and es for a > 1", a.Points())
	}
}

// TestInfoJob: a world size is checked against the network; the tables
// print as text or markdown, and nothing else.
func TestInfoJob(t *testing.T) {
	j := new(InfoJob)
	opts.FillDefaults(j)
	var out strings.Builder
	if err := j.Validate(); err != nil || j.Write(&out) != nil || !strings.Contains(out.String(), "network") {
		t.Fatalf("defaults: %v\n%s", err, out.String())
	}
	j.Format, j.Routes = results.FormatMarkdown, true
	out.Reset()
	if err := j.Validate(); err != nil || j.Write(&out) != nil || !strings.Contains(out.String(), "| network                | BF(2)") || !strings.Contains(out.String(), "| node |") {
		t.Fatalf("markdown: %v\n%s", err, out.String())
	}
	var fe *opts.FieldError
	if j.Format = results.FormatCSV; !errors.As(j.Validate(), &fe) || fe.Field != "Format" {
		t.Errorf("csv: %v, want a field error of Format", j.Validate())
	}
	j.Format, j.NP = results.FormatTable, 8
	if err := j.Validate(); !errors.As(err, &fe) || fe.Field != "NP" || !strings.Contains(fe.Reason, "{Net} BF(2) needs 4 application + 12 service ranks = 16") {
		t.Errorf("NP 8: %v", err)
	}
}
