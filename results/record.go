// Package results holds commcost's measurement record (docs/ARCHITECTURE.md,
// contract 3), its summary statistics, the writers (JSON Lines, CSV, Go
// benchmark format, terminal and markdown tables) and the reader. results/README.md documents
// every field, the schema version policy, the file formats and the run
// directory layout.
//
// Units: times are seconds and sizes are bytes unless a record's Unit says
// otherwise; bandwidths are bytes per second in records and are only scaled
// (MB = 10^6 bytes, labelled) when rendered for people.
//
// Invariants:
//   - A Record is the unit of durability: writers emit and flush one whole
//     record at a time, so an interrupted run keeps every record it finished.
//   - Nothing is dropped silently: Summary.Dropped counts trimmed outliers and
//     Summary.Invalid counts non-finite samples left out of the statistics.
//   - Everything a report shows can be regenerated from the JSON Lines file.
package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// SchemaVersion is written into every record; readers refuse newer versions.
// Adding an optional field does not change it; renaming or removing a field,
// or changing a field's meaning or unit, does (README.md "Schema versions").
const SchemaVersion = 1

// Units for Record.Unit. Other strings are allowed (no spaces); these are the
// ones the renderers know how to scale.
const (
	UnitSeconds     = "s"     // a time in seconds
	UnitBytesPerSec = "B/s"   // a bandwidth in bytes per second
	UnitBytes       = "B"     // a size in bytes
	UnitCount       = "count" // a dimensionless count
)

// Values of Record.Reduction (JSON "aggregate"): how one repetition's value
// is formed from the times of the ranks that took part (MEASURE.md,
// "Repetitions and statistics"). These are every value commcost writes, and
// results/README.md documents exactly these (TestSchemaValuesDocumented).
const (
	// ReductionMaxOverRanks: the maximum over ranks of each rank's time
	// from the barrier that starts the repetition.
	ReductionMaxOverRanks = "max-over-ranks"
	// ReductionRank0: rank 0's own time (the initiator of a two-party
	// pattern timed from one side, as OSU does).
	ReductionRank0 = "rank0"
	// ReductionWindowLatestEnd: the latest end minus the agreed common
	// start, both on a clock synchronised to rank 0 (window start).
	ReductionWindowLatestEnd = "window-latest-end"
	// ReductionRank0Wall: rank 0's wall-clock time for a whole collective
	// workload, one sample (a correctness run's duration, not a timing loop).
	ReductionRank0Wall = "rank0-wall"
)

// Values of Record.Stop: why the repetitions stopped. Every value commcost
// writes; results/README.md documents exactly these.
const (
	StopRelCI   = "rel-ci"   // the median's 95% CI half-width reached the target fraction
	StopMaxReps = "max-reps" // the cap on repetitions was reached
	StopMaxTime = "max-time" // the cap on timed seconds was reached
	StopFixed   = "fixed"    // a fixed number of repetitions, no adaptive stopping
)

// Record is one measurement: one benchmark at one parameter point.
type Record struct {
	Schema int    `json:"schema"`
	Bench  string `json:"bench"`  // e.g. "pingpong", "kkaccess"
	Params Params `json:"params"` // every parameter of the point, e.g. {"bytes":8}
	Ranks  int    `json:"ranks"`  // ranks that took part
	Unit   string `json:"unit"`   // "s" for times, "B/s" for bandwidth, "count", ...
	Summary
	// Ranks' spread for multi-rank patterns: per-rank medians' min/avg/max.
	RankMin float64 `json:"rank_min,omitempty"`
	RankAvg float64 `json:"rank_avg,omitempty"`
	RankMax float64 `json:"rank_max,omitempty"`
	// Reduction says how a repetition's value is formed from the ranks'
	// times: one of the Reduction* values (MEASURE.md). Its JSON name,
	// "aggregate", is schema 1's and stays for compatibility.
	Reduction string `json:"aggregate,omitempty"`
	// Stop says why repetitions stopped: one of the Stop* values.
	Stop string `json:"stop,omitempty"`
	// Derived values computed from the summary (e.g. latency from a round
	// trip, MB/s), with their own units in the key name.
	Derived map[string]float64 `json:"derived,omitempty"`
	// Extra per-record counters (messages, bytes, link loads, ...).
	Counters map[string]float64 `json:"counters,omitempty"`
	// Workload is the communication of an application phase as pattern
	// instances with counts (WorkItem), so any model can predict it from
	// the record alone. Empty for pattern measurements.
	Workload []WorkItem `json:"workload,omitempty"`
	Samples  []float64  `json:"samples,omitempty"` // raw repetitions, when kept
	Meta     Meta       `json:"meta"`
}

