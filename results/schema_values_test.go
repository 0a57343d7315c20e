package results

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The enumerated record fields: the Go field, the prefix of its constants in
// record.go, and the README section that documents its values.
var enumFields = []struct {
	field, prefix, section string
}{
	{"Reduction", "Reduction", "### `aggregate` values"},
	{"Stop", "Stop", "### `stop` values"},
}

// enumConstants reads record.go's string constants whose names start with
// prefix: name -> value. Reading the source, not a list kept in the test,
// means a new constant is checked without touching this file.
func enumConstants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "record.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("record.go: %s is not a string literal constant", n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				out[n.Name] = v
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("record.go declares no %s* constants", prefix)
	}
	return out
}

// readmeValues returns the first-column values of the table under heading
// in README.md.
func readmeValues(t *testing.T, heading string) []string {
	t.Helper()
	fh, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	in, table := false, false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == heading:
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "#"):
			in = false
			continue
		case strings.HasPrefix(line, "|"):
			table = true
			cells := strings.Split(line, "|")
			v := strings.TrimSpace(cells[1])
			if strings.HasPrefix(v, "`") && strings.HasSuffix(v, "`") && len(v) > 2 {
				out = append(out, strings.Trim(v, "`"))
			}
		case table:
			in = false // the table has ended
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("README.md has no value table under %q", heading)
	}
	return out
}

// TestSchemaValuesDocumented: results/README.md lists exactly the values of
// the Reduction* and Stop* constants, no more, no fewer.
func TestSchemaValuesDocumented(t *testing.T) {
	for _, ef := range enumFields {
		consts := enumConstants(t, ef.prefix)
		var code []string
		for _, v := range consts {
			code = append(code, v)
		}
		doc := readmeValues(t, ef.section)
		slices.Sort(code)
		slices.Sort(doc)
		for _, v := range code {
			if !slices.Contains(doc, v) {
				t.Errorf("%s value %q is written by the code but missing from README.md %q", ef.field, v, ef.section)
			}
		}
		for _, v := range doc {
			if !slices.Contains(code, v) {
				t.Errorf("README.md %q documents %q, which no %s* constant in record.go holds", ef.section, v, ef.prefix)
			}
		}
		if len(doc) != len(slices.Compact(slices.Clone(doc))) {
			t.Errorf("README.md %q lists a value twice: %v", ef.section, doc)
		}
	}
}

// TestSchemaValuesWritten scans every non-test Go file of the module: the
// Reduction and Stop fields (of a Record, or of the patterns.Measurement that
// becomes one) are set only from the results constants, never from string
// literals that could drift from the documentation; no reduction value
// appears as a literal anywhere else (a table of literals copied into the
// field later would escape the first check); and every constant is used by
// some writer, so nothing documented is dead.
func TestSchemaValuesWritten(t *testing.T) {
	root := ".."
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("module root not found from results/: %v", err)
	}
	group := map[string]map[string]string{} // field -> constant name -> value
	reductionValues := map[string]bool{}
	for _, ef := range enumFields {
		group[ef.field] = enumConstants(t, ef.prefix)
	}
	for _, v := range group["Reduction"] {
		reductionValues[v] = true
	}
	used := map[string]bool{}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		inResults := f.Name.Name == "results"
		isDecl := inResults && name == "record.go"
		// check judges a value assigned to an enumerated field.
		check := func(field string, v ast.Expr) {
			consts := group[field]
			switch x := v.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					t.Errorf("%s: %s set from the literal %s; use a results.%s* constant (README.md documents exactly those)",
						fset.Position(x.Pos()), field, x.Value, field)
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "results" {
					if _, ok := consts[x.Sel.Name]; !ok {
						t.Errorf("%s: %s set from results.%s, which is not a %s* constant", fset.Position(x.Pos()), field, x.Sel.Name, field)
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && group[k.Name] != nil {
					check(k.Name, x.Value)
				}
			case *ast.AssignStmt:
				if len(x.Lhs) == len(x.Rhs) {
					for i, l := range x.Lhs {
						if s, ok := l.(*ast.SelectorExpr); ok && group[s.Sel.Name] != nil {
							check(s.Sel.Name, x.Rhs[i])
						}
					}
				}
			case *ast.BasicLit:
				if x.Kind == token.STRING && !isDecl {
					if v, _ := strconv.Unquote(x.Value); reductionValues[v] {
						t.Errorf("%s: the literal %s is a reduction value; use its results.Reduction* constant", fset.Position(x.Pos()), x.Value)
					}
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "results" {
					used[x.Sel.Name] = true
				}
			case *ast.Ident:
				if inResults && !isDecl {
					used[x.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("scanned only %d Go files under %s; is the module root right?", files, root)
	}
	for field, consts := range group {
		for name, v := range consts {
			if !used[name] {
				t.Errorf("results.%s (%s %q) is documented but no code writes it", name, field, v)
			}
		}
	}
}
