package optsplit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// Healthy optimize records as 'commcost optimize --backend local' wrote
// them (meta shortened): a read on 3 ranks, a write on 2 whose k l is not
// D, and a distinct read on 4 whose counters are sums of rounded
// per-repetition averages.
const (
	optRead = `{"schema":1,"bench":"optimize","params":{"d_bytes":4096,"k":1,"l":4096,"op":"read","r":1},"ranks":3,"unit":"s","n":165,` +
		`"min":3.455999999957271e-06,"median":5.790999999977231e-06,"mean":1.2e-05,"max":0.000591188999999992,"ci95":[5.6e-06,6.0e-06],` +
		`"derived":{"pred_error":-0.06632079555087667,"predicted_s":5.406936272943614e-06},` +
		`"counters":{"accessing_ranks":3,"bytes_recv_max":4112,"bytes_sent_max":4112,"bytes_total":12336,"msgs_recv_max":2,"msgs_sent_max":2,"msgs_total":6,"r_realised":1,"volume_bytes":4096},` +
		`"meta":{"hosts":["vm"],"ranks_per_host":[3]}}`
	optWrite = `{"schema":1,"bench":"optimize","params":{"d_bytes":1000,"k":3,"l":333,"op":"write","r":1},"ranks":2,"unit":"s","n":151,` +
		`"min":4.489e-06,"median":5.791e-06,"mean":2.4e-05,"max":0.0027,"ci95":[5.66e-06,5.98e-06],` +
		`"derived":{"pred_error":0.006049584605621661,"predicted_s":5.826033144451155e-06},` +
		`"counters":{"accessing_ranks":2,"bytes_recv_max":1095,"bytes_sent_max":1095,"bytes_total":2190,"msgs_recv_max":5.999999999999999,"msgs_sent_max":6,"msgs_total":12,"r_realised":1,"volume_bytes":999},` +
		`"meta":{"hosts":["vm"],"ranks_per_host":[2]}}`
	optDistinct = `{"schema":1,"bench":"optimize","params":{"d_bytes":5000,"distinct":true,"k":3,"l":1667,"op":"read","r":1},"ranks":4,"unit":"s","n":100,` +
		`"min":4e-06,"median":6e-06,"mean":7e-06,"max":1e-04,"ci95":[5e-06,7e-06],` +
		`"derived":{"pred_error":0.5,"predicted_s":9e-06},` +
		`"counters":{"accessing_ranks":4,"bytes_recv_max":5049.000000000001,"bytes_sent_max":5049.000000000001,"bytes_total":20196.000000000004,"msgs_recv_max":6.000000000000001,"msgs_sent_max":6.000000000000001,"msgs_total":24.000000000000004,"r_realised":1,"volume_bytes":5001},` +
		`"meta":{"hosts":["vm"],"ranks_per_host":[4]}}`
)

