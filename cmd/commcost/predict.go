package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/commcost/commcost/cli"
	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/report"
	"github.com/commcost/commcost/results"
)

func init() {
	cli.Register(cli.Command{
		Name:    "predict",
		Summary: "predict a pattern instance's time from a fitted model (JSON from 'fit --format json')",
		Run:     runPredict,
	})
}

const predictUsage = `usage: commcost predict MODEL.json PATTERN [key=value ...] [flags]

MODEL.json is the output of 'commcost fit MODEL FILE --format json'.
PATTERN is a record bench name the model predicts; key=value pairs are its
parameters as the records carry them (numbers, or strings such as op=read),
e.g.

  commcost predict hockney.json pingpong bytes=65536
  commcost predict tri.json kkaccess k=4 l=1024 r=1 op=read
  commcost predict twolevel.json aggregate op=alltoall bytes=4096 ranks=8

ranks=N (or --ranks N) sets the number of ranks.

patterns each model predicts:
`

func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("predict", stderr)
	format := fs.String("format", "table", "output: table or json")
	ranksFlag := fs.Int("ranks", 0, "number of ranks of the instance (alltoall, aggregate, ...)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), predictUsage)
		report.WritePredictable(fs.Output())
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return opts.Badf("--format %s: want table or json", *format)
	}
	if len(pos) < 2 {
		return opts.Badf("predict wants MODEL.json and PATTERN, got %d argument(s); usage: commcost predict MODEL.json PATTERN [key=value ...]", len(pos))
	}
	path, pattern := pos[0], pos[1]
	params, ranks, err := patterns.ParseAssignments(pos[2:])
	if err != nil {
		return opts.Badf("parameter %v; want key=value, e.g. bytes=1024 or op=read", err)
	}
	if *ranksFlag != 0 {
		if *ranksFlag < 1 || *ranksFlag > 1<<24 {
			return opts.Badf("--ranks %d: want 1 to %d", *ranksFlag, 1<<24)
		}
		if ranks != 0 && ranks != *ranksFlag {
			return opts.Badf("--ranks %d and ranks=%d disagree", *ranksFlag, ranks)
		}
		ranks = *ranksFlag
	}
	m, _, err := model.ReadFile(path)
	if err != nil {
		return opts.Badf("MODEL.json %s: %v", path, err)
	}
	// The instance is checked by the code that checks the pattern's
	// flags and records (patterns.CheckParams), strictly: a key the
	// pattern does not have is refused, not ignored.
	typed := strings.TrimSpace("PATTERN " + opts.Echo(pattern) + " " + typedInstance(pos[2:]))
	if err := checkInstance(pattern, params, pos[2:]); err != nil {
		return opts.Badf("%s: %v", typed, err)
	}
	in := model.Instance{Pattern: pattern, Params: params, Ranks: ranks}
	v, err := model.PredictChecked(m, in)
	if err != nil {
		var missing *model.MissingParamError
		if errors.As(err, &missing) {
			return opts.Badf("%s: the %s model needs %s=VALUE for %s; usage: commcost predict MODEL.json %s %s=VALUE [key=value ...]",
				typed, m.Kind(), missing.Key, pattern, pattern, missing.Key)
		}
		if errors.Is(err, model.ErrUnsupportedPattern) || errors.Is(err, model.ErrBadRecord) {
			return opts.Badf("%s: %v", typed, err)
		}
		if errors.Is(err, model.ErrUnphysical) {
			// The model cannot predict the instance: the file, as in
			// replay and export simgrid, is what is wrong.
			return opts.Badf("MODEL.json %s: %v", path, err)
		}
		return err
	}
	unit := "s"
	if pattern == "bandwidth" {
		unit = "B/s"
	}
	// The hyperbolic model's all-to-all and chain depend on its medium
	// decision, which the output names (both predictions when undecided).
	var medium *report.Medium
	if h, ok := m.(*model.Hyperbolic); ok {
		medium = report.MediumOf(h, in)
	}
	var out bytes.Buffer
	if *format == "json" {
		b, err := json.MarshalIndent(struct {
			Model     string         `json:"model"`
			Instance  model.Instance `json:"instance"`
			Predicted float64        `json:"predicted"`
			Unit      string         `json:"unit"`
			Medium    *report.Medium `json:"medium,omitempty"`
		}{m.Kind(), in, v, unit, medium}, "", "  ")
		if err != nil {
			return err
		}
		out.Write(b)
		out.WriteByte('\n')
	} else {
		val, u := predictedText(v, unit)
		rk := "-"
		if ranks > 0 {
			rk = strconv.Itoa(ranks)
		}
		if err := report.Table(&out, []string{"model", "pattern", "params", "ranks", "predicted", "unit"},
			[][]string{{m.Kind(), pattern, report.ParamList(params), rk, val, u}}); err != nil {
			return err
		}
		if medium != nil {
			fmt.Fprintln(&out, medium)
		}
	}
	_, err = stdout.Write(out.Bytes())
	return err
}

