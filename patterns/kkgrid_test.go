package patterns

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/commcost/commcost/opts"
)

// TestKKGrid: the grid's checks name the field and the parameter, its
// cells come k outermost, and bound with a prefix it is the calibration
// flags.
func TestKKGrid(t *testing.T) {
	for _, tt := range []struct {
		name        string
		g           KKGrid
		field, want string
	}{
		{"ok", KKGrid{K: []int{1, 2}, L: []int{0, 64}, R: []float64{0.5, 1}}, "", ""},
		{"k zero", KKGrid{K: []int{0, 2}, L: []int{64}, R: []float64{1}}, "K", "k = 0: must be positive"},
		{"k above the packet limit", KKGrid{K: []int{1, MaxPackets + 1}, L: []int{64}, R: []float64{1}}, "K", "65536 packets is above the most a k-k-access sends (65535)"},
		{"l negative", KKGrid{K: []int{1}, L: []int{-1}, R: []float64{1}}, "L", "l = -1: must not be negative"},
		{"r above 1", KKGrid{K: []int{1}, L: []int{64}, R: []float64{0.5, 1.5}}, "R", "r = 1.5: must be in (0, 1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.g.Validate()
			var fe *opts.FieldError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v", err)
			case tt.want != "" && (!errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Reason, tt.want)):
				t.Fatalf("Validate() = %v, want field %s: %q", err, tt.field, tt.want)
			}
		})
	}
	g := KKGrid{K: []int{1, 4}, L: []int{8, 64}, R: []float64{0.5, 1}}
	var cells []string
	_ = g.Each(func(k, l int, r float64) error {
		cells = append(cells, fmt.Sprintf("%d/%d/%v", k, l, r))
		return nil
	})
	if got := strings.Join(cells, " "); g.Cells() != 8 || got != "1/8/0.5 1/8/1 1/64/0.5 1/64/1 4/8/0.5 4/8/1 4/64/0.5 4/64/1" {
		t.Errorf("cells %d: %s", g.Cells(), got)
	}

	var cfg struct {
		Cal KKGrid `flags:"cal-"`
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	b := opts.Bind(fs, &cfg)
	if err := fs.Parse([]string{"--cal-l", "1:4"}); err != nil {
		t.Fatal(err)
	}
	if b.Flag("Cal.R") != "cal-r" || len(cfg.Cal.K) != 4 || len(cfg.Cal.L) != 3 || len(cfg.Cal.R) != 2 {
		t.Errorf("bound with prefix: flag of Cal.R %q, grid %+v", b.Flag("Cal.R"), cfg.Cal)
	}
}
