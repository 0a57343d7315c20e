package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode"

	"github.com/commcost/commcost/internal/fskind"
	"github.com/commcost/commcost/internal/sysmem"
)

// RecordWriter is what every streaming writer offers: Write emits one whole
// record (and makes it durable where the destination allows) before it
// returns; Close emits whatever the format still owes and releases the
// destination.
type RecordWriter interface {
	Write(rec Record) error
	Close() error
}

// flusher and syncer are the optional capabilities writers use to push each
// record out: bufio.Writer flushes, os.File syncs.
type flusher interface{ Flush() error }
type syncer interface{ Sync() error }

// flushAndSync pushes what has been written to w towards stable storage.
func flushAndSync(w io.Writer) error {
	if f, ok := w.(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	if s, ok := w.(syncer); ok {
		if err := s.Sync(); err != nil {
			// Pipes and terminals cannot sync (EINVAL); that loses nothing.
			if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
				return nil
			}
			return err
		}
	}
	return nil
}

// JSONLWriter writes the canonical format: one record per line as a JSON
// object (README.md "records.jsonl"). Each Write marshals the record first
// and hands the whole line to the destination in one write call, then
// flushes it (and fsyncs it: in the background for an appended file, see
// below).
//
// A writer from AppendJSONL keeps a database's write-ahead discipline for
// the file, so a record is in it whole or not at all whatever happens to
// the disk: every append holds an exclusive advisory lock on the file
// (flock), so writers in several processes serialise whole records, and
// an append that cannot complete (disk full, ulimit -f, an I/O error,
// an fsync that fails) truncates the file back to its size before the
// record and returns an *AppendError naming the file and the cause. A
// process killed by SIGXFSZ would leave its half line behind; Go's runtime
// ignores SIGXFSZ unless asked for it, so the write returns EFBIG instead
// and the append is undone like any other.
//
// The fsync of an appended file runs beside the writer (bgSync): each
// record is written to the file (so a killed run loses nothing it wrote)
// and handed to the disk at once, but the caller does not wait for the
// disk. A measuring rank 0 blocked in fsync holds every other rank in its
// next collective: on a virtual machine whose disk stalls while its CPUs
// are saturated, one fsync per record took tens of seconds (an emulation
// of 16 ranks on 2 cores ran for minutes instead of 3 s). A failed fsync is
// returned by the next Write or by Close, naming the records it may cover.
type JSONLWriter struct {
	w      io.Writer
	file   *os.File  // the appended file (AppendJSONL), nil for NewJSONLWriter
	closer io.Closer // nil when the caller owns w
	name   string    // for error messages
	sync   *bgSync   // the file's background fsync (AppendJSONL)
}

// bgSync fsyncs a file in the background: a request coalesces with one
// already pending, and the fsync that serves it starts after the write
// that asked for it, so every record written is covered by a later fsync.
type bgSync struct {
	req  chan struct{} // capacity 1: pending request
	done chan struct{} // closed when the goroutine has returned
	do   func() error  // f.Sync; a variable for tests

	mu  sync.Mutex
	err error // the first failed fsync, reported once
}

func newBgSync(do func() error) *bgSync {
	s := &bgSync{req: make(chan struct{}, 1), done: make(chan struct{}), do: do}
	go func() {
		defer close(s.done)
		for range s.req {
			if err := s.do(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// request asks for an fsync after the writes done so far; it never blocks.
func (s *bgSync) request() {
	select {
	case s.req <- struct{}{}:
	default: // one is pending; it starts after this write
	}
}

// failed returns (once) the error of a background fsync that failed.
func (s *bgSync) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.err = nil
	return err
}

// stop waits for the pending fsync, then fsyncs once more in the caller.
func (s *bgSync) stop() error {
	close(s.req)
	<-s.done
	err := s.failed()
	if serr := s.do(); serr != nil && !errors.Is(serr, syscall.EINVAL) && !errors.Is(serr, errors.ErrUnsupported) && err == nil {
		err = serr
	}
	return err
}

// NewJSONLWriter writes records to w, flushing (bufio.Writer) and syncing
// (os.File) after each one. Close does not close w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{w: w, name: "JSON Lines output"}
}

// AppendJSONL opens path for appending (O_APPEND|O_CREATE, mode 0644) and
// returns a writer that owns the file. It fails before anything is written
// when the directory is missing, path is a directory, the file cannot be
// opened for writing, the file ends in a truncated record (appending
// would glue the new record onto the fragment and corrupt both), or a line
// of it is one every reader refuses (checkRecords), with an error that
// says which.
func AppendJSONL(path string) (*JSONLWriter, error) {
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	// Under the writers' lock: another process's record in the middle of
	// its write (no final newline yet) is not a torn tail.
	unlock, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("results: cannot lock %s: %w", path, err)
	}
	err = checkTerminated(path)
	if err == nil {
		err = checkRecords(path)
	}
	unlock()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &JSONLWriter{w: f, file: f, closer: f, name: path, sync: newBgSync(f.Sync)}, nil
}

// ErrNotRecordsFile marks an append refused for what the file holds (a
// line no reader accepts), not for where it is: the fix is the file's
// content or another file, not its directory or permissions.
var ErrNotRecordsFile = errors.New("it is not a records file")

// checkTerminated fails if the file at path is non-empty and does not end
// in a newline.
func checkTerminated(path string) error {
	f, err := os.Open(path)
	if err != nil {
		// Write-only files cannot be checked; appending is still allowed.
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil
	}
	// A records file starts with a record: appending to another file
	// (a report, a note) spoils it for every reader.
	head := make([]byte, min(st.Size(), 16))
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("results: cannot check the start of %s: %w", path, err)
	}
	if !isJSONPrefix(head) {
		return fmt.Errorf("results: cannot append to %s: %w (its first line is no JSON record); give a new file or one commcost wrote", path, ErrNotRecordsFile)
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return fmt.Errorf("results: cannot check the end of %s: %w", path, err)
	}
	if last[0] != '\n' {
		return fmt.Errorf("results: cannot append to %s: it ends in a truncated record (no final newline); remove the partial last line or write to a new file", path)
	}
	return nil
}

