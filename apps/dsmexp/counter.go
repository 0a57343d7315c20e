package dsmexp

import (
	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
)

// Section is what one measured section (a phase, summed over all the times
// it was entered) cost, over all ranks.
type Section struct {
	Name       string
	Congestion divalib.Congestion
	// Store accesses issued in the section and how many were served from
	// the rank's own copy (cache hits), summed over ranks. Zero for the
	// hand-optimised versions.
	Reads, ReadHits   int64
	Writes, WriteHits int64
	Locks             int64
}

// HitRatio is ReadHits / Reads (0 without reads).
func (s Section) HitRatio() float64 {
	if s.Reads == 0 {
		return 0
	}
	return float64(s.ReadHits) / float64(s.Reads)
}

// counter is the apps.Probe of a store: at each Enter it adds what the
// store counted since the previous Enter to the section being left, and to
// the section PhaseTotal, the sum of all measured sections (a section's
// congestion is the maximum over links of its own sum, so the total's
// cannot be added up from the sections' maxima). It is
// switched on only for the repetition whose counts are reported, and then
// Enter ends with an MPI barrier: every rank has left the store barrier
// before any rank sends the new section's first request, so a rank never
// serves (and is charged for) another section's messages. Without it the
// counts moved by a header or two between runs (an invalidation of the
// first write reaching a rank still in the preceding barrier).
type counter struct {
	comm   mpi.Comm
	err    error
	store  *divalib.Store
	on     bool
	cur    string
	last   divalib.Stats
	order  []string
	links  map[string]*divalib.Traffic
	access map[string]*[5]int64 // reads, read hits, writes, write hits, locks
}

func newCounter(c mpi.Comm, s *divalib.Store) *counter {
	return &counter{comm: c, store: s, links: map[string]*divalib.Traffic{}, access: map[string]*[5]int64{}}
}

// Enter implements apps.Probe. It runs right after a store barrier, when
// everything this rank sent in the previous section has been charged.
func (k *counter) Enter(section string) {
	if !k.on {
		return
	}
	tr := k.store.Traffic()
	st := k.store.Stats()
	if k.cur != "" {
		// The section left, and the total of all measured sections.
		for _, name := range []string{k.cur, PhaseTotal} {
			k.links[name].Add(tr)
			a := k.access[name]
			a[0] += st.Reads - k.last.Reads
			a[1] += st.ReadHits - k.last.ReadHits
			a[2] += st.Writes - k.last.Writes
			a[3] += st.WriteHits - k.last.WriteHits
			a[4] += st.Locks - k.last.Locks
		}
	}
	tr.Reset()
	k.last, k.cur = st, section
	for _, name := range []string{PhaseTotal, section} {
		if section != "" && k.links[name] == nil {
			k.links[name] = divalib.NewTraffic(k.store.Mesh())
			k.access[name] = &[5]int64{}
			k.order = append(k.order, name)
		}
	}
	if err := k.comm.Barrier(); err != nil && k.err == nil {
		k.err = err
	}
}

// sections reduces the counts over all ranks (collective: plain MPI, so
// call it when no rank waits for another's service, e.g. after the
// application's verification). Every rank entered the same sections in the
// same order (the apps.Probe contract).
func (k *counter) sections(c mpi.Comm) ([]Section, error) {
	if k.err != nil {
		return nil, k.err
	}
	out := make([]Section, 0, len(k.order))
	for _, name := range k.order {
		g, err := k.links[name].Reduce(c)
		if err != nil {
			return nil, err
		}
		a := k.access[name]
		sum := make([]int64, len(a))
		if err := c.AllreduceInt64s(a[:], sum, mpi.OpSum); err != nil {
			return nil, err
		}
		out = append(out, Section{Name: name, Congestion: g, Reads: sum[0], ReadHits: sum[1], Writes: sum[2], WriteHits: sum[3], Locks: sum[4]})
	}
	return out, nil
}

// handCounter counts a hand-optimised version's messages: it is both the
// application's apps.Charger (charging only while switched on and inside a
// section) and its apps.Probe.
type handCounter struct {
	mesh  divalib.Mesh
	on    bool
	cur   string
	order []string
	links map[string]*divalib.Traffic
}

func newHandCounter(m divalib.Mesh) *handCounter {
	return &handCounter{mesh: m, links: map[string]*divalib.Traffic{}}
}

func (h *handCounter) Enter(section string) {
	if !h.on {
		return
	}
	h.cur = section
	for _, name := range []string{PhaseTotal, section} {
		if section != "" && h.links[name] == nil {
			h.links[name] = divalib.NewTraffic(h.mesh)
			h.order = append(h.order, name)
		}
	}
}

func (h *handCounter) Charge(from, to, n int) {
	if h.on && h.cur != "" {
		h.links[h.cur].Charge(from, to, n)
		h.links[PhaseTotal].Charge(from, to, n)
	}
}

func (h *handCounter) sections(c mpi.Comm) ([]Section, error) {
	out := make([]Section, 0, len(h.order))
	for _, name := range h.order {
		g, err := h.links[name].Reduce(c)
		if err != nil {
			return nil, err
		}
		out = append(out, Section{Name: name, Congestion: g})
	}
	return out, nil
}
