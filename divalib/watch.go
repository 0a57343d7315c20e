package divalib

import (
	"github.com/commcost/commcost/patterns"
	"github.com/commcost/commcost/results"
)

// The experiments run under the process's watchdog (patterns.Watchdog,
// which the job runtime installs for every world): each strategy at each
// point is one watched point, named as its record ("dsm-matsquare
// block_ints=64 strategy=tree-4"), whose progress is every repetition,
// read step or batch that ends. A rank whose peer stops answering (a
// stopped process, a frozen node) leaves its point idle past the timeout,
// and the watchdog ends the job instead of letting it wait in MPI for
// ever. Without a watchdog both calls do nothing.

// watchPoint begins the point of bench with params and returns its end.
func watchPoint(bench string, params results.Params) (end func()) {
	return patterns.Installed().Begin(bench+" "+results.ParamList(params), 0)
}

// progress marks that the current point moved on.
func progress() { patterns.Installed().Progress() }
