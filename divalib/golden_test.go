package divalib_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// goldenCounts are the figures TestGoldenCounts compares: the congestion
// report and the sums over ranks of the access and message counters.
type goldenCounts struct {
	divalib.Congestion
	Messages, Bytes, ReadHits, WriteHits, Evictions, Uncached int64
}

// goldenWorkload runs turns: in turn t of a round only rank t mod P
// accesses the store (reads, partial and whole writes, lock-protected
// updates, drawn from a seeded generator), then a store barrier. With one
// rank active at a time no two requests race, so the messages and their
// paths are a function of the seed alone: the counts are exactly
// reproducible, which applications with concurrent accesses (matrix
// square, Barnes-Hut) are not on goroutine ranks. Every rank replays every
// turn's writes into an oracle, so each read is checked against the latest
// value too.
func goldenWorkload(c mpi.Comm, cfg divalib.Config) (goldenCounts, error) {
	const (
		nvars  = 40
		rounds = 3
		opsPer = 14
	)
	var g goldenCounts
	s, err := divalib.New(c, cfg)
	if err != nil {
		return g, err
	}
	p := c.Size()
	vars := make([]globalvar.Var, nvars)
	oracle := make([][]byte, nvars)
	for i := range vars {
		size := 8 + 24*(i%9) // 8 .. 200 bytes
		if vars[i], err = s.Create(fmt.Sprintf("g%d", i), size); err != nil {
			return g, err
		}
		oracle[i] = make([]byte, size)
	}
	buf := make([]byte, 256)
	for round := 0; round < rounds; round++ {
		for turn := 0; turn < p; turn++ {
			rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(round*p+turn)))
			active := turn == c.Rank()
			for k := 0; k < opsPer; k++ {
				i := rng.IntN(nvars)
				v := vars[i]
				op := rng.IntN(10)
				off := rng.IntN(v.Size / 8)
				val := make([]byte, 8)
				binary.LittleEndian.PutUint64(val, rng.Uint64())
				switch {
				case op < 6: // read
					if !active {
						continue
					}
					if err := s.Read(v, 0, buf[:v.Size]); err != nil {
						return g, err
					}
					if string(buf[:v.Size]) != string(oracle[i]) {
						return g, fmt.Errorf("round %d turn %d: read of %s returned a stale value", round, turn, v.Name)
					}
				case op < 9: // write 8 bytes, or the whole variable
					data := val
					o := 8 * off
					if op == 8 {
						data, o = make([]byte, v.Size), 0
						for j := range data {
							data[j] = val[j%8] + byte(j)
						}
					}
					copy(oracle[i][o:], data)
					if active {
						if err := s.Write(v, o, data); err != nil {
							return g, err
						}
					}
				default: // locked read-modify-write
					copy(oracle[i][8*off:], val)
					if !active {
						continue
					}
					if err := s.Lock(v); err != nil {
						return g, err
					}
					if err := s.Read(v, 0, buf[:v.Size]); err != nil {
						return g, err
					}
					if err := s.Write(v, 8*off, val); err != nil {
						return g, err
					}
					if err := s.Unlock(v); err != nil {
						return g, err
					}
				}
			}
			if err := s.Barrier(); err != nil {
				return g, err
			}
		}
	}
	if g.Congestion, err = s.CongestionReport(); err != nil {
		return g, err
	}
	st := s.Stats()
	mine := []int64{st.Messages, st.Bytes, st.ReadHits, st.WriteHits, st.Evictions, st.Uncached}
	sum := make([]int64, len(mine))
	if err := c.AllreduceInt64s(mine, sum, mpi.OpSum); err != nil {
		return g, err
	}
	g.Messages, g.Bytes, g.ReadHits, g.WriteHits, g.Evictions, g.Uncached = sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]
	return g, s.Close()
}

