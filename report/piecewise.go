package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

func init() {
	registerTables("piecewise", kindTables{write: piecewiseTables})
}

// piecewiseTables lists the segments of a piecewise Hockney fit.
func piecewiseTables(w io.Writer, f *Fit) error {
	t := f.Model.(*model.Piecewise)
	var rows [][]string
	for i, s := range t.Segments {
		ts, _ := Value(s.Ts.Value, "s")
		tw, _ := Value(s.Tw.Value, "s/B")
		rows = append(rows, []string{strconv.Itoa(i + 1), results.FormatBytes(s.FromBytes), results.FormatBytes(s.ToBytes), ts, tw,
			strconv.Itoa(s.Fit.N), Pct(s.Fit.RSE)})
	}
	fmt.Fprintln(w, "segments (breakpoints chosen by penalised BIC):")
	return Table(w, []string{"segment", "from", "to", "t_s us", "t_w ns/B", "points", "RSE"}, rows)
}
