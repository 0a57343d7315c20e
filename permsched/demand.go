package permsched

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/internal/sysmem"
)

// Memory the experiments ask for, estimated from their parameters before
// anything is allocated (sysmem.Need), so that a command refuses a run the
// machine cannot hold with one message naming the flag. The estimates
// count the structures that grow with the parameters, generously; the
// tests check them against the allocations they bound.

// Bytes per message of a matrix: off/src/dst (int32) and, weighted, its
// size (int64), plus the generator's row slices.
const (
	matrixMessageBytes = 4 + 4 + 4 + 8 + 4
	matrixRankBytes    = 4 + 24 + 8 + 8 // off, a row slice header, two permutations
)

// GenDemand is what generating one matrix (sched gen) holds in this
// process: for samplesort, every rank's keysPerRank keys, the n(n-1)
// regular samples and up to n^2 weighted entries; for the other
// generators n d messages. Field is "keys" when the keys dominate, else
// "n" (samplesort) or "d".
func GenDemand(gen string, n, d, keysPerRank int) sysmem.Need {
	fn := float64(n)
	if gen == "samplesort" {
		// Each rank's keys are one allocation, rounded up to whole pages
		// (5% covers the rounding of any slice of a page or more).
		keys := 1.05 * 8 * fn * float64(keysPerRank)
		// The samples, then the entries twice: the rows built and the
		// matrix made of them.
		dense := 8*fn*fn + 2*(matrixMessageBytes+8)*fn*fn
		need := sysmem.Need{Field: "n", What: fmt.Sprintf("a sample sort trace of n = %d ranks (%d x %d entries)", n, n, n), Bytes: keys + dense + matrixRankBytes*fn}
		if keys > dense {
			need.Field = "keys"
			need.What = fmt.Sprintf("a sample sort trace of %d ranks with %d keys each (8 bytes a key)", n, keysPerRank)
		}
		return need
	}
	return sysmem.Need{Field: "d", What: fmt.Sprintf("a %s matrix of n = %d ranks with d = %d messages each", gen, n, d),
		Bytes: fn*float64(d)*matrixMessageBytes + matrixRankBytes*fn}
}

// denseBytes is the most one scheduler allocates beyond the per-message
// structures on a matrix of n ranks, out-degree at most w and msgs
// messages: GM's n x n array of int32 (Fig. 4) and CGM's two n x w arrays
// (Figs. 5 and 6). A sparse matrix with one dense row makes CGM's arrays
// n^2 however few messages it has.
func denseBytes(s Scheduler, n, w, msgs int) float64 {
	fn := float64(n)
	switch s.(type) {
	case GM:
		return 4*fn*fn + 4*float64(msgs)
	case CGM:
		return 8 * fn * float64(w)
	}
	return 0
}

// Demand is what experiment 1 (RunCount, RunCountRecords) holds in this
// process at its peak: the densest cell's matrix with the schedulers'
// working copies (CountEntryBytes a message) and the largest dense array
// a scheduler allocates for it, plus every cell's per-matrix results,
// which the run keeps to the end (three numbers a sample and scheduler,
// copied into the records). Field is "matrix" (a trace), "n" or
// "samples", whichever grows the need most.
func (c CountConfig) Demand() sysmem.Need {
	c = c.withDefaults()
	type cell struct{ n, w, msgs int }
	var cells []cell
	if c.Matrix != nil {
		cells = []cell{{c.Matrix.N(), c.Matrix.MaxOutDegree(), c.Matrix.Len()}}
	} else {
		for _, n := range c.Ns {
			for _, d := range c.densities(n) {
				cells = append(cells, cell{n, d, n * d})
			}
		}
	}
	perSample := 8 * float64(1+2*len(c.Schedulers)) * 2 // the cell's slices and the records' copies
	var worst sysmem.Need
	var results float64
	for _, ce := range cells {
		dense := 0.0
		for _, s := range c.Schedulers {
			dense = max(dense, denseBytes(s, ce.n, ce.w, ce.msgs))
		}
		b := float64(max(ce.msgs, 1))*CountEntryBytes + dense
		if b > worst.Bytes {
			worst = sysmem.Need{Field: "n", Bytes: b,
				What: fmt.Sprintf("scheduling a matrix of n = %d ranks and %d messages (its copies and the schedulers' n x n arrays)", ce.n, ce.msgs)}
			if c.Matrix != nil {
				worst.Field = "matrix"
			}
		}
		results += float64(c.Matrices) * perSample
	}
	if results > worst.Bytes {
		return sysmem.Need{Field: "matrices", Bytes: worst.Bytes + results,
			What: fmt.Sprintf("%d matrices in each of %d cells for %d schedulers (their counts and times, kept to the end)", c.Matrices, len(cells), len(c.Schedulers))}
	}
	worst.Bytes += results
	return worst
}

