package model

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

func TestPlot(t *testing.T) {
	dir := t.TempDir()
	ppRecs := protocolRecords([]float64{4096}, []float64{1e-6, 10e-6}, []float64{1e-9, 0.5e-9}, 0.01, 1)
	pw, err := FitPiecewise(ppRecs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kkRecs := kkRecords(table1[3].c, 0.02, 1, allR)
	tl, err := FitTrilinear(kkRecs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		m     Model
		recs  []results.Record
		magic []byte
	}{
		{"piecewise.png", pw, ppRecs, []byte("\x89PNG")},
		{"trilinear.svg", tl, kkRecs, []byte("<?xml")},
	} {
		path := filepath.Join(dir, tc.file)
		if err := Plot(tc.m, tc.recs, path, tc.m.Kind()+" fit"); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, tc.magic) || len(data) < 1000 {
			t.Errorf("%s: %d bytes starting %q", tc.file, len(data), data[:min(8, len(data))])
		}
	}
	if err := Plot(pw, kkRecs, filepath.Join(dir, "x.png"), ""); err == nil || !strings.Contains(err.Error(), "none of the") {
		t.Errorf("plot of unrelated records: %v", err)
	}
	if err := Plot(pw, ppRecs, filepath.Join(dir, "x.txt"), ""); err == nil {
		t.Error("plot to .txt accepted")
	}
}
