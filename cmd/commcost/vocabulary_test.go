package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/commcost/commcost/cli"
)

// flagLineRE matches a flag's first line in a help text: "  -name type".
var flagLineRE = regexp.MustCompile(`(?m)^  -([a-zA-Z0-9-]+)(?: ([^\s]+))?\n\s+(.*)$`)

// helpFlag is one flag as a subcommand's help shows it.
type helpFlag struct{ typ, usage string }

// commandFlags runs every leaf's help and returns its flags by path.
func commandFlags(t *testing.T) map[string]map[string]helpFlag {
	t.Helper()
	out := map[string]map[string]helpFlag{}
	for _, n := range cli.Root.Leaves() {
		code, stdout, stderr := runCLI(t, append([]string{"help"}, strings.Fields(n.Name)...)...)
		if code != 0 {
			t.Fatalf("help %s: exit %d: %s", n.Name, code, stderr)
		}
		flags := map[string]helpFlag{}
		for _, m := range flagLineRE.FindAllStringSubmatch(stdout, -1) {
			flags[m[1]] = helpFlag{typ: m[2], usage: m[3]}
		}
		out[n.Name] = flags
	}
	return out
}

// TestFlagVocabulary walks every subcommand's flags: one name per concept,
// one meaning per name. --format names its accepted values and there is no
// separate --markdown (an old spelling stays only as a deprecated alias);
// --samples is a switch that keeps the repetitions everywhere; no help
// lists a flag as not used; a shared concept (the flags of job.Launch,
// job.Output and the repetition harness, --seed) has one type everywhere.
func TestFlagVocabulary(t *testing.T) {
	deprecated := map[string]string{"markdown": "format", "calib-max-time": "cal-max-time", "keep-samples": "samples"}
	shared := map[string]bool{"seed": true, "samples": true, "out": true, "backend": true, "np": true, "timeout": true, "quiet": true,
		"max-time": true, "min-reps": true, "max-reps": true, "rel-ci": true, "warmup": true, "iters": true, "validate": true, "sizes": true}
	types := map[string]map[string][]string{} // flag -> type -> commands
	for cmd, flags := range commandFlags(t) {
		for name, f := range flags {
			if to, old := deprecated[name]; old && !strings.HasPrefix(f.usage, "deprecated") {
				t.Errorf("%s: --%s is not marked deprecated (the name is --%s)", cmd, name, to)
			}
			if strings.Contains(f.usage, "not used") {
				t.Errorf("%s: --%s: help lists a flag the command does not read", cmd, name)
			}
			switch name {
			case "format":
				if !strings.Contains(f.usage, "table") {
					t.Errorf("%s: --format does not name its accepted values: %q", cmd, f.usage)
				}
			case "samples":
				if f.typ != "" || !strings.Contains(f.usage, "keep every repetition's time") {
					t.Errorf("%s: --samples is %q %q, want the switch that keeps every repetition's time", cmd, f.typ, f.usage)
				}
			}
			if strings.HasPrefix(f.usage, "deprecated") || !shared[name] {
				continue
			}
			if types[name] == nil {
				types[name] = map[string][]string{}
			}
			typ := f.typ // a value's name (file, DIR) reads as a string
			if typ != "" && typ != "int" && typ != "uint" && typ != "float" && typ != "duration" {
				typ = "string"
			}
			types[name][typ] = append(types[name][typ], cmd)
		}
	}
	for name, byType := range types {
		if len(byType) > 1 {
			var parts []string
			for typ, cmds := range byType {
				sort.Strings(cmds)
				parts = append(parts, typ+": "+strings.Join(cmds, ", "))
			}
			sort.Strings(parts)
			t.Errorf("--%s has %d types: %s", name, len(byType), strings.Join(parts, "; "))
		}
	}
}