// goArenaBytes is the unit in which the Go runtime maps its heap: a
// buffer of more is mapped in whole units (150 MB takes 192 MiB of address
// space), which an address-space limit (ulimit -v) counts.
const goArenaBytes = 64 << 20

// heapMapped is the address space a buffer of b bytes maps (goArenaBytes).
func heapMapped(b float64) float64 {
	if b < goArenaBytes {
		return b
	}
	return math.Ceil(b/goArenaBytes) * goArenaBytes
}

// perMessage is what experiment 2 holds per message of the matrix being
// measured beyond the exchange buffers: the exchange's two offsets by
// message id and, per method, its schedule's copy of the matrix (gathered
// by every rank) with the schedule's message ids, all held while that
// matrix's exchanges run.
func perMessage(cfg CommConfig) float64 {
	methods := len(cfg.Methods)
	if methods == 0 {
		methods = len(DefaultMethods())
	}
	return 2*8 + float64(methods)*(matrixMessageBytes+4)
}

// CommDemand is what experiment 2 (RunComm) asks of each of n ranks under
// cfg: the exchange buffers of the rank that sends and receives most at
// the largest message size (a trace's own sizes when weighted), with its
// send side in flight, as the Go heap maps them (heapMapped); the
// structures held per message (perMessage); and the generated matrices,
// which every rank holds for the whole run (cfg.Matrices per density).
// One exchange is counted: RunComm gives each method's buffers back before
// it builds the next's. Field is "matrix" for a trace, "sizes" when the
// buffers dominate, else "matrices".
//
// For generated matrices the receive side is estimated from the
// generator: Fig. 7's are d-regular, a uniform one receives a binomial
// count (at most 2d + 8 with overwhelming probability), a skewed one's hot
// rank about 8d (SkewConfig's default): 9d + 8 is allowed.
func CommDemand(n int, cfg CommConfig) sysmem.Need {
	maxSize := 0
	for _, s := range cfg.Sizes {
		maxSize = max(maxSize, s)
	}
	if len(cfg.Sizes) == 0 {
		maxSize = PaperCommSizes[len(PaperCommSizes)-1]
	}
	if m := cfg.Matrix; m != nil {
		send := make([]float64, m.N())
		recv := make([]float64, m.N())
		for id := 0; id < m.Len(); id++ {
			b := float64(m.Bytes(id, maxSize))
			send[m.Src(id)] += b
			recv[m.Dst(id)] += b
		}
		var worst, flight float64
		for i := range send {
			worst = max(worst, heapMapped(send[i])+heapMapped(recv[i]))
			flight = max(flight, heapMapped(send[i]))
		}
		return sysmem.Need{Field: "matrix", Bytes: worst + perMessage(cfg)*float64(m.Len()), InFlight: flight,
			What: fmt.Sprintf("the exchange of a %d-rank matrix with %d messages", m.N(), m.Len())}
	}
	ds := cfg.Densities
	if len(ds) == 0 {
		ds = DefaultCommDensities(n)
	}
	gen := cfg.Gen
	if gen == "" {
		gen = GenFig7
	}
	matrices := max(cfg.Matrices, 1)
	var buffers, flight, held float64
	dMax := 0
	for _, d := range ds {
		in := d
		switch gen {
		case GenUniform:
			in = min(n-1, 2*d+8)
		case GenSkewed:
			in = min(n-1, 9*d+8)
		}
		sendB := heapMapped(float64(d) * float64(maxSize))
		if b := sendB + heapMapped(float64(in)*float64(maxSize)) + perMessage(cfg)*float64(n*d); b > buffers {
			buffers, flight, dMax = b, sendB, d
		}
		held += float64(matrices) * (float64(n)*float64(d)*matrixMessageBytes + matrixRankBytes*float64(n))
	}
	if held > buffers {
		return sysmem.Need{Field: "matrices", Bytes: held + buffers, InFlight: flight,
			What: fmt.Sprintf("%d generated matrices per density of %d ranks, held for the whole run", matrices, n)}
	}
	return sysmem.Need{Field: "sizes", Bytes: buffers + held, InFlight: flight,
		What: fmt.Sprintf("the exchange of d = %d messages of %d bytes per rank", dMax, maxSize)}
}
