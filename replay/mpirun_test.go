package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/trace/tracetest"
)

// TestTraceAndReplay is the end to end: mpirun -np 4 commcost
// trace --simgrid -- ./calls, then the replay of that trace under a model,
// its records, and SimGrid's trace files beside it.
func TestTraceAndReplay(t *testing.T) {
	tmp := t.TempDir()
	_, bins := tracetest.BuildLibrary(t, tmp, "trace/testdata/calls.c")
	commcost, err := mpirun.BuildCommcost(tmp)
	if err != nil {
		t.Fatal(err)
	}
	// the library beside the binary is where commcost trace looks first
	if filepath.Dir(commcost) != tmp {
		t.Skipf("commcost was built elsewhere (%s)", commcost)
	}
	dir := filepath.Join(tmp, "tr")
	const np = 4
	ctx, cancel := context.WithTimeout(context.Background(), mpirun.HangLimit(90*time.Second, np))
	defer cancel()
	cmd, err := mpirun.Command(ctx, np, commcost, "trace", "--out", dir, "--simgrid", "--", bins[0], "30")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range []string{"rank-0.cct", "rank-3.cct", "rank-0.tit", "rank-3.tit", "simgrid.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	mf := filepath.Join(tmp, "hockney.json")
	data, _ := model.Marshal(&model.Hockney{Ts: model.Param{Name: "t_s", Value: 1e-6}, Tw: model.Param{Name: "t_w", Value: 1e-9}}, nil)
	os.WriteFile(mf, data, 0o644)
	o, err := Config{Dir: dir, Models: Files{mf}, Eager: "auto"}.Run()
	if err != nil {
		t.Fatal(err)
	}
	if o.Ranks != np || len(o.Predictions) != 1 || !o.Predictions[0].Best {
		t.Fatalf("outcome %+v", o)
	}
	p := o.Predictions[0]
	for r, w := range p.Result.WallSec {
		if !(w > 0) || p.Result.MPISec[r] > w {
			t.Errorf("rank %d: predicted wall %g s, MPI %g s", r, w, p.Result.MPISec[r])
		}
	}
	if !strings.Contains(p.EagerFrom, "recorded in the trace") {
		t.Errorf("eager limit from %q, want the MPI's", p.EagerFrom)
	}
	if tit, _ := os.ReadFile(filepath.Join(dir, "rank-1.tit")); !strings.Contains(string(tit), "1 allreduce 128 0") || !strings.HasSuffix(string(tit), "1 finalize\n") {
		t.Errorf("rank-1.tit lacks the allreduce or the finalize")
	}
}
