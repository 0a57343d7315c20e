package main

import (
	"flag"

	"github.com/commcost/commcost/apps"
)

// The four applications of paper 000, section 6, over global variables:
// every block access is ceil(D/(k l)) k-k-accesses of k packets of l bytes
// (--k, --l lists), and without --model a k-k-access sweep on the same
// store is fitted with the trilinear model (reads and writes apart):
// appexp.StoreRun. This file is their flags.

func init() {
	registerApp(appEntry{name: "matmul", paper: "000 sec. 6.1", overStore: true,
		summary: "C = A B, p+2 submatrix accesses (T_MM), with and without the sync of line (*)",
		flags: func(fs *flag.FlagSet) func() ([]apps.App, error) {
			g := registerGV(fs, "256", "matrix order n (p must divide it): a list")
			sync := fs.String("sync", "false,true", "synchronise before every read of B (line (*)): a list of false and true")
			return g.configs(func(n, k, l int) ([]apps.App, error) {
				syncs, err := parseBoolGrid("sync", *sync)
				if err != nil {
					return nil, err
				}
				var out []apps.App
				for _, s := range syncs {
					out = append(out, apps.MatMul{N: n, Access: apps.Access{K: k, L: l}, Sync: s})
				}
				return out, nil
			})
		}})
	registerApp(appEntry{name: "concomp", paper: "000 sec. 6.2", overStore: true,
		summary: "connected components of a dense graph (Woo and Sahni): BFS forests (T_bfs), log p merges (T_merge)",
		flags: func(fs *flag.FlagSet) func() ([]apps.App, error) {
			g := registerGV(fs, "1024", "vertices n (a multiple of 8; p, a power of two, must divide it): a list")
			parts := fs.Int("parts", 4, "planted components: the vertices fall into this many random groups")
			density := fs.Float64("density", 0.1, "edge probability inside a group, in (0, 1]")
			return g.configs(func(n, k, l int) ([]apps.App, error) {
				if *parts < 1 {
					return nil, usagef("--parts %d: want an integer >= 1", *parts)
				}
				if !(*density > 0 && *density <= 1) {
					return nil, usagef("--density %v: want a probability in (0, 1]", *density)
				}
				return []apps.App{apps.ConnComp{N: n, Parts: *parts, Density: *density, Access: apps.Access{K: k, L: l}}}, nil
			})
		}})
	registerApp(appEntry{name: "bitonic", paper: "000 sec. 6.3", overStore: true,
		summary: "bitonic sort (Culler et al.'s variant, local radix sort): T_bitonic",
		flags: func(fs *flag.FlagSet) func() ([]apps.App, error) {
			g := registerGV(fs, "16K", "keys per rank n (p must be a power of two): a list; K = 1024")
			return g.configs(func(n, k, l int) ([]apps.App, error) {
				return []apps.App{apps.BitonicSort{N: n, Access: apps.Access{K: k, L: l}}}, nil
			})
		}})
	registerApp(appEntry{name: "samplesort", paper: "000 sec. 6.4", overStore: true,
		summary: "sample sort (s = n/64, splitters, distribution (6a)-(6c), local radix sort; E(s, n) measured)",
		flags: func(fs *flag.FlagSet) func() ([]apps.App, error) {
			g := registerGV(fs, "16K", "keys per rank n (a multiple of 64): a list; K = 1024")
			return g.configs(func(n, k, l int) ([]apps.App, error) {
				return []apps.App{apps.SampleSort{N: n, Access: apps.Access{K: k, L: l}}}, nil
			})
		}})
}

// gvFlags are the flags paper 000's applications share: sizes and the
// access shape.
type gvFlags struct {
	n, k, l *string
}

const (
	defaultAppK = "1,4"
	defaultAppL = "256,1K"
)

func registerGV(fs *flag.FlagSet, nDefault, nHelp string) *gvFlags {
	return &gvFlags{
		n: fs.String("n", nDefault, nHelp),
		k: fs.String("k", defaultAppK, "send hot spots k (packets in flight per rank): a list; k l must not exceed any block the application accesses"),
		l: fs.String("l", defaultAppL, "packet sizes l in bytes: a list; K = 1024"),
	}
}

// configs returns the entry's configurations: every n x k x l of the
// lists through build. The calibration sweep (without --model) adds the k
// and l they use to its grid (appexp.StoreRun.Calibration).
func (g *gvFlags) configs(build func(n, k, l int) ([]apps.App, error)) func() ([]apps.App, error) {
	return func() ([]apps.App, error) {
		ns, err := parseIntGrid("n", *g.n, 1)
		if err != nil {
			return nil, err
		}
		ks, err := parseIntGrid("k", *g.k, 1)
		if err != nil {
			return nil, err
		}
		ls, err := parseIntGrid("l", *g.l, 1)
		if err != nil {
			return nil, err
		}
		var out []apps.App
		for _, n := range ns {
			for _, k := range ks {
				for _, l := range ls {
					as, err := build(n, k, l)
					if err != nil {
						return nil, err
					}
					out = append(out, as...)
				}
			}
		}
		if len(out) == 0 {
			return nil, usagef("--n, --k, --l: no configuration to run")
		}
		return out, nil
	}
}
