package main

import (
	"fmt"
	"io"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// readRecordsFile reads the records file that what names (FILE, --fit,
// --in) through the one shared reader (results.ReadRecordsFile), so every
// command treats a file alike: a torn last line, what a crash in the
// middle of an append leaves, costs that record only and is said once on
// stderr; any other bad line is bad input naming what, the file and the
// line.
func readRecordsFile(what, path string, stderr io.Writer) ([]results.Record, error) {
	return readRecordsFileDemand(what, path, results.ReadFactor, stderr)
}

// readRecordsFileDemand is readRecordsFile for a command that takes
// factor times the file's size at its peak (results.ReadRecordsFileDemand).
func readRecordsFileDemand(what, path string, factor float64, stderr io.Writer) ([]results.Record, error) {
	recs, _, err := readRecordsFileLines(what, path, factor, stderr)
	return recs, err
}

// readRecordsFileLines is readRecordsFileDemand with the line of each
// record (recs[i] is on line lines[i]).
func readRecordsFileLines(what, path string, factor float64, stderr io.Writer) ([]results.Record, []int, error) {
	recs, lines, torn, err := results.ReadRecordsFileLines(path, factor)
	if err != nil {
		return nil, nil, opts.Badf("%s %s: %v (want a JSON Lines file of commcost records)", what, path, err)
	}
	if torn != nil {
		fmt.Fprintln(stderr, "commcost: warning:", cli.Printable(fmt.Sprintf("%v; using the %d complete records before it", torn, len(recs))))
	}
	return recs, lines, nil
}

// readRecordsFiles reads the records files that what names and merges
// them, refusing a record read twice (results.RecordSet: a copy of one
// file given beside it, a line pasted from another) as bad input naming
// both files and lines: it would be counted again, as if measured again.
func readRecordsFiles(what string, paths []string, stderr io.Writer) ([]results.Record, error) {
	var all []results.Record
	set := results.NewRecordSet()
	for _, path := range paths {
		recs, lines, err := readRecordsFileLines(what, path, results.ReadFactor, stderr)
		if err != nil {
			return nil, err
		}
		if err := set.Add(path, recs, lines); err != nil {
			return nil, opts.Badf("%s: %v", what, err)
		}
		all = append(all, recs...)
	}
	return all, nil
}
