package optsplit

import (
	"errors"
	"fmt"

	"github.com/commcost/commcost/emulate"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The model of the split from records measured beforehand (a file of
// kkaccess records instead of a calibration sweep now): Config.Model on
// rank 0, for Optimize and Versions alike.

// ErrNoNetworkRecords is FitNetwork's error when the records hold no
// k-k-access record of the network: the records are of another network or
// of another experiment, which is bad input rather than a failed fit.
var ErrNoNetworkRecords = errors.New("no kkaccess records of the network")

// FitOptimum fits the trilinear model of op to the k-k-access records
// among recs (other benches are skipped) and checks that it splits
// dataBytes: model.BestSplit with at most MaxPackets packets, the split
// Optimize plans around. An error that wraps model.ErrNoRecords or
// model.ErrBadRecord means the records cannot be used at all (bad input);
// any other error is a finding about them (a design that cannot determine
// the model, a model without a usable split), as for 'commcost fit'.
func FitOptimum(recs []results.Record, op patterns.AccessOp, dataBytes int) (*model.Trilinear, error) {
	tr, err := model.FitTrilinear(recs, model.Options{Op: op.String()})
	if err != nil {
		return nil, fmt.Errorf("trilinear fit: %w", err)
	}
	if _, err := model.BestSplit(tr, float64(dataBytes), MaxPackets); err != nil {
		return nil, err
	}
	return tr, nil
}

// FitNetwork fits the trilinear model of reads (paper 000, section 4: the
// model version 3 of Versions takes k0, l0 from) to the k-k-access records
// among recs that were measured through the emulated network named network
// (emulate.Topology.Name, the records' "network" parameter); records of
// other networks and benches are skipped. With none left it returns
// ErrNoNetworkRecords; a failed fit returns model.FitTrilinear's error.
func FitNetwork(recs []results.Record, network string) (*model.Trilinear, error) {
	var mine []results.Record
	for _, r := range recs {
		if r.Bench == emulate.BenchKKAccess && r.Params["network"] == network {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return nil, fmt.Errorf("%w %q", ErrNoNetworkRecords, network)
	}
	return model.FitTrilinear(mine, model.Options{Op: "read"})
}