// checkRecords fails if the file at path holds a line a reader refuses:
// records appended after it would be lost with it, since every reader
// refuses the whole file. The file is read once, line by line with the
// reader's checks of each line and of the keys of all (scanJSONL),
// keeping no record: a long-lived file of any size takes one line's
// memory, so there is no read demand of the whole file to refuse it by.
// The checks across records (RegisterFileCheck: a stored ratio against
// another record of the file) would need every record and are left to
// the readers.
func checkRecords(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // write-only: checkTerminated could not check it either
	}
	defer f.Close()
	// One line at a time is in memory: the demand is the longest line's
	// (a pass that only looks for newlines finds it).
	longest, err := longestLine(f)
	if err == nil {
		err = readDemand(path, min(longest, MaxLineBytes), ReadFactor, "its longest line")
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("results: cannot append to %s: checking its records first: %w", path, err)
	}
	if err := scanJSONL(f, MaxLineBytes, func(Record, int) {}); err != nil {
		return fmt.Errorf("results: cannot append to %s: %w: %w; every reader refuses the file, so records appended to it would be lost: give a new file or fix that line", path, ErrNotRecordsFile, err)
	}
	return nil
}

// longestLine is the length in bytes of r's longest line, its newline
// included.
func longestLine(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var longest, cur int64
	for {
		n, err := r.Read(buf)
		for chunk := buf[:n]; len(chunk) > 0; {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				cur += int64(len(chunk))
				break
			}
			longest, cur = max(longest, cur+int64(i)+1), 0
			chunk = chunk[i+1:]
		}
		if err == io.EOF {
			return max(longest, cur), nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// openAppend opens path for appending, explaining the usual failures in
// terms of what the user has to fix.
func openAppend(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("results: cannot write %s: directory %s does not exist", path, dir)
		}
		return nil, fmt.Errorf("results: cannot write %s: %w", path, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("results: cannot write %s: %s is not a directory", path, dir)
	}
	// A symbolic link whose target does not exist would have the open
	// create that target, wherever it points (outside the directory
	// named, too): a records file is appended to where it is, so the
	// link is refused. A link to an existing records file is appended
	// through.
	if err := danglingLink(path); err != nil {
		return nil, fmt.Errorf("results: cannot write %s: %w", path, err)
	}
	// A FIFO with no reader would block the open (and one with a reader
	// takes records nobody can append to safely); a device cannot be
	// truncated back after a failed append. Only regular files are
	// records files.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("results: cannot write %s: %w", path, &NotRegularError{Path: path, Mode: st.Mode()})
	}
	// Checked before the open creates anything: /dev's devtmpfs takes a
	// new file as any tmpfs would, and /proc or /sys refuse it obscurely.
	if kfs := fskind.KernelPath(path); kfs != "" {
		return nil, fmt.Errorf("results: cannot write %s: a file of the kernel's %s filesystem, not a records file", path, kfs)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|openNonblock, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("results: cannot write %s: permission denied", path)
		}
		return nil, fmt.Errorf("results: cannot write %s: %w", path, err)
	}
	// The path may have been replaced between the check and the open.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &NotRegularError{Path: path, Mode: st.Mode()}
		}
		return nil, fmt.Errorf("results: cannot write %s: %w", path, err)
	}
	if fs := fskind.KernelFD(f.Fd()); fs != "" {
		f.Close()
		return nil, fmt.Errorf("results: cannot write %s: a file of the kernel's %s filesystem, not a records file (a write there sets a kernel parameter)", path, fs)
	}
	return f, nil
}

// danglingLink says why path is a symbolic link that leads nowhere (its
// target, or a link on the way to it, does not exist), or nil.
func danglingLink(path string) error {
	lst, err := os.Lstat(path)
	if err != nil || lst.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	target, err := os.Readlink(path)
	if err != nil {
		return fmt.Errorf("%s is a symbolic link whose target does not exist; commcost does not create a link's target (give the target's own path or remove the link)", path)
	}
	where := Printable(target)
	if !filepath.IsAbs(target) {
		if full := filepath.Join(filepath.Dir(path), target); full != target {
			where += " (" + Printable(full) + ")"
		}
	}
	return fmt.Errorf("%s is a symbolic link to %s, which does not exist; commcost does not create a link's target (give the target's own path or remove the link)", path, where)
}

// AppendError is an append to a records file that did not complete: the
// record is not in the file. Restored says whether the file was truncated
// back to its size before the record (Size); if not, its last line is torn
// and every reader (ReadJSONL) skips it.
type AppendError struct {
	Path     string
	Size     int64 // the file's size before the record
	Err      error // the cause: ENOSPC, EFBIG, EIO, ...
	Restored bool
	Undo     error // why the truncation failed, when !Restored
}

func (e *AppendError) Error() string {
	if e.Restored {
		return fmt.Sprintf("results: %s: record not written: %v (the file is as it was before this record, %d bytes)", e.Path, e.Err, e.Size)
	}
	return fmt.Sprintf("results: %s: record not written: %v; cutting the partial record off failed too (%v), so the last line is torn (readers skip it)", e.Path, e.Err, e.Undo)
}

func (e *AppendError) Unwrap() error { return e.Err }

