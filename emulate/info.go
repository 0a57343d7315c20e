package emulate

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"text/tabwriter"

	"github.com/commcost/commcost/report"
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
// destination). With markdown the tables are GitHub-flavoured markdown.
func WriteInfo(w io.Writer, t *Topology, routes, markdown bool) error {
	kind := "direct (a module at every node)"
	if t.Indirect() {
		kind = "indirect (switches; modules on the last level)"
	}
	classes, r0 := classPlan(t)
	summary := [][]string{
		{"network", t.Name()},
		{"kind", kind},
		{"ranks", fmt.Sprintf("%d = %d application + %d service", t.Ranks(), t.Apps(), t.Nodes())},
		{"links", fmt.Sprint(len(t.Links()))},
		{"diameter", fmt.Sprintf("%d hops", t.Diameter())},
		{"mean access distance", fmt.Sprintf("%.3f hops (H_k: entry node to another module)", t.MeanAccessDistance())},
		{"mean k-k step distance", fmt.Sprintf("%.3f hops (H_k-k: longest path of a permutation)", t.MeanPermutationMaxDistance(20000, 1))},
		{"barrier root", fmt.Sprintf("node %d %s", t.Root(), t.Node(t.Root()).Label)},
		{"buffer classes", fmt.Sprintf("%d (requests 0..%d, replies and broadcasts %d..%d)", classes, r0-1, r0, classes-1)},
	}
	var ranks [][]string
	for r := range t.Ranks() {
		role := t.RoleOf(r)
		if role.App >= 0 {
			e := t.Entry(role.App)
			ranks = append(ranks, []string{fmt.Sprint(r), fmt.Sprintf("application %d", role.App), fmt.Sprint(e), t.Node(e).Label, "-", fmt.Sprintf("entry node %d", e)})
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
		ranks = append(ranks, []string{fmt.Sprint(r), "service", fmt.Sprint(u), nd.Label, mod, strings.Join(nb, " ")})
	}
	var table [][]string
	if routes {
		for u := range t.Nodes() {
			row := []string{fmt.Sprint(u)}
			for d := range t.Nodes() {
				if d == u {
					row = append(row, ".")
				} else {
					row = append(row, fmt.Sprint(t.NextHop(u, d)))
				}
			}
			table = append(table, row)
		}
	}
	dests := []string{"node"}
	for d := range t.Nodes() {
		dests = append(dests, fmt.Sprint(d))
	}
	rankHeader := []string{"world rank", "role", "node", "label", "module", "neighbours"}
	if markdown {
		return writeInfoMarkdown(w, summary, rankHeader, ranks, dests, table)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range summary {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range append([][]string{rankHeader}, ranks...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil || !routes {
		return err
	}
	fmt.Fprintln(w, "\nrouting tables: next hop from node (row) to destination (column)")
	tw = tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{dests}, table...) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// writeInfoMarkdown writes WriteInfo's tables as markdown.
func writeInfoMarkdown(w io.Writer, summary [][]string, rankHeader []string, ranks [][]string, dests []string, routes [][]string) error {
	if err := report.MarkdownTable(w, []string{"property", "value"}, summary); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := report.MarkdownTable(w, rankHeader, ranks); err != nil || routes == nil {
		return err
	}
	fmt.Fprintln(w, "\nrouting tables: next hop from node (row) to destination (column)")
	fmt.Fprintln(w)
	return report.MarkdownTable(w, dests, routes)
}
