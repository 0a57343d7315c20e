package trace

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"

	"github.com/commcost/commcost/report"
)

// matrixGrid is the communication matrix as a plotter.GridXYZ: column x is
// the receiver, row y the sender.
type matrixGrid [][]int64

func (m matrixGrid) Dims() (c, r int)   { return len(m), len(m) }
func (m matrixGrid) Z(c, r int) float64 { return float64(m[r][c]) }
func (m matrixGrid) X(c int) float64    { return float64(c) }
func (m matrixGrid) Y(r int) float64    { return float64(r) }

// WriteHeatmap draws the communication matrix (bytes sent, row rank to
// column rank) as an image whose format the path's extension names
// (.png, .svg, .pdf), written whole or not at all.
func (s *Summary) WriteHeatmap(path string) error {
	if _, err := report.PlotFormat(path); err != nil {
		return err
	}
	var top float64
	for _, row := range s.Matrix {
		for _, v := range row {
			top = max(top, float64(v))
		}
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(0)
	pal.SetMax(max(top, 1))
	p := plot.New()
	p.Title.Text = fmt.Sprintf("point-to-point bytes, sender (row) to receiver; largest %.3g B", top)
	p.X.Label.Text = "receiver rank"
	p.Y.Label.Text = "sender rank"
	h := plotter.NewHeatMap(matrixGrid(s.Matrix), pal.Palette(64))
	p.Add(h)
	return report.SavePlot(p, path)
}
