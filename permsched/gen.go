package permsched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// Generator kinds accepted by Generate.
const (
	GenFig7       = "fig7"        // the paper's Fig. 7: d diagonals, rows and columns shuffled
	GenFig7NoSelf = "fig7-noself" // Fig. 7 without self-sends (see Fig7NoSelf)
	GenUniform    = "uniform"     // every rank sends to d distinct random others
	GenSkewed     = "skewed"      // d-out, a few hot ranks receive far more
)

// GenKinds lists the generator kinds, in the order the CLI documents them.
func GenKinds() []string { return []string{GenFig7, GenFig7NoSelf, GenUniform, GenSkewed} }

// Generate builds an n-rank matrix of density d with the named generator.
// It is deterministic for a given seed.
func Generate(kind string, n, d int, seed uint64) (*Matrix, error) {
	switch kind {
	case GenFig7:
		return Fig7(n, d, seed)
	case GenFig7NoSelf:
		return Fig7NoSelf(n, d, seed)
	case GenUniform:
		return UniformOut(n, d, seed)
	case GenSkewed:
		return Skewed(n, d, seed, SkewConfig{})
	}
	return nil, fmt.Errorf("permsched: unknown generator %q (want one of %v)", kind, GenKinds())
}

// CheckDensity reports whether d is a valid density for n ranks: every
// generator sends d messages per rank to distinct ranks, so 0 <= d <= n-1.
func CheckDensity(n, d int) error {
	if n < 1 || n > MaxRanks {
		return fmt.Errorf("n = %d: want 1 <= n <= %d", n, MaxRanks)
	}
	if d < 0 || d > n-1 {
		return fmt.Errorf("d = %d: want 0 <= d <= n-1 = %d", d, n-1)
	}
	return nil
}

// newRand returns the generator stream for (seed, stream). Distinct streams
// of one seed are independent PCG sequences.
func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// Streams of one seed used by the generators and schedulers, kept distinct so
// that, e.g., a scheduler's random choices do not repeat the generator's.
const (
	streamGen   = 0x67656e // "gen"
	streamSched = 0x736368 // "sch"
	streamRow   = 1 << 40  // + row index: CGM's per-row Random_Swap (Fig. 5)
)

// Fig7 is the paper's random COM generator (Fig. 7): rank j sends to
// j, j+1, ..., j+d-1 (mod n), i.e. d diagonals of COM, then rows and columns
// are swapped at random. The paper swaps random row and column pairs "many
// times"; Fig7 applies the limit of that loop, a uniformly random row
// permutation and an independent column permutation. Every rank then sends d
// and receives d messages. Because diagonal 0 is included, about d ranks
// send one message to themselves (the executor copies those locally). Rows
// are in increasing column order, as the scan of Fig. 5 produces them.
func Fig7(n, d int, seed uint64) (*Matrix, error) {
	if err := CheckDensity(n, d); err != nil {
		return nil, fmt.Errorf("permsched: Fig7: %v", err)
	}
	r := newRand(seed, streamGen)
	rowPerm := r.Perm(n)
	colPerm := r.Perm(n)
	rows := make([][]int32, n)
	flat := make([]int32, n*d)
	for j := 0; j < n; j++ {
		row := flat[rowPerm[j]*d : rowPerm[j]*d+d : rowPerm[j]*d+d]
		for i := 0; i < d; i++ {
			row[i] = int32(colPerm[(j+i)%n])
		}
		slices.Sort(row)
		rows[rowPerm[j]] = row
	}
	return NewMatrix(n, rows)
}

// Fig7NoSelf is Fig. 7 for executions that must not send to self: rank j
// sends to j+1, ..., j+d (mod n) and one random permutation relabels rows
// and columns alike, so the diagonal stays empty. The result is d-regular
// and, as a bipartite graph, isomorphic to Fig7's.
func Fig7NoSelf(n, d int, seed uint64) (*Matrix, error) {
	if err := CheckDensity(n, d); err != nil {
		return nil, fmt.Errorf("permsched: Fig7NoSelf: %v", err)
	}
	r := newRand(seed, streamGen)
	p := r.Perm(n)
	rows := make([][]int32, n)
	flat := make([]int32, n*d)
	for j := 0; j < n; j++ {
		row := flat[p[j]*d : p[j]*d+d : p[j]*d+d]
		for i := 1; i <= d; i++ {
			row[i-1] = int32(p[(j+i)%n])
		}
		slices.Sort(row)
		rows[p[j]] = row
	}
	return NewMatrix(n, rows)
}

// UniformOut has every rank send to d distinct ranks other than itself,
// chosen uniformly (Floyd's sampling). Out-degrees are exactly d; in-degrees
// vary (binomial), so D > d in general.
func UniformOut(n, d int, seed uint64) (*Matrix, error) {
	if err := CheckDensity(n, d); err != nil {
		return nil, fmt.Errorf("permsched: UniformOut: %v", err)
	}
	r := newRand(seed, streamGen)
	seen := make([]bool, n)
	rows := make([][]int32, n)
	flat := make([]int32, n*d)
	for i := 0; i < n; i++ {
		row := flat[i*d : i*d : i*d+d]
		// Floyd's algorithm over the n-1 candidates 0..n-2, candidate c
		// standing for rank c (c < i) or c+1 (c >= i).
		for j := n - 1 - d; j < n-1; j++ {
			t := r.IntN(j + 1)
			if seen[t] {
				t = j
			}
			seen[t] = true
			row = append(row, int32(t))
		}
		for k, c := range row {
			seen[c] = false
			if int(c) >= i {
				row[k] = c + 1
			}
		}
		slices.Sort(row)
		rows[i] = row
	}
	return NewMatrix(n, rows)
}

