package report

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/results"
)

func init() {
	registerTables("twolevel", kindTables{write: twoLevelTables, reads: []TableOption{TableHop}})
}

// twoLevelTables compares the measured aggregate operations with the
// two-level prediction and paper 003's cost table on each topology (t_s,
// t_w from this fit, t_h = Fit.HopSec).
func twoLevelTables(w io.Writer, f *Fit) error {
	t := f.Model.(*model.TwoLevel)
	models := []model.Model{t}
	c := Comparison{PointColumns: []string{"op", "p", "bytes"}, Unit: "s", Models: []string{"two-level"}}
	for _, topo := range model.Topologies {
		tab, err := model.TableFromTwoLevel(t, topo, f.HopSec)
		if err != nil {
			return err
		}
		models = append(models, tab)
		c.Models = append(c.Models, topo)
	}
	var sel []results.Record
	for _, r := range f.Records {
		if s, _ := r.Params["impl"].(string); r.Bench == "aggregate" && s == t.Impl {
			sel = append(sel, r)
		}
	}
	for _, cmp := range model.Compare(t, sel) {
		pred := make([]float64, len(models))
		for j, m := range models {
			v, err := m.Predict(cmp.Instance)
			if err != nil {
				v = math.NaN()
			}
			pred[j] = v
		}
		c.Add([]string{cmp.Instance.Str("op"), strconv.Itoa(cmp.Instance.Ranks), instanceBytes(cmp.Instance)}, cmp.Measured, pred)
	}
	fmt.Fprintf(w, "aggregate operations (impl %s), measured vs predicted, us; t_s, t_w from this fit, t_h = %g s (paper 003 cost table):\n", t.Impl, f.HopSec)
	return c.Write(w)
}
