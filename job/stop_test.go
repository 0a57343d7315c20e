package job

import (
	"errors"
	"strings"
	"testing"
)

// TestStoppedMessage: a stopped run's message says where it was and where
// its finished records are in each case of outputs and counts.
func TestStoppedMessage(t *testing.T) {
	for _, tc := range []struct {
		written int
		last    string
		path    string
		stdout  bool
		cerr    error
		want    string
	}{
		{0, "", "r.jsonl", true, nil, "before its first record; no records were finished (r.jsonl has none of this run)"},
		{0, "", "", true, nil, "before its first record; no records were finished"},
		{1, "pingpong", "r.jsonl", true, nil, "after 1 record, in or after pingpong (the bench of the last); the finished record is whole in r.jsonl"},
		{3, "bw", "", true, nil, "after 3 records, in or after bw (the bench of the last); the finished records are on stdout"},
		{3, "bw", "", false, nil, "after 3 records, in or after bw (the bench of the last); the finished records were not kept (no --out file was given)"},
		{2, "a\x1b[2Jb", "r.jsonl", false, errors.New("disk full"), `after 2 records, in or after a\x1b[2Jb (the bench of the last); closing the outputs failed: disk full`},
	} {
		got := stoppedWhere(tc.written, tc.last) + "; " + stoppedKept(tc.written, tc.path, tc.stdout, tc.cerr)
		if got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
		if strings.ContainsRune(got, 0x1b) {
			t.Errorf("%q reaches the terminal raw", got)
		}
	}
}
