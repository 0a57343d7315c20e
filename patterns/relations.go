package patterns

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// What a record's parameters must satisfy against its rank count and its
// times: the relations each pattern's Check imposes on a run (a root
// among the ranks, a grid that holds them, pairs that fit in them), so a
// record no run could have written is refused on read as its flags would
// be, and the physical floor of the PRTT, whose every exchange spins
// (n-1) delays. checkRecord applies relationChecks once the parameter
// specs have bounded each parameter on its own.
var relationChecks = map[string]func(*results.Record) error{
	BenchPRTT:           prttRelation,
	BenchCollective:     collectiveRelation,
	BenchNonBlocking:    collectiveRelation,
	BenchGridShift:      gridShiftRelation,
	BenchMultiBandwidth: pairsRelation,
	BenchMultiLatency:   pairsRelation,
	BenchKAccess:        kAccessRelation,
	BenchKKAccess:       kkAccessRelation,
	BenchAggregate:      aggregateRelation,
	BenchReduceLocal:    reduceLocalRelation,
	BenchPairwise:       evenRanksRelation,
	BenchRowContention:  evenRanksRelation,
}

// evenRanksRelation: paper 001's pair patterns pair each of 2n ranks with
// another (rank i < n with n + i, or with 2n - 1 - i), and their records'
// ranks are the 2n that took part (Pairwise.Record), so they are even.
func evenRanksRelation(r *results.Record) error {
	if r.Ranks%2 != 0 {
		return fmt.Errorf("ranks = %d: %s runs on an even number of ranks, 2n for its n pairs", r.Ranks, r.Bench)
	}
	return nil
}

// prttRelation: PRTT(n, d, s) spins d between consecutive sends on the
// client and before each receive after the first on the server (the
// backends busy-wait on MPI_Wtime), so every sample, the fastest one
// included, is at least (n-1) d (Hoefler, Lichei and Rehm, IPDPS 2007,
// Section 3: PRTT(n, d, s) = PRTT(1, 0, s) + (n-1) max{o_s + d, g + s'G});
// the server's side is timed from the first arrival, so it needs n >= 2.
func prttRelation(r *results.Record) error {
	n, ok1 := paramNumber(r, "n")
	d, ok2 := paramNumber(r, "delay_s")
	if !ok1 || !ok2 {
		return nil
	}
	if side, _ := r.Params["side"].(string); side == "server" && n < 2 {
		return fmt.Errorf("n = %s on the server's side: its time runs from the first arrival to the last, so n >= 2", show(n))
	}
	if floor := (n - 1) * d; r.Unit == results.UnitSeconds && r.Min < floor*(1-derivedTol) {
		return fmt.Errorf("min %v s is less than (n-1) x delay_s = %s x %v s = %v s, which every exchange spins", r.Min, show(n-1), d, floor)
	}
	return nil
}

// collectiveRelation: a rooted collective's root is one of the ranks
// (Collective.Check), an unrooted one's record names root 0, and a
// reduction's bytes are whole elements of its type.
func collectiveRelation(r *results.Record) error {
	name, _ := r.Params["op"].(string)
	base, nb := name, r.Bench == BenchNonBlocking
	if nb {
		base = strings.TrimPrefix(name, "i")
	}
	op, ok := collOpNamed(base, nb)
	if !ok {
		return nil
	}
	if root, ok := paramNumber(r, "root"); ok {
		switch {
		case op.Rooted() && root >= float64(r.Ranks):
			return fmt.Errorf("root = %s on ranks = %d: the root of %s is one of ranks 0..%d", show(root), r.Ranks, name, r.Ranks-1)
		case !op.Rooted() && root != 0:
			return fmt.Errorf("root = %s: %s has no root, its records name root 0", show(root), name)
		}
	}
	if err := collectiveKindRelation(r, name, op); err != nil {
		return err
	}
	if !op.Reduces() {
		return nil
	}
	return wholeElements(r, name)
}

// collectiveKindRelation: the parameters that depend on the operation's
// kind (Collective.Params): a barrier moves no bytes (bytes 0); an
// operation that does not reduce has type "byte" and reduction "none";
// a reducing one names its element type and its reduction.
func collectiveKindRelation(r *results.Record, name string, op mpi.CollOp) error {
	if bytes, ok := paramNumber(r, "bytes"); ok && op == mpi.CollBarrier && bytes != 0 {
		return fmt.Errorf("bytes = %s: %s moves no bytes, its records name bytes 0", show(bytes), name)
	}
	red, hasRed := r.Params["reduction"].(string)
	typ, hasType := r.Params["type"].(string)
	switch {
	case !op.Reduces() && hasRed && red != collNoReduction:
		return fmt.Errorf("reduction = %q: %s does not reduce, its records name reduction %q", red, name, collNoReduction)
	case !op.Reduces() && hasType && typ != collTypeByte:
		return fmt.Errorf("type = %q: %s does not reduce, its records name type %q", typ, name, collTypeByte)
	case op.Reduces() && hasRed && red == collNoReduction:
		return fmt.Errorf("reduction = %q: %s reduces, its records name the reduction (sum, min or max)", red, name)
	case op.Reduces() && hasType && typ == collTypeByte:
		return fmt.Errorf("type = %q: %s reduces, its records name the element type (%s)", typ, name, strings.Join(collTypeNames()[1:], ", "))
	}
	return nil
}