// cause strips the *PathError wrapping of a write error: the file is named
// by AppendError already.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// appendLine appends one encoded record under the file's lock (see
// JSONLWriter) and undoes a partial append.
func (jw *JSONLWriter) appendLine(line []byte) error {
	f := jw.file
	unlock, err := lockFile(f)
	if err != nil {
		return fmt.Errorf("results: %s: record not written: cannot lock the file: %w", jw.name, err)
	}
	defer unlock()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("results: %s: record not written: %w", jw.name, cause(err))
	}
	size := st.Size()
	// Under the lock a torn tail can only come from a writer that died
	// in the middle of a record without undoing it; appending would glue
	// this record onto the fragment.
	if err := checkTerminated(jw.name); err != nil {
		return err
	}
	if jw.sync == nil {
		return fmt.Errorf("results: %s: record not written: the writer is closed", jw.name)
	}
	if err := jw.sync.failed(); err != nil {
		return fmt.Errorf("results: %s: record not written: an earlier fsync failed (%w), so records written before this one may not be on the disk", jw.name, cause(err))
	}
	_, werr := f.Write(line)
	if werr == nil {
		jw.sync.request()
		return nil
	}
	ae := &AppendError{Path: jw.name, Size: size, Err: cause(werr)}
	if terr := f.Truncate(size); terr != nil {
		ae.Undo = cause(terr)
	} else {
		ae.Restored = true
		// The truncation must reach the disk too, or a crash now could
		// bring the partial record back.
		_ = f.Sync()
	}
	return ae
}

// Write validates rec, stamps SchemaVersion if rec.Schema is 0, and appends
// it as one line. A record that cannot be encoded (e.g. a NaN in Samples or
// Derived) is an error and nothing of it is written; so is a record the
// file cannot take whole (*AppendError).
func (jw *JSONLWriter) Write(rec Record) error {
	line, err := MarshalRecord(rec)
	if err != nil {
		return err
	}
	if jw.file != nil {
		return jw.appendLine(line)
	}
	if _, err := jw.w.Write(line); err != nil {
		return fmt.Errorf("results: writing %s: %w", jw.name, err)
	}
	if err := flushAndSync(jw.w); err != nil {
		return fmt.Errorf("results: flushing %s: %w", jw.name, err)
	}
	return nil
}

// Close closes the file opened by AppendJSONL; for NewJSONLWriter it only
// flushes.
func (jw *JSONLWriter) Close() error {
	if jw.closer == nil {
		return flushAndSync(jw.w)
	}
	var serr error
	if jw.sync != nil {
		if err := jw.sync.stop(); err != nil {
			serr = fmt.Errorf("results: %s: fsync failed (%w): the last records may not be on the disk", jw.name, cause(err))
		}
		jw.sync = nil
	}
	return errors.Join(serr, jw.closer.Close())
}

// MarshalRecord is the JSON Lines encoding of rec: one JSON object and a
// trailing newline, with Schema stamped to SchemaVersion when it is 0.
func MarshalRecord(rec Record) ([]byte, error) {
	if rec.Schema == 0 {
		rec.Schema = SchemaVersion
	}
	if err := rec.Validate(); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	// What a reader would refuse is not written either.
	if err := rec.CheckValues(); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("results: encoding record %s %s: %w", rec.Bench, paramString(rec.Params), err)
	}
	return append(line, '\n'), nil
}

// ErrTruncated marks a final line that ends without a newline and does not
// parse: the signature of a writer interrupted mid-record.
var ErrTruncated = errors.New("truncated final line (the writer was probably interrupted)")

// LineError is a problem on one line of a JSON Lines file; Line is 1-based.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadJSONL reads records written by JSONLWriter. Blank lines are skipped;
// a member no record has (at the top, in meta or in a workload item) is
// refused by name (recordUnknown), and so is a parameter its bench's
// registered check does not name. Every line must be a record with a schema version between
// 1 and SchemaVersion, a bench and a unit, parameters that are JSON
// scalars and statistics a measurement can have (Record.CheckValues), on a
// line of at most MaxLineBytes.
//
// Errors name the 1-based line. Any bad line fails the whole read (nil
// records), except one case: a last line with no terminating newline that
// does not parse is what an interrupted writer leaves behind, so ReadJSONL
// returns every record before it together with a *LineError wrapping
// ErrTruncated. Callers that accept such a file must check for it
// (errors.Is(err, ErrTruncated)) and should say that the last record was
// lost. An unterminated last line that does parse is accepted without error.
func ReadJSONL(r io.Reader) ([]Record, error) {
	return readJSONL(r, MaxLineBytes)
}

// readJSONL is ReadJSONL with lines of at most maxLine bytes.
func readJSONL(r io.Reader, maxLine int) ([]Record, error) {
	recs, _, err := readJSONLLines(r, maxLine)
	return recs, err
}

// readJSONLLines is readJSONL that also returns the line of each record:
// recs[i] is on line lines[i].
func readJSONLLines(r io.Reader, maxLine int) (recs []Record, lines []int, err error) {
	err = scanJSONL(r, maxLine, func(rec Record, line int) {
		recs = append(recs, rec)
		lines = append(lines, line)
	})
	if err != nil && !errors.Is(err, ErrTruncated) {
		return nil, nil, err
	}
	// The checks across records (RegisterFileCheck) need them all; so
	// does a line that repeats another (RecordSet).
	if i, ferr := CheckFile(recs); ferr != nil {
		return nil, nil, &LineError{Line: lines[i], Err: ferr}
	}
	if derr := NewRecordSet().Add("", recs, lines); derr != nil {
		d := derr.(*DuplicateError)
		return nil, nil, &LineError{Line: d.Line, Err: fmt.Errorf("the same record as line %d (%s %s, every field alike, its meta and samples too): a record read twice would count as two runs; remove the copy", d.FirstLine, d.Bench, paramString(d.Params))}
	}
	return recs, lines, err
}

