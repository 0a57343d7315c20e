package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/commcost/commcost/internal/testfs"
)

// A record is whole or absent even when the disk fills. These tests fill
// a file system (a small tmpfs, as root) and hit a file size limit
// (RLIMIT_FSIZE in a child process, as ulimit -f does), with a second
// writer appending to the same file, and require every line of the file
// to be a valid record afterwards.

// checkEveryLine fails unless every line of path is a whole, valid record
// and the file ends in a newline; it returns the number of records.
func checkEveryLine(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("%s ends in a torn record: ...%q", path, data[max(0, len(data)-40):])
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for line := 1; sc.Scan(); line++ {
		if _, err := parseRecordLine(sc.Bytes()); err != nil {
			t.Errorf("%s line %d is not a record: %v: %.60q", path, line, err, sc.Text())
		}
		n++
	}
	return n
}

// bigRecord is a record of about size bytes (its samples make it long),
// numbered i so that lines differ.
func bigRecord(i, size int) Record {
	r := testRecords()[0]
	r.Params = Params{"bytes": i}
	r.Samples = make([]float64, size/24)
	for j := range r.Samples {
		r.Samples[j] = 1.234567e-6 + float64(j)*1e-12
	}
	// A record summarises the samples it keeps (CheckValues).
	r.Summary = Summarize(r.Samples)
	return r
}

