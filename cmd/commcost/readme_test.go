package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/model"
)

// README.md's subcommand and model tables are generated from the
// registries (cli.Root's leaves with their summaries; model.All()), between
// the markers below; -update rewrites them.
const (
	commandsBegin, commandsEnd = "<!-- commands -->\n", "<!-- /commands -->"
	modelsBegin, modelsEnd     = "<!-- models -->\n", "<!-- /models -->"
)

func readmePath() string { return filepath.Join("..", "..", "README.md") }

// cell escapes what a markdown table cell cannot hold.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// commandsTable is the subcommand table: one row per runnable command of
// cli.Root, with its summary.
func commandsTable() string {
	var b strings.Builder
	b.WriteString("| subcommand | what it does |\n|---|---|\n")
	for _, n := range cli.Root.Leaves() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", n.Name, cell(n.Summary))
	}
	return b.String()
}

// modelsTable is the model table: every registered kind, fitted or
// derived, the benches it is fitted from and the patterns it predicts.
func modelsTable() string {
	var b strings.Builder
	b.WriteString("| model | fitted from | predicts | what it is |\n|---|---|---|---|\n")
	for _, k := range model.All() {
		from := strings.Join(k.Benches, ", ")
		if k.Fit == nil {
			from = "not fitted: derived from another kind's fit"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, cell(from), cell(strings.Join(k.New().Patterns(), ", ")), cell(k.Summary))
	}
	return b.String()
}

// replaceRegion puts body between begin and end in s.
func replaceRegion(s, begin, end, body string) (string, string, error) {
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return "", "", fmt.Errorf("README.md lacks the markers %q ... %q", strings.TrimSpace(begin), end)
	}
	return s[:i+len(begin)] + body + s[j:], s[i+len(begin) : j], nil
}

// TestReadmeTables: README's subcommand and model tables are the
// registries' (go test ./cmd/commcost -run Readme -update rewrites them).
func TestReadmeTables(t *testing.T) {
	data, err := os.ReadFile(readmePath())
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, r := range []struct {
		name, begin, end, want string
	}{
		{"subcommand", commandsBegin, commandsEnd, commandsTable()},
		{"model", modelsBegin, modelsEnd, modelsTable()},
	} {
		next, got, err := replaceRegion(s, r.begin, r.end, r.want)
		if err != nil {
			t.Fatal(err)
		}
		if got != r.want {
			if !*update {
				t.Errorf("README.md's %s table differs from the registry; run go test ./cmd/commcost -run Readme -update\n--- README\n%s--- registry\n%s", r.name, got, r.want)
			}
			s = next
		}
	}
	if *update && s != string(data) {
		if err := os.WriteFile(readmePath(), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadmeLength: README stays a page a newcomer reads in minutes.
func TestReadmeLength(t *testing.T) {
	data, err := os.ReadFile(readmePath())
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 300 {
		t.Errorf("README.md has %d lines, more than 300: move methodology and findings to docs/", n)
	}
}

// shellBlocks returns the logical lines of README's sh code blocks
// (backslash continuations joined), with their line numbers.
func shellBlocks(readme string) (lines []string, at []int) {
	in := false
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case in && strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`) + " ")
			continue
		}
		cur.WriteString(l)
		lines, at = append(lines, cur.String()), append(at, start)
		cur.Reset()
	}
	return lines, at
}

// commcostRE finds a commcost invocation in a shell line, bin/commcost
// anywhere (after a launcher) or commcost where a command starts (not
// "spack install commcost"), and its arguments up to the end of that
// command.
var commcostRE = regexp.MustCompile(`(?:(?:^|[\s'"(;&|])bin/commcost|(?:^|[;&|(]|['"])\s*commcost)((?:\s+[^\s;&|'"#)]+)*)`)

// commandLines returns every commcost invocation in README's shell blocks:
// its arguments and the README line it is on.
func commandLines(readme string) (cmds [][]string, at []int) {
	lines, nums := shellBlocks(readme)
	for i, l := range lines {
		if j := strings.Index(l, " #"); j >= 0 {
			l = l[:j]
		}
		for _, m := range commcostRE.FindAllStringSubmatch(l, -1) {
			cmds, at = append(cmds, strings.Fields(m[1])), append(at, nums[i])
		}
	}
	return cmds, at
}

// flagsOf returns the flag names a leaf's --help lists.
func flagsOf(t *testing.T, path []string) map[string]bool {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(append(append([]string(nil), path...), "--help"), &stdout, &stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("commcost %s --help: %v\n%s", strings.Join(path, " "), err, stderr.String())
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([A-Za-z0-9][-A-Za-z0-9_]*)`).FindAllStringSubmatch(stdout.String()+stderr.String(), -1) {
		names[m[1]] = true
	}
	return names
}

// TestReadmeCommands: every commcost command line in the shell blocks of
// README.md and docs/ names a subcommand of the registry, and every flag
// it passes is one that subcommand's --help lists.
func TestReadmeCommands(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	findings, _ := filepath.Glob(filepath.Join("..", "..", "docs", "findings", "*.md"))
	flags := map[string]map[string]bool{}
	for _, path := range append(append([]string{readmePath()}, docs...), findings...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cmds, at := commandLines(string(data))
		if len(cmds) == 0 && path == readmePath() {
			t.Fatal("no commcost command lines found in README's sh blocks")
		}
		checkCommands(t, filepath.Base(path), cmds, at, flags)
	}
}

// checkCommands checks command lines of one file against the registry;
// flags caches each leaf's flag names.
func checkCommands(t *testing.T, file string, cmds [][]string, at []int, flags map[string]map[string]bool) {
	t.Helper()
	for i, args := range cmds {
		// The path: the longest run of words that names a node.
		node, n := cli.Root, 0
		for n < len(args) && !strings.HasPrefix(args[n], "-") {
			c := node.Child(args[n])
			if c == nil {
				break
			}
			node, n = c, n+1
		}
		if n == 0 || node.Run == nil {
			t.Errorf("%s:%d: commcost %s: no such subcommand (a group needs one of %s)", file, at[i], strings.Join(args, " "), strings.Join(node.Names(), ", "))
			continue
		}
		key := node.Name
		if flags[key] == nil {
			flags[key] = flagsOf(t, strings.Fields(key))
		}
		for _, a := range args[n:] {
			if a == "--" {
				break
			}
			if !strings.HasPrefix(a, "-") || a == "-" {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !flags[key][name] {
				t.Errorf("%s:%d: commcost %s: %s has no flag --%s", file, at[i], strings.Join(args, " "), key, name)
			}
		}
	}
}

// TestReadmeCommandParser: the checker finds the invocations inside
// launcher lines, quoted scripts and pipelines, and stops at the end of
// each command.
func TestReadmeCommandParser(t *testing.T) {
	readme := "text `commcost nothing`\n```sh\nmpirun -np 2 bin/commcost pingpong --sizes 1:4M \\\n  --out pp.jsonl   # a comment --no\n" +
		"scripts/x.sh -- '$CC_MPIRUN bin/commcost alltoall --ranks 2 && bin/commcost fit hockney a.jsonl'\nmake run\n" +
		"spack install commcost ^openmpi\nspack load commcost && commcost info\n```\n"
	cmds, at := commandLines(readme)
	var got []string
	for i, c := range cmds {
		got = append(got, fmt.Sprintf("%d:%s", at[i], strings.Join(c, " ")))
	}
	want := []string{"3:pingpong --sizes 1:4M --out pp.jsonl", "5:alltoall --ranks 2", "5:fit hockney a.jsonl", "8:info"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commandLines = %q, want %q", got, want)
	}
}
