package trace

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestSummarize: the sample rank's times, calls, sizes and matrix.
func TestSummarize(t *testing.T) {
	var ranks []*Rank
	for r := range 3 {
		rk, err := Decode(bytes.NewReader(sample(t, r)), RankFile(r))
		if err != nil {
			t.Fatal(err)
		}
		ranks = append(ranks, rk)
	}
	s := Summarize(&Trace{Dir: "d", Ranks: ranks})
	r := s.Ranks[1]
	// Send 100-200 ns, Irecv 300-310, Wait 320-900; Finalize at 1000
	if math.Abs(r.WallSec-1000e-9) > 1e-15 || math.Abs(r.MPISec-(100+10+580)*1e-9) > 1e-15 || math.Abs(r.ComputeSec-310e-9) > 1e-15 {
		t.Errorf("rank 1: %+v", r)
	}
	if s.Matrix[1][2] != 800 || s.Matrix[0][2] != 800 || s.Matrix[2][2] != 800 || s.Matrix[1][0] != 0 {
		t.Errorf("matrix %v", s.Matrix)
	}
	if len(s.Sizes) != 1 || s.Sizes[0].FromBytes != 512 || s.Sizes[0].ToBytes != 1024 || s.Sizes[0].Messages != 3 {
		t.Errorf("sizes %+v", s.Sizes)
	}
	for _, c := range s.Calls {
		if c.Op == OpIrecv && (c.BytesSent != 0 || c.BytesReceived != 0) {
			t.Errorf("Irecv sends %d bytes, receives %d: a receive sends nothing, its buffer is not bytes received", c.BytesSent, c.BytesReceived)
		}
	}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Send", "Wait", "512-1023", "heatmap", "█"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
