package main

import "testing"

// TestCheckFlagsAccepts: the check-only mode of a sweep accepts the flags
// a run accepts with status 0 and prints nothing: it measures nothing (it
// returns on one rank without a launcher, where a run is refused).
func TestCheckFlagsAccepts(t *testing.T) {
	for _, args := range [][]string{
		{"--check-flags", "kkaccess", "--k", "1,2", "--l", "64,1K", "--r", "1"},
		{"--check-flags", "kkaccess"},
		{"--check-flags", "collective", "--ops", "bcast", "--root", "1"},
		{"--check-flags", "pingpong", "--sizes", "8,1K", "--max-time", "0.3"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || out != "" || errs != "" {
			t.Errorf("commcost %v: exit %d, stdout %q, stderr %q; want 0 and no output", args, code, out, errs)
		}
	}
}
