package trace

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

// RankSummary is one rank's time: WallSec from the origin (after MPI_Init)
// to MPI_Finalize's entry, MPISec in the program's MPI calls, TraceSec in
// the library's own block writes, ComputeSec the rest.
type RankSummary struct {
	Rank                                  int
	WallSec, MPISec, ComputeSec, TraceSec float64
	Calls                                 int64
}

// CallStat is one MPI call's totals over the ranks: calls, bytes sent and
// received (count x type size as the call gave them; a receive sends
// nothing, its record's bytes-sent field holds its posted buffer), seconds
// in it.
type CallStat struct {
	Op            Op
	Calls         int64
	BytesSent     int64
	BytesReceived int64
	Sec           float64
	// Ranks is how many ranks made the call.
	Ranks int
}

// SizeBin counts the point-to-point messages sent of FromBytes to
// ToBytes-1 bytes (FromBytes 0 holds the empty ones).
type SizeBin struct {
	FromBytes, ToBytes int64
	Messages           int64
	Bytes              int64
}

// Summary is what `commcost trace summary` prints.
type Summary struct {
	Dir   string
	Ranks []RankSummary
	Calls []CallStat
	Sizes []SizeBin
	// Matrix[i][j] is the bytes of point-to-point messages rank i sent to
	// rank j (collectives are not in it: their messages depend on the
	// MPI's algorithm).
	Matrix [][]int64
}

// Summarize computes the summary of a trace.
func Summarize(t *Trace) *Summary {
	n := len(t.Ranks)
	s := &Summary{Dir: t.Dir, Matrix: make([][]int64, n)}
	calls := map[Op]*CallStat{}
	callers := map[Op]map[int]bool{}
	bins := map[int]*SizeBin{}
	for i, rk := range t.Ranks {
		s.Matrix[i] = make([]int64, n)
		rs := RankSummary{Rank: rk.Header.Rank}
		persistent := map[uint64]Event{} // Send_init by handle
		send := func(e Event) {
			if e.Peer < 0 || int(e.Peer) >= n {
				return
			}
			s.Matrix[i][e.Peer] += e.Bytes
			b := 0
			if e.Bytes > 0 {
				b = bits.Len64(uint64(e.Bytes))
			}
			sb := bins[b]
			if sb == nil {
				sb = &SizeBin{}
				if b > 0 {
					sb.FromBytes, sb.ToBytes = 1<<(b-1), 1<<b
				} else {
					sb.ToBytes = 1
				}
				bins[b] = sb
			}
			sb.Messages++
			sb.Bytes += e.Bytes
		}
		for _, e := range rk.Events {
			switch {
			case e.Op == OpFlush:
				rs.TraceSec += float64(e.T1-e.T0) * 1e-9
				continue
			case e.Op == OpFinalize:
				rs.WallSec = float64(e.T0) * 1e-9
				continue
			case e.Op == OpPollRun:
				// counted as the calls it stands for
			case !e.Op.Call():
				continue
			}
			d := float64(e.T1-e.T0) * 1e-9
			rs.MPISec += d
			c := calls[e.Op]
			if c == nil {
				c = &CallStat{Op: e.Op}
				calls[e.Op] = c
				callers[e.Op] = map[int]bool{}
			}
			k := int64(1)
			if e.Op == OpPollRun {
				k = e.Bytes
			}
			c.Calls += k
			rs.Calls += k
			c.Sec += d
			callers[e.Op][i] = true
			if e.Op != OpPollRun {
				if !e.Op.PostsReceive() {
					c.BytesSent += e.Bytes
				}
				c.BytesReceived += max(e.Bytes2, 0)
			}
			switch {
			case e.Op == OpSendInit || e.Op == OpSsendInit:
				persistent[e.Req] = e
			case e.Op == OpStart:
				if p, ok := persistent[e.Req]; ok {
					send(p)
				}
			case e.Op.Sends():
				send(e)
			}
		}
		rs.ComputeSec = math.Max(rs.WallSec-rs.MPISec-rs.TraceSec, 0)
		s.Ranks = append(s.Ranks, rs)
	}
	for _, c := range calls {
		c.Ranks = len(callers[c.Op])
		s.Calls = append(s.Calls, *c)
	}
	sort.Slice(s.Calls, func(i, j int) bool {
		if s.Calls[i].Sec != s.Calls[j].Sec {
			return s.Calls[i].Sec > s.Calls[j].Sec
		}
		return s.Calls[i].Op < s.Calls[j].Op
	})
	for _, b := range bins {
		s.Sizes = append(s.Sizes, *b)
	}
	sort.Slice(s.Sizes, func(i, j int) bool { return s.Sizes[i].FromBytes < s.Sizes[j].FromBytes })
	return s
}