// wholeElements: a reduction's bytes are whole elements of its type.
func wholeElements(r *results.Record, what string) error {
	bytes, ok := paramNumber(r, "bytes")
	tname, _ := r.Params["type"].(string)
	if !ok {
		return nil
	}
	for _, t := range mpi.Datatypes {
		if t.String() == tname && int64(bytes)%int64(t.Size()) != 0 {
			return fmt.Errorf("bytes = %s: %s of %s reduces whole %d-byte elements", show(bytes), what, tname, t.Size())
		}
	}
	return nil
}

// reduceLocalRelation: the local reduction's bytes are whole elements.
func reduceLocalRelation(r *results.Record) error {
	red, _ := r.Params["reduction"].(string)
	return wholeElements(r, "a local "+red)
}

// collOpNamed is the collective named name (without its "i"), one with a
// non-blocking form when nb.
func collOpNamed(name string, nb bool) (mpi.CollOp, bool) {
	for _, o := range mpi.CollOps() {
		if o.String() == name && (!nb || o.NonBlocking()) {
			return o, true
		}
	}
	return 0, false
}

// gridShiftRelation: the grid holds the ranks and the distance fits its
// lines, as GridShift.Check requires of a run.
func gridShiftRelation(r *results.Record) error {
	g, ok := gridShiftOf(r)
	if !ok {
		return nil
	}
	if float64(g.Rows)*float64(g.Cols) != float64(r.Ranks) {
		return fmt.Errorf("rows x cols = %d x %d on ranks = %d: the grid holds every rank once", g.Rows, g.Cols, r.Ranks)
	}
	if err := g.Check(r.Ranks); err != nil {
		return fmt.Errorf("%s, a step no run makes", strings.TrimPrefix(err.Error(), "gridshift: "))
	}
	return nil
}

// gridShiftOf is the exchange a gridshift record's params describe, ok
// false when one of rows, cols, d and bytes is missing or not a number.
func gridShiftOf(r *results.Record) (GridShift, bool) {
	rows, ok1 := paramNumber(r, "rows")
	cols, ok2 := paramNumber(r, "cols")
	d, ok3 := paramNumber(r, "d")
	bytes, ok4 := paramNumber(r, "bytes")
	along, _ := r.Params["along"].(string)
	mode, _ := r.Params["mode"].(string)
	return GridShift{Bytes: int(bytes), Rows: int(rows), Cols: int(cols), Along: along, Mode: mode, D: int(d)}, ok1 && ok2 && ok3 && ok4
}

// pairsRelation: OSU's multi-pair tests pair rank i with i + pairs, so
// 1 <= pairs <= ranks/2 (osu_mbw_mr.c, osu_multi_lat.c).
func pairsRelation(r *results.Record) error {
	pairs, ok := paramNumber(r, "pairs")
	if !ok {
		return nil
	}
	if pairs > float64(r.Ranks/2) {
		return fmt.Errorf("pairs = %s on ranks = %d: rank i pairs with i + pairs, so pairs <= ranks/2 = %d", show(pairs), r.Ranks, r.Ranks/2)
	}
	return nil
}

// runBounds: the send hot spot k and the accesses a of a run are at
// most maxAccessIndex (the k-access and k-k-access Checks), which the
// parameter specs leave open for predicted instances (a workload item may
// name any k): checked on records only.
func runBounds(bench string, r *results.Record) error {
	if bench != BenchKAccess && bench != BenchKKAccess {
		return nil
	}
	for _, k := range []string{"k", "a"} {
		if v, ok := paramNumber(r, k); ok && v > maxAccessIndex {
			return fmt.Errorf("%s = %s: a %s run takes %s from 1 to %d", k, show(v), r.Bench, k, maxAccessIndex)
		}
	}
	return nil
}

// kAccessRelation: the realised receive hot spot h = hot/p of at least
// one of the ranks (HotRanks).
func kAccessRelation(r *results.Record) error {
	if h, ok := paramNumber(r, "h"); ok {
		if h < 1/float64(r.Ranks)-hotSlack {
			return fmt.Errorf("h = %v on ranks = %d: the receive hot spot is at least one rank, 1/%d", h, r.Ranks, r.Ranks)
		}
		if !wholeRanks(h, r.Ranks) {
			return fmt.Errorf("h = %v on ranks = %d: the realised hot spot is whole ranks, a multiple of 1/%d", h, r.Ranks, r.Ranks)
		}
	}
	return nil
}

