package simgrid

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/commcost/commcost/trace"
)

// writeRankFiles writes a trace directory of p ranks, each with only its
// MPI_Finalize.
func writeRankFiles(t *testing.T, dir string, p int) {
	t.Helper()
	for r := range p {
		var b bytes.Buffer
		w := trace.NewWriter(&b, trace.Header{Rank: r, Size: p, Host: "h", EagerShmBytes: -1, EagerNetBytes: -1})
		w.Write(trace.Event{Op: trace.OpFinalize, Peer: trace.PeerNone, Peer2: trace.PeerNone, T0: 5000, T1: 5000})
		if err := w.Close(5000); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, trace.RankFile(r)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteRankTITList: the ranks convert by themselves, in any order;
// simgrid.txt appears only once every rank's file is converted, and a
// rank whose conversion fails removes it, so no list names a missing
// file.
func TestWriteRankTITList(t *testing.T) {
	list := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, ListFile))
		return err == nil
	}
	t.Run("last rank writes the list", func(t *testing.T) {
		dir := t.TempDir()
		writeRankFiles(t, dir, 3)
		for _, r := range []int{2, 0} {
			if err := WriteRankTIT(filepath.Join(dir, trace.RankFile(r))); err != nil {
				t.Fatal(err)
			}
			if list(dir) {
				t.Fatalf("simgrid.txt written after rank %d, before rank 1 converted", r)
			}
		}
		if err := WriteRankTIT(filepath.Join(dir, trace.RankFile(1))); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, ListFile)); string(data) != "rank-0.tit\nrank-1.tit\nrank-2.tit\n" {
			t.Errorf("simgrid.txt %q", data)
		}
	})
	t.Run("a failed rank removes the list", func(t *testing.T) {
		dir := t.TempDir()
		writeRankFiles(t, dir, 2)
		for r := range 2 {
			if err := WriteRankTIT(filepath.Join(dir, trace.RankFile(r))); err != nil {
				t.Fatal(err)
			}
		}
		if !list(dir) {
			t.Fatal("no simgrid.txt after both ranks")
		}
		// rank 1's file cannot be replaced: its conversion fails
		os.Remove(filepath.Join(dir, TITFile(1)))
		if err := os.Mkdir(filepath.Join(dir, TITFile(1)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteRankTIT(filepath.Join(dir, trace.RankFile(1))); err == nil {
			t.Fatal("rank 1 converted over a directory")
		}
		if list(dir) {
			t.Error("simgrid.txt left naming rank-1.tit, which is not there")
		}
	})
	t.Run("an earlier run's file is not this run's", func(t *testing.T) {
		dir := t.TempDir()
		writeRankFiles(t, dir, 2)
		old := filepath.Join(dir, TITFile(1))
		if err := os.WriteFile(old, []byte("earlier\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		past := mustStat(t, filepath.Join(dir, trace.RankFile(1))).ModTime().Add(-3600e9)
		if err := os.Chtimes(old, past, past); err != nil {
			t.Fatal(err)
		}
		if err := WriteRankTIT(filepath.Join(dir, trace.RankFile(0))); err != nil {
			t.Fatal(err)
		}
		if list(dir) {
			t.Error("simgrid.txt written while rank 1's file is an earlier run's")
		}
	})
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