// scanJSONL reads r line by line with ReadJSONL's checks of each line
// and of the keys of all of them, and hands each record and its 1-based
// line to keep; it keeps nothing itself, so its memory is one line's
// (maxLine) and the key set (MaxRecordKeys), whatever the length of r.
// A bad line ends the scan with a *LineError; a torn last line (see
// ReadJSONL) with one wrapping ErrTruncated, after every record before
// it was handed over. The checks across records (CheckFile) are the
// caller's.
func scanJSONL(r io.Reader, maxLine int, keep func(rec Record, line int)) error {
	br := bufio.NewReader(r)
	// The distinct keys of the file's maps: tables take one column per
	// key, so many records of a thousand keys each are as wide as one
	// record of a million.
	keys := map[string]struct{}{}
	for lineNo := 1; ; lineNo++ {
		// Records with raw samples can be megabytes long; a line longer
		// than maxLine is no record of commcost's and is refused before
		// it fills the memory.
		line, err := readLine(br, maxLine)
		if err != nil && err != io.EOF {
			return &LineError{Line: lineNo, Err: err}
		}
		terminated := err == nil
		if len(bytes.TrimSpace(line)) > 0 {
			rec, perr := parseRecordLine(line)
			if perr != nil {
				if !terminated && isJSONPrefix(line) {
					return &LineError{Line: lineNo, Err: fmt.Errorf("%w: %v", ErrTruncated, perr)}
				}
				return &LineError{Line: lineNo, Err: perr}
			}
			if err := addKeys(keys, rec); err != nil {
				return &LineError{Line: lineNo, Err: err}
			}
			keep(rec, lineNo)
		}
		if !terminated {
			return nil
		}
	}
}

// readLine reads up to and including the next newline, as ReadBytes does,
// but fails once the line exceeds max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, fmt.Errorf("%w: a line longer than %s (a records file holds one record per line)", ErrTooLarge, byteCount(int64(max)))
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// isJSONPrefix reports whether line is the beginning of a JSON object cut
// off before its end: what an append interrupted in the middle of a record
// leaves. Anything else on the last line (binary data, another format) is
// a bad line, not a torn record, and is named as such.
func isJSONPrefix(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var v any
	var se *json.SyntaxError
	err := json.Unmarshal(t, &v)
	// The decoder's scanner accepted every byte and failed only at the
	// end (at EOF it reports "unexpected end", or, inside a literal or an
	// escape, the space it feeds itself there): a valid prefix.
	return errors.As(err, &se) && se.Offset == int64(len(t))
}

// ReadJSONLFile is ReadJSONL on the file at path, with the path in errors.
// path must be a regular file (OpenRegular): a FIFO or a device is refused
// instead of read until a writer or an end that may never come.
func ReadJSONLFile(path string) ([]Record, error) {
	recs, _, err := readJSONLFile(path, ReadFactor)
	return recs, err
}

// readJSONLFile is ReadJSONLFile with the read demand's factor, and the
// line of each record.
func readJSONLFile(path string, factor float64) ([]Record, []int, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	if err := checkReadDemand(f, path, factor); err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	recs, lines, err := readJSONLLines(f, MaxLineBytes)
	if err != nil {
		err = fmt.Errorf("results: %s: %w", path, err)
	}
	return recs, lines, err
}

// ReadRecordsFile is the one reader of the commands that analyse records
// (fit, report, compare, sched breakeven, the --fit files of optimize and
// emulate split): ReadJSONLFile, except that a torn last line, which an
// append cut off by a crash leaves behind (ErrTruncated), is not an
// error. The complete records come back, and torn describes the lost line
// (a *LineError naming the file and line) so that the caller can say the
// last record was lost; torn is nil for a whole file. Any other bad line,
// or a torn line with no complete record before it, is an error naming
// the file and the line.
func ReadRecordsFile(path string) (recs []Record, torn, err error) {
	return ReadRecordsFileDemand(path, ReadFactor)
}

// ReadRecordsFileDemand is ReadRecordsFile for a command that builds more
// from the records than the records themselves (fit's selections,
// compare's tables, report's): factor is the memory the command takes
// at its peak per byte of the file, at least ReadFactor, and the file is
// refused before it is read when that is beyond what the process may
// take.
func ReadRecordsFileDemand(path string, factor float64) (recs []Record, torn, err error) {
	recs, _, torn, err = ReadRecordsFileLines(path, factor)
	return recs, torn, err
}

// ReadRecordsFileLines is ReadRecordsFileDemand that also returns the
// line of each record (recs[i] is on line lines[i]), for the readers that
// merge the records of several files (RecordSet).
func ReadRecordsFileLines(path string, factor float64) (recs []Record, lines []int, torn, err error) {
	recs, lines, err = readJSONLFile(path, max(factor, ReadFactor))
	if errors.Is(err, ErrTruncated) && len(recs) > 0 {
		return recs, lines, err, nil
	}
	if err != nil {
		// A file whose only line is cut off holds no record to keep: it
		// is refused like any file that is not a records file.
		return nil, nil, nil, err
	}
	return recs, lines, nil, nil
}

// MaxStringBytes bounds one string of a record read (a name, a parameter
// value, a host, one word of the command: Linux passes no argument longer
// than 128 KiB). A line under MaxLineBytes made of a few huge strings
// would otherwise be decoded, copied and kept whole, and a handful of them
// exhausts the memory of a job under ulimit -v.
const MaxStringBytes = 1 << 20

// MaxRecordElements bounds the elements of one JSON array and the members
// of one JSON object in a record read: the largest lists commcost writes
// are a record's repetitions (--max-reps is at most this), its hosts (the
// largest machines have a few hundred thousand), ranks per host and
// command words. Decoding allocates per element before any check can
// count them: a line of 15 million one-letter hosts takes 60 MB on the
// disk and more than 2 GB decoded.
const MaxRecordElements = 1 << 20

// maxNesting bounds the depth of a record's JSON values, as
// encoding/json's decoder does.
const maxNesting = 10000

// lineBound is what scanLine found beyond a bound or refused: the kind
// ("string", "array", "object", "nesting", "length", or a valueCheck's:
// "null", "type"), its field ("meta.hosts", "workload[].params"; "" at
// the top) and the byte offset where it starts.
type lineBound struct {
	kind, field string
	at          int
	elems       int    // the elements of a fixed-length array ("length"); a checked value's index in its array ("null", "type")
	want        string // what a checked value should have been ("a number")
	value       string // the checked value, as valueName names it ("the string")
}

// fixedArrays are the record's top-level arrays of a fixed length: the
// decoder fills a Go array from a JSON array of any length, dropping the
// extra elements or leaving the missing ones 0.
var fixedArrays = map[string]int{"ci95": 2}