// typedInstance is the key=value arguments as typed, for messages: a
// value such as bytes=99999999999999999999999 reads back as the 1e+23 it
// parses to, which the user did not write.
func typedInstance(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = opts.Echo(a)
	}
	return strings.Join(out, " ")
}

// checkInstance is patterns.CheckParams of the instance, strictly, with
// a refused number named as typed in args ("bytes =
// 99999999999999999999999: must be ..."); a refused string is quoted as
// the check quotes it.
func checkInstance(pattern string, params results.Params, args []string) error {
	err := patterns.CheckParams(pattern, params, true)
	if err == nil {
		return nil
	}
	typed := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			typed[k] = v
		}
	}
	// CheckParams refuses the first key in sorted order that is unknown
	// or out of range: find the same one.
	for _, k := range slices.Sorted(maps.Keys(params)) {
		spec, ok := patterns.Spec(pattern, k)
		if !ok {
			break
		}
		if why := spec.Reason(params[k]); why != "" {
			if _, num := params[k].(float64); num && typed[k] != "" {
				return fmt.Errorf("%s = %s: %s", k, opts.Echo(typed[k]), why)
			}
			break
		}
	}
	return err
}

// yearSeconds is a Julian year.
const yearSeconds = 365.25 * 24 * 3600

// predictedText is a prediction and its unit as commcost's tables show
// them: a time in ns, us, ms or s with three significant digits
// (results.FormatSeconds), one of 1000 s or more in digits of s with its
// years beside it, however implausible; a bandwidth in MB/s.
func predictedText(v float64, unit string) (string, string) {
	switch unit {
	case "s":
		if math.Abs(v) < 1000 || math.IsNaN(v) {
			val, u, _ := strings.Cut(results.FormatSeconds(v), " ")
			return val, u
		}
		if y := math.Abs(v) / yearSeconds; y >= 1 {
			return fixed3(v), "s (about " + fixed3(y) + " years)"
		}
		return fixed3(v), "s"
	case "B/s":
		return fixed3(v / 1e6), "MB/s (10^6 B)"
	}
	return fixed3(v), unit
}

// fixed3 prints x with three significant digits and no exponent: 0.502,
// 13.6, 201, 1230000.
func fixed3(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	e := int(math.Floor(math.Log10(math.Abs(x))))
	if e < 2 {
		return strconv.FormatFloat(x, 'f', 2-e, 64)
	}
	// The digits of the rounded mantissa and zeros: exact in text where
	// the product of a float and a power of ten is not.
	m, exp, _ := strings.Cut(strconv.FormatFloat(x, 'e', 2, 64), "e")
	n, _ := strconv.Atoi(exp)
	return strings.Replace(m, ".", "", 1) + strings.Repeat("0", n-2)
}