// Write prints the summary as tables: ranks, calls, sizes, the matrix and
// its heatmap in shades.
func (s *Summary) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "trace %s: %d ranks\n\n", results.Printable(s.Dir), len(s.Ranks))
	fmt.Fprintln(tw, "rank\twall s\tMPI s\tcompute s\tMPI %\ttrace writes s\tcalls\t")
	for _, r := range s.Ranks {
		pct := 0.0
		if r.WallSec > 0 {
			pct = 100 * r.MPISec / r.WallSec
		}
		fmt.Fprintf(tw, "%d\t%.6f\t%.6f\t%.6f\t%.1f\t%.6f\t%d\t\n", r.Rank, r.WallSec, r.MPISec, r.ComputeSec, pct, r.TraceSec, r.Calls)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "call\tcalls\tranks\tbytes sent\tbytes received\ts (all ranks)\tus per call\t")
	for _, c := range s.Calls {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.6f\t%.3f\t\n", c.Op, c.Calls, c.Ranks, c.BytesSent, c.BytesReceived, c.Sec, c.Sec/float64(c.Calls)*1e6)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "point-to-point message size B\tmessages\tbytes\t")
	for _, b := range s.Sizes {
		label := "0"
		if b.FromBytes > 0 {
			label = fmt.Sprintf("%d-%d", b.FromBytes, b.ToBytes-1)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", label, b.Messages, b.Bytes)
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "bytes sent (row) to (column)\t")
	for j := range s.Matrix {
		fmt.Fprintf(tw, "%d\t", j)
	}
	fmt.Fprintln(tw)
	for i, row := range s.Matrix {
		fmt.Fprintf(tw, "%d\t", i)
		for _, v := range row {
			fmt.Fprintf(tw, "%d\t", v)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "\nheatmap (darker: more bytes; scale linear to the largest entry)\n"+s.Shades())
	return err
}

// shades from none to the most bytes.
var shades = []rune(" ░▒▓█")

// Shades draws the matrix with one character per entry pair of columns.
func (s *Summary) Shades() string {
	var top int64
	for _, row := range s.Matrix {
		for _, v := range row {
			top = max(top, v)
		}
	}
	var b strings.Builder
	for i, row := range s.Matrix {
		fmt.Fprintf(&b, "%4d |", i)
		for _, v := range row {
			k := 0
			if top > 0 && v > 0 {
				k = 1 + int(float64(v)/float64(top)*float64(len(shades)-2)+0.5)
				k = min(k, len(shades)-1)
			}
			b.WriteRune(shades[k])
			b.WriteRune(shades[k])
		}
		b.WriteString("|\n")
	}
	return b.String()
}

// SummaryConfig is `commcost trace summary DIR`.
type SummaryConfig struct {
	Heatmap string `flag:"heatmap" usage:"also draw the communication matrix into this image file (.png, .svg or .pdf)" value:"file"`
	Dir     string
}

// Validate checks the heatmap's format.
func (c SummaryConfig) Validate() error {
	if c.Heatmap != "" {
		if err := report.CheckPlotPath(c.Heatmap); err != nil {
			return &opts.FieldError{Field: "Heatmap", Value: c.Heatmap, Reason: err.Error()}
		}
	}
	return nil
}

// Run reads the trace and prints its summary (and draws the heatmap).
func (c SummaryConfig) Run(w io.Writer) error {
	t, err := ReadDir(c.Dir)
	if err != nil {
		return opts.Badf("DIR %s: %v", c.Dir, err)
	}
	s := Summarize(t)
	if c.Heatmap != "" {
		if err := s.WriteHeatmap(c.Heatmap); err != nil {
			return err
		}
	}
	return s.Write(w)
}
