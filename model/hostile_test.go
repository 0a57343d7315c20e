package model

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/commcost/commcost/results"
)

// TestUnmarshalRefusesWhatWouldMislead: a model file whose top-level params
// (what a user reads and edits) disagree with its body (what predicts) is
// refused rather than predicted from the body in silence, and so is a
// parameter no machine has.
func TestUnmarshalRefusesWhatWouldMislead(t *testing.T) {
	good, err := Marshal(&Hockney{Ts: Param{Name: "t_s", Unit: "s", Value: 1.5e-6}, Tw: Param{Name: "t_w", Unit: "s/B", Value: 4e-11}, MinBytes: 8, MaxBytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to string // a replacement of the first match in good
		want           string // "" accepted
	}{
		{"as written", "", "", ""},
		{"params left out", `"params": [`, `"unused": [`, ""},
		{"edited params, body as fitted", `"value": 0.0000015`, `"value": 0.0000025`, `"params" gives t_s = 2.5e-06 but the "fit" body, which is what predicts, has 1.5e-06`},
		{"param the model lacks", `"name": "t_s"`, `"name": "latency"`, `"params" lists latency, which the model does not have (its parameters: t_s, t_w)`},
		{"absurd time in both", `0.0000015`, `1e300`, "parameter t_s = 1e+300 s is beyond 1e+09"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := string(good)
			if tc.from != "" {
				if !strings.Contains(data, tc.from) {
					t.Fatalf("%q not in\n%s", tc.from, data)
				}
				data = strings.Replace(data, tc.from, tc.to, 1)
				if tc.name == "absurd time in both" {
					data = strings.ReplaceAll(string(good), tc.from, tc.to)
				}
			}
			_, _, err := Unmarshal([]byte(data))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadFileRefusesNonRegular: a model file that is a FIFO, a device or
// a directory is refused at once (reading a FIFO without a writer blocks).
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	good := filepath.Join(dir, "hockney.json")
	data, _ := Marshal(&Hockney{Ts: Param{Name: "t_s", Unit: "s", Value: 1e-6}, Tw: Param{Name: "t_w", Unit: "s/B", Value: 1e-10}}, nil)
	if err := os.WriteFile(good, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"regular", good, ""},
		{"fifo", fifo, "named pipe"},
		{"device", "/dev/zero", "character device"},
		{"directory", dir, "directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, _, err := ReadFile(tc.path); done <- err }()
			select {
			case err := <-done:
				if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("error %v, want %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadFile blocked on %s", tc.path)
			}
		})
	}
}

// TestSizeRangeMessage: the size window is said in the units the flags
// take, a missing bound as none (--min-bytes 1G alone read "[1.07e+09,
// 0]"), next to the sizes the records have.
func TestSizeRangeMessage(t *testing.T) {
	tests := []struct {
		opt  Options
		want string
	}{
		{Options{MinBytes: 1 << 30}, "at least 1G bytes"},
		{Options{MaxBytes: 64 << 10}, "at most 64K bytes"},
		{Options{MinBytes: 64 << 10, MaxBytes: 1 << 20}, "within [64K, 1M] bytes"},
		{Options{MinBytes: 1000}, "at least 1000 bytes"},
		{Options{}, "of any size"},
	}
	for _, tc := range tests {
		if got := tc.opt.SizeRange(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opt, got, tc.want)
		}
	}
	recs := []results.Record{pingpongRecord(8, 2e-6), pingpongRecord(65536, 8e-6), pingpongRecord(1024, 3e-6)}
	_, err := Fit("hockney", recs, Options{MinBytes: 1 << 30})
	if err == nil || !strings.Contains(err.Error(), "hockney: no message size is at least 1G bytes; the records' sizes are 8 to 64K bytes") {
		t.Errorf("fit beyond the records' sizes: %v", err)
	}
}

func pingpongRecord(bytes int, sec float64) results.Record {
	return results.Record{Schema: 1, Bench: "pingpong", Params: results.Params{"bytes": bytes}, Ranks: 2, Unit: "s",
		Summary: results.Summary{N: 1, Min: sec, Median: sec, Max: sec, Mean: sec, CI95: [2]float64{sec, sec}}}
}
