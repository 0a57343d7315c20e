package patterns

import (
	"fmt"
	"math"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/results"
)

// PRTT configures netgauge's parametrised round trip PRTT(n, d, s) for the
// LogGP model (Alexandrov et al., SPAA 1995, which paper 003 names in its
// survey of models, file 003_e6d8b5ab6c2aa305.txt, slide "The LogGP
// Model"), as measured by Hoefler, Lichei and Rehm ("Low-Overhead LogGP
// Parameter Assessment for Modern Interconnection Networks", IPDPS 2007;
// netgauge's ptrn_loggp.c): the client (rank 0) sends n messages of s bytes
// with a delay of d seconds between consecutive sends; the server (Peer)
// receives all n and answers with one message of s bytes; PRTT(n, d, s) is
// the client's time for that exchange. With s' = s - 1:
//
//	PRTT(1, 0, s) = 2 (o_s + L + s' G + o_r)
//	PRTT(n, d, s) = PRTT(1, 0, s) + (n-1) max{o_s + d, g + s' G}
//
// so (PRTT(n, 0, s) - PRTT(1, 0, s))/(n-1) = g + s' G gives g and G from a
// fit over s, (PRTT(n, d, s) - PRTT(1, 0, s))/(n-1) - d = o_s when d >=
// g + s' G (netgauge takes d = PRTT(1, 0, s)), and L follows. model.LogGP
// fits all of them from "prtt" records.
//
// With Server set the same exchange is timed on the server instead, which
// waits d before each of its receives after the first (netgauge's o_r run):
// the sample is T_srv, from the first message's arrival to the last's, and
// o_r = (T_srv - (n-1) d)/(n-1).
//
// A repetition is Iters exchanges back to back (by default the OSU counts
// divided by n, capped by CapIters from the warm-up's pace); a sample is the
// elapsed time divided by the exchanges. On a backend with mpi.PRTTKernel
// (native) the exchanges run in C, one cgo call per repetition; otherwise
// in Go, where each MPI call also pays the binding's cost, which would land
// in the overheads o_s and o_r and in g.
type PRTT struct {
	Bytes    int
	N        int     // messages from client to server, >= 1
	DelaySec float64 // delay between consecutive sends, >= 0 seconds
	Server   bool    // time the server's receives (o_r) instead of the client
	Peer     int     // server rank; 0 means the last rank
	Iters    int     // exchanges per repetition; 0 = derived from the OSU counts
	Warmup   int     // untimed exchanges; 0 = OSU default, negative = none
	Validate bool
	Reps     Reps
}

// BenchPRTT is the bench name of PRTT records (PRTT.Params), which
// model.FitLogGP reads.
const BenchPRTT = "prtt"

const prttTag = 330

func (pr PRTT) peer(p int) int {
	if pr.Peer == 0 {
		return p - 1
	}
	return pr.Peer
}

// Check reports a configuration that cannot run on p ranks.
func (pr PRTT) Check(p int) error {
	switch q := pr.peer(p); {
	case p < 2:
		return fmt.Errorf("prtt needs at least 2 ranks, got %d", p)
	case q < 1 || q >= p:
		return fmt.Errorf("%w: server rank %d, but ranks are 0..%d (and the server is not rank 0)", ErrTooManyTargets, q, p-1)
	case pr.N < 1:
		return fmt.Errorf("n = %d: the messages per exchange must be >= 1", pr.N)
	case pr.Server && pr.N < 2:
		return fmt.Errorf("n = %d: timing the server's receives needs n >= 2", pr.N)
	case !(pr.DelaySec >= 0) || math.IsInf(pr.DelaySec, 0):
		return fmt.Errorf("delay = %v s: must be a finite number >= 0", pr.DelaySec)
	case pr.Bytes < 0:
		return fmt.Errorf("bytes = %d: must be >= 0", pr.Bytes)
	}
	return pr.Reps.Validate()
}

// Iterations returns the exchanges per repetition and the untimed warm-up
// exchanges: the OSU round-trip counts (Iterations) divided by n, at least
// 10 and 2.
func (pr PRTT) Iterations() (iters, warmup int) {
	iters, warmup = Iterations(pr.Bytes, pr.Iters, pr.Warmup)
	if pr.Iters <= 0 {
		iters = max(10, iters/max(pr.N, 1))
	}
	if pr.Warmup == 0 {
		warmup = max(2, warmup/max(pr.N, 1))
	}
	return iters, warmup
}

// Params are the record parameters: s (bytes), n, d (delay_s) and the side
// timed, "client" or "server"; every record names its side, so that a
// run's records share one set of columns (CSV).
func (pr PRTT) Params(int) results.Params {
	side := "client"
	if pr.Server {
		side = "server"
	}
	return results.Params{"bytes": pr.Bytes, "n": pr.N, "delay_s": pr.DelaySec, "side": side}
}

