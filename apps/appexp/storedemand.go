package appexp

import (
	"fmt"

	"github.com/commcost/commcost/apps"
	"github.com/commcost/commcost/directstore"
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/internal/sysmem"
	"github.com/commcost/commcost/patterns"
)

// Demand is the largest memory need per application rank of the run on p
// application ranks, over its stores (each opened in turn, so the largest
// counts), for the command to check before anything is measured. On one
// store (storeDemand) the variables of every configuration stay until it
// closes (a store has no Free), while the program's arrays are one
// configuration's at a time.
func (r StoreRun) Demand(p int) sysmem.Need {
	stores := r.Stores
	if len(stores) == 0 {
		stores = []globalvar.Strategy{directstore.Strategy{}}
	}
	var worst sysmem.Need
	for _, st := range stores {
		worst = sysmem.Largest(worst, r.storeDemand(st, p))
	}
	return worst
}

// caching reports whether st keeps a whole copy of every variable a rank
// accesses besides the home's, placed at random (divalib's fixed home and
// access trees); the direct store and the emulated networks keep one copy,
// on the home the program names.
func caching(st globalvar.Strategy) bool {
	_, ok := st.(divalib.Config)
	return ok
}

// storeDemand is the need on store st: the store's own buffers (the direct
// store's posted request receive of DefaultMaxPacket), the calibration's
// variables where they stay in the store, the variables of every
// configuration (homes, and on a caching store the copies), and the
// larger of the program's arrays (the largest configuration's) and the
// calibration's largest point, which run one after the other.
func (r StoreRun) storeDemand(st globalvar.Strategy, p int) sysmem.Need {
	fixed := 0.0
	if _, ok := st.(directstore.Strategy); ok {
		fixed = directstore.DefaultMaxPacket + 16
	}
	calKept, calPoint := r.calibrationDemand(st, p)
	held, nConfigs := 0.0, 0
	var prog apps.StoreNeed
	for _, a := range r.Configs {
		d, ok := a.(apps.StoreDemander)
		if !ok || a.Check(p) != nil {
			continue // CheckRanks refuses it
		}
		n := d.StoreDemand(p)
		held += n.Homes
		if caching(st) {
			held += n.Copies
			n.InFlight = max(n.InFlight, n.Largest) // a variable travels whole
		}
		nConfigs++
		if n.Arrays+n.InFlight > prog.Arrays+prog.InFlight {
			prog = n
		}
	}
	if nConfigs == 0 {
		return sysmem.Need{} // no configuration runs on p ranks: CheckRanks refuses the run
	}
	base := fixed + calKept + held
	need := sysmem.Need{Field: prog.Field, Bytes: base + prog.Arrays, InFlight: prog.InFlight, What: prog.What}
	if nConfigs > 1 {
		need.What += fmt.Sprintf(", with the store variables of all %d configurations", nConfigs)
	}
	if need.What != "" {
		need.What += " on store " + st.Name()
	}
	if calPoint.Bytes+calPoint.InFlight > prog.Arrays+prog.InFlight {
		calPoint.Bytes += base
		return calPoint
	}
	return need
}

// calibrationDemand is what the k-k-access sweep measured on st before
// the programs (without Models) asks of a rank: kept, the variables that
// stay in the store after it (StoreKKAccess creates p modules of p slots
// of l bytes a point on stores without a k-k-access of their own, and a
// caching store copies the module it writes and up to k it accesses);
// point, the largest point's buffers and payload in flight (the pattern's
// Demand: p slots of l bytes, k requests and answers).
func (r StoreRun) calibrationDemand(st globalvar.Strategy, p int) (kept float64, point sysmem.Need) {
	if len(r.Models) > 0 {
		return 0, sysmem.Need{}
	}
	ks, ls := r.grid()
	cal := r.Calibration.WithGrid(ks, ls)
	_, own := st.(apps.KKMeasurer)
	for _, op := range []patterns.AccessOp{patterns.AccessRead, patterns.AccessWrite} {
		_ = cal.Each(func(k, l int, rr float64) error {
			mod := float64(p) * float64(max(l, 1))
			d := patterns.KKAccess{K: k, L: l, R: rr, Op: op, A: max(cal.A, 1), Validate: cal.Validate}.Demand(p)
			b := float64(d.BufferBytes)
			if !own {
				b = 2*mod + float64(k)*float64(l) // the rank's module, its contents, the packets
				if caching(st) {
					kept += float64(min(k, p)+1) * mod
				}
				kept += mod
			}
			if b+float64(d.InFlightBytes) > point.Bytes+point.InFlight {
				point = sysmem.Need{Field: "l", Bytes: b, InFlight: float64(d.InFlightBytes),
					What: fmt.Sprintf("the calibration's kkaccess k=%d l=%d r=%g op=%s on store %s", k, l, rr, op, st.Name())}
			}
			return nil
		})
	}
	return kept, point
}
