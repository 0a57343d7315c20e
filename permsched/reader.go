package permsched

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/commcost/commcost/results"
)

// EntryKind says what the entries of a matrix file mean.
type EntryKind int

const (
	// EntryBytes: entry (i, j) is the bytes rank i sends to rank j, one
	// message per non-zero entry (a weighted matrix). This is the form of a
	// trace: MPI_Alltoallv's per-rank send counts, e.g. of a sample sort.
	EntryBytes EntryKind = iota
	// EntryCount: entry (i, j) is the number of messages rank i sends to
	// rank j (a uniform multigraph; 0/1 entries give the paper's COM).
	EntryCount
	// EntryHeader: the entries are what the file's header (WriteMatrix's)
	// says, bytes in a file without one: the kind of a --matrix read
	// without --entries, so that a file sched gen wrote is read as written.
	EntryHeader
)

// HeaderKindError is a matrix file whose header names another entry kind
// than the one it is read as.
type HeaderKindError struct {
	Line         int
	Header, Kind EntryKind
}

func (e *HeaderKindError) Error() string {
	return fmt.Sprintf("the header says entries = %s, but the file is read with entries = %s (pass --entries %s)", e.Header, e.Kind, e.Header)
}

func (k EntryKind) String() string {
	switch k {
	case EntryBytes:
		return "bytes"
	case EntryCount:
		return "count"
	case EntryHeader:
		return "as the header says"
	}
	return fmt.Sprintf("EntryKind(%d)", int(k))
}

// ParseEntryKind accepts "bytes" or "count".
func ParseEntryKind(s string) (EntryKind, error) {
	switch s {
	case "bytes":
		return EntryBytes, nil
	case "count":
		return EntryCount, nil
	}
	return 0, fmt.Errorf("entry kind %q: want bytes or count", s)
}

// Limits of the reader, so that a malformed or hostile file fails with an
// error instead of exhausting memory.
const (
	// MaxEntryCount is the largest entry of a count matrix.
	MaxEntryCount = 1 << 16
	// MaxFileMessages is the largest number of messages a file may define.
	MaxFileMessages = 1 << 22
	// maxLineBytes bounds one line: MaxRanks entries of up to 11 digits.
	maxLineBytes = MaxRanks * 12
)

// MatrixError is a malformed matrix file: the line (1-based, 0 when the
// problem is the file as a whole) and what is wrong.
type MatrixError struct {
	Line int
	Msg  string
	Err  error // the cause, when it has a type (*HeaderKindError)
}

func (e *MatrixError) Unwrap() error { return e.Err }

func (e *MatrixError) Error() string {
	if e.Line == 0 {
		return "matrix file: " + e.Msg
	}
	return fmt.Sprintf("matrix file line %d: %s", e.Line, e.Msg)
}

