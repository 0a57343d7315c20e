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
	registerTables("collalg", kindTables{write: collAlgTables})
}

// collAlgTables checks the closed forms against the collectives the
// records measured under a forced algorithm, and says which algorithm the
// library's default ran at each point it measured too.
func collAlgTables(w io.Writer, f *Fit) error {
	m := f.Model.(*model.CollAlg)
	checks := model.CheckCollAlg(m, f.Records)
	if len(checks) > 0 {
		fmt.Fprintln(w, "forced algorithms: measured vs the closed form of the algorithm (alpha, beta, gamma from this fit):")
		rows := make([][]string, len(checks))
		for i, c := range checks {
			rows[i] = []string{c.Op, c.Alg, strconv.Itoa(c.Ranks), results.FormatBytes(c.Bytes),
				usText(c.Measured), usText(c.Predicted), signedPct(c.RelErr)}
		}
		if err := TableAligned(w, []string{"op", "alg", "p", "bytes", "measured us", "closed form us", "error"}, rows, 0); err != nil {
			return err
		}
	}
	picks := model.DefaultPicks(m, f.Records)
	if len(picks) > 0 {
		fmt.Fprintln(w, "the library's default: the forced algorithm measured nearest it, and the closed form nearest it:")
		rows := make([][]string, len(picks))
		for i, d := range picks {
			near, nearT := "-", "-"
			if d.Nearest != "" {
				near, nearT = d.Nearest, usText(d.NearestTime)
			}
			rows[i] = []string{d.Op, strconv.Itoa(d.Ranks), results.FormatBytes(d.Bytes), usText(d.Default), near, nearT, d.Modelled, usText(d.ModelledTime)}
		}
		if err := TableAligned(w, []string{"op", "p", "bytes", "default us", "nearest forced", "its us", "nearest closed form", "its us"}, rows, 0); err != nil {
			return err
		}
	}
	return nil
}

func usText(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return strconv.FormatFloat(s*1e6, 'g', 4, 64)
}
