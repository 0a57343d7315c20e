package apps

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// toy is an application with one communication phase (an allreduce of n
// numbers), one computation phase and a check against a serial oracle.
type toy struct {
	n        int
	failRank int // rank whose verification fails; -1 for none
}

func (t toy) Name() string           { return "toy" }
func (t toy) Params() results.Params { return results.Params{"n": t.n} }
func (t toy) Check(p int) error {
	if t.n < 1 {
		return errors.New("--n must be >= 1")
	}
	return nil
}

func (t toy) Run(env Env) (Outcome, error) {
	c := env.Comm
	var out Outcome
	in := make([]float64, t.n)
	sum := make([]float64, t.n)
	_ = out.Phases.Time(c, "compute", KindComp, func() error {
		for i := range in {
			in[i] = float64(c.Rank() + i)
		}
		return nil
	})
	if err := out.Phases.Time(c, "reduce", KindComm, func() error {
		return c.AllreduceFloat64s(in, sum, mpi.OpSum)
	}); err != nil {
		return out, err
	}
	var verr error
	p := c.Size()
	for i, v := range sum {
		want := float64(p*(p-1)/2 + p*i)
		if v != want || c.Rank() == t.failRank {
			verr = errors.New("allreduce differs from the serial sum")
			break
		}
	}
	if err := AgreeErr(c, verr); err != nil {
		return out, err
	}
	out.Workload = map[string][]results.WorkItem{
		// An allreduce as paper 003 counts it: an all-to-all broadcast of
		// every rank's vector (aggregate has no op "allreduce", and a
		// workload item must name an instance its pattern has).
		"reduce": {{Count: 1, Bench: "aggregate", Params: results.Params{"op": "allgather", "bytes": 8 * t.n}, Ranks: p}},
	}
	return out, nil
}

func TestMeasureRecords(t *testing.T) {
	err := local.Run(3, func(c mpi.Comm) error {
		recs, err := Measure(Env{Comm: c}, toy{n: 16, failRank: -1}, patterns.Reps{MinReps: 5, MaxReps: 7, Warmup: 1}, results.Meta{Backend: "local"})
		if err != nil {
			return err
		}
		if len(recs) != 2 {
			t.Errorf("rank %d: %d records, want 2", c.Rank(), len(recs))
			return nil
		}
		if recs[0].Params["phase"] != "compute" || recs[1].Params["phase"] != "reduce" {
			t.Errorf("phases %v, %v", recs[0].Params["phase"], recs[1].Params["phase"])
		}
		for _, r := range recs {
			if err := r.Validate(); err != nil {
				t.Error(err)
			}
			if r.N < 5 || r.N > 7 || r.Bench != Bench || r.Params["app"] != "toy" || r.Params["n"] != 16 {
				t.Errorf("record %+v", r)
			}
		}
		if len(recs[1].Workload) != 1 || recs[0].Workload != nil {
			t.Errorf("workloads %v / %v", recs[0].Workload, recs[1].Workload)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMeasureFailedCheckOnEveryRank(t *testing.T) {
	errs := make([]error, 4)
	_ = local.Run(4, func(c mpi.Comm) error {
		_, errs[c.Rank()] = Measure(Env{Comm: c}, toy{n: 4, failRank: 2}, patterns.Reps{MinReps: 3, Warmup: -1}, results.Meta{})
		return nil
	})
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error", r)
		} else if r != 2 && !strings.Contains(err.Error(), "rank 2 failed") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// countedToy counts rank 0's runs of toy.
type countedToy struct {
	toy
	runs *atomic.Int64
}

func (t countedToy) Run(env Env) (Outcome, error) {
	if env.Comm.Rank() == 0 {
		t.runs.Add(1)
	}
	return t.toy.Run(env)
}

// TestMeasureWarmupBoundedByMaxTime: a warm-up count past what MaxTime
// allows stops after MaxTime, as patterns.Measure's does, and every rank
// stops after the same run.
func TestMeasureWarmupBoundedByMaxTime(t *testing.T) {
	var runs atomic.Int64
	app := countedToy{toy{n: 16, failRank: -1}, &runs}
	err := local.Run(3, func(c mpi.Comm) error {
		_, err := Measure(Env{Comm: c}, app, patterns.Reps{MinReps: 3, MaxReps: 3, Warmup: patterns.MaxCount, MaxTime: 0.05}, results.Meta{Backend: "local"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n < 4 || n >= patterns.MaxCount {
		t.Fatalf("%d runs of a warm-up of %d bounded by 0.05 s and 3 timed ones", n, patterns.MaxCount)
	}
}