// ReadMatrix reads a square matrix of non-negative integers: one row per
// line, entries separated by spaces, tabs or commas; blank lines and lines
// starting with '#' are ignored, except the header WriteMatrix writes
// ("# commcost permsched matrix: n = N, entries = KIND"), which, when
// present, must come before the rows and agree with them: N rows of N
// entries, of the kind the file is read as. Without a header the first row
// fixes n; every row must have n entries and there must be n rows. kind
// says whether entries are bytes or message counts. Errors are
// *MatrixError naming the line.
func ReadMatrix(r io.Reader, kind EntryKind) (*Matrix, error) {
	if kind != EntryBytes && kind != EntryCount && kind != EntryHeader {
		return nil, fmt.Errorf("permsched: ReadMatrix: unknown entry kind %d", int(kind))
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	var (
		rows     [][]int32
		sizes    [][]int64
		n        = -1
		line     = 0
		messages = 0
	)
	header := struct {
		line, n int
		kind    string
	}{}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if h := headerRE.FindStringSubmatch(text); h != nil {
			if header.line > 0 {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("a second header (the first is on line %d); a matrix file has one, before its rows", header.line)}
			}
			if n >= 0 {
				return nil, &MatrixError{Line: line, Msg: "a header after the first row; a matrix file's header comes before its rows"}
			}
			hn, err := strconv.Atoi(h[1])
			if err != nil || hn < 1 || hn > MaxRanks {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("the header gives n = %s; want 1..%d", h[1], MaxRanks)}
			}
			hk, err := ParseEntryKind(h[2])
			if err != nil {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("the header says entries = %s; want bytes or count", h[2])}
			}
			if kind == EntryHeader {
				kind = hk
			}
			if hk != kind {
				he := &HeaderKindError{line, hk, kind}
				return nil, &MatrixError{Line: line, Msg: he.Error(), Err: he}
			}
			header.line, header.n, header.kind = line, hn, h[2]
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if kind == EntryHeader {
			kind = EntryBytes // no header: bytes, the form of a trace
		}
		fields := strings.FieldsFunc(text, func(c rune) bool { return c == ' ' || c == '\t' || c == ',' || c == '\r' })
		if n < 0 {
			n = len(fields)
			if n > MaxRanks {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("%d entries in the first row; at most %d ranks", n, MaxRanks)}
			}
			if header.line > 0 && n != header.n {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("the first row has %d entries, but the header on line %d gives n = %d", n, header.line, header.n)}
			}
		}
		if len(fields) != n {
			return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("row %d has %d entries, want %d (the matrix must be square: n rows of n entries, n fixed by the first row)", len(rows), len(fields), n)}
		}
		if len(rows) == n {
			return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("more than %d rows (the matrix must be square: the first row has %d entries)", n, n)}
		}
		var row []int32
		var sz []int64
		for j, f := range fields {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("entry %d %q is not an integer", j, f)}
			}
			if v < 0 {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("entry %d is %d: entries must be non-negative", j, v)}
			}
			if v == 0 {
				continue
			}
			switch kind {
			case EntryBytes:
				if v > maxMessageBytes {
					return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("entry %d is %d bytes; one message carries at most %d", j, v, maxMessageBytes)}
				}
				row = append(row, int32(j))
				sz = append(sz, v)
				messages++
			case EntryCount:
				if v > MaxEntryCount {
					return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("entry %d is %d messages; at most %d per entry", j, v, MaxEntryCount)}
				}
				messages += int(v)
				if messages > MaxFileMessages {
					break
				}
				for c := int64(0); c < v; c++ {
					row = append(row, int32(j))
				}
			}
			if messages > MaxFileMessages {
				return nil, &MatrixError{Line: line, Msg: fmt.Sprintf("more than %d messages in the file", MaxFileMessages)}
			}
		}
		rows = append(rows, row)
		sizes = append(sizes, sz)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &MatrixError{Line: line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		return nil, err
	}
	if n <= 0 {
		return nil, &MatrixError{Line: 0, Msg: "no rows (want n rows of n non-negative integers)"}
	}
	if len(rows) != n {
		return nil, &MatrixError{Line: 0, Msg: fmt.Sprintf("%d rows of %d entries: the matrix must be square (n rows of n entries)", len(rows), n)}
	}
	if kind == EntryCount {
		return NewMatrix(n, rows)
	}
	return NewWeighted(n, rows, sizes)
}

// headerRE matches WriteMatrix's header line.
var headerRE = regexp.MustCompile(`^#\s*commcost permsched matrix:\s*n\s*=\s*(\S+?),\s*entries\s*=\s*(\S+)\s*$`)

// MaxMatrixFileBytes bounds a matrix file: MaxRanks rows of at most
// maxLineBytes would be 50 GB, far more than any trace; 4 GiB holds a
// dense matrix of 2^15 ranks with 3-digit entries.
const MaxMatrixFileBytes = 4 << 30

// ReadMatrixFile reads the matrix file at path (ReadMatrix), which must be
// a regular file: a FIFO or a device is refused before it is opened for
// reading, so a command never waits on one. Errors name the path.
func ReadMatrixFile(path string, kind EntryKind) (*Matrix, error) {
	f, err := results.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxMatrixFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than a matrix file may hold (%d)", path, st.Size(), int64(MaxMatrixFileBytes))
	}
	return ReadMatrix(f, kind)
}

// WriteMatrix writes m in ReadMatrix's format: entries are bytes for a
// weighted matrix, message counts otherwise (so ReadMatrix with the matching
// kind returns an equal matrix, up to the order of repeated messages).
func WriteMatrix(w io.Writer, m *Matrix) error {
	bw := bufio.NewWriter(w)
	kind := EntryCount
	if m.Weighted() {
		kind = EntryBytes
	}
	fmt.Fprintf(bw, "# commcost permsched matrix: n = %d, entries = %s\n", m.n, kind)
	row := make([]int64, m.n)
	buf := make([]byte, 0, 16)
	for i := 0; i < m.n; i++ {
		clear(row)
		for k, j := range m.Row(i) {
			if m.bytes == nil {
				row[j]++
			} else {
				row[j] += m.bytes[int(m.off[i])+k]
			}
		}
		for j, v := range row {
			if j > 0 {
				bw.WriteByte(' ')
			}
			bw.Write(strconv.AppendInt(buf[:0], v, 10))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