// wholeRanks reports whether share x of p ranks is a whole number of them
// (HotRanks/p, AccessingRanks/p), up to the rounding of the division.
func wholeRanks(x float64, p int) bool {
	n := x * float64(p)
	return math.Abs(n-math.Round(n)) <= 1e-9*math.Max(1, n)
}

// kkAccessRelation: k distinct targets are other ranks (or the rank too,
// with self), and distinct excludes block (KKAccess.Check).
func kkAccessRelation(r *results.Record) error {
	// The realised portion r = AccessingRanks/p: whole ranks, at least one,
	// as the counters of the ranks that accessed say.
	if rr, ok := paramNumber(r, "r"); ok {
		if rr < 1/float64(r.Ranks)-hotSlack || !wholeRanks(rr, r.Ranks) {
			return fmt.Errorf("r = %v on ranks = %d: the realised portion of accessing ranks is whole ranks, a multiple of 1/%d from 1/%d", rr, r.Ranks, r.Ranks, r.Ranks)
		}
		if v, ok := r.Counters[CounterAccessingRanks]; ok && math.Abs(v-rr*float64(r.Ranks)) > 1e-6 {
			return fmt.Errorf("counters %s = %v disagrees with r x ranks = %s", CounterAccessingRanks, v, show(math.Round(rr*float64(r.Ranks))))
		}
		if v, ok := r.Counters[CounterRRealised]; ok && math.Abs(v-rr) > derivedTol*rr {
			return fmt.Errorf("counters %s = %v disagrees with the realised r = %v", CounterRRealised, v, rr)
		}
	}
	distinct, _ := r.Params["distinct"].(bool)
	if !distinct {
		return nil
	}
	if block, _ := r.Params["block"].(bool); block {
		return fmt.Errorf("distinct and block: a record has one of them (k different modules, or every packet to one)")
	}
	most := r.Ranks - 1
	if self, _ := r.Params["self"].(bool); self {
		most = r.Ranks
	}
	if k, ok := paramNumber(r, "k"); ok && k > float64(most) {
		return fmt.Errorf("k = %s distinct targets on ranks = %d: at most %d ranks to target", show(k), r.Ranks, most)
	}
	return nil
}

// newsNeighbors are the NEWS neighbours a torus of p ranks can give
// (AggregateOp.Neighbors, its grid any rows x cols = p, --grid): 0 on one
// rank; 2 on a ring 1 x p; 4 where p has a factor in 2..p/2, a grid with
// both sides longer than 1.
func newsNeighbors(p int) []float64 {
	if p <= 1 {
		return []float64{0}
	}
	for f := 2; f*f <= p; f++ {
		if p%f == 0 {
			return []float64{2, 4}
		}
	}
	return []float64{2}
}

// aggregateRelation: a q-shift's 1 <= q < p, and the NEWS neighbours a
// torus of the ranks has (AggregateOp.Check, AggregateOp.Neighbors), the
// root of bcast and scatter among the ranks; q, neighbors and root are 0
// for the operations they do not apply to.
func aggregateRelation(r *results.Record) error {
	op, _ := r.Params["op"].(string)
	q, okq := paramNumber(r, "q")
	nb, okn := paramNumber(r, "neighbors")
	switch {
	case okq && op == AggQShift.String() && !(q >= 1 && q < float64(r.Ranks)):
		return fmt.Errorf("q = %s on ranks = %d: a q-shift takes 1 <= q < %d", show(q), r.Ranks, r.Ranks)
	case okq && op != AggQShift.String() && q != 0:
		return fmt.Errorf("q = %s: only a qshift record has a shift (q = 0 for %s)", show(q), op)
	case okn && op == AggNEWS.String() && !slices.Contains(newsNeighbors(r.Ranks), nb):
		return fmt.Errorf("neighbors = %s on ranks = %d: a NEWS step on a torus of %d ranks has %s (two along each side longer than 1)", show(nb), r.Ranks, r.Ranks, strings.Trim(strings.ReplaceAll(fmt.Sprint(newsNeighbors(r.Ranks)), " ", " or "), "[]"))
	case okn && op != AggNEWS.String() && nb != 0:
		return fmt.Errorf("neighbors = %s: only a news record has neighbours (0 for %s)", show(nb), op)
	}
	rooted := op == AggBcast.String() || op == AggScatter.String()
	switch root, ok := paramNumber(r, "root"); {
	case ok && rooted && root >= float64(r.Ranks):
		return fmt.Errorf("root = %s on ranks = %d: the root of %s is one of ranks 0..%d", show(root), r.Ranks, op, r.Ranks-1)
	case ok && !rooted && root != 0:
		return fmt.Errorf("root = %s: %s has no root, its records name root 0", show(root), op)
	}
	return nil
}
