package emulate

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"text/tabwriter"
)

// MeanAccessDistance is H_k of paper 000, section 6.5: the mean number of
// service-network hops from the entry node of an application rank to a
// memory module, over all pairs of an application rank and a module not its
// own (i != j). For SE(3) it is 116/56 = 2.07, the paper's "about 2.1" (the
// paper's formula divides by p^2; its number matches the mean over the
// p(p-1) pairs that leave the node).
func (t *Topology) MeanAccessDistance() float64 {
	s, n := 0, 0
	for i := range t.apps {
		for m := range t.apps {
			if i == m {
				continue
			}
			s += t.Dist(t.entry[i], t.module[m])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(s) / float64(n)
}

// exactPermutationLimit is the largest p for which MeanPermutationMaxDistance
// enumerates all p! permutations (8! = 40320).
const exactPermutationLimit = 8

// MeanPermutationMaxDistance is H_{k-k} of paper 000, section 6.5: the mean
// over permutations pi of max_j d(j, pi(j)), the longest service-network
// path of one step of a k-k-access. Exact for p <= 8 (SE(3) gives 3.709,
// the paper's "about 3.7"); otherwise estimated from samples random
// permutations drawn with seed.
func (t *Topology) MeanPermutationMaxDistance(samples int, seed uint64) float64 {
	p := t.apps
	maxDist := func(perm []int) int {
		m := 0
		for j, x := range perm {
			m = max(m, t.Dist(t.entry[j], t.module[x]))
		}
		return m
	}
	if p <= exactPermutationLimit {
		perm := make([]int, p)
		for i := range perm {
			perm[i] = i
		}
		sum, n := 0, 0
		var rec func(k int)
		rec = func(k int) {
			if k == p {
				sum += maxDist(perm)
				n++
				return
			}
			for i := k; i < p; i++ {
				perm[k], perm[i] = perm[i], perm[k]
				rec(k + 1)
				perm[k], perm[i] = perm[i], perm[k]
			}
		}
		rec(0)
		return float64(sum) / float64(n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b6b))
	sum := 0
	for range samples {
		sum += maxDist(rng.Perm(p))
	}
	return float64(sum) / float64(max(samples, 1))
}

// WriteInfo prints the topology and the partition of the world into
// application and service ranks, as `commcost emulate info` shows it; with
// routes it also prints every node's routing table (next hop per
// destination).
func WriteInfo(w io.Writer, t *Topology, routes bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	kind := "direct (a module at every node)"
	if t.Indirect() {
		kind = "indirect (switches; modules on the last level)"
	}
	classes, r0 := classPlan(t)
	fmt.Fprintf(tw, "network\t%s\n", t.Name())
	fmt.Fprintf(tw, "kind\t%s\n", kind)
	fmt.Fprintf(tw, "ranks\t%d = %d application + %d service\n", t.Ranks(), t.Apps(), t.Nodes())
	fmt.Fprintf(tw, "links\t%d\n", len(t.Links()))
	fmt.Fprintf(tw, "diameter\t%d hops\n", t.Diameter())
	fmt.Fprintf(tw, "mean access distance\t%.3f hops (H_k: entry node to another module)\n", t.MeanAccessDistance())
	fmt.Fprintf(tw, "mean k-k step distance\t%.3f hops (H_k-k: longest path of a permutation)\n", t.MeanPermutationMaxDistance(20000, 1))
	fmt.Fprintf(tw, "barrier root\tnode %d %s\n", t.Root(), t.Node(t.Root()).Label)
	fmt.Fprintf(tw, "buffer classes\t%d (requests 0..%d, replies and broadcasts %d..%d)\n", classes, r0-1, r0, classes-1)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "world rank\trole\tnode\tlabel\tmodule\tneighbours")
	for r := range t.Ranks() {
		role := t.RoleOf(r)
		if role.App >= 0 {
			e := t.Entry(role.App)
			fmt.Fprintf(tw, "%d\tapplication %d\t%d\t%s\t-\tentry node %d\n", r, role.App, e, t.Node(e).Label, e)
			continue
		}
		u := role.Node
		nd := t.Node(u)
		mod := "-"
		if nd.Module >= 0 {
			mod = fmt.Sprint(nd.Module)
		}
		nb := make([]string, 0, len(t.Neighbors(u))+1)
		for _, v := range t.Neighbors(u) {
			nb = append(nb, fmt.Sprint(v))
		}
		if nd.App >= 0 {
			nb = append(nb, fmt.Sprintf("app %d", nd.App))
		}
		fmt.Fprintf(tw, "%d\tservice\t%d\t%s\t%s\t%s\n", r, u, nd.Label, mod, strings.Join(nb, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !routes {
		return nil
	}
	fmt.Fprintln(w, "\nrouting tables: next hop from node (row) to destination (column)")
	tw = tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "node\t")
	for d := range t.Nodes() {
		fmt.Fprintf(tw, "%d\t", d)
	}
	fmt.Fprintln(tw)
	for u := range t.Nodes() {
		fmt.Fprintf(tw, "%d\t", u)
		for d := range t.Nodes() {
			if d == u {
				fmt.Fprint(tw, ".\t")
			} else {
				fmt.Fprintf(tw, "%d\t", t.NextHop(u, d))
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
