package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAppendDoesNotWaitForTheDisk: a record is in the file when Write
// returns even while the disk holds the fsync back (a stalled virtual
// disk held rank 0, and with it every rank, for tens of seconds per
// record); a failed fsync is reported by the next Write, which writes
// nothing, and by Close.
func TestAppendDoesNotWaitForTheDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	jw, err := AppendJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := jw.sync.stop(); err != nil {
		t.Fatal(err)
	}
	release := make(chan error)
	calls := make(chan struct{}, 16)
	jw.sync = newBgSync(func() error {
		calls <- struct{}{}
		return <-release
	})
	rec := testRecords()[0]

	done := make(chan error)
	go func() { done <- jw.Write(rec) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Write waited for the fsync")
	}
	<-calls // the fsync of that record has started and is stalled
	if b, _ := os.ReadFile(path); strings.Count(string(b), "\n") != 1 {
		t.Fatalf("file holds %q, want the one record", b)
	}
	release <- syscall.EIO // the stalled fsync fails
	deadline := time.Now().Add(10 * time.Second)
	for {
		jw.sync.mu.Lock()
		failed := jw.sync.err != nil
		jw.sync.mu.Unlock()
		if failed || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := jw.Write(rec); err == nil || !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "fsync") {
		t.Fatalf("Write after a failed fsync: %v, want the EIO named", err)
	}
	if b, _ := os.ReadFile(path); strings.Count(string(b), "\n") != 1 {
		t.Fatalf("a record was written after the failed fsync: %q", b)
	}
	// Close fsyncs once more; that one fails too and is reported.
	go func() { <-calls; release <- syscall.EIO }()
	if err := jw.Close(); err == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close: %v, want the final fsync's EIO", err)
	}
	if err := jw.Write(rec); err == nil { // an error, not a panic
		t.Fatal("Write after Close: no error")
	}
}