// Bench is the bench name of the records.
func (PRTT) Bench() string { return BenchPRTT }

// Record is the PRTT record of m: ranks 2, the client and the server.
func (pr PRTT) Record(m Measurement, meta results.Meta) results.Record {
	return m.Record(BenchPRTT, pr.Params(m.CommSize), 2, meta)
}

// Run measures PRTT(N, DelaySec, Bytes) on the client, or T_srv on the
// server with Server (collective over c).
func (pr PRTT) Run(c mpi.Comm) (Measurement, error) {
	p := c.Size()
	if err := pr.Check(p); err != nil {
		return Measurement{}, err
	}
	q := pr.peer(p)
	me := c.Rank()
	client, server := me == 0, me == q
	iters, warmup := pr.Iterations()
	buf := make([]byte, pr.Bytes)
	touch(buf)
	n, d := pr.N, pr.DelaySec
	wait := func(sec float64) {
		if sec <= 0 {
			return
		}
		for until := c.Wtime() + sec; c.Wtime() < until; {
		}
	}
	// exchanges runs k exchanges and returns this side's elapsed time and,
	// on the server, the sum of its first-to-last arrival times.
	kern, _ := c.(mpi.PRTTKernel)
	exchanges := func(k int) (elapsed, total float64, err error) {
		if kern != nil && (client || server) {
			peer := q
			if server {
				peer = 0
			}
			return kern.PRTT(buf, peer, prttTag, n, d, k, client, pr.Server)
		}
		t0 := c.Wtime()
		for e := 0; e < k; e++ {
			switch {
			case client:
				for i := 0; i < n; i++ {
					if i > 0 {
						wait(d)
					}
					if err := c.Send(buf, q, prttTag); err != nil {
						return 0, 0, err
					}
				}
				if _, err := c.Recv(buf, q, prttTag); err != nil {
					return 0, 0, err
				}
			case server:
				if _, err := c.Recv(buf, 0, prttTag); err != nil {
					return 0, 0, err
				}
				first := c.Wtime()
				for i := 1; i < n; i++ {
					if pr.Server {
						wait(d)
					}
					if _, err := c.Recv(buf, 0, prttTag); err != nil {
						return 0, 0, err
					}
				}
				total += c.Wtime() - first
				if err := c.Send(buf, 0, prttTag); err != nil {
					return 0, 0, err
				}
			}
		}
		return c.Wtime() - t0, total, nil
	}
	if err := c.Barrier(); err != nil {
		return Measurement{}, err
	}
	perIter, err := warmUp(c, pr.Reps, warmup, client || server, func(k int) (float64, error) {
		t, _, err := exchanges(k)
		return t, err
	})
	if err != nil {
		return Measurement{}, err
	}
	if pr.Iters <= 0 {
		if iters, err = CapIters(c, pr.Reps, iters, perIter); err != nil {
			return Measurement{}, err
		}
	}
	var counts Counts
	calls := 0
	cfg := pr.Reps
	cfg.Sync = SyncBarrier // the samples are not rank time spans (Rep)
	cfg.Reduction = ReduceRank0
	report := mpi.PRTTElapsed
	if pr.Server {
		cfg.Reduction = ReduceMax // only the server reports a time
		report = mpi.PRTTArrivals
		if client {
			report = mpi.PRTTNothing // only the server's receives are timed
		}
	}
	batch := SerialBatch(c, func() (float64, error) {
		if !client && !server {
			return 0, nil
		}
		t, srv, err := exchanges(iters)
		switch report {
		case mpi.PRTTArrivals:
			t = srv
		case mpi.PRTTNothing:
			t = 0
		}
		return t, err
	})
	if bk, ok := c.(mpi.BatchKernels); ok {
		peer := mpi.NoPeer
		switch {
		case client:
			peer = q
		case server:
			peer = 0
		}
		batch = func(b mpi.Batch) error {
			return bk.PRTTBatch(b, buf, peer, prttTag, n, d, iters, client, pr.Server, report)
		}
	}
	if pr.Validate {
		batch = checked(batch, func() { prepareCheck(buf, client, pr.Bytes) }, func() error {
			if !client && !server {
				return nil
			}
			return checkPattern(buf, pr.Bytes, "prtt")
		})
	}
	m, err := MeasureBatch(c, cfg, pr.Validate, func(b mpi.Batch) error {
		if err := batch(b); err != nil {
			return err
		}
		k := iters * b.Reps()
		switch {
		case client:
			calls += b.Reps()
			counts.add(k*n, pr.Bytes, k, pr.Bytes)
		case server:
			calls += b.Reps()
			counts.add(k, pr.Bytes, k*n, pr.Bytes)
		}
		return nil
	})
	if err != nil {
		return Measurement{}, err
	}
	return finish(c, m.Scaled(1/float64(iters)), counts, max(calls, 1), map[string]float64{CounterIters: float64(iters)})
}