// TestOptimizeRecordCheck reads healthy optimize records and mutants of
// them through the records reader: the healthy ones pass, and each mutant
// is refused with its field, its value and what is accepted.
func TestOptimizeRecordCheck(t *testing.T) {
	set := func(section, key string, v any) func(map[string]any) {
		return func(m map[string]any) {
			if section == "" {
				m[key] = v
				return
			}
			m[section].(map[string]any)[key] = v
		}
	}
	tests := []struct {
		name string
		base string
		edit func(map[string]any)
		want string // "" passes
	}{
		{"healthy read", optRead, nil, ""},
		{"healthy write, k l below D", optWrite, nil, ""},
		{"healthy distinct, rounded counters", optDistinct, nil, ""},
		{"opt_pred", optRead, set("derived", "predicted_s", -1), "derived predicted_s = -1 is not positive: the model's prediction T(k, l, 1) is a time"},
		{"opt_pred zero", optRead, set("derived", "predicted_s", 0), "derived predicted_s = 0 is not positive"},
		{"opt_unit", optRead, set("", "unit", "B/s"), `unit "B/s": optimize records are times in "s"`},
		{"opt_kl", optRead, set("params", "k", 2), "l = 4096 with k = 2 and d_bytes = 4096: the packets of D bytes are l = max(1, round(D/k)) = 2048 bytes"},
		{"opt_kl write", optWrite, set("params", "l", 334), "l = 334 with k = 3 and d_bytes = 1000: the packets of D bytes are l = max(1, round(D/k)) = 333 bytes"},
		{"k above D", optRead, func(m map[string]any) {
			p := m["params"].(map[string]any)
			p["d_bytes"], p["k"], p["l"] = 10, 20, 1
		}, "k = 20 above d_bytes = 10: the sweep's k is at most D"},
		{"opt_r", optRead, set("params", "r", 0.5), "r = 0.5: an optimize record's accesses are by every rank, r = 1"},
		{"opt_r two thirds", optRead, set("params", "r", 2.0/3), "r = 0.6666666666666666: an optimize record's accesses are by every rank, r = 1"},
		{"opt_rneg", optRead, set("params", "r", -5), "impossible parameter r = -5: must be in (0, 1]"},
		{"opt_op", optRead, set("params", "op", "nosuch"), `impossible parameter op = "nosuch": must be one of read, write`},
		{"opt_kbig", optRead, set("params", "k", 1e15), "impossible parameter k = 1000000000000000: must be an integer from 1 to 65535"},
		{"opt_d0", optRead, set("params", "d_bytes", 0), "impossible parameter d_bytes = 0: must be positive"},
		{"l zero", optRead, set("params", "l", 0), "impossible parameter l = 0: must be"},
		{"opt_err", optRead, set("derived", "pred_error", 1e300), "derived pred_error = 1e+300 disagrees with predicted_s / median - 1 = 5.406936272943614e-06 / 5.790999999977231e-06 - 1 = -0.0663208"},
		{"pred_error without predicted_s", optRead, func(m map[string]any) {
			delete(m["derived"].(map[string]any), "predicted_s")
		}, "derived pred_error = -0.06632079555087667 without a predicted_s to be the error of"},
		{"opt_vol", optRead, set("counters", "volume_bytes", 1e18), "counters volume_bytes = 1e+18 disagrees with k x l = 4096"},
		{"accessing ranks", optRead, set("counters", "accessing_ranks", 2), "counters accessing_ranks = 2 disagrees with ranks (r = 1) = 3"},
		{"r_realised", optRead, set("counters", "r_realised", 0.5), "counters r_realised = 0.5 disagrees with r = 1 = 1"},
		{"msgs_total", optRead, set("counters", "msgs_total", 1e15), "counters msgs_total = 1e+15 disagrees with 2k x ranks = 6"},
		{"msgs_sent_max", optWrite, set("counters", "msgs_sent_max", 7), "counters msgs_sent_max = 7 disagrees with 2k (k requests and k answers a rank) = 6"},
		{"bytes_sent_max read", optRead, set("counters", "bytes_sent_max", 4096), "counters bytes_sent_max = 4096 disagrees with k x (16 + 4096), a rank's read requests and answers = 4112"},
		{"bytes_total write", optWrite, set("counters", "bytes_total", 2000), "counters bytes_total = 2000 disagrees with k x (349 + 16) x ranks = 2190"},
		{"distinct k above ranks-1", optDistinct, set("", "ranks", 3), "k = 3 distinct targets on ranks = 3: at most 2 other ranks to target"},
		{"median zero", optRead, func(m map[string]any) {
			m["min"], m["median"], m["ci95"] = 0, 0, []float64{0, 6e-06}
		}, "median 0 s is not positive: a k-k-access takes time"},
		{"params empty", optRead, set("", "params", map[string]any{}), "impossible parameter d_bytes is missing"},
		{"params without op", optRead, func(m map[string]any) {
			delete(m["params"].(map[string]any), "op")
		}, "impossible parameter op is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(tt.base), &m); err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				tt.edit(m)
			}
			line, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = results.ReadJSONL(strings.NewReader(string(line) + "\n"))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("healthy record refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("accepted, want a refusal with %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("refusal\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
		})
	}
}
