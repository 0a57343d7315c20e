package apps

import (
	"fmt"
	"math/rand/v2"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// StoreKKAccess measures the k-k-access of paper 000 (Definition 2 and the
// Note after it) through a global-variable store, for stores whose own
// protocol is not the kkaccess pattern's (divalib's strategies; the direct
// store is measured by patterns.KKAccess itself, the emulated networks by
// emulate.KKAccess). Module m is a variable of p slots of L bytes created on
// module m (globalvar.Placer; the store places it otherwise). Every
// repetition draws its accesses as the pattern does (patterns.KKAccess.
// Targets: max(1, round(R p)) random accessing ranks, a random (partial)
// permutation f_j per step): rank i sends its K packets, packet j to module
// f_j(i) (slot i), all K in flight (globalvar.ReadBatch/WriteBatch with
// k = K). A repetition's time is the
// slowest accessing rank's, from the start to its last answer.
//
// Before every repetition of a read, each module's owner rewrites its whole
// variable (untimed), so a caching store (the access tree) has no copy left
// at the readers and the repetition measures accesses, not cache hits.
// Every repetition ends with a store barrier (untimed) so no rank leaves for
// the next repetition's MPI barrier while another still waits for its
// answers.
//
// The record is bench "kkaccess" with the pattern's params k, l, r
// (realised), op, and "network" = name, which the trilinear fit uses to keep
// stores apart (model.Options.Network).
func StoreKKAccess(env Env, kk patterns.KKAccess, name string, meta results.Meta) (results.Record, error) {
	s, c := env.Store, env.Comm
	p, me := c.Size(), c.Rank()
	if err := needStore(env, "kkaccess"); err != nil {
		return results.Record{}, err
	}
	if err := kk.Check(p); err != nil {
		return results.Record{}, err
	}
	slot := max(kk.L, 1)
	mods := make([]globalvar.Var, p)
	for m := range mods {
		var err error
		if mods[m], _, err = globalvar.CreateAt(s, fmt.Sprintf("kkaccess.%s.k%d.l%d.r%g.%d", kk.Op, kk.K, kk.L, kk.R, m), p*slot, m); err != nil {
			return results.Record{}, err
		}
	}
	own := make([]byte, p*slot)
	for x := range own {
		own[x] = byte(me*31 + x)
	}
	buf := make([]byte, kk.K*kk.L)
	rng := rand.New(rand.NewPCG(uint64(kk.Seed), 0x6b6b73746f7265)) // "kkstore"
	pk := make([]globalvar.Packet, kk.K)
	reps := kk.Reps
	reps.Reduction = patterns.ReduceMax
	meas, err := patterns.Measure(c, reps, func() (float64, error) {
		// The draw is the same on every rank (same seed, same order).
		targets := kk.Targets(rng, p)[me]
		if kk.Op == patterns.AccessRead {
			if err := s.Write(mods[me], 0, own); err != nil {
				return 0, err
			}
			if err := s.Barrier(); err != nil {
				return 0, err
			}
		}
		var d float64
		if targets != nil {
			for j, t := range targets {
				pk[j] = globalvar.Packet{Var: mods[t], Off: me * slot, Buf: buf[j*kk.L : (j+1)*kk.L]}
			}
			t0 := c.Wtime()
			var err error
			if kk.Op == patterns.AccessWrite {
				err = globalvar.WriteBatch(s, pk, kk.K)
			} else {
				err = globalvar.ReadBatch(s, pk, kk.K)
			}
			if err != nil {
				return 0, err
			}
			d = c.Wtime() - t0
		}
		return d, s.Barrier()
	})
	if err != nil {
		return results.Record{}, err
	}
	m := patterns.AccessingRanks(kk.R, p)
	params := kk.Params(p)
	params["network"] = name
	rec := meas.Record(patterns.BenchKKAccess, params, p, meta)
	rec.Counters = map[string]float64{patterns.CounterAccessingRanks: float64(m), patterns.CounterRRealised: float64(m) / float64(p), patterns.CounterRAsked: kk.R}
	return rec, nil
}