// TestAppendJSONLFullDisk mounts a 64 KiB tmpfs and lets two writers with
// their own file handles append to one file until the disk is full, then
// frees space and appends again: each failed append names the file and the
// cause, and the file holds whole records only.
func TestAppendJSONLFullDisk(t *testing.T) {
	mnt := testfs.Tmpfs(t, 64<<10)
	path := filepath.Join(mnt, RecordsFile)
	var writers [2]*JSONLWriter
	for i := range writers {
		w, err := AppendJSONL(path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		writers[i] = w
	}
	// Concurrent appends of records of about 3 KiB until both writers have
	// been refused: the disk fills in the middle of some record.
	var wg sync.WaitGroup
	errs := make([]error, len(writers))
	written := make([]int, len(writers))
	for i, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				if err := w.Write(bigRecord(i*1000+j, 3000)); err != nil {
					errs[i] = err
					return
				}
				written[i]++
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var ae *AppendError
		if !errors.As(err, &ae) || !errors.Is(err, syscall.ENOSPC) || !ae.Restored {
			t.Fatalf("writer %d: error %v, want an *AppendError for ENOSPC with the file restored", i, err)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "no space left on device") {
			t.Errorf("writer %d: message %q should name the file and the cause", i, msg)
		}
	}
	if n := checkEveryLine(t, path); n != written[0]+written[1] {
		t.Errorf("file holds %d records, the writers reported %d", n, written[0]+written[1])
	}
	// Free space: the second writer appends after the refused record, on a
	// line of its own.
	recs, err := ReadJSONLFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keep := recs[:len(recs)/2]
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range keep {
		if err := writers[0].Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := writers[1].Write(bigRecord(9999, 100)); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	if n := checkEveryLine(t, path); n != len(keep)+1 {
		t.Errorf("%d records after freeing space, want %d", n, len(keep)+1)
	}
}

// The child process of TestAppendJSONLFileSizeLimit: with RLIMIT_FSIZE set
// to the size in COMMCOST_FSIZE_LIMIT it appends numbered records to the
// file in COMMCOST_FSIZE_FILE until one fails, prints the error and exits
// with status 1 (the status of a run that cannot write its record).
func TestAppendJSONLFileSizeLimitChild(t *testing.T) {
	path := os.Getenv("COMMCOST_FSIZE_FILE")
	if path == "" {
		t.Skip("child process of TestAppendJSONLFileSizeLimit")
	}
	limit, err := strconv.ParseUint(os.Getenv("COMMCOST_FSIZE_LIMIT"), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	// As 'ulimit -f' does; the kernel then sends SIGXFSZ on the write
	// that crosses it, which must not kill the process.
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	w, err := AppendJSONL(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for i := 0; i < 10000; i++ {
		if err := w.Write(bigRecord(i, 700)); err != nil {
			fmt.Fprintf(os.Stderr, "after %d records: %v\n", i, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

// TestAppendJSONLFileSizeLimit runs a writer under a file size limit
// (RLIMIT_FSIZE, 'ulimit -f') that falls in the middle of a record, twice
// in a row on the same file, with a writer without the limit appending in
// between: every refused record is gone whole, and the writer without
// the limit never glues its record onto a fragment.
func TestAppendJSONLFileSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	child := func(limit int) (string, int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendJSONLFileSizeLimitChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "COMMCOST_FSIZE_FILE="+path, "COMMCOST_FSIZE_LIMIT="+strconv.Itoa(limit))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("writer killed by %v (SIGXFSZ must not end it); stderr:\n%s", ws.Signal(), stderr.String())
			}
			return stderr.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return stderr.String(), 0
	}
	other, err := AppendJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	total := 0
	for round, limit := range []int{10_000, 25_000} {
		msg, code := child(limit)
		if code != 1 || !strings.Contains(msg, "file too large") || !strings.Contains(msg, path) {
			t.Fatalf("round %d: exit %d, stderr %q: want exit 1 and a message naming %s and the cause", round, code, msg, path)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > int64(limit) {
			t.Errorf("round %d: file is %d bytes, beyond the limit %d", round, st.Size(), limit)
		}
		total = checkEveryLine(t, path)
		if err := other.Write(bigRecord(-1-round, 100)); err != nil {
			t.Fatal(err)
		}
		if n := checkEveryLine(t, path); n != total+1 {
			t.Errorf("round %d: %d records after the second writer's, want %d", round, n, total+1)
		}
	}
}

// TestAppendJSONLConcurrentWriters: eight writers, each with its own file
// handle as separate processes have, append long records at once; the
// lock keeps every record whole on its own line.
func TestAppendJSONLConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		w, err := AppendJSONL(path)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			for j := 0; j < each; j++ {
				if err := w.Write(bigRecord(i*each+j, 20000)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := checkEveryLine(t, path); n != writers*each {
		t.Errorf("%d records, want %d", n, writers*each)
	}
}

// TestAppendJSONLRefusesTornTail: a file whose last line was torn by a
// writer that died in the middle of it is not appended to, at open and
// at any later write, and the file is left as it is.
func TestAppendJSONLRefusesTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	w, err := AppendJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(bigRecord(1, 100)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schema":1,"bench":"ping`)
	f.Close()
	before, _ := os.ReadFile(path)
	if err := w.Write(bigRecord(2, 100)); err == nil || !strings.Contains(err.Error(), "truncated record") {
		t.Errorf("write after a torn tail: %v, want a refusal", err)
	}
	if _, err := AppendJSONL(path); err == nil {
		t.Errorf("AppendJSONL of a file with a torn tail succeeded")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the file changed")
	}
}

// TestAppendJSONLRefusesOtherFiles: records are not appended to a file
// that holds something else (a note, a report); it is left as it is.
func TestAppendJSONLRefusesOtherFiles(t *testing.T) {
	for _, body := range []string{"hello world, not json\n", "# a note\n{\"schema\":1}\n", "[1,2,3]\n"} {
		path := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := AppendJSONL(path); err == nil || !strings.Contains(err.Error(), "it is not a records file") {
			t.Errorf("%q: %v, want a refusal", body, err)
		}
		if after, _ := os.ReadFile(path); string(after) != body {
			t.Errorf("%q: the file changed", body)
		}
	}
}

// TestAppendJSONLChecksEveryLine: records are appended only to a file
// every reader accepts (each line a record CheckValues passes), so a run
// does not add its records to a file whose first or a later line makes
// every reader refuse it; the refusal names the line and the file is
// left as it is. The check reads the file a line at a time and keeps no
// record, so a file far beyond the memory a reader may take (the test
// leaves 16 KiB) is checked, not refused for its size; a line longer than
// that memory allows is refused.
func TestAppendJSONLChecksEveryLine(t *testing.T) {
	good := string(writeJSONL(t, testRecords()[:2]))
	// About 1 MiB of records, 64 times the memory left.
	const copies = 800
	large := strings.Repeat(good, copies)
	deep := 2*copies - 7 // a line deep in large
	lines := strings.SplitAfter(large, "\n")
	badDeep := strings.Join(lines[:deep-1], "") + "garbage\n" + strings.Join(lines[deep-1:], "")
	tests := []struct{ name, body, want string }{
		{"records commcost wrote", good, ""},
		{"blank lines between records", strings.Replace(good, "\n", "\n\n", 1), ""},
		{"a first line of schema 99", `{"schema":99,"bench":"x"}` + "\n", "line 1: "},
		{"garbage on line 2", strings.SplitAfter(good, "\n")[0] + "garbage\n", "line 2: not a JSON record"},
		{"a record with n = 0 on line 3", good + strings.Replace(strings.SplitAfter(good, "\n")[0], `"n":10`, `"n":0`, 1), "line 3: record pingpong bytes=8 has n = 0"},
		{"a file beyond the memory a reader may take", large, ""},
		{"garbage deep in a large file", badDeep, fmt.Sprintf("line %d: not a JSON record", deep)},
		{"a line beyond the memory", strings.Replace(good, "{", "{"+strings.Repeat(" ", 16<<10), 1), "(3 times its longest line), more than this process may take"},
	}
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, string, bool) { return 16 << 10, "a test's limit", true }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), RecordsFile)
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := AppendJSONL(path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				w.Close()
				return
			}
			if err == nil {
				w.Close()
				t.Fatalf("accepted, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cannot append to") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if after, _ := os.ReadFile(path); string(after) != tc.body {
				t.Error("the file changed")
			}
		})
	}
}

// TestScanJSONLKeepsNothing: the line-by-line check holds one line at a
// time, so the heap it leaves live after reading a file is a small
// fraction of the file, where a reader keeps every record.
func TestScanJSONLKeepsNothing(t *testing.T) {
	const copies = 800 // about 1 MiB
	data := bytes.Repeat(writeJSONL(t, testRecords()[:2]), copies)
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	grown := func(keep func(Record, int)) int64 {
		before := live()
		var at int64
		if err := scanJSONL(bytes.NewReader(data), MaxLineBytes, func(rec Record, line int) {
			keep(rec, line)
			if line == 2*copies {
				at = int64(live()) - int64(before)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return at
	}
	var kept []Record
	if g := grown(func(rec Record, _ int) { kept = append(kept, rec) }); g < int64(len(data))/2 {
		t.Fatalf("keeping the records grew the heap by %d bytes for a file of %d: the measure cannot tell", g, len(data))
	}
	kept = nil
	if g := grown(func(Record, int) {}); g > int64(len(data))/8 {
		t.Errorf("the check grew the heap by %d bytes for a file of %d, want a line's worth", g, len(data))
	}
}

// TestReadRecordsFile: the shared reader of fit, report, compare and sched
// breakeven takes a torn last line as the loss of that record, not as a
// bad file, and names file and line; a bad line elsewhere is an error.
func TestReadRecordsFile(t *testing.T) {
	dir := t.TempDir()
	good := writeJSONL(t, testRecords())
	tests := []struct {
		name    string
		data    []byte
		recs    int
		torn    string // substring of the torn-line note, "" for none
		errText string // substring of the error, "" for none
	}{
		{"whole", good, 4, "", ""},
		{"torn last line", append(append([]byte{}, good...), `{"schema":1,"bench":"pi`...), 4, "line 5", ""},
		{"only a torn line", []byte(`{"schema":1,"be`), 0, "", "line 1"},
		{"bad line inside", append([]byte("{\"schema\":1,\"be\n"), good...), 0, "", "line 1"},
		{"glued records", append(append([]byte{}, good[:len(good)-1]...), good...), 0, "", "line 4"},
		// Cut inside a string, after a backslash, inside a number: torn.
		{"torn in an escape", append(append([]byte{}, good...), `{"schema":1,"bench":"a\`...), 4, "line 5", ""},
		{"torn in a number", append(append([]byte{}, good...), `{"schema":1`...), 4, "line 5", ""},
		// Binary data or a whole but bad object on the last line is a bad
		// line, not a record an interrupted writer cut off.
		{"binary last line", append(append([]byte{}, good...), 0x01, 0x02, 0xff), 0, "", "line 5: not a JSON record"},
		{"whole object last line", append(append([]byte{}, good...), `{"schema":1}`...), 0, "", "line 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			recs, torn, err := ReadRecordsFile(path)
			if len(recs) != tc.recs {
				t.Errorf("%d records, want %d", len(recs), tc.recs)
			}
			switch {
			case tc.torn == "" && torn != nil:
				t.Errorf("torn %v, want none", torn)
			case tc.torn != "" && (torn == nil || !strings.Contains(torn.Error(), tc.torn) || !strings.Contains(torn.Error(), path)):
				t.Errorf("torn %v, want a note naming %s and %q", torn, path, tc.torn)
			}
			switch {
			case tc.errText == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
				t.Errorf("error %v, want one naming %q", err, tc.errText)
			}
		})
	}
}