// Params holds parameter values: numbers, strings or bools (JSON scalars).
//
// Numbers read back from JSON are int when their value is integral and fits
// in an int64, and float64 otherwise; so Params{"bytes": 8} survives a round
// trip unchanged, and a record read from a file re-encodes to the same bytes.
type Params map[string]any

// Summary is the statistics of one sample (MEASURE.md "Repetitions and
// statistics"): CI95 is the nonparametric 95% confidence interval of the
// median from order statistics. Summarize documents every field.
type Summary struct {
	N       int        `json:"n"`
	Min     float64    `json:"min"`
	Median  float64    `json:"median"`
	Mean    float64    `json:"mean"`
	Max     float64    `json:"max"`
	P90     float64    `json:"p90"`
	P99     float64    `json:"p99"`
	CI95    [2]float64 `json:"ci95"`
	Dropped int        `json:"dropped,omitempty"` // outliers removed, never silently
	// Invalid counts NaN and ±Inf samples left out of every statistic (they
	// are not part of N). Added in schema 1 as an optional field.
	Invalid int `json:"invalid,omitempty"`
}

// Meta is what is needed to repeat the run.
type Meta struct {
	Commit       string   `json:"commit"`
	MPILibrary   string   `json:"mpi_library"`
	MPIVersion   string   `json:"mpi_version"`
	Hosts        []string `json:"hosts"`
	RanksPerHost []int    `json:"ranks_per_host"`
	GOMAXPROCS   int      `json:"gomaxprocs"`
	Binding      string   `json:"binding"`
	Backend      string   `json:"backend"` // "native" or "local"
	Date         string   `json:"date"`    // RFC 3339, UTC
	Command      []string `json:"command"`
	Seed         int64    `json:"seed,omitempty"`
	// Toolchain and machine of the process that wrote the record (rank 0);
	// optional fields added in schema 1, filled by NewMeta.
	GOOS      string `json:"goos,omitempty"`
	GOARCH    string `json:"goarch,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
	CPU       string `json:"cpu,omitempty"` // CPU model name from /proc/cpuinfo
	// Cores are the host's online CPUs and Load1 its one-minute load
	// average when the record's process started measuring (rank 0's
	// host), so that a report can tell ranks that shared cores and a
	// machine others loaded; optional fields added in schema 1.
	Cores int     `json:"cores,omitempty"`
	Load1 float64 `json:"load1,omitempty"`
	// Launch identifies the launch (one mpirun or srun) that wrote the
	// record when a run repeats launches (scripts/launches.sh, a Slurm
	// array): records of one launch share it. From COMMCOST_LAUNCH_ID;
	// optional field added in schema 1.
	Launch string `json:"launch,omitempty"`
}

// Validate reports the first reason r cannot be written or trusted: an empty
// bench or unit, a schema newer than SchemaVersion, negative counts, or a
// parameter that is not a JSON scalar. A zero Schema is allowed here because
// writers stamp SchemaVersion on records that leave it unset.
func (r *Record) Validate() error {
	switch {
	case r.Bench == "":
		return errors.New("record has no bench name")
	case r.Unit == "":
		return fmt.Errorf("record %s has no unit", r.Bench)
	case r.Schema > SchemaVersion:
		return fmt.Errorf("record %s has schema %d, newer than this reader's %d (upgrade commcost)", r.Bench, r.Schema, SchemaVersion)
	case r.Schema < 0:
		return fmt.Errorf("record %s has negative schema %d", r.Bench, r.Schema)
	case r.Ranks < 0:
		return fmt.Errorf("record %s has negative ranks %d", r.Bench, r.Ranks)
	case r.N < 0 || r.Dropped < 0 || r.Invalid < 0:
		return fmt.Errorf("record %s has a negative count (n=%d dropped=%d invalid=%d)", r.Bench, r.N, r.Dropped, r.Invalid)
	}
	for i, w := range r.Workload {
		if err := w.Validate(); err != nil {
			return fmt.Errorf("record %s: workload item %d: %w", r.Bench, i+1, err)
		}
		// An item is a part of the run on some of its ranks, never more,
		// and names them unless its bench implies them.
		if r.Ranks > 0 && w.Ranks > r.Ranks {
			return fmt.Errorf("record %s: workload item %d: %s on ranks = %d, more than the record's %d", r.Bench, i+1, w.Bench, w.Ranks, r.Ranks)
		}
		if w.Ranks == 0 {
			if err := w.checkRanks(); err != nil {
				return fmt.Errorf("record %s: workload item %d: %w", r.Bench, i+1, err)
			}
		}
	}
	for k, v := range r.Params {
		if k == "" {
			return fmt.Errorf("record %s has a parameter with an empty name", r.Bench)
		}
		if !isScalar(v) {
			return fmt.Errorf("record %s: parameter %q is %T; want a number, string or bool", r.Bench, k, v)
		}
	}
	if err := CheckBenchParams(r.Bench, r.Params); err != nil {
		return fmt.Errorf("record %w", err)
	}
	return nil
}

// isScalar reports whether v is a value Params may hold.
func isScalar(v any) bool {
	switch x := v.(type) {
	case string, bool:
		return true
	case float32:
		return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// UnmarshalJSON decodes a parameter object, refusing nested values, and
// canonicalises numbers (see Params) so that read, write, read is stable.
func (p *Params) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*p = nil
		return nil
	}
	// Anything but an object is a type error the caller's decoder names
	// the field of ("field params: the array is not an object").
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return &json.UnmarshalTypeError{Value: jsonValueKind(t), Type: reflect.TypeFor[Params]()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	out := make(Params, len(raw))
	for k, v := range raw {
		switch x := v.(type) {
		case json.Number:
			n, err := canonicalNumber(string(x))
			if err != nil {
				// Beyond a float64 (1e400): a type error of the value,
				// as the decoder's own for a number field.
				return &json.UnmarshalTypeError{Value: "number " + string(x), Type: reflect.TypeFor[float64](), Field: k}
			}
			out[k] = n
		case string, bool:
			out[k] = x
		case nil:
			return fmt.Errorf("params: %q is null; want a number, string or bool", k)
		default:
			// An array or an object: a type error the line's re-scan
			// names the path of ("field workload[].params.bytes").
			return &json.UnmarshalTypeError{Value: jsonKind(x), Type: reflect.TypeFor[any](), Field: k}
		}
	}
	*p = out
	return nil
}

// canonicalNumber turns a JSON number literal into int when its value is
// integral and fits in an int64, else float64. Deciding on the value rather
// than the spelling makes 8, 8.0 and 8e0 all read as int 8, which is what a
// re-encoded 8.0 ("8") reads as too.
func canonicalNumber(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int(i), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, err
	}
	// -2^63 is exactly representable; 2^63 is not an int64.
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int(int64(f)), nil
	}
	return f, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// jsonValueKind is the decoder's name for the kind of the JSON value
// data ("array", "string", "number", "bool"), as an UnmarshalTypeError
// names it.
func jsonValueKind(data []byte) string {
	switch {
	case len(data) == 0:
		return "value"
	case data[0] == '[':
		return "array"
	case data[0] == '"':
		return "string"
	case data[0] == 't' || data[0] == 'f':
		return "bool"
	}
	return "number"
}
