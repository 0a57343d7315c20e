// Package results holds commcost's measurement record (DESIGN.md contract 3),
// its summary statistics, the writers (JSON Lines, CSV, Go benchmark format,
// tables) and the reader. results/README.md documents every field.
//
// Units: times are seconds unless Unit says otherwise; sizes are bytes.
package results

// SchemaVersion is written into every record; readers refuse newer majors.
const SchemaVersion = 1

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
	// How a repetition's time is formed from ranks' times, e.g.
	// "max-over-ranks" or "global-window" (MEASURE.md).
	Aggregate string `json:"aggregate,omitempty"`
	// Why repetitions stopped: "rel-ci" (target reached), "max-reps", "max-time", "fixed".
	Stop string `json:"stop,omitempty"`
	// Derived values computed from the summary (e.g. latency from a round
	// trip, MB/s), with their own units in the key name.
	Derived map[string]float64 `json:"derived,omitempty"`
	// Extra per-record counters (messages, bytes, link loads, ...).
	Counters map[string]float64 `json:"counters,omitempty"`
	Samples  []float64          `json:"samples,omitempty"` // raw repetitions, when kept
	Meta     Meta               `json:"meta"`
}

// Params holds parameter values: numbers, strings or bools (JSON scalars).
type Params map[string]any

// Summary is the statistics of one sample (MEASURE.md "Repetitions and
// statistics"): CI95 is the nonparametric 95% confidence interval of the
// median from order statistics.
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
}