// scanBounds makes one pass over line, before it is decoded, and returns
// the first string longer than maxString bytes (escapes counted as
// written), array of more than maxElems elements, object of more than
// maxElems members or nesting beyond maxNesting, or a top-level array of
// fixedArrays with another number of elements ("length"), or nil. It reads JSON
// only as far as it needs to: strings (with their escapes), brackets,
// commas and colons; a line that is no JSON is left to the decoder.
func scanBounds(line []byte, maxString, maxElems int) *lineBound {
	return scanLine(line, maxString, maxElems, nil)
}

// A valueCheck is what scanLine asks about the values of a line that
// start with one of the bytes of starts: ask gets where the value
// stands (member names, "[]" for an array's element), its 1-based index
// in its array (0 in an object) and its text (a scalar's literal, or
// the bracket that opens an object or an array). A non-empty answer
// (what the value should have been) ends the scan with a lineBound of
// the check's kind.
type valueCheck struct {
	kind   string
	starts [256]bool
	stops  [256]bool // jsonStructural and starts: the bytes the scan stops at
	ask    func(path []string, elem int, lit []byte) string
	// dupKeys also refuses a member name given twice in one object (a
	// lineBound of kind "duplicate"): the decoder keeps the last value
	// of a key given twice, overriding the first in silence.
	dupKeys bool
}

func newValueCheck(kind, starts string, ask func(path []string, elem int, lit []byte) string) *valueCheck {
	c := &valueCheck{kind: kind, stops: jsonStructural, ask: ask}
	for _, b := range []byte(starts) {
		c.starts[b], c.stops[b] = true, true
	}
	return c
}

// nullCheck asks recordNull about every null of a line; typeCheck asks
// recordTypeMismatch about every value but null (which the decoder takes
// anywhere); unknownCheck asks recordUnknown about every value.
var (
	nullCheck    = newValueCheck("null", "n", recordNull)
	typeCheck    = newValueCheck("type", `"{[-0123456789tf`, recordTypeMismatch)
	unknownCheck = func() *valueCheck {
		c := newValueCheck("unknown", `"{[-0123456789tfn`, recordUnknown)
		c.dupKeys = true
		return c
	}()
)

// recordUnknown says why the member at path is none of a record's: its
// object is a record, its meta or a workload item (a struct of the
// record's types) and has no field of exactly that name. encoding/json
// would match "MEDIAN" or "Median" to median, so that a case variant
// beside the field overrides it; the writers spell every key as the
// field's JSON name. Members of params, derived and counters (maps,
// whose keys the benches choose) and array elements are known.
func recordUnknown(path []string, elem int, _ []byte) string {
	if elem > 0 || len(path) == 0 {
		return ""
	}
	parent, ok := jsonFieldType(recordType, path[:len(path)-1])
	if !ok {
		return ""
	}
	for parent.Kind() == reflect.Pointer {
		parent = parent.Elem()
	}
	if parent.Kind() != reflect.Struct {
		return ""
	}
	name := path[len(path)-1]
	if _, ok := jsonMember(parent, name); ok {
		return ""
	}
	if exact, ok := jsonMemberFold(parent, name); ok {
		what, _, _ := strings.Cut(structFields(parent), " (")
		return fmt.Sprintf("no field of %s: keys are case-sensitive, and the field is %q (a key in another case would override it in silence)", what, exact)
	}
	return "no field of " + structFields(parent) + "; a misspelt or hand-added key would be read as absent"
}

// structFields names struct t of a record and its JSON fields for a
// message: "a record (its fields: schema, bench, ...)", "a record's meta
// (its fields: commit, ...)".
func structFields(t reflect.Type) string {
	what := "a record"
	switch t {
	case reflect.TypeFor[Meta]():
		what = "a record's meta"
	case reflect.TypeFor[WorkItem]():
		what = "a workload item"
	}
	return fmt.Sprintf("%s (its fields: %s)", what, strings.Join(jsonFieldNames(t), ", "))
}

// jsonFieldNames are the JSON names of struct t's fields, those of
// embedded structs without a name in their place.
func jsonFieldNames(t reflect.Type) []string {
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			if tag == "-" || !f.IsExported() {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			names = append(names, tag)
		}
	}
	walk(t)
	return names
}