// SkewConfig shapes Skewed. The zero value means the defaults.
type SkewConfig struct {
	// HotFraction is the fraction of ranks that are hot (at least one).
	// Default 1/16.
	HotFraction float64
	// HotProb is the probability that a message goes to a hot rank.
	// Default 0.5.
	HotProb float64
}

// Skewed is a d-out matrix whose receivers are skewed: each message goes to
// a uniformly chosen hot rank with probability HotProb, otherwise to any
// rank; destinations of one rank are distinct and never itself. With the
// defaults a hot rank receives about 8d messages, so D is far above d — the
// case where the paper's d + log d estimate (which assumes balanced
// receivers) no longer describes CGM and D-optimal schedules matter.
func Skewed(n, d int, seed uint64, cfg SkewConfig) (*Matrix, error) {
	if err := CheckDensity(n, d); err != nil {
		return nil, fmt.Errorf("permsched: Skewed: %v", err)
	}
	if cfg.HotFraction == 0 {
		cfg.HotFraction = 1.0 / 16
	}
	if cfg.HotProb == 0 {
		cfg.HotProb = 0.5
	}
	if !(cfg.HotFraction > 0 && cfg.HotFraction <= 1) || !(cfg.HotProb > 0 && cfg.HotProb <= 1) {
		return nil, fmt.Errorf("permsched: Skewed: HotFraction %v and HotProb %v must lie in (0, 1]", cfg.HotFraction, cfg.HotProb)
	}
	r := newRand(seed, streamGen)
	h := max(1, int(cfg.HotFraction*float64(n)+0.5))
	hot := r.Perm(n)[:h]
	isHot := make([]bool, n)
	for _, v := range hot {
		isHot[v] = true
	}
	taken := make([]bool, n)
	rows := make([][]int32, n)
	flat := make([]int32, n*d)
	for i := 0; i < n; i++ {
		row := flat[i*d : i*d : i*d+d]
		taken[i] = true
		hotLeft := h
		if isHot[i] {
			hotLeft--
		}
		for len(row) < d {
			var j int
			if hotLeft > 0 && r.Float64() < cfg.HotProb {
				for j = hot[r.IntN(h)]; taken[j]; j = hot[r.IntN(h)] {
				}
			} else {
				// Rejection is cheap: at most d < n ranks are taken.
				for j = r.IntN(n); taken[j]; j = r.IntN(n) {
				}
			}
			taken[j] = true
			if isHot[j] {
				hotLeft--
			}
			row = append(row, int32(j))
		}
		taken[i] = false
		for _, j := range row {
			taken[j] = false
		}
		slices.Sort(row)
		rows[i] = row
	}
	return NewMatrix(n, rows)
}

// SampleSortTrace returns what one sample sort exchange sends: n ranks each
// hold keysPerRank random 8-byte keys (drawn from a skewed distribution, as
// real data often is), pick n-1 regular samples, and the n-1 global
// splitters (every (n-1)th of the sorted samples, as in parallel sorting by
// regular sampling) send each key to its bucket. Entry (i, j) is the bytes
// rank i sends to rank j; the diagonal is the part a rank keeps, included as
// MPI_Alltoallv's sendcounts would include it. The result is weighted.
func SampleSortTrace(n, keysPerRank int, seed uint64) (*Matrix, error) {
	if n < 1 || n > MaxRanks || keysPerRank < 1 {
		return nil, fmt.Errorf("permsched: SampleSortTrace: n = %d, keysPerRank = %d; want 1 <= n <= %d and keysPerRank >= 1", n, keysPerRank, MaxRanks)
	}
	r := newRand(seed, streamGen)
	keys := make([][]uint64, n)
	var samples []uint64
	for i := range keys {
		k := make([]uint64, keysPerRank)
		for j := range k {
			// Product of two uniforms: denser near zero, so buckets of
			// equal width would be unbalanced and the splitters matter.
			a, b := r.Uint64()>>32, r.Uint64()>>32
			k[j] = a * b
		}
		slices.Sort(k)
		keys[i] = k
		for s := 1; s < n; s++ {
			samples = append(samples, k[s*keysPerRank/n])
		}
	}
	slices.Sort(samples)
	split := make([]uint64, 0, n-1)
	for s := 1; s < n; s++ {
		split = append(split, samples[s*(n-1)-1])
	}
	rows := make([][]int32, n)
	sizes := make([][]int64, n)
	for i, k := range keys {
		lo := 0
		for j := 0; j < n; j++ {
			hi := len(k)
			if j < n-1 {
				hi = sort.Search(len(k), func(x int) bool { return k[x] > split[j] })
			}
			if hi > lo {
				rows[i] = append(rows[i], int32(j))
				sizes[i] = append(sizes[i], int64(hi-lo)*8)
			}
			lo = max(lo, hi)
		}
	}
	return NewWeighted(n, rows, sizes)
}
