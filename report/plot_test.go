package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

func TestPlot(t *testing.T) {
	dir := t.TempDir()
	recs := runRecords()
	pp, kk := byBench(recs, "pingpong"), byBench(recs, "kkaccess")
	pw, err := model.FitPiecewise(pp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := model.FitTrilinear(kk, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		m     model.Model
		recs  []results.Record
		magic []byte
	}{
		{"piecewise.png", pw, pp, []byte("\x89PNG")},
		{"trilinear.svg", tl, kk, []byte("<?xml")},
		{"trilinear.pdf", tl, kk, []byte("%PDF")},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if err := WritePlot(tc.m, tc.recs, path, tc.m.Kind()+" fit"); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, tc.magic) || len(data) < 1000 {
				t.Errorf("%d bytes starting %q", len(data), data[:min(8, len(data))])
			}
		})
	}
	if _, err := Plot(pw, kk, "png", ""); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("plot of unrelated records: %v, want ErrNothingToPlot", err)
	}
	if err := WritePlot(pw, pp, filepath.Join(dir, "x.txt"), ""); err == nil {
		t.Error("plot to .txt accepted")
	}
	// The same model and records draw the same image: report.md's plots
	// regenerate identically.
	a, err := Plot(pw, pp, "png", "t")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Plot(pw, pp, "png", "t")
	if !bytes.Equal(a, b) {
		t.Error("two renderings of one plot differ")
	}
}
