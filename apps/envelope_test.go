package apps

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// scripted is an application whose phase "x" is entered with the seconds
// a table gives per repetition, rank and entry (Phases.Add), so that
// Measure's statistics can be checked against hand-computed values.
type scripted struct {
	sec  [][][]float64 // [repetition][rank][entry]
	reps []int         // repetitions run so far, per rank
}

func (s *scripted) Name() string           { return "scripted" }
func (s *scripted) Params() results.Params { return results.Params{} }
func (s *scripted) Check(p int) error      { return nil }
func (s *scripted) Run(env Env) (Outcome, error) {
	r := env.Comm.Rank()
	rep := s.reps[r]
	s.reps[r]++
	var out Outcome
	for _, v := range s.sec[rep][r] {
		out.Phases.Add("x", KindComm, v)
	}
	if len(s.sec[rep][r]) == 0 {
		out.Phases.Add("x", KindComm, 0)
	}
	out.Workload = map[string][]results.WorkItem{"x": {{Count: 1, Bench: "pingpong", Params: results.Params{"bytes": 8}}}}
	return out, nil
}

func TestMeasureEnvelope(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sec           [][][]float64
		fastest, want float64
	}{
		{
			// Entry 1's fastest step is repetition 0's, entry 2's
			// repetition 1's: 1 + 2, below every repetition's 6.
			name: "steps together",
			sec: [][][]float64{
				{{1, 5}, {1, 1}},
				{{5, 1}, {1, 2}},
				{{3, 3}, {3, 3}},
			},
			fastest: 6, want: 3,
		},
		{
			// The step is the maximum over ranks: rank 0's 1 s in
			// repetition 1 does not make step 1 fast, rank 1 took 4.
			name: "the maximum over ranks per step",
			sec: [][][]float64{
				{{2, 2}, {2, 2}},
				{{1, 2}, {4, 0}},
			},
			fastest: 4, want: 4,
		},
		{
			// Each rank delayed in another step: the per-step maxima sum
			// to more than any repetition's maximum of sums.
			name: "ranks delayed in different steps",
			sec: [][][]float64{
				{{5, 1}, {1, 5}},
				{{5, 1}, {1, 5}},
			},
			fastest: 6, want: 10,
		},
		{
			name: "ranks enter unequally: the fastest repetition",
			sec: [][][]float64{
				{{1, 1}, {3}},
				{{2, 2}, {1}},
			},
			fastest: 3, want: 3,
		},
		{
			name: "the entry count changes: the fastest repetition",
			sec: [][][]float64{
				{{1, 1}, {1, 1}},
				{{1}, {1}},
			},
			fastest: 1, want: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &scripted{sec: tc.sec, reps: make([]int, 2)}
			n := len(tc.sec)
			var recs []results.Record
			err := local.Run(2, func(c mpi.Comm) error {
				got, err := Measure(Env{Comm: c}, app, patterns.Reps{MinReps: n, MaxReps: n, Warmup: -1}, results.Meta{})
				if c.Rank() == 0 {
					recs = got
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].N != n {
				t.Fatalf("records %+v", recs)
			}
			r := recs[0]
			if r.Min != tc.fastest {
				t.Errorf("fastest repetition %v, want %v", r.Min, tc.fastest)
			}
			if got := r.Derived[EnvelopeKey]; math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("envelope %v, want %v", got, tc.want)
			}
			median := r.Median
			env, err := ByStat(recs, StatEnvelope)
			if err != nil {
				t.Fatal(err)
			}
			if env[0].Median != tc.want || env[0].CI95 != [2]float64{tc.want, tc.want} {
				t.Errorf("ByStat(envelope): median %v, CI %v; want %v", env[0].Median, env[0].CI95, tc.want)
			}
			if recs[0].Median != median {
				t.Error("ByStat changed its input")
			}
		})
	}
}

func TestByStat(t *testing.T) {
	app := results.Record{Bench: Bench, Summary: results.Summary{N: 5, Min: 1, Median: 3, CI95: [2]float64{2, 4}}, Derived: map[string]float64{EnvelopeKey: 0.5}}
	old := app // written before envelopes existed
	old.Derived = nil
	pat := results.Record{Bench: "pingpong", Summary: results.Summary{N: 5, Min: 2, Median: 3}, Derived: map[string]float64{EnvelopeKey: 0.1}}
	in := []results.Record{app, old, pat}
	for _, tc := range []struct {
		stat string
		want []float64
	}{
		{StatMedian, []float64{3, 3, 3}},
		{"", []float64{3, 3, 3}},
		{StatFastest, []float64{1, 1, 2}},
		// A pattern point is one entry per repetition: its envelope is
		// its fastest repetition, whatever its derived values say.
		{StatEnvelope, []float64{0.5, 1, 2}},
	} {
		got, err := ByStat(in, tc.stat)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if r.Median != tc.want[i] {
				t.Errorf("%q: record %d median %v, want %v", tc.stat, i, r.Median, tc.want[i])
			}
		}
		if in[0].Median != 3 {
			t.Fatalf("%q: ByStat changed its input", tc.stat)
		}
	}
	if _, err := ByStat(in, "mean"); err == nil || !strings.Contains(err.Error(), fmt.Sprint(strings.Join(Stats, ", "))) {
		t.Errorf("ByStat(mean): %v, want an error listing %v", err, Stats)
	}
}