// TestGoldenCounts: the protocol's messages, hence the counted congestion,
// must not change when the store's bookkeeping changes (as when the
// per-variable state was compacted to cut the memory of count-based
// runs). The expected figures were recorded from main (commit ce6496f)
// before that compaction; any difference means a changed protocol, not a
// changed representation. Both forms of the variable table run
// (varTable: dense, and the sparse form of large runs on goroutine
// ranks).
func TestGoldenCounts(t *testing.T) {
	tests := []struct {
		name   string
		cfg    divalib.Config
		np     int
		memory int
		want   goldenCounts
	}{
		{"fixed-home/np16/mem0", divalib.Config{Strategy: divalib.FixedHome}, 16, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 19896, MaxLinkMessages: 365, LoadBytes: 551736, LoadMessages: 9508, Startups: 4196, MaxStartups: 461, BytesSent: 233312}, Messages: 4196, Bytes: 233312, ReadHits: 88, WriteHits: 16, Evictions: 0, Uncached: 0}},
		{"tree-2/np16/mem0", divalib.Config{Variant: divalib.Tree2}, 16, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 18360, MaxLinkMessages: 312, LoadBytes: 582832, LoadMessages: 9236, Startups: 6848, MaxStartups: 596, BytesSent: 428520}, Messages: 6848, Bytes: 428520, ReadHits: 86, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"tree-4/np16/mem0", divalib.Config{Variant: divalib.Tree4}, 16, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 22528, MaxLinkMessages: 378, LoadBytes: 689216, LoadMessages: 11012, Startups: 6098, MaxStartups: 620, BytesSent: 376416}, Messages: 6098, Bytes: 376416, ReadHits: 86, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"tree-16/np16/mem0", divalib.Config{Variant: divalib.Tree16}, 16, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 31168, MaxLinkMessages: 615, LoadBytes: 724880, LoadMessages: 11908, Startups: 4820, MaxStartups: 896, BytesSent: 288424}, Messages: 4820, Bytes: 288424, ReadHits: 86, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"tree-2-4/np16/mem0", divalib.Config{Variant: divalib.Tree2_4}, 16, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 19752, MaxLinkMessages: 360, LoadBytes: 616368, LoadMessages: 9864, Startups: 6242, MaxStartups: 604, BytesSent: 385992}, Messages: 6242, Bytes: 385992, ReadHits: 86, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"tree-4-16/np16/mem0", divalib.Config{Variant: divalib.Tree4_16}, 16, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 31168, MaxLinkMessages: 615, LoadBytes: 724880, LoadMessages: 11908, Startups: 4820, MaxStartups: 896, BytesSent: 288424}, Messages: 4820, Bytes: 288424, ReadHits: 86, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"fixed-home/np16/mem600", divalib.Config{Strategy: divalib.FixedHome}, 16, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 19840, MaxLinkMessages: 363, LoadBytes: 561080, LoadMessages: 9263, Startups: 4096, MaxStartups: 439, BytesSent: 235936}, Messages: 4096, Bytes: 235936, ReadHits: 64, WriteHits: 18, Evictions: 214, Uncached: 146}},
		{"tree-2/np16/mem600", divalib.Config{Variant: divalib.Tree2}, 16, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 19720, MaxLinkMessages: 306, LoadBytes: 658784, LoadMessages: 9649, Startups: 7029, MaxStartups: 595, BytesSent: 475432}, Messages: 7029, Bytes: 475432, ReadHits: 40, WriteHits: 3, Evictions: 589, Uncached: 300}},
		{"tree-4/np16/mem600", divalib.Config{Variant: divalib.Tree4}, 16, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 25568, MaxLinkMessages: 401, LoadBytes: 754384, LoadMessages: 11307, Startups: 6150, MaxStartups: 622, BytesSent: 403416}, Messages: 6150, Bytes: 403416, ReadHits: 44, WriteHits: 1, Evictions: 504, Uncached: 258}},
		{"tree-16/np16/mem600", divalib.Config{Variant: divalib.Tree16}, 16, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 31984, MaxLinkMessages: 616, LoadBytes: 753232, LoadMessages: 11842, Startups: 4793, MaxStartups: 892, BytesSent: 298776}, Messages: 4793, Bytes: 298776, ReadHits: 48, WriteHits: 1, Evictions: 345, Uncached: 182}},
		{"tree-2-4/np16/mem600", divalib.Config{Variant: divalib.Tree2_4}, 16, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 21800, MaxLinkMessages: 347, LoadBytes: 690432, LoadMessages: 10290, Startups: 6392, MaxStartups: 596, BytesSent: 423208}, Messages: 6392, Bytes: 423208, ReadHits: 41, WriteHits: 2, Evictions: 506, Uncached: 278}},
		{"tree-4-16/np16/mem600", divalib.Config{Variant: divalib.Tree4_16}, 16, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 31984, MaxLinkMessages: 616, LoadBytes: 753232, LoadMessages: 11842, Startups: 4793, MaxStartups: 892, BytesSent: 298776}, Messages: 4793, Bytes: 298776, ReadHits: 48, WriteHits: 1, Evictions: 345, Uncached: 182}},
		{"fixed-home/np8/mem0", divalib.Config{Strategy: divalib.FixedHome}, 8, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 12088, MaxLinkMessages: 212, LoadBytes: 161640, LoadMessages: 2636, Startups: 1450, MaxStartups: 227, BytesSent: 86416}, Messages: 1450, Bytes: 86416, ReadHits: 70, WriteHits: 9, Evictions: 0, Uncached: 0}},
		{"tree-2/np8/mem0", divalib.Config{Variant: divalib.Tree2}, 8, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 12376, MaxLinkMessages: 192, LoadBytes: 163920, LoadMessages: 2522, Startups: 2040, MaxStartups: 306, BytesSent: 131896}, Messages: 2040, Bytes: 131896, ReadHits: 66, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"tree-4/np8/mem0", divalib.Config{Variant: divalib.Tree4}, 8, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 14576, MaxLinkMessages: 230, LoadBytes: 189840, LoadMessages: 2942, Startups: 1906, MaxStartups: 291, BytesSent: 122256}, Messages: 1906, Bytes: 122256, ReadHits: 66, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"tree-2-4/np8/mem0", divalib.Config{Variant: divalib.Tree2_4}, 8, 0, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 13160, MaxLinkMessages: 218, LoadBytes: 178040, LoadMessages: 2754, Startups: 1856, MaxStartups: 297, BytesSent: 118496}, Messages: 1856, Bytes: 118496, ReadHits: 66, WriteHits: 0, Evictions: 0, Uncached: 0}},
		{"fixed-home/np8/mem600", divalib.Config{Strategy: divalib.FixedHome}, 8, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 13088, MaxLinkMessages: 227, LoadBytes: 176808, LoadMessages: 2748, Startups: 1494, MaxStartups: 237, BytesSent: 93480}, Messages: 1494, Bytes: 93480, ReadHits: 44, WriteHits: 16, Evictions: 103, Uncached: 109}},
		{"tree-2/np8/mem600", divalib.Config{Variant: divalib.Tree2}, 8, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 14904, MaxLinkMessages: 218, LoadBytes: 207720, LoadMessages: 2918, Startups: 2310, MaxStartups: 366, BytesSent: 163808}, Messages: 2310, Bytes: 163808, ReadHits: 29, WriteHits: 2, Evictions: 250, Uncached: 162}},
		{"tree-4/np8/mem600", divalib.Config{Variant: divalib.Tree4}, 8, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 17608, MaxLinkMessages: 251, LoadBytes: 232416, LoadMessages: 3324, Startups: 2106, MaxStartups: 317, BytesSent: 146872}, Messages: 2106, Bytes: 146872, ReadHits: 29, WriteHits: 2, Evictions: 208, Uncached: 156}},
		{"tree-2-4/np8/mem600", divalib.Config{Variant: divalib.Tree2_4}, 8, 600, goldenCounts{Congestion: divalib.Congestion{MaxLinkBytes: 16000, MaxLinkMessages: 246, LoadBytes: 224824, LoadMessages: 3215, Startups: 2112, MaxStartups: 364, BytesSent: 145392}, Messages: 2112, Bytes: 145392, ReadHits: 30, WriteHits: 3, Evictions: 216, Uncached: 156}},
	}
	for _, form := range []string{"dense", "sparse"} {
		for _, tc := range tests {
			t.Run(form+"/"+tc.name, func(t *testing.T) {
				if form == "sparse" {
					defer divalib.SetDenseBudget(0)()
				}
				cfg := tc.cfg
				cfg.Seed, cfg.MemoryBytes = 11, tc.memory
				got := make([]goldenCounts, tc.np)
				err := local.Run(tc.np, func(c mpi.Comm) error {
					g, err := goldenWorkload(c, cfg)
					got[c.Rank()] = g
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != tc.want {
					t.Errorf("counts changed:\ngot  %#v\nwant %#v", got[0], tc.want)
				}
			})
		}
	}
}
