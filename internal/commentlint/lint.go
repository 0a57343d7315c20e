// Package commentlint finds code comments that hold what belongs in a
// commit message or in docs/findings: a calendar date (year, month, day
// joined by hyphens), a count of runs (a number of two or more, in digits
// or words, followed by the word "runs"; or "runs" followed by "each"),
// an issue number, or a path outside the repository. Comments say what and why (formulas with their
// paper and equation, invariants, units); the measurements that justified
// a choice live with their date, commit and machine in docs/findings.
//
// Its test walks the repository, so `make test` (go test ./...) fails on
// such a comment in a non-test .go, .c or .h file.
package commentlint

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Comment is one comment group with its comment markers removed: the
// consecutive // lines of a block, or one /* */ comment. Lines hold the
// text of each source line, the first at source line Line.
type Comment struct {
	Line  int
	Lines []string
}

// Finding is one rule a comment breaks.
type Finding struct {
	File string // slash-separated, relative to the walked root
	Line int
	Rule string
	Text string // the matched words
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %q", f.File, f.Line, f.Rule, f.Text)
}

// numberWord is a count of two or more in words; a count in digits is
// checked apart (digitsAtLeastTwo), since "rank 0 runs" is a verb.
const numberWord = `two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|several|many|dozens of|hundreds of`

var rules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"date", regexp.MustCompile(`\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b`)},
	{"run count", regexp.MustCompile(`(?i)(?:\b(\w+)\s+)?\b(\d+|` + numberWord + `)\s+(?:[a-z]+-[a-z]+\s+)?runs\b`)},
	{"run count", regexp.MustCompile(`(?i)\bruns\s+each\b`)},
	{"issue reference", regexp.MustCompile(`(?i)\bissues?\s+#?\d+`)},
	{"path outside the repository", regexp.MustCompile(`\.\./shared/|/work/|\b(?:DESIGN|ENVIRONMENT|STYLE)\.md\b`)},
}

// Check returns the rules c breaks, with the source line of each match.
func Check(file string, c Comment) []Finding {
	text := strings.Join(c.Lines, "\n")
	var out []Finding
	for _, r := range rules {
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			if r.name == "run count" && len(m) >= 6 && !runCount(text, m) {
				continue
			}
			line := c.Line + strings.Count(text[:m[0]], "\n")
			out = append(out, Finding{File: file, Line: line, Rule: r.name, Text: strings.Join(strings.Fields(text[m[0]:m[1]]), " ")})
		}
	}
	return out
}

// runCount tells a count of runs from "rank 0 runs the loop": a count in
// digits must be 2 or more and not name a rank or a process.
func runCount(text string, m []int) bool {
	num := text[m[4]:m[5]]
	if num == "" || num[0] < '0' || num[0] > '9' {
		return true
	}
	if num == "0" || num == "1" {
		return false
	}
	if m[2] >= 0 {
		switch strings.ToLower(text[m[2]:m[3]]) {
		case "rank", "ranks", "process", "processes", "node", "host":
			return false
		}
	}
	return true
}

// GoComments returns the comment groups of a Go file.
func GoComments(path string, src []byte) ([]Comment, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []Comment
	for _, g := range f.Comments {
		var c Comment
		for _, cm := range g.List {
			line := fset.Position(cm.Slash).Line
			if c.Lines == nil {
				c.Line = line
			}
			for len(c.Lines) < line-c.Line {
				c.Lines = append(c.Lines, "")
			}
			c.Lines = append(c.Lines, stripMarkers(cm.Text)...)
		}
		out = append(out, c)
	}
	return out, nil
}

// CComments returns the comments of a C source or header: each /* */
// comment, and each run of // comments on consecutive lines. String and
// character literals are skipped.
func CComments(src []byte) []Comment {
	var out []Comment
	s := string(src)
	line := 1
	lastLine := -1 // the line of the last // comment, to join runs
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			line++
		case s[i] == '"' || s[i] == '\'':
			q := s[i]
			for i++; i < len(s) && s[i] != q && s[i] != '\n'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case strings.HasPrefix(s[i:], "//"):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				end = len(s) - i
			}
			text := stripMarkers(s[i : i+end])
			if lastLine == line-1 && len(out) > 0 {
				out[len(out)-1].Lines = append(out[len(out)-1].Lines, text...)
			} else {
				out = append(out, Comment{Line: line, Lines: text})
			}
			lastLine = line
			i += end - 1
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				end = len(s) - i - 2
			}
			body := s[i : i+2+end+2]
			if i+2+end+2 > len(s) {
				body = s[i:]
			}
			out = append(out, Comment{Line: line, Lines: stripMarkers(body)})
			line += strings.Count(body, "\n")
			i += len(body) - 1
		}
	}
	return out
}

// stripMarkers removes //, /*, */ and a block comment's leading " * ".
func stripMarkers(text string) []string {
	if t, ok := strings.CutPrefix(text, "//"); ok {
		return []string{t}
	}
	text = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(t, "*") {
			l = t[1:]
		}
		lines[i] = l
	}
	return lines
}

// Walk checks every non-test .go, .c and .h file below root, skipping
// hidden directories, testdata and bin, and returns the findings sorted
// by file and line.
func Walk(root string) ([]Finding, error) {
	var out []Finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if ext != ".go" && ext != ".c" && ext != ".h" || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var cs []Comment
		if ext == ".go" {
			if cs, err = GoComments(path, src); err != nil {
				return err
			}
		} else {
			cs = CComments(src)
		}
		for _, c := range cs {
			out = append(out, Check(rel, c)...)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, err
}
