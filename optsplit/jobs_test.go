package optsplit

import (
	"errors"
	"strings"
	"testing"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/opts"
)

// TestJobsValidate: both experiments refuse bad settings in field terms:
// the calibration grid under Cal, one model source, D required.
func TestJobsValidate(t *testing.T) {
	opt := func(f func(j *OptimizeJob)) *OptimizeJob {
		j := new(OptimizeJob)
		opts.FillDefaults(j)
		j.D = 40000
		f(j)
		return j
	}
	split := func(f func(j *SplitJob)) *SplitJob {
		j := new(SplitJob)
		opts.FillDefaults(j)
		f(j)
		return j
	}
	tests := []struct {
		name  string
		cfg   opts.Validator
		field string // "" for accepted; "-" for bad input naming no single field
		want  string
	}{
		{"optimize defaults", opt(func(*OptimizeJob) {}), "", ""},
		{"optimize without D", opt(func(j *OptimizeJob) { j.D = 0 }), "-", "D is required"},
		{"optimize D given as 0", opt(func(j *OptimizeJob) { j.D, j.Given = 0, opts.Given{"D": true} }), "D", "want a positive data volume"},
		{"optimize k above the packet limit", opt(func(j *OptimizeJob) { j.K = opts.Ints{1, 100000} }), "K", "100000 packets"},
		{"optimize one level of r", opt(func(j *OptimizeJob) { j.Cal.R = opts.Floats{1} }), "Cal.R", "at least 2 levels"},
		{"optimize calibration r out of range", opt(func(j *OptimizeJob) { j.Cal.R = opts.Floats{0, 1} }), "Cal.R", "r = 0"},
		{"optimize packet length 0 in calibration", opt(func(j *OptimizeJob) { j.Cal.L = opts.Ints{0, 64, 1024} }), "", ""},
		{"optimize fit with calibration", opt(func(j *OptimizeJob) { j.Fit, j.Given = "kk.jsonl", opts.Given{"Cal.K": true} }), "-", "Cal.K: the calibration sweep is not measured with Fit kk.jsonl"},
		{"optimize plot extension", opt(func(j *OptimizeJob) { j.Plot = "fig.txt" }), "Plot", ".png"},
		{"split defaults", split(func(*SplitJob) {}), "", ""},
		{"split packet length 0 in calibration", split(func(j *SplitJob) { j.Cal.L = opts.Ints{0, 64, 1024} }), "Cal.L", "packet length 0"},
		{"split calibration above a module", split(func(j *SplitJob) { j.Ints, j.ModuleMem = opts.Ints{16}, 8<<10 }), "Cal.L", "does not fit"},
		{"split variable above a module", split(func(j *SplitJob) { j.Versions, j.ModuleMem = []emulate.SplitVersion{1}, 32<<10 }), "Ints", "does not fit"},
		{"split fit without version 3", split(func(j *SplitJob) { j.Versions, j.Fit = []emulate.SplitVersion{1, 2}, "kk.jsonl" }), "-", "Versions 1,2 leaves it out"},
		{"split calibration without version 3", split(func(j *SplitJob) { j.Versions, j.Given = []emulate.SplitVersion{2}, opts.Given{"Cal.R": true} }), "-", "Cal.R: the calibration sweep is not measured with Versions 2"},
		{"split packet 0", split(func(j *SplitJob) { j.Packet = 0 }), "Packet", "size >= 1 byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var fe *opts.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate() = %v", err)
			case tt.field == "":
			case tt.field == "-" && (!opts.IsBadInput(err) || errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want bad input %q", err, tt.want)
			case tt.field != "-" && (!errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Reason, tt.want)):
				t.Fatalf("Validate() = %v, want field %s: %q", err, tt.field, tt.want)
			}
		})
	}
	// The grid's own defaults (FlagDefaults sets the command line's cal-l).
	j := split(func(*SplitJob) {})
	if j.Points() != 4*3*2+7*3 || !j.Mixed() || j.calibration().Cells() != 24 {
		t.Errorf("split defaults: %d points, mixed %v", j.Points(), j.Mixed())
	}
	j = split(func(j *SplitJob) { j.Fit = "kk.jsonl" })
	if j.Points() != 7*3 || j.Mixed() {
		t.Errorf("split with a fit: %d points, mixed %v; want no calibration", j.Points(), j.Mixed())
	}
	if o := opt(func(*OptimizeJob) {}); o.Ranks(1) == nil || o.Ranks(2) != nil {
		t.Errorf("optimize on 1 and 2 ranks: %v, %v", o.Ranks(1), o.Ranks(2))
	}
	o := opt(func(j *OptimizeJob) { j.K, j.Distinct = opts.Ints{4, 8}, true })
	if err := o.Ranks(4); err == nil || !strings.Contains(err.Error(), "K 4,8 with Distinct") {
		t.Errorf("distinct k above ranks-1: %v", err)
	}
}