// scanLine is scanBounds that also, with check non-nil, asks check about
// the values of the line it starts.
func scanLine(line []byte, maxString, maxElems int, check *valueCheck) *lineBound {
	type frame struct {
		array          bool
		start          int // offset of the bracket
		commas         int // elements or members so far, less one
		name           []byte
		key            []byte // an object's latest member name
		expectKey      bool
		parentIsObject bool
		keys           map[string]struct{} // an object's member names so far (check.dupKeys)
	}
	var stack []frame
	field := func() string {
		var b strings.Builder
		for i := 1; i < len(stack); i++ {
			f := &stack[i]
			if f.parentIsObject {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.Write(f.name)
			} else {
				b.WriteString("[]")
			}
		}
		return Printable(b.String())
	}
	// asks asks check about the value at offset i with text lit; the
	// value stands where the innermost open bracket's current element
	// or member is.
	// framePath is where the innermost open bracket stands: member
	// names, "[]" for an array's element.
	framePath := func() []string {
		path := make([]string, 0, len(stack)+1)
		for k := 1; k < len(stack); k++ {
			if stack[k].parentIsObject {
				path = append(path, string(stack[k].name))
			} else {
				path = append(path, "[]")
			}
		}
		return path
	}
	asks := func(i int, lit []byte) *lineBound {
		if len(stack) == 0 {
			return nil
		}
		path := framePath()
		top, elem := &stack[len(stack)-1], 0
		if top.array {
			path, elem = append(path, "[]"), top.commas+1
		} else {
			path = append(path, string(top.key))
		}
		if want := check.ask(path, elem, lit); want != "" {
			return &lineBound{kind: check.kind, field: nullField(path), at: i, elems: elem, want: want, value: valueName(lit)}
		}
		return nil
	}
	stops := &jsonStructural
	if check != nil {
		stops = &check.stops
	}
	for i := 0; i < len(line); i++ {
		for i < len(line) && !stops[line[i]] {
			i++
		}
		if i == len(line) {
			break
		}
		switch c := line[i]; c {
		case 'n', 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			// Outside strings, these start a literal (or are no JSON,
			// which the decoder refuses): null, true, false or a number.
			if check == nil || !check.starts[c] {
				continue
			}
			end := i + 1
			for end < len(line) && isLiteralByte(line[end]) {
				end++
			}
			if c == 'n' && !bytes.Equal(line[i:end], []byte("null")) {
				continue
			}
			if b := asks(i, line[i:end]); b != nil {
				return b
			}
			i = end - 1
		case '"':
			// The string ends at the next quote after an even run of
			// backslashes (an odd one escapes it).
			start, j := i, i+1
			for {
				k := bytes.IndexByte(line[j:], '"')
				if k < 0 {
					j = len(line)
					break
				}
				j += k
				run := 0
				for j-1-run > start && line[j-1-run] == '\\' {
					run++
				}
				if run%2 == 0 {
					break
				}
				j++
			}
			if j-start-1 > maxString {
				return &lineBound{kind: "string", at: start}
			}
			if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].expectKey {
				f := &stack[n-1]
				f.key = line[start+1 : min(j, len(line))]
				f.expectKey = false
				if check != nil && check.dupKeys {
					k := memberName(f.key)
					if _, dup := f.keys[k]; dup {
						path := append(framePath(), k)
						return &lineBound{kind: "duplicate", field: nullField(path), at: start}
					}
					if f.keys == nil {
						f.keys = map[string]struct{}{}
					}
					f.keys[k] = struct{}{}
				}
			} else if check != nil && check.starts['"'] {
				if b := asks(start, line[start:min(j+1, len(line))]); b != nil {
					return b
				}
			}
			i = j
		case '{', '[':
			if len(stack) >= maxNesting {
				return &lineBound{kind: "nesting", field: field(), at: i}
			}
			if check != nil && check.starts[c] {
				if b := asks(i, line[i:i+1]); b != nil {
					return b
				}
			}
			f := frame{array: c == '[', start: i, expectKey: c == '{'}
			if n := len(stack); n > 0 && !stack[n-1].array {
				f.parentIsObject, f.name = true, stack[n-1].key
			}
			stack = append(stack, f)
		case ']', '}':
			if n := len(stack); n > 0 {
				if f := stack[n-1]; n == 2 && f.array && f.parentIsObject {
					if want, ok := fixedArrays[string(f.name)]; ok {
						elems := f.commas + 1
						if len(bytes.TrimSpace(line[f.start+1:i])) == 0 {
							elems = 0
						}
						if elems != want {
							return &lineBound{kind: "length", field: Printable(string(f.name)), at: f.start, elems: elems}
						}
					}
				}
				stack = stack[:n-1]
			}
		case ',':
			n := len(stack)
			if n == 0 {
				continue
			}
			f := &stack[n-1]
			f.commas++
			f.expectKey = !f.array
			if f.commas >= maxElems {
				kind := "object"
				if f.array {
					kind = "array"
				}
				return &lineBound{kind: kind, field: field(), at: f.start}
			}
		}
	}
	return nil
}

// memberName is the name a member's key (its text between the quotes)
// decodes to: "a" and "\u0061" are one key to the decoder.
func memberName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if json.Unmarshal(q, &s) != nil {
		return string(raw) // no JSON string: the decoder refuses the line
	}
	return s
}

// isLiteralByte reports whether c may continue a JSON literal (a number,
// true, false or null).
func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '.' || c == '+' || c == '-' || c == 'E'
}

// valueName names a value by its text for a message: "the number 1.5",
// "the string", "the object", "the boolean true".
func valueName(lit []byte) string {
	switch {
	case len(lit) == 0:
		return "the value"
	case lit[0] == '"':
		return "the string"
	case lit[0] == '{':
		return "the object"
	case lit[0] == '[':
		return "the array"
	case lit[0] == 't' || lit[0] == 'f':
		return "the boolean " + Printable(string(lit))
	case lit[0] == 'n':
		return "null"
	}
	return "the number " + Printable(string(lit))
}

// jsonStructural marks the bytes scanBounds acts on; it skips the rest
// (digits, letters, spaces) without a switch.
var jsonStructural = func() (t [256]bool) {
	for _, c := range []byte(`"{}[],`) {
		t[c] = true
	}
	return t
}()

// longString returns the byte offset of the first JSON string in line
// longer than max bytes (escapes counted as written), or -1.
func longString(line []byte, max int) int {
	if b := scanBounds(line, max, math.MaxInt); b != nil && b.kind == "string" {
		return b.at
	}
	return -1
}

// boundError words what scanBounds found for a reader's message.
func boundError(b *lineBound) error {
	where := ""
	if b.field != "" {
		where = " " + b.field
	}
	switch b.kind {
	case "length":
		return fmt.Errorf("field %s: an array of %d elements at byte %d, not %d", b.field, b.elems, b.at+1, fixedArrays[b.field])
	case "null", "type":
		elem := ""
		if b.elems > 0 {
			elem = fmt.Sprintf(" (element %d)", b.elems)
		}
		return fmt.Errorf("field %s: %s is not %s%s", b.field, b.value, b.want, elem)
	case "unknown":
		return fmt.Errorf("field %s: %s", b.field, b.want)
	case "duplicate":
		return fmt.Errorf("field %s: the key is given twice in one object (again at byte %d); a record names each key once, and a reader would keep one of the values in silence", b.field, b.at+1)
	case "string":
		return fmt.Errorf("%w: a string longer than %s at byte %d (a record's names and parameters are short)", ErrTooLarge, byteCount(MaxStringBytes), b.at+1)
	case "nesting":
		return fmt.Errorf("%w: values nested deeper than %d at byte %d%s (a record nests a few levels)", ErrTooLarge, maxNesting, b.at+1, where)
	}
	what := "elements"
	if b.kind == "object" {
		what = "members"
	}
	return fmt.Errorf("%w: the %s%s at byte %d has more than %d %s (a record's lists, its repetitions, hosts, ranks per host and command words, hold at most %d)",
		ErrTooLarge, b.kind, where, b.at+1, MaxRecordElements, what, MaxRecordElements)
}

