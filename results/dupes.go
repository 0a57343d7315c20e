package results

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// RecordSet finds a record read twice: the same line twice in one file,
// or a copy of a run's file given beside it. Every reader that merges
// records (ReadJSONL within a file; app table, compare, dsm plot and
// sched breakeven across their files) would count such a record as a
// second run, measured again, when it is one run read twice. Records are
// the same when every field is (bench, params, statistics, samples,
// derived values, meta with its launch, date and command): separate runs
// differ at least in their date or their samples. The set keeps a digest
// of each record, not the record.
type RecordSet struct {
	seen map[[sha256.Size]byte]recordAt
}

// recordAt is where a record was first read.
type recordAt struct {
	path string
	line int
}

// NewRecordSet returns an empty set.
func NewRecordSet() *RecordSet {
	return &RecordSet{seen: map[[sha256.Size]byte]recordAt{}}
}

// Add adds the records of the file at path (path "" within one file),
// recs[i] read from line lines[i], and refuses the first that is the same
// as one added before, naming both places.
func (s *RecordSet) Add(path string, recs []Record, lines []int) error {
	for i, r := range recs {
		data, err := json.Marshal(r)
		if err != nil {
			continue // a record read back always encodes
		}
		key := sha256.Sum256(data)
		at := recordAt{path, lines[i]}
		if first, dup := s.seen[key]; dup {
			return &DuplicateError{Path: path, Line: at.line, FirstPath: first.path, FirstLine: first.line, Bench: r.Bench, Params: r.Params}
		}
		s.seen[key] = at
	}
	return nil
}

// DuplicateError is a record read a second time (RecordSet.Add): at Path,
// Line, the same record as at FirstPath, FirstLine (a path "" is the file
// being read).
type DuplicateError struct {
	Path, FirstPath string
	Line, FirstLine int
	Bench           string
	Params          Params
}

func (e *DuplicateError) Error() string {
	here, first := fmt.Sprintf("line %d", e.Line), fmt.Sprintf("line %d", e.FirstLine)
	if e.Path != "" {
		here = e.Path + " " + here
	}
	if e.FirstPath != "" && e.FirstPath != e.Path {
		first = e.FirstPath + " " + first
	}
	return fmt.Sprintf("%s is the same record as %s (%s %s, every field alike, its meta and samples too): a record read twice would count as two runs; remove the copy", here, first, e.Bench, paramString(e.Params))
}
