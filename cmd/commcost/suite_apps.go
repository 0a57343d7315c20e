package main

import (
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// suiteAppsMP is the suite's part for the message-passing applications of
// papers 001 and 003: small instances of each that the rank count allows
// (Cannon needs a square), a calibration of the patterns their workloads
// name, every model kind fitted to it, and each application's phase
// records annotated with every model's prediction, so that report.md's
// ranking tables come from records.jsonl alone (report.AppRankings).
func suiteAppsMP(c mpi.Comm, reps patterns.Reps, meta results.Meta, emit func(results.Record) error) error {
	p := c.Size()
	grid := apps.NearSquareGrid(p)
	n := roundUp(128, lcm(lcm(p, grid.Rows), grid.Cols))
	progs := []apps.App{
		apps.Checkerboard{N: n, Grid: grid},
		&apps.Gauss{N: n},
		&apps.Multigrid{N: 63, Iters: 8},
		&apps.Multigrid{N: 63, Iters: 8, Sync: true},
	}
	if _, ok := apps.SquareGrid(p); ok {
		progs = append([]apps.App{apps.Cannon{N: n}}, progs...)
	}
	work := map[string][]results.WorkItem{}
	for i, prog := range progs {
		if err := prog.Check(p); err != nil {
			return fmt.Errorf("suite: %s: %w", prog.Name(), err)
		}
		for ph, w := range prog.(apps.Workloader).Workload(p) {
			work[fmt.Sprintf("%d/%s", i, ph)] = w
		}
	}
	calReps := reps
	calReps.MaxTime, calReps.MinReps = min(reps.MaxTime, 0.5), min(max(reps.MinReps, 1), 5)
	cal, err := apps.Calibration{Reps: calReps}.Run(c, work, meta, emit)
	if err != nil {
		return fmt.Errorf("suite: application calibration: %w", err)
	}
	var models []apps.NamedModel
	if c.Rank() == 0 {
		models, _ = apps.Fit(cal, nil) // report.md says why a kind is missing
	}
	appReps := reps
	appReps.MaxTime = min(reps.MaxTime, 2)
	for _, prog := range progs {
		if g, ok := prog.(*apps.Gauss); ok {
			if err := g.Input(defaultSeed); err != nil {
				return err
			}
		}
		recs, err := apps.Measure(apps.Env{Comm: c, Seed: defaultSeed}, prog, appReps, meta)
		if err != nil {
			return fmt.Errorf("suite: %s: %w", prog.Name(), err)
		}
		if c.Rank() != 0 {
			continue
		}
		if len(models) > 0 {
			if _, err := apps.RankAnnotated(recs, models, false); err != nil {
				return err
			}
		}
		for _, r := range recs {
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int) int { return a / gcd(a, b) * b }