// parseRecordLine decodes and checks one line.
func parseRecordLine(line []byte) (Record, error) {
	if b := scanLine(line, MaxStringBytes, MaxRecordElements, nullCheck); b != nil {
		return Record{}, boundError(b)
	}
	// A member no record has (a misspelt "bench", a hand-added note, a
	// meta key of another tool) is refused by name: read as absent, a
	// misspelt field would be taken for the zero value in silence.
	if b := scanLine(line, MaxStringBytes, MaxRecordElements, unknownCheck); b != nil {
		return Record{}, boundError(b)
	}
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		// The decoder names a map's value or an array's element by the
		// map or the array ("field counters"); the line's values, checked
		// against the record's types, name the key or the element.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if b := scanLine(line, MaxStringBytes, MaxRecordElements, typeCheck); b != nil && b.kind == "type" {
				return Record{}, fmt.Errorf("not a JSON record: %w", boundError(b))
			}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && string(bytes.TrimSpace(line)) == "{" {
			// An indented document (a model file of `fit --format json`)
			// opens its object alone on a line and closes it lines later.
			return Record{}, errors.New("not a JSON record: the line opens an object and nothing more; a JSON document over several lines (such as a model file from 'commcost fit --format json') is not JSON Lines, which holds one record per line")
		}
		return Record{}, fmt.Errorf("not a JSON record: %w", JSONFieldError(err))
	}
	// One object per line: anything after it means two records were glued
	// together or the line is corrupt.
	if len(bytes.TrimSpace(line[dec.InputOffset():])) > 0 {
		return Record{}, errors.New("not a JSON record: extra data after the object")
	}
	if rec.Schema == 0 {
		return Record{}, errors.New("record has no schema version")
	}
	rec.escapeStrings()
	if err := rec.Validate(); err != nil {
		return Record{}, err
	}
	if err := rec.CheckValues(); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// addKeys adds rec's params, derived and counters keys to seen and refuses
// a file whose records name more than MaxRecordKeys distinct ones in all.
func addKeys(seen map[string]struct{}, rec Record) error {
	for _, m := range []struct {
		name string
		keys []string
	}{{"params", slices.Collect(maps.Keys(rec.Params))}, {"derived", slices.Collect(maps.Keys(rec.Derived))}, {"counters", slices.Collect(maps.Keys(rec.Counters))}} {
		for _, k := range m.keys {
			seen[m.name+"."+k] = struct{}{}
		}
	}
	if len(seen) > MaxRecordKeys {
		return fmt.Errorf("%w: the records so far name %d distinct params, derived and counters keys, more than the %d a file of records may (a table takes a column per key)", ErrTooLarge, len(seen), MaxRecordKeys)
	}
	return nil
}

// JSONFieldError words a decoder's type error in terms of the file ("field
// ranks: the number 1e9 is not a whole number"), not of the Go types it
// decodes into; other errors are returned as they are.
func JSONFieldError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return err
	}
	value, number := "the "+te.Value, ""
	switch {
	case te.Value == "bool":
		value = "the boolean"
	case strings.HasPrefix(te.Value, "number "):
		number = te.Value[len("number "):]
	}
	what := goTypeKind(te.Type)
	if number != "" {
		what = numberRange(te.Type, number)
	}
	if te.Field == "" {
		return fmt.Errorf("%s is not %s", value, what)
	}
	return fmt.Errorf("field %s: %s is not %s", fileField(te.Field), value, what)
}

// fileField is a decoder's field path as the file spells it: an embedded
// struct's Go name ("Summary" of "Summary.n") is no key of the file, whose
// keys are lower case.
func fileField(path string) string {
	var keep []string
	for _, part := range strings.Split(path, ".") {
		if part != "" && !unicode.IsUpper(rune(part[0])) {
			keep = append(keep, part)
		}
	}
	if len(keep) == 0 {
		return path
	}
	return strings.Join(keep, ".")
}

// scalarValue is what a parameter's value is.
const scalarValue = "a number, a string, true or false"

// goTypeKind names what a record field of Go type t holds, for messages,
// as the file spells it: "a whole number", "an object".
func goTypeKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of another kind"
}

// numberRange is what a number must be to fit a field of type t: the
// bounds of its whole numbers (written in digits, which is all the
// decoder takes for them), or of its numbers.
func numberRange(t reflect.Type, lit string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isWhole(t.Kind()) && strings.ContainsAny(lit, ".eE") {
		// 1e3 or 2.0: the form is the fault, whatever the value.
		return "a whole number (digits only: no fraction or exponent)"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		hi := int64(1)<<(t.Bits()-1) - 1
		return fmt.Sprintf("a whole number from %d to %d", -hi-1, hi)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", ^uint64(0)>>(64-t.Bits()))
	case reflect.Float32:
		return fmt.Sprintf("a number from %g to %g", -math.MaxFloat32, math.MaxFloat32)
	case reflect.Float64:
		return fmt.Sprintf("a number from %g to %g", -math.MaxFloat64, math.MaxFloat64)
	}
	return goTypeKind(t)
}

