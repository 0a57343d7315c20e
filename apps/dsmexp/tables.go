package dsmexp

import (
	"fmt"
	"io"
	"slices"

	"github.com/commcost/commcost/results"
)

// xOf is the row key of a record: the mesh, then the x parameter.
func xOf(rec results.Record, xParam string) (mesh string, x float64, ok bool) {
	mesh, _ = rec.Params["mesh"].(string)
	if xParam == "" {
		return mesh, 0, true
	}
	x, ok = toFloat(rec.Params[xParam])
	return mesh, x, ok
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// meshSize is the processor count of "RxC" (0 if malformed), for ordering.
func meshSize(s string) int {
	var r, c int
	if _, err := fmt.Sscanf(s, "%dx%d", &r, &c); err != nil {
		return 0
	}
	return r * c
}

// grid arranges the records of one bench as rows (mesh, x) by strategy
// columns; the last record of a cell wins (a file may hold reruns).
type grid struct {
	strategies []string
	rows       []gridRow
}

type gridRow struct {
	mesh  string
	x     float64
	cells map[string]results.Record
}

func makeGrid(recs []results.Record, bench, xParam string, match func(results.Record) bool) grid {
	var g grid
	index := map[string]int{}
	for _, rec := range recs {
		if rec.Bench != bench || (match != nil && !match(rec)) {
			continue
		}
		st, _ := rec.Params["strategy"].(string)
		mesh, x, ok := xOf(rec, xParam)
		if !ok || st == "" {
			continue
		}
		if !slices.Contains(g.strategies, st) {
			g.strategies = append(g.strategies, st)
		}
		key := fmt.Sprintf("%s/%g", mesh, x)
		i, seen := index[key]
		if !seen {
			i = len(g.rows)
			index[key] = i
			g.rows = append(g.rows, gridRow{mesh: mesh, x: x, cells: map[string]results.Record{}})
		}
		g.rows[i].cells[st] = rec
	}
	// Hand first, as the ratios' reference; the rest in first-seen order.
	if i := slices.Index(g.strategies, Hand); i > 0 {
		g.strategies = append([]string{Hand}, slices.Delete(g.strategies, i, i+1)...)
	}
	slices.SortStableFunc(g.rows, func(a, b gridRow) int {
		if d := meshSize(a.mesh) - meshSize(b.mesh); d != 0 {
			return d
		}
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	return g
}

// cellFunc formats one record's value for a table ("" = no value).
type cellFunc func(rec results.Record) (string, bool)

func derivedCell(key, format string) cellFunc {
	return func(rec results.Record) (string, bool) {
		v, ok := rec.Derived[key]
		if !ok {
			return "", false
		}
		return fmt.Sprintf(format, v), true
	}
}

func counterCell(key string, scale float64, format string) cellFunc {
	return func(rec results.Record) (string, bool) {
		v, ok := rec.Counters[key]
		if !ok {
			return "", false
		}
		return fmt.Sprintf(format, v/scale), true
	}
}

func medianCell(rec results.Record) (string, bool) {
	if rec.N == 0 {
		return "", false
	}
	return fmtSeconds(rec.Median), true
}

// fmtSeconds prints a time in the unit that keeps 3 significant digits.
func fmtSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3g s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	}
	return fmt.Sprintf("%.3g us", s*1e6)
}

// renderGrid writes one table: a row per (mesh, x), a column per strategy.
func renderGrid(w io.Writer, g grid, title, xName string, cell cellFunc, skip []string, markdown bool) error {
	var cols []string
	for _, st := range g.strategies {
		if !slices.Contains(skip, st) {
			cols = append(cols, st)
		}
	}
	header := []string{"mesh"}
	if xName != "" {
		header = append(header, xName)
	}
	header = append(header, cols...)
	var rows [][]string
	for _, r := range g.rows {
		row := []string{r.mesh}
		if xName != "" {
			row = append(row, fmt.Sprintf("%g", r.x))
		}
		any := false
		for _, st := range cols {
			v := "-"
			if rec, ok := r.cells[st]; ok {
				if s, ok := cell(rec); ok {
					v, any = s, true
				}
			}
			row = append(row, v)
		}
		if any {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if markdown {
		fmt.Fprintf(w, "\n**%s**\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s\n", title)
	}
	return results.RenderCells(w, header, rows, markdown)
}

// WriteTables writes the ratio tables of paper 004's figures found in recs
// (dsm-matsquare, dsm-bitonic, dsm-barneshut records; others are
// ignored): per application the congestion and time ratios against the
// hand-optimised version where there is one (Figures 3-4, 6-7), and for
// Barnes-Hut the congestion in messages, the times, the phases of
// Figures 9-10 and the cache hit ratio. Each table's title names the
// paper's figure and finding. Everything comes from the records.
func WriteTables(w io.Writer, recs []results.Record, markdown bool) error {
	type tbl struct {
		bench, xParam, xName, title string
		cell                        cellFunc
		skip                        []string
		match                       func(results.Record) bool
		time                        bool
	}
	totalPhase := func(rec results.Record) bool { return rec.Params["phase"] == PhaseTotal }
	phase := func(p string) func(results.Record) bool {
		return func(rec results.Record) bool { return rec.Params["phase"] == p }
	}
	tables := []tbl{
		{BenchMatSquare, "block_ints", "block ints", "matrix square (paper 004, Figs. 3-4): congestion ratio to hand-optimised (bytes; paper: fixed home grows like sqrt P, access tree like log P)", derivedCell(KeyCongestionRatio, "%.2f"), []string{Hand}, nil, false},
		{BenchMatSquare, "block_ints", "block ints", "matrix square: communication time ratio to hand-optimised (medians; paper: access tree > 3x faster than fixed home at 32x32)", derivedCell(KeyTimeRatio, "%.2f"), []string{Hand}, nil, true},
		{BenchMatSquare, "block_ints", "block ints", "matrix square: median communication time", medianCell, nil, nil, true},
		{BenchBitonic, "keys", "keys", "bitonic merge&split (paper 004, Figs. 6-7): congestion ratio to hand-optimised (bytes; paper: access tree tends to about 3, fixed home grows like log^2 P)", derivedCell(KeyCongestionRatio, "%.2f"), []string{Hand}, nil, false},
		{BenchBitonic, "keys", "keys", "bitonic merge&split: execution time ratio to hand-optimised (medians; paper: follows the congestion ratio, access tree within about 3x)", derivedCell(KeyTimeRatio, "%.2f"), []string{Hand}, nil, true},
		{BenchBitonic, "keys", "keys", "bitonic merge&split: median execution time", medianCell, nil, nil, true},
		{BenchBitonic, "keys", "keys", "bitonic merge&split: startups (messages between different ranks)", counterCell(KeyStartups, 1, "%.0f"), nil, nil, false},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut (paper 004, Figs. 8 and 11): congestion in 1000 messages over the measured steps (paper: access trees below fixed home, the gap grows with P)", counterCell(KeyCongestionMessages, 1000, "%.2f"), nil, totalPhase, false},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut: median execution time of the measured steps (paper: 4-ary tree fastest; at 512 processors about 0.49 of fixed home)", medianCell, nil, totalPhase, true},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut tree building (paper 004, Fig. 9): congestion in 1000 messages", counterCell(KeyCongestionMessages, 1000, "%.2f"), nil, phase(PhaseLoad), false},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut tree building: median time", medianCell, nil, phase(PhaseLoad), true},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut force computation (paper 004, Fig. 10): congestion in 1000 messages", counterCell(KeyCongestionMessages, 1000, "%.2f"), nil, phase(PhaseForce), false},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut force computation: median time (tree walk and interactions)", medianCell, nil, phase(PhaseForce), true},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut force computation: cache hit ratio of reads (paper: about 99%)", derivedCell(KeyHitRatio, "%.4f"), nil, phase(PhaseForce), false},
		{BenchBarnesHut, "bodies", "bodies", "Barnes-Hut: relative energy drift over the simulated steps", derivedCell(KeyEnergyDrift, "%.2e"), nil, totalPhase, false},
	}
	local := false
	for _, r := range recs {
		local = local || r.Meta.Backend != "native"
	}
	wrote := false
	for _, t := range tables {
		g := makeGrid(recs, t.bench, t.xParam, t.match)
		if len(g.rows) == 0 {
			continue
		}
		g.strategies = paperOrder(g.strategies)
		title := t.title
		if local && t.time {
			title += " [not a network time: local backend]"
		}
		if err := renderGrid(w, g, title, t.xName, t.cell, t.skip, markdown); err != nil {
			return err
		}
		wrote = true
	}
	if wrote {
		fmt.Fprintln(w)
	}
	return nil
}