// recordTypeMismatch says what a value of a record line (not null) should
// have been where the decoder refuses it: a value of another JSON kind
// than the record's field, or a number the field cannot hold (1.5 or
// 1e3 for a count, 1e400). It is "" where the decoder takes the value,
// and where the path leaves the record's types (an unknown member).
func recordTypeMismatch(path []string, _ int, lit []byte) string {
	t, ok := jsonFieldType(recordType, path)
	if !ok {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	k := t.Kind()
	if k == reflect.Interface {
		// A parameter's value: a scalar, a number within a float64.
		if lit[0] == '[' || lit[0] == '{' {
			return scalarValue
		}
		if _, err := strconv.ParseFloat(string(lit), 64); err != nil && (lit[0] == '-' || lit[0] >= '0' && lit[0] <= '9') {
			return numberRange(reflect.TypeFor[float64](), string(lit))
		}
		return ""
	}
	switch lit[0] {
	case '{':
		if k == reflect.Map || k == reflect.Struct {
			return ""
		}
	case '[':
		if k == reflect.Slice || k == reflect.Array {
			return ""
		}
	case '"':
		if k == reflect.String {
			return ""
		}
	case 't', 'f':
		if k == reflect.Bool {
			return ""
		}
	default:
		if !isNumberKind(k) {
			break
		}
		var err error
		switch k {
		case reflect.Float32, reflect.Float64:
			_, err = strconv.ParseFloat(string(lit), t.Bits())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			_, err = strconv.ParseUint(string(lit), 10, t.Bits())
		default:
			_, err = strconv.ParseInt(string(lit), 10, t.Bits())
		}
		if err == nil {
			return ""
		}
		return numberRange(t, string(lit))
	}
	return goTypeKind(t)
}

// paramString formats params as "k=v k=v" in key order, for messages.
func paramString(p Params) string {
	keys := sortedKeys(p)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + formatParam(p[k])
	}
	return strings.Join(parts, " ")
}

// ReadFactor is the memory reading a records file takes, per byte of the
// file, at most: the line being read, its decoded strings and the records
// kept, and the collector's slack before it frees the garbage. Measured
// peak of a reader that keeps only the records (app table on 100,000
// ping-pong records of 1 KB): 2.5 times the file with the collector
// near its limit (GOGC=10, as LimitHeap makes it under a limit).
const ReadFactor = 3

// availableMemory is sysmem.Available; a variable for tests.
var availableMemory = sysmem.Available

// checkReadDemand refuses a file whose records this process cannot hold
// (factor times its size beyond what sysmem.Available says is left:
// the machine's memory, the job's cgroup or its ulimit -v), before a byte
// of it is read: the read would end in the runtime's fatal "out of
// memory" instead of a message.
func checkReadDemand(f *os.File, path string, factor float64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return readDemand(path, st.Size(), factor, "the file")
}

// readDemand refuses reading size bytes of records from path (what, "the
// file" or its longest line) when factor times that is more than this
// process may take.
func readDemand(path string, size int64, factor float64, what string) error {
	avail, src, ok := availableMemory()
	if need := float64(size) * factor; ok && need > float64(avail) {
		reading := "reading its %s of records needs about %s"
		if factor > ReadFactor {
			reading = "reading its %s of records and what this command builds from them needs about %s"
		}
		return fmt.Errorf("%s: %w: "+reading+" (%g times %s), more than this process may take (%s)",
			path, ErrTooLarge, sysmem.Format(float64(size)), sysmem.Format(need), factor, what, sysmem.Allows(need, avail, src))
	}
	return nil
}

// recordNull says what a JSON null at path of a record line should have
// been, when the decoder would silently read it as 0: a sample, a
// summary statistic, a count, an element of ci95 or a value of the
// derived and counters maps ("a number"); the whole ci95 (its two zeros).
// It is "" where null reads as no value (an absent samples, derived or
// counters, meta.ranks_per_host: null) or is left to the record's checks
// (a parameter's value, a string member).
func recordNull(path []string, _ int, _ []byte) string {
	t, ok := jsonFieldType(recordType, path)
	if !ok {
		return ""
	}
	// A number, ci95, any array's element (a host, a word of the
	// command: null would read as ""), and a workload item's params
	// (which would read as none) hold no null.
	if t.Kind() == reflect.Array || isNumberKind(t.Kind()) || len(path) > 0 && path[len(path)-1] == "[]" || t == paramsType {
		return goTypeKind(t)
	}
	return ""
}

var paramsType = reflect.TypeFor[Params]()

var recordType = reflect.TypeFor[Record]()

// isWhole reports whether k is an integer kind.
func isWhole(k reflect.Kind) bool {
	return isNumberKind(k) && k != reflect.Float32 && k != reflect.Float64
}

func isNumberKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// jsonFieldType is the Go type encoding/json decodes the value at path
// (member names matched exactly, through embedded structs, as
// recordUnknown requires them; "[]" for an element) into, and false where
// the path leaves the type (an unknown member, an interface value).
func jsonFieldType(t reflect.Type, path []string) (reflect.Type, bool) {
	for _, seg := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case seg == "[]":
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return nil, false
			}
			t = t.Elem()
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			f, ok := jsonMember(t, seg)
			if !ok {
				return nil, false
			}
			t = f
		default:
			return nil, false
		}
	}
	return t, true
}

// jsonMember is the type of struct t's field whose JSON name is name,
// looking into embedded structs without a name.
func jsonMember(t reflect.Type, name string) (reflect.Type, bool) {
	ft, _, ok := jsonMemberMatch(t, name, false)
	return ft, ok
}

// jsonMemberFold is the JSON name of struct t's field that name matches
// case-insensitively, as encoding/json matches it.
func jsonMemberFold(t reflect.Type, name string) (string, bool) {
	_, tag, ok := jsonMemberMatch(t, name, true)
	return tag, ok
}

// jsonMemberMatch is jsonMember, or with fold jsonMemberFold: the field's
// type and JSON name.
func jsonMemberMatch(t reflect.Type, name string, fold bool) (reflect.Type, string, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			if ft, ftag, ok := jsonMemberMatch(f.Type, name, fold); ok {
				return ft, ftag, true
			}
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name || fold && strings.EqualFold(tag, name) {
			return f.Type, tag, true
		}
	}
	return nil, "", false
}

// nullField names path for a message: "samples", "derived.x_s",
// "workload[].count".
func nullField(path []string) string {
	var b strings.Builder
	for i, seg := range path {
		switch {
		case seg == "[]":
			if i == len(path)-1 {
				continue // the element's index is said apart
			}
			b.WriteString("[]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
	}
	return Printable(b.String())
}
